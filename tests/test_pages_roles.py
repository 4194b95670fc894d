"""Issue 19 in the app (AppTest through ``app.py``): an annotator link opens only that annotator's
queue with the study's criterion; a refused link opens only the page that says why; the lead's
pages ask for the lead's password when one is set; the lead invites and revokes on the Annotate page."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from prefeval_core.store import open_store
from prefeval_core.workflow import StudySetup
from prefeval_core.workflow.roles import LEAD_PASSWORD_ENV, Annotator, invite_annotator, revoke_annotator
from prefeval_core.workflow.studies import begin_study
from tests.page_fixtures import ROOT, TIMEOUT, data_dir, shown
from tests.test_requests_cli import study_data
from ui.roles import INVITEE

__all__ = ["data_dir"]


def app(**params: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.query_params.update(params)
    return at


def live_study(folder: Path, criterion: str = "relevance") -> int:
    data = study_data()
    setup = StudySetup(human="human", unit="ratings", mode="live", budget=200, batch=5)
    return begin_study(open_store(folder), data, data.load(), setup, criterion=criterion, guidelines="Keep **only** what matters.").id


def texts(at: AppTest) -> str:
    return " ".join(shown(str(e.value)) for kind in ("title", "markdown", "caption", "error") for e in getattr(at, kind))


def test_an_annotator_link_opens_only_that_queue_with_the_criterion(data_dir: Path) -> None:
    study = live_study(data_dir)
    token = invite_annotator(open_store(data_dir), study, "alice")
    at = app(token=token)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Judge the relevance"
    page = texts(at)
    assert "Rate the relevance of this output" in page and "alice" in page
    for hidden in ("good", "middle", "poor", "Protocol", "Krippendorff"):  # no system names, no results, no other page
        assert hidden not in page
    at.button(key="pe_rate_1").click().run()
    [rating] = open_store(data_dir).ratings(study_id=study)
    assert (rating.annotator, rating.criterion, rating.score) == ("alice", "relevance", rating.score)
    with pytest.raises(ValueError, match=r"Known pages: \['[^,]*pages/judge.py'\]"):  # the only page alice's session has
        at.switch_page("pages/protocol.py")
    lead_page = AppTest.from_file(str(ROOT / "pages" / "protocol.py"), default_timeout=TIMEOUT)
    lead_page.session_state[INVITEE] = Annotator(study, "alice")  # a lead page run in alice's session shows nothing
    lead_page.run()
    assert not lead_page.exception and not lead_page.title and not lead_page.button


@pytest.mark.parametrize("address", ["keeps the token", "lost the token"])
def test_a_tab_left_open_after_the_link_is_revoked_stores_nothing(data_dir: Path, address: str) -> None:
    study = live_study(data_dir)
    at = app(token=invite_annotator(open_store(data_dir), study, "alice"))
    at.run()
    assert at.title[0].value == "Judge the relevance"
    revoke_annotator(open_store(data_dir), study, "alice")  # the lead revokes; alice's tab is still drawn
    if address == "lost the token":
        at.query_params.pop("token")  # a session that entered through a link stays the annotator's
    at.button(key="pe_rate_1").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert open_store(data_dir).ratings(study_id=study) == []  # nothing stored, nothing fed to the protocol
    assert at.title[0].value == "This link does not open a study"
    assert at.error[0].value.startswith("This link was withdrawn by the study's lead")
    assert not at.button
    at.run()  # and it stays refused
    assert at.title[0].value == "This link does not open a study" and not at.button


def test_a_human_rater_naming_no_criterion_asks_for_overall_quality(data_dir: Path) -> None:
    study = live_study(data_dir, criterion="")  # the data's human rater is `human`
    at = app(token=invite_annotator(open_store(data_dir), study, "alice"))
    at.run()
    assert at.title[0].value == "Judge the overall quality"
    assert "Rate the overall quality of this output from" in texts(at) and "human" not in texts(at)


@pytest.mark.parametrize("case", ["forged", "revoked", "another study"])
def test_a_refused_link_opens_nothing(data_dir: Path, case: str) -> None:
    study, other = live_study(data_dir), live_study(data_dir)
    token = invite_annotator(open_store(data_dir), study, "bob")
    params = {"token": token}
    if case == "forged":
        params["token"] = token[:-3] + "abc"
    elif case == "revoked":
        revoke_annotator(open_store(data_dir), study, "bob")
    else:
        params["study"] = str(other)
    at = app(**params)
    at.run()
    assert at.title[0].value == "This link does not open a study"
    message = {"forged": "not valid", "revoked": "withdrawn", "another study": "another study"}[case]
    assert message in at.error[0].value
    assert "relevance" not in texts(at) and not at.button


def test_the_leads_pages_ask_for_the_password_when_one_is_set(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LEAD_PASSWORD_ENV, "s3cret")
    at = app()
    at.run()
    assert at.title[0].value == "prefeval: lead sign-in"
    at.text_input(key="pe.w.lead_password").set_value("guess")
    at.button[0].click().run()
    assert at.title[0].value == "prefeval: lead sign-in" and "not the lead's password" in at.error[0].value
    at.text_input(key="pe.w.lead_password").set_value("s3cret")
    at.button[0].click().run()
    at.run()
    assert at.title[0].value == "Data"


def test_the_annotator_page_alone_opens_nothing_without_a_link(data_dir: Path) -> None:
    at = AppTest.from_file(str(ROOT / "pages" / "judge.py"), default_timeout=TIMEOUT)
    at.run()
    assert not at.exception and at.title[0].value == "This page opens through an annotator's link" and not at.button
