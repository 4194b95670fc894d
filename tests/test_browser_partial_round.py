"""A partial round in a real browser (issue 19): the lead decides part-way through a live round
and nothing is lost. The issue's case is 16 of 100 requested judgments; a live ratings study on the
bundled SummEval sample asks for one batch per round (the form's default: 10 items, 160 ratings),
and the test judges only a few of them to stay fast: it decides after 4 (the confirmation asks; the
open requests are kept and served again), then after 2 more (withdrawn: no longer served), and
judges once more. Every judgment made is stored once, by the annotator who made it."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from prefeval_core.store import open_store
from tests.browser_steps import TIMEOUT_MS, press_until, rate_with_key, start_live_study_as
from ui.browser import CHROMIUM, launch_chromium, served_app

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists() and not os.environ.get("CI"), reason="needs Debian's chromium at /usr/bin/chromium"),
]


def _requested(request_json: str | None) -> set[tuple[str, str]]:
    assert request_json is not None
    return {(t["item_id"], t["system"]) for t in json.loads(request_json)["tasks"]}


def test_deciding_part_way_keeps_or_withdraws_the_open_requests(tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    env = {"PREFEVAL_DATA_DIR": str(tmp_path / "store")}
    with sync_playwright() as playwright, served_app(tmp_path / "app.log", env) as url:
        browser = launch_chromium(playwright)
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        page.set_default_timeout(TIMEOUT_MS)
        expect.set_options(timeout=TIMEOUT_MS)
        main, progress = start_live_study_as(page, url, "ann1")

        def judge(times: int) -> None:
            expect(progress).to_contain_text(re.compile(r"^0 of \d+ judged by ann1"))
            rate_with_key(page, main, progress, "4", times)

        def decide(choice: str, judged: int) -> int:
            """Press *Decide now*, see the confirmation ask, answer ``choice``; the open requests it named."""
            asked = main.get_by_text(re.compile(r"\d+ of the \d+ requested judgments are not made yet"))
            label = re.compile(rf"^Decide now with {judged} new judgments \({judged} of \d+ requested\)$")
            decide_now = main.get_by_role("button", name=label)
            press_until(page, decide_now.click, asked)
            still_open, requested = map(int, re.findall(r"\d+", asked.inner_text())[:2])
            assert still_open == requested - judged
            queued = " queued" if choice == "keep" else ""
            told = f"the {still_open} still open stay in the queue" if choice == "keep" else f"the {still_open} still open are withdrawn"
            answer = main.get_by_role("button", name=f"Decide now, {choice} the {still_open} open requests{queued}")
            expect(answer).to_be_visible()
            page.wait_for_timeout(1000)  # a click while the confirmation is still being drawn can be dropped (then retried after 30 s)
            press_until(page, answer.click, page.get_by_text(told))
            return still_open

        judge(4)
        kept = decide("keep", 4)
        expect(page.get_by_text(f"the {kept} still open stay in the queue")).to_be_visible()
        judge(2)
        withdrawn = decide("withdraw", 2)
        expect(page.get_by_text(f"the {withdrawn} still open are withdrawn")).to_be_visible()
        judge(1)
        browser.close()

    store = open_store(tmp_path / "store")
    ratings = store.ratings("sample:summeval")
    assert len(ratings) == 7 and {r.annotator for r in ratings} == {"ann1"}  # every judgment made, stored once
    (study,) = {r.study_id for r in ratings}
    assert study is not None
    trail = store.state_trail(study)
    assert [s.kind for s in trail] == ["start", "feed", "feed"]
    first, second, third = (_requested(s.request_json) for s in trail)
    judged = [(r.item_id, r.system) for r in ratings]  # in the order stored
    assert set(judged[:4]) <= first and set(judged[4:6]) <= second and judged[6] in third
    assert first - set(judged[:4]) <= second and len(first - set(judged[:4])) == kept  # kept: asked for again
    assert not (second - set(judged[4:6])) & third and len(second - set(judged[4:6])) == withdrawn  # withdrawn: not served
    store.dispose()
