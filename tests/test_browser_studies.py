"""A live study in a real browser survives a reload and a server restart (issue 13): start it,
rate three outputs as "ann1", reload, and find the study where it stood (the lead names themself
again: the name is kept for the session, never in the address); restart the server and find it again."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from prefeval_core.store import open_store
from tests.browser_steps import TIMEOUT_MS, rate_with_key, start_live_study_as
from ui.browser import CHROMIUM, launch_chromium, served_app

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists() and not os.environ.get("CI"), reason="needs Debian's chromium at /usr/bin/chromium"),
]


def test_a_live_study_survives_a_reload_and_a_server_restart(tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    env = {"PREFEVAL_DATA_DIR": str(tmp_path / "store")}
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(TIMEOUT_MS)
        expect.set_options(timeout=TIMEOUT_MS)
        with served_app(tmp_path / "first.log", env) as url:
            main, progress = start_live_study_as(page, url, "ann1")
            name = main.get_by_role("textbox", name="Annotator name")
            expect(progress).to_contain_text(re.compile(r"0 of \d+ judged by ann1"))
            expect(main.get_by_role("button", name=re.compile(r"^(Shortcut )?4$"))).to_be_visible()
            rate_with_key(page, main, progress, "4", 3)  # the rating 4 on SummEval's 1-5 scale
            address = page.url
            assert "study=" in address and "ann1" not in address  # the lead's name stays out of the address
            page.reload()
            name.fill("ann1")  # a new session: the lead names themself again
            name.press("Enter")
            expect(progress).to_contain_text(re.compile(r"3 of \d+ judged by ann1"))
        # the server process is gone; a new one (same store) brings the study back from the address
        with served_app(tmp_path / "second.log", env) as url:
            page.goto(url + address[address.index("/annotate") :])
            name.fill("ann1")
            name.press("Enter")
            expect(main.locator('[data-testid="stProgress"]')).to_contain_text(re.compile(r"3 of \d+ judged by ann1"))
            page.get_by_role("link", name="Protocol").click()
            expect(main.get_by_text("Ratings used")).to_be_visible()
        browser.close()
    ratings = open_store(tmp_path / "store").ratings("sample:summeval")
    assert [r.score for r in ratings] == [4.0, 4.0, 4.0] and {r.annotator for r in ratings} == {"ann1"}
    assert len({r.study_id for r in ratings}) == 1 and ratings[0].study_id is not None
