"""Steps the browser tests share (Playwright pages of the served app)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

TIMEOUT_MS = 120_000
MAIN = '[data-testid="stMain"]'


def start_live_study_as(page: Page, url: str, annotator: str) -> tuple[Locator, Locator]:
    """Start a live study with the Protocol form's defaults, open Annotate and name the annotator;
    the page's main area and its progress bar."""
    from playwright.sync_api import expect

    main = page.locator(MAIN)
    page.goto(f"{url}/protocol")
    page.get_by_text("Live: people judge what the protocol asks for").click()
    page.get_by_role("button", name="Start protocol").click()
    expect(main.get_by_text("Ratings used")).to_be_visible()
    page.get_by_role("link", name="Annotate").click()
    name = main.get_by_role("textbox", name="Annotator name")
    name.fill(annotator)
    name.press("Enter")
    return main, main.locator('[data-testid="stProgress"]')
