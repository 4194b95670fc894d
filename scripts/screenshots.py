"""Regenerate docs/screenshots/*.png: one screenshot per dashboard page on the default sample.

Usage: .venv/bin/python scripts/screenshots.py [OUT_DIR]   (needs /usr/bin/chromium; about a minute)

The app runs with a temporary annotation folder, so the screenshots never show (or touch)
your own annotations. The Protocol page shows a replay of the top-1 question run to its end
(cost in ratings, the answer in words, the comparison with the full evaluation); the Annotate
page the rating screen of a live study (a scalar study asks for ratings of single outputs) and
the A/B screen of a live comparisons study.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.sync_api import Locator, Page, expect, sync_playwright  # noqa: E402
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError  # noqa: E402

from ui.browser import launch_chromium, served_app  # noqa: E402

TIMEOUT_MS = 120_000


def settle(page: Page, charts: int = 0) -> None:
    """Wait until the app is idle and at least ``charts`` plotly charts are drawn."""
    if charts:
        page.wait_for_function(f"() => document.querySelectorAll('.js-plotly-plot .main-svg').length >= {charts}")
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')")
    page.wait_for_timeout(1500)


def shoot(page: Page, out: Path, name: str) -> None:
    page.screenshot(path=str(out / f"{name}.png"), full_page=False)
    print(f"wrote {out / f'{name}.png'}")


def choose(page: Page, box: str, option: str, attempts: int = 3) -> None:
    """Pick ``option`` in the select box ``box`` unless it is already chosen (the open list of a
    chosen value is redrawn under the pointer by the rerun the click starts). A rerun that closes
    the list before the click (seen once in a slow run) opens it again, up to ``attempts`` times."""
    combo = page.get_by_role("combobox", name=box)
    for attempt in range(attempts):
        if combo.input_value() == option:
            return
        combo.click()
        try:
            page.get_by_role("option", name=option).click(timeout=10_000)
        except PlaywrightTimeoutError:
            if attempt == attempts - 1:
                raise
        settle(page)


def start_live(page: Page, main_area: Locator, *, comparisons: bool) -> None:
    """A new live study on the Protocol page (ratings, or A/B comparisons)."""
    page.get_by_role("link", name="Protocol").click()
    live = page.get_by_role("radiogroup", name="Mode").get_by_text("Live: people judge what the protocol asks for")
    if not live.is_visible():
        main_area.get_by_text("Settings", exact=True).click()  # the settings are folded once a study runs
    live.click()
    choose(page, "Question", "Order of every pair (the paper)")
    if comparisons:
        choose(page, "A paid judgment is", "comparisons of two outputs")
    page.get_by_role("button", name="Start protocol").click()
    page.wait_for_timeout(1000)  # the run starts; leaving the page before it ends would drop the new study
    settle(page)
    expect(main_area.get_by_text("Live mode: annotate the requested items")).to_be_visible()


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, served_app(Path(tmp) / "streamlit.log", {"PREFEVAL_DATA_DIR": tmp}) as url:
        with sync_playwright() as playwright:
            browser = launch_chromium(playwright)
            page = browser.new_page(viewport={"width": 1440, "height": 1100}, device_scale_factor=1)
            page.set_default_timeout(TIMEOUT_MS)
            expect.set_options(timeout=TIMEOUT_MS)
            main_area = page.locator('[data-testid="stMain"]')
            page.goto(url)
            expect(main_area.get_by_text("Per-pair coverage")).to_be_visible()
            settle(page)
            shoot(page, out, "data")

            page.get_by_role("link", name="Metric check").click()
            settle(page, charts=3)
            shoot(page, out, "metric_check")

            page.get_by_role("link", name="Protocol").click()
            choose(page, "Question", "The best k systems")
            page.get_by_role("button", name="Start protocol").click()
            page.get_by_role("button", name="Run to the end").click()
            expect(main_area.get_by_text("The protocol has finished")).to_be_visible()
            settle(page)
            shoot(page, out, "protocol")
            page.get_by_role("link", name="Report & session").click()  # the finished replay's results
            expect(main_area.get_by_text("Protocol decisions per pair")).to_be_visible()
            settle(page)
            shoot(page, out, "report")
            page.get_by_role("link", name="Protocol").click()

            start_live(page, main_area, comparisons=False)
            page.get_by_role("link", name="Annotate").click()
            name = main_area.get_by_role("textbox", name="Annotator name")
            name.fill("ann1")
            name.press("Enter")
            expect(main_area.get_by_text("judged by ann1")).to_be_visible()
            settle(page)
            shoot(page, out, "annotate")

            start_live(page, main_area, comparisons=True)
            page.get_by_role("link", name="Annotate").click()
            expect(main_area.get_by_text("Output A")).to_be_visible()
            settle(page)
            shoot(page, out, "annotate_ab")

            browser.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "screenshots")
