"""One real-browser run (Playwright + Debian chromium): start the app, upload files, step the
protocol, annotate one item with a keyboard shortcut, save a screenshot."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from prefeval_core.store import open_store
from tests.browser_steps import press_until
from ui.browser import CHROMIUM, launch_chromium, served_app

TIMEOUT_MS = 90_000

pytestmark = [
    pytest.mark.browser,
    # CI installs chromium (scripts/run-tests.sh): there a missing browser must fail, not skip.
    pytest.mark.skipif(not CHROMIUM.exists() and not os.environ.get("CI"), reason="needs Debian's chromium at /usr/bin/chromium"),
]

SYSTEMS = ("alpha", "beta", "gamma")
RATINGS = "item_id,system,rater,score\n" + "".join(
    f"i{i},{s},{rater},{(i * 5 + k * (3 if rater == 'human' else 2) + i % 2) % 5}\n"
    for i in range(12)
    for k, s in enumerate(SYSTEMS)
    for rater in ("human", "bleu")
)
TEXTS = "item_id,system,output\n" + "".join(f"i{i},{s},{s} says <b>{i}</b> & *more*\n" for i in range(12) for s in SYSTEMS)


@pytest.fixture
def app_url(tmp_path: Path) -> Iterator[str]:
    """The dashboard served by ``streamlit run app.py`` on a free port, with a private data folder."""
    with served_app(tmp_path / "streamlit.log", {"PREFEVAL_DATA_DIR": str(tmp_path / "store")}) as url:
        yield url


def test_upload_step_annotate_with_a_key(app_url: str, tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    (tmp_path / "ratings.csv").write_text(RATINGS)
    (tmp_path / "texts.csv").write_text(TEXTS)
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(TIMEOUT_MS)
        expect.set_options(timeout=TIMEOUT_MS)
        page.goto(app_url)
        main = page.locator('[data-testid="stMain"]')
        expect(main.get_by_text("Loaded summeval")).to_be_visible()

        # Upload: ratings and texts of three systems.
        page.get_by_text("Your files", exact=True).click()
        uploader = page.locator('[data-testid="stFileUploader"] input[type="file"]')
        uploader.set_input_files([str(tmp_path / "ratings.csv"), str(tmp_path / "texts.csv")])
        expect(main.get_by_text("Loaded ratings.csv + 1 more: 3 systems, 12 items, 2 raters.")).to_be_visible()

        # Protocol: start (full model) and one round.
        page.get_by_role("link", name="Protocol").click()
        page.get_by_role("spinbutton", name="Budget (judgments; 0 = all the data holds)").fill("24")
        page.get_by_role("spinbutton", name="Batch N per round").fill("2")
        page.get_by_role("combobox", name="A paid judgment is").click()  # the cost unit: A/B comparisons
        page.get_by_role("option", name="comparisons of two outputs").click()
        page.get_by_role("button", name="Start protocol").click()
        expect(main.get_by_text("Comparisons used")).to_be_visible()
        page.get_by_role("button", name="Next batch").click()
        round_metric = main.locator('[data-testid="stMetric"]').filter(has_text="Round")
        expect(round_metric).to_contain_text("1")
        expect(main.locator('[data-testid="stMetric"]').filter(has_text="Comparisons used")).to_contain_text("6")

        # Annotate: a replay's judgments come from its data, so nothing is asked there.
        page.get_by_role("link", name="Annotate").click()
        expect(main.get_by_text("A replay's judgments come from its data")).to_be_visible()
        expect(main.get_by_text("Output A")).to_have_count(0)

        # A live study on the same data: its first request; one item with the "a" key (A better).
        page.get_by_role("link", name="Protocol").click()
        main.locator('[data-testid="stExpander"] summary').filter(has_text="Settings").click()  # folded once a run started
        page.get_by_text("Live: people judge what the protocol asks for").click()
        page.get_by_role("spinbutton", name="Budget (judgments; 0 = all the data holds)").fill("24")
        page.get_by_role("spinbutton", name="Batch N per round").fill("2")
        page.get_by_role("button", name="Start protocol").click()
        expect(main.locator('[data-testid="stMetric"]').filter(has_text="Comparisons used")).to_contain_text("0")
        page.get_by_role("link", name="Annotate").click()
        expect(main.get_by_text("Output A")).to_be_visible()
        expect(main.get_by_text("<b>", exact=False).first).to_be_visible()  # data shown as text, not HTML
        progress = main.locator('[data-testid="stProgress"]')
        expect(progress).to_contain_text("0 of")
        expect(page.get_by_role("button", name="A better")).to_be_enabled()
        main.locator("h1").click()  # focus the page, not a text field
        press_until(page, lambda: page.keyboard.press("a"), progress.get_by_text(re.compile(r"^1 of")))
        page.screenshot(path=str(tmp_path / "annotate.png"), full_page=True)
        browser.close()

    stored = open_store(tmp_path / "store").comparisons()
    assert len(stored) == 1
    assert stored[0].annotator == "lead"  # the lead judged, not having named themself
    assert (tmp_path / "annotate.png").stat().st_size > 10_000
