"""Regenerate docs/screenshots/*.png: one screenshot per dashboard page on the default sample.

Usage: .venv/bin/python scripts/screenshots.py [OUT_DIR]   (needs /usr/bin/chromium; about a minute)

The app runs with a temporary annotation folder, so the screenshots never show (or touch)
your own annotations. The Protocol page is shown after two rounds of the default settings.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.sync_api import Page, expect, sync_playwright  # noqa: E402

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
            page.get_by_role("button", name="Start protocol").click()
            for round_number in (1, 2):
                page.get_by_role("button", name="Next batch").click()
                expect(main_area.locator('[data-testid="stMetric"]').filter(has_text="Round")).to_contain_text(str(round_number))
            page.get_by_role("tab", name="Win rates").click()
            settle(page, charts=1)
            shoot(page, out, "protocol")

            page.get_by_role("link", name="Annotate").click()
            expect(main_area.get_by_text("Output A")).to_be_visible()
            settle(page)
            shoot(page, out, "annotate")

            page.get_by_role("link", name="Report & session").click()
            expect(main_area.get_by_text("Save session (JSON)")).to_be_visible()
            settle(page)
            shoot(page, out, "report")
            browser.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "screenshots")
