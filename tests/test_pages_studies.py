"""Live studies in the dashboard: the rating screen of a scalar study, several annotators per item,
and studies that survive a new browser session (resumed from the address)."""

from __future__ import annotations

from pathlib import Path

import pytest

from prefeval_core.store import open_store
from tests.page_fixtures import data_dir, page, page_with_protocol, run_ok, shown, start_protocol  # noqa: F401 (a fixture)

pytestmark = pytest.mark.page


def annotate_as(source, name: str):  # type: ignore[no-untyped-def]
    at = page_with_protocol("annotate.py", source)
    at.session_state["pe.study"] = source.session_state["pe.study"]
    run_ok(at)
    at.text_input(key="pe.w.annotator").input(name)
    return run_ok(at)


def test_a_live_ratings_study_asks_for_ratings_on_the_data_scale_and_feeds_them(data_dir: Path) -> None:  # noqa: F811
    at = start_protocol(300, batch=2, mode="live")
    protocol = at.session_state["pe.protocol"]
    assert protocol.table.unit == "ratings"
    annotate = annotate_as(at, "ann1")
    assert "32 ratings of single outputs" in annotate.caption[0].value  # 2 items x 16 systems
    labels = [b.help for b in annotate.button if b.key and b.key.startswith("pe_rate_")]
    assert labels == [f"rate {k} (key {k})" for k in range(1, 6)]  # SummEval's experts rate 1-5
    for key in ("pe_rate_4", "pe_rate_2", "pe_rate_5"):
        annotate.button(key=key).click()
        run_ok(annotate)
    ratings = open_store(data_dir).ratings("sample:summeval")
    assert [r.score for r in ratings] == [4.0, 2.0, 5.0] and {r.annotator for r in ratings} == {"ann1"}
    assert {r.study_id for r in ratings} == {at.session_state["pe.study"].id}
    assert len({(r.item_id, r.system) for r in ratings}) == 3
    annotate.button(key="pe_feed").click()
    run_ok(annotate).button(key="pe_decide_keep").click()  # part-way: asked first
    run_ok(annotate)
    fed = annotate.session_state["pe.protocol"]
    assert (fed.round, fed.cost_used) == (1, 3)


def test_each_item_goes_to_two_different_annotators_before_it_counts(data_dir: Path) -> None:  # noqa: F811
    at = run_ok(page("protocol.py"))
    at.radio[0].set_value("live")
    next(s for s in at.selectbox if s.label == "A paid judgment is").set_value("comparisons")
    next(n for n in at.number_input if n.label.startswith("Budget")).set_value(200)
    next(n for n in at.number_input if n.label.startswith("Judgments per item")).set_value(2)
    at.button[0].click()
    run_ok(at)
    first = annotate_as(at, "ann1")
    shown_first = shown(first.markdown[0].value)
    first.button(key="pe_ann_left").click()
    run_ok(first)
    assert "pe_feed" not in [b.key for b in first.button if not b.disabled]  # one judgment: not complete yet
    second = annotate_as(at, "ann2")
    assert shown(second.markdown[0].value) == shown_first  # ann2 gets the item ann1 judged
    second.button(key="pe_ann_right").click()
    run_ok(second)
    second.button(key="pe_feed").click()
    run_ok(second).button(key="pe_decide_keep").click()  # part-way: asked first
    run_ok(second)
    assert second.session_state["pe.protocol"].cost_used == 2  # one item, two judgments (a tie by majority)
    stored = open_store(data_dir).comparisons("sample:summeval")
    assert sorted(c.annotator for c in stored) == ["ann1", "ann2"] and len({c.item_id for c in stored}) == 1


def test_a_study_resumes_in_a_new_session_from_the_address(data_dir: Path) -> None:  # noqa: F811
    at = start_protocol(1500, unit="comparisons")
    at.button(key="pe_next").click()
    run_ok(at)
    study = at.session_state["pe.study"]
    assert at.query_params["study"] in (str(study.id), [str(study.id)])
    fresh = page("protocol.py")
    fresh.query_params["study"] = str(study.id)
    run_ok(fresh)
    resumed = fresh.session_state["pe.protocol"]
    assert fresh.session_state["pe.study"].id == study.id and resumed.round == 1
    assert resumed.cost_used == at.session_state["pe.protocol"].cost_used
    fresh.button(key="pe_undo").click()  # undo goes through the study's trail
    run_ok(fresh)
    assert fresh.session_state["pe.protocol"].round == 0
    assert [s.kind for s in open_store(data_dir).state_trail(study.id)] == ["start", "round", "undo"]
    gone = page("protocol.py")
    gone.query_params["study"] = "999"
    gone.run()
    assert not gone.exception and "could not be resumed" in shown(gone.error[0].value)


def test_the_rating_scale_comes_from_the_data() -> None:
    from prefeval_core.annotation.rating_scale import rating_scale
    from prefeval_core.data.dataset import load_dataset
    from tests.protocol_fixtures import ratings_csv

    means = load_dataset([("r.csv", ratings_csv({"a": [1.0, 4.666667, 5.0], "b": [2.333333, 3.0, 1.0]}))])
    assert rating_scale(means, "human").levels == (1.0, 2.0, 3.0, 4.0, 5.0)
    mqm = load_dataset([("r.csv", ratings_csv({"a": [-25.0, -0.1, 0.0], "b": [-5.0, -1.0, 0.0]}))])
    scale = rating_scale(mqm, "human")
    assert (scale.low, scale.high, scale.levels) == (-25.0, 0.0, None)


def test_the_protocol_page_asks_before_deciding_a_round_part_way(data_dir: Path) -> None:  # noqa: F811
    at = start_protocol(300, batch=2, mode="live")
    annotate = annotate_as(at, "ann1")
    annotate.button(key="pe_rate_3").click()
    run_ok(annotate)
    lead = page_with_protocol("protocol.py", at)
    lead.session_state["pe.study"] = at.session_state["pe.study"]
    run_ok(lead).button(key="pe_feed").click()
    run_ok(lead)
    assert lead.session_state["pe.protocol"].round == 0  # 1 of 32 judged: nothing decided without asking
    assert any("31 of the 32 requested judgments are not made yet" in w.value for w in lead.warning)
    lead.button(key="pe_decide_keep").click()
    run_ok(lead)
    assert (lead.session_state["pe.protocol"].round, lead.session_state["pe.protocol"].cost_used) == (1, 1)


def test_a_budget_the_app_chose_for_a_live_study_is_not_carried_into_a_replay(data_dir: Path) -> None:  # noqa: F811
    at = start_protocol(0, batch=2, mode="live")  # no budget given: the app chooses a quarter of the outputs
    live = at.session_state["pe.protocol"].settings.budget
    assert live > 0
    assert next(n for n in at.number_input if n.label.startswith("Budget")).value == 0  # shown unset, chosen again
    at.radio[0].set_value("replay")
    next(b for b in at.button if "Start protocol" in b.label).click()
    run_ok(at)
    replay = at.session_state["pe.protocol"]
    assert replay.settings.budget > live  # every judgment the data holds, not the live study's quarter
