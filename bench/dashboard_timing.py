"""Dashboard timings in a real browser (Debian chromium): first page load from ``streamlit run``,
and how long a protocol round on SummEval (120 pairs, default settings) takes to update the page.

Usage: .venv/bin/python bench/dashboard_timing.py [ROUNDS]

Prints: seconds from starting the server to the Data page's full summary; seconds from the
click on *Next batch* to the new round number on screen, per round (round 1 includes the
first JAX compilation of the decision engine).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.sync_api import expect, sync_playwright  # noqa: E402

from ui.browser import launch_chromium, served_app  # noqa: E402


def main(rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        browser = launch_chromium(playwright)  # started first: the timing covers the app, not chromium
        page = browser.new_page(viewport={"width": 1440, "height": 1000})
        expect.set_options(timeout=120_000)
        start = time.perf_counter()
        with served_app(Path(tmp) / "streamlit.log", {"PREFEVAL_DATA_DIR": tmp}) as url:
            served = time.perf_counter() - start
            page.goto(url)
            main_area = page.locator('[data-testid="stMain"]')
            expect(main_area.get_by_text("Per-pair coverage")).to_be_visible()
            print(f"server healthy after {served:.1f} s; Data page complete {time.perf_counter() - start:.1f} s after `streamlit run`")
            page.get_by_role("link", name="Protocol").click()
            page.get_by_role("button", name="Start protocol").click()
            round_metric = main_area.locator('[data-testid="stMetric"]').filter(has_text="Round")
            expect(round_metric).to_contain_text("0")
            for number in range(1, rounds + 1):
                clicked = time.perf_counter()
                page.get_by_role("button", name="Next batch").click()
                expect(round_metric).to_contain_text(str(number))
                page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')")
                print(f"round {number}: page updated {time.perf_counter() - clicked:.2f} s after the click")
        browser.close()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 4)
