"""A team study in a real browser (issue 19): the lead starts a live study and invites two
annotators; each link opens only that annotator's queue with the criterion, and every rating
carries the annotator the token names; no link opens a lead page; a forged link, a revoked one
and one shown with another study's id are refused with a page that says why."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from prefeval_core.store import open_store
from tests.browser_steps import MAIN, rate_with_key, start_live_study
from ui.browser import CHROMIUM, launch_chromium, served_app

TIMEOUT_MS = 120_000

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists() and not os.environ.get("CI"), reason="needs Debian's chromium at /usr/bin/chromium"),
]


def test_a_lead_invites_two_annotators_and_each_link_opens_only_its_queue(tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    env = {"PREFEVAL_DATA_DIR": str(tmp_path / "store")}
    with sync_playwright() as playwright, served_app(tmp_path / "app.log", env) as url:
        browser = launch_chromium(playwright)
        expect.set_options(timeout=TIMEOUT_MS)
        lead = browser.new_page(viewport={"width": 1440, "height": 900})
        lead.set_default_timeout(TIMEOUT_MS)
        main = start_live_study(lead, url)
        main.get_by_role("tab", name="Team").click()
        links = {}
        for name in ("alice", "bob"):
            field = main.get_by_role("textbox", name="Annotator's name")
            field.fill(name)
            field.press("Enter")
            main.get_by_role("button", name="Invite").click()
            expect(main.get_by_text(f"Send this link to {name}")).to_be_visible()
            code = main.locator('[data-testid="stCode"]')
            expect(code).to_have_text(re.compile(rf"^\s*{re.escape(url)}/\?token=[\w-]{{43}}\s*$"))
            for earlier in links.values():  # the message can show before the code block is redrawn
                expect(code).not_to_have_text(earlier)
            links[name] = code.inner_text().strip()
        assert links["alice"] != links["bob"]

        judged = {"alice": 2, "bob": 1}
        for name, link in links.items():
            context = browser.new_context(viewport={"width": 1440, "height": 900})  # another person's browser
            page = context.new_page()
            page.set_default_timeout(TIMEOUT_MS)
            body = page.locator(MAIN)
            page.goto(link)
            expect(body.locator("h1")).to_have_text("Judge the relevance")
            expect(body.get_by_text("Rate the relevance of this output")).to_be_visible()
            expect(body.get_by_text(f"as {name}")).to_be_visible()
            progress = body.locator('[data-testid="stProgress"]')
            if name == "alice":  # at 1440x900 the output and every button show without scrolling, each labelled once
                levels = [body.get_by_role("button", name=re.compile(rf"^(Shortcut )?{k}$")) for k in range(1, 6)]
                assert [b.inner_text().replace("\u200b", "").split() for b in levels] == [[str(k)] for k in range(1, 6)]
                for element in (*levels, body.get_by_text("Output", exact=True)):
                    box = element.bounding_box()
                    assert box is not None and box["y"] + box["height"] <= 900, box
            rate_with_key(page, body, progress, "4", judged[name])
            assert page.get_by_role("link", name=re.compile("Protocol|Data|Report")).count() == 0  # no navigation
            page.goto(f"{url}/protocol?token={link.split('token=')[1]}")  # a lead page named in the address
            expect(body.locator("h1")).to_have_text("Judge the relevance")
            assert body.get_by_text("Ratings used").count() == 0
            context.close()

        stranger = browser.new_page()
        for address, reason in (
            (f"{url}/?token=not-a-token-anyone-was-given", "This link is not valid"),
            (f"{links['bob']}&study=999", "This link is for another study"),
        ):
            stranger.goto(address)
            expect(stranger.locator(MAIN).locator("h1")).to_have_text("This link does not open a study")
            expect(stranger.locator(MAIN).get_by_text(reason)).to_be_visible()
        lead.reload()  # the lead revokes alice's link (the first working one in the list)
        main.get_by_role("tab", name="Team").click()
        main.get_by_role("button", name="Revoke").click()
        expect(lead.get_by_text("alice's link no longer works")).to_be_visible()
        stranger.goto(links["alice"])
        expect(stranger.locator(MAIN).get_by_text("This link was withdrawn")).to_be_visible()
        browser.close()
    ratings = open_store(tmp_path / "store").ratings("sample:summeval")
    assert sorted(r.annotator for r in ratings) == ["alice", "alice", "bob"]
    assert {r.criterion for r in ratings} == {"relevance"} and len({r.study_id for r in ratings}) == 1
    assert len({(r.item_id, r.system) for r in ratings}) == 3  # each judged a task of their own


def test_a_lead_deep_link_behind_the_password_signs_in_to_the_page_it_names(tmp_path: Path) -> None:
    """``/protocol?…`` with ``$PREFEVAL_LEAD_PASSWORD`` set: the sign-in form, no "page not found"
    dialog over it, and once signed in the Protocol page, not the default one."""
    from playwright.sync_api import expect, sync_playwright

    env = {"PREFEVAL_DATA_DIR": str(tmp_path / "store"), "PREFEVAL_LEAD_PASSWORD": "correct horse"}
    with sync_playwright() as playwright, served_app(tmp_path / "app.log", env) as url:
        browser = launch_chromium(playwright)
        expect.set_options(timeout=TIMEOUT_MS)
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(f"{url}/protocol?study=7")
        expect(page.get_by_text("prefeval: lead sign-in")).to_be_visible()
        expect(page.get_by_text("Page not found")).to_have_count(0)
        page.get_by_label("Lead password").fill("correct horse")
        page.get_by_role("button", name="Sign in").click()
        expect(page.locator(MAIN).get_by_text("Human rater human:relevance")).to_be_visible()
        assert "/protocol" in page.url and page.get_by_text("Page not found").count() == 0
        browser.close()
