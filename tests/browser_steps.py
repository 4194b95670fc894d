"""Steps the browser tests share (Playwright pages of the served app)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

TIMEOUT_MS = 120_000
MAIN = '[data-testid="stMain"]'


def start_live_study(page: Page, url: str) -> Locator:
    """Start a live study with the Protocol form's defaults and open Annotate; the page's main area."""
    from playwright.sync_api import expect

    main = page.locator(MAIN)
    page.goto(f"{url}/protocol")
    page.get_by_text("Live: people judge what the protocol asks for").click()
    page.get_by_role("button", name="Start protocol").click()
    expect(main.get_by_text("Ratings used")).to_be_visible()
    page.get_by_role("link", name="Annotate").click()
    return main


def start_live_study_as(page: Page, url: str, annotator: str) -> tuple[Locator, Locator]:
    """:func:`start_live_study`, then name the annotator; the page's main area and its progress bar."""
    main = start_live_study(page, url)
    name = main.get_by_role("textbox", name="Annotator name")
    name.fill(annotator)
    name.press("Enter")
    return main, main.locator('[data-testid="stProgress"]')


def wait_idle(page: Page) -> None:
    """Until the app is not rerunning: a click or key that lands during a rerun can be lost."""
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')")


def press_until(page: Page, act: Callable[[], None], until: Locator, tries: int = 4) -> None:
    """Do ``act`` (a click, a key) once the app is idle, until ``until`` shows: on a loaded machine
    an input that lands while the page reruns is dropped (the widget is drawn again, untouched), so
    it is done again — after 30 s, far longer than a registered input takes to show."""
    from playwright.sync_api import expect

    for _ in range(tries - 1):
        wait_idle(page)
        act()
        try:
            expect(until).to_be_visible(timeout=30_000)
            return
        except AssertionError:
            continue
    wait_idle(page)
    act()
    expect(until).to_be_visible()


def rate_with_key(page: Page, main: Locator, progress: Locator, key: str, times: int, start: int = 0) -> None:
    """Rate ``times`` outputs on Annotate by pressing ``key``, each seen in the progress bar."""
    main.locator("h1").click()  # the page, not the text field, gets the keys
    page.wait_for_timeout(1000)  # the buttons' key bindings attach after they are drawn
    for done in range(start + 1, start + times + 1):
        press_until(page, lambda: page.keyboard.press(key), progress.get_by_text(re.compile(rf"^{done} of \d+")))
