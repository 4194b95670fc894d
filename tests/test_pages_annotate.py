"""Annotate page: three annotations land in the store at once and survive a fresh session;
left/right order is undone when stored; undo; feeding the store into a live protocol; the lead
annotates under a name kept in the session, never taken from or written to the address."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from prefeval_core.annotation.blind import BlindKey, BlindTasks
from prefeval_core.annotation.left_right import left_right, outcome_from_choice
from prefeval_core.store import open_store
from tests.page_fixtures import (
    data_dir,  # noqa: F401 (a fixture)
    downloads,  # noqa: F401 (a fixture)
    page,
    page_with_protocol,
    run_ok,
    shown,
    start_protocol,
)

pytestmark = pytest.mark.page


def shown_task(at) -> tuple[str, str, str, str]:
    """(item, system_a, system_b, left system) of the item on screen."""
    item = next(shown(c.value).split("· item ")[1] for c in at.caption if "· item " in c.value)  # above the source
    a, b = at.selectbox(key="pe.w.annotate_pair").value
    return item, a, b, left_right(0, "sample:summeval", item, a, b)[0]


def test_three_annotations_are_stored_and_survive_a_fresh_session(data_dir: Path) -> None:  # noqa: F811
    at = run_ok(page("annotate.py"))
    at.text_input(key="pe.w.annotator").input("tester")
    run_ok(at)
    expected = []
    for key, choice in [("pe_ann_left", "left"), ("pe_ann_equal", "equal"), ("pe_ann_right", "right")]:
        item, a, b, left = shown_task(at)
        expected.append((item, a, b, outcome_from_choice(choice, left, a, b), left))  # type: ignore[arg-type]
        at.button(key=key).click()
        run_ok(at)
    assert len({e[0] for e in expected}) == 3  # the page moved on to the next item each time

    fresh = run_ok(page("annotate.py"))  # a new browser session: nothing in session state
    fresh.text_input(key="pe.w.annotator").input("tester")
    run_ok(fresh)
    assert fresh.get("progress")[0].proto.text.startswith("3 of 100 judged by tester")
    stored = open_store(data_dir).comparisons("sample:summeval")
    assert [(s.item_id, s.system_a, s.system_b, s.outcome, s.left_system) for s in stored] == expected
    assert {s.annotator for s in stored} == {"tester"}
    assert shown_task(fresh)[0] not in {e[0] for e in expected}

    fresh.button(key="pe_ann_undo").click()
    run_ok(fresh)
    assert [s.item_id for s in open_store(data_dir).comparisons("sample:summeval")] == [e[0] for e in expected[:2]]
    assert shown_task(fresh)[0] == expected[2][0]  # the undone item is asked again


def test_the_lead_annotates_under_a_name_of_the_session_not_of_the_address(data_dir: Path) -> None:  # noqa: F811
    at = page("annotate.py")
    at.query_params["annotator"] = "mallory"  # an address naming someone gives nobody an identity
    run_ok(at)
    assert at.get("progress")[0].proto.text.startswith("0 of 100 judged by lead")
    at.text_input(key="pe.w.annotator").input("lee")
    run_ok(at).button(key="pe_ann_left").click()
    run_ok(at)
    assert at.get("progress")[0].proto.text.startswith("1 of 100 judged by lee")
    assert at.query_params.get("annotator") in (None, "mallory")  # the name is never written to the address
    assert [c.annotator for c in open_store(data_dir).comparisons("sample:summeval")] == ["lee"]
    at.text_input(key="pe.w.annotator").input("")
    assert run_ok(at).get("progress")[0].proto.text.startswith("0 of 100 judged by lead")


def test_the_lead_is_warned_when_annotating_under_an_invited_annotators_name(data_dir: Path) -> None:  # noqa: F811
    from prefeval_core.workflow.roles import invite_annotator
    from tests.test_partial_round import study_with_16_of_100

    store = open_store(data_dir)
    study, _ = study_with_16_of_100(store)
    invite_annotator(store, study.id, "alice")
    at = page("annotate.py")
    at.query_params["study"] = str(study.id)
    assert not run_ok(at).warning
    at.text_input(key="pe.w.annotator").input("alice")
    assert "alice is an invited annotator" in run_ok(at).warning[0].value


def test_live_protocol_asks_and_takes_the_stored_annotations(data_dir: Path) -> None:  # noqa: F811
    at = start_protocol(500, batch=1, mode="live", unit="comparisons")
    annotate = run_ok(page_with_protocol("annotate.py", at))
    assert "round 1: 120 comparisons" in annotate.caption[0].value
    for _ in range(3):
        annotate.button(key="pe_ann_left").click()
        run_ok(annotate)
        if len(open_store(data_dir).comparisons("sample:summeval")) == 1:  # one judgment, in the singular
            assert annotate.button(key="pe_feed").label == "Decide now with 1 new judgment (1 of 120 requested)"
    assert annotate.button(key="pe_feed").label == "Decide now with 3 new judgments (3 of 120 requested)"
    annotate.button(key="pe_feed").click()
    run_ok(annotate).button(key="pe_decide_keep").click()  # part-way: asked first
    run_ok(annotate)
    fed = annotate.session_state["pe.protocol"]
    assert (fed.round, fed.cost_used) == (1, 3)
    assert fed.cost_used == len(open_store(data_dir).comparisons("sample:summeval"))


def test_request_file_round_trip(data_dir: Path, downloads) -> None:  # noqa: F811
    at = run_ok(page("annotate.py"))
    requests = downloads(at, "Requests as CSV").decode()
    rows = list(csv.DictReader(io.StringIO(requests)))
    assert len(rows) == 100 and rows[0]["label"] == "" and rows[0]["output_a"]
    # blind: no system name anywhere in the file; both sides of the pairs are shown as A
    assert list(rows[0]) == ["request_id", "item_id", "source", "output_a", "output_b", "label", "annotator", "digest"]
    systems = {f"M{k}" for k in range(24)}
    assert not any(cell in systems for row in rows for cell in row.values())
    # the side shown as A is no column: the store's secret for the data finds it with the task
    blind = BlindTasks.of("sample:summeval", None, systems, BlindKey(open_store(data_dir).secret("sample:summeval", None)))
    sides = [blind.find("comparison", row["item_id"], row["request_id"])[1] for row in rows]  # type: ignore[index]
    assert set(sides) == {"first", "second"}
    rows[0]["label"], rows[1]["label"], rows[2]["label"] = ">", "tie", "B"
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    at.file_uploader(key="pe.w.annotated").set_value(("done.csv", buffer.getvalue().encode(), "text/csv"))
    run_ok(at)
    assert "Imported 3 judgments from done.csv (0 were already stored)" in shown(at.success[0].value)
    stored = open_store(data_dir).comparisons("sample:summeval")
    a_better = [0 if side == "first" else 2 for side in sides[:3]]  # the canonical outcome of "A better"
    outcomes = [a_better[0], 1, 2 - a_better[2]]
    expected = [(row["item_id"], outcome, side == "first") for row, outcome, side in zip(rows[:3], outcomes, sides[:3], strict=True)]
    assert sorted((s.item_id, s.outcome, s.left_system == s.system_a) for s in stored) == sorted(expected)
    assert any("Which side wins" in m.value for m in at.markdown)
    assert at.selectbox(key="pe.w.agree_metric").value == "bleu"  # no study: the data's first metric, for agreement with it
    bias = next(d.value for d in at.dataframe if "left output won" in d.value.columns)
    # row 1 said A (the left output) is better, row 3 B: one of the two decisive judgments went left
    assert bias["decisive judgments"].tolist() == [2] and bias["left output won"].tolist() == [0.5]

    rows[3]["label"] = "maybe"
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    at.file_uploader(key="pe.w.annotated").set_value(("bad.csv", buffer.getvalue().encode(), "text/csv"))
    at.run()
    assert "bad.csv, row 4" in shown(at.error[0].value)


def test_a_replay_study_offers_nothing_to_judge_and_is_never_fed(data_dir: Path) -> None:  # noqa: F811
    from prefeval_core.errors import SettingsError
    from prefeval_core.workflow import StudySetup
    from prefeval_core.workflow.studies import begin_study
    from tests.test_partial_round import four_systems

    store, data = open_store(data_dir), four_systems()
    study = begin_study(store, data, data.load(), StudySetup(human="human", unit="ratings", mode="replay", budget=20, batch=4))
    at = page("annotate.py")
    at.query_params["study"] = str(study.id)
    run_ok(at)
    assert at.session_state["pe.protocol"] is not None  # the replay is the session's study, part-way
    assert "A replay's judgments come from its data" in at.info[0].value and "Protocol page" in at.info[0].value
    assert [t.label for t in at.tabs] == ["Stored judgments", "Team"]  # no queue, no rating screen, no request files
    keys = {b.key for b in at.button}
    assert "pe_feed" not in keys and not {k for k in keys if k and k.startswith(("pe_rate_", "pe_ann_"))}
    assert not at.get("progress") and not at.file_uploader
    from prefeval_core.workflow.feed import decide_stored

    with pytest.raises(SettingsError, match="a replay study takes its judgments from its data"):  # Decide now refuses it too
        decide_stored(store, data.key, study.state, mode="replay", study_id=study.id)
    assert store.latest_state(study.id).kind == "start"


def test_the_file_instructions_show_column_names_as_written(data_dir: Path) -> None:  # noqa: F811
    at = run_ok(page("annotate.py"))
    [how] = [c.value for c in at.caption if "digest" in c.value]
    assert "leave `request_id`, the texts and `digest` as exported" in how and "\\_" not in how


def test_the_open_tab_stays_open_after_saving_on_team(data_dir: Path) -> None:  # noqa: F811
    from tests.test_partial_round import study_with_16_of_100

    study, _ = study_with_16_of_100(open_store(data_dir))
    at = page("annotate.py")
    at.query_params["study"] = str(study.id)
    run_ok(at)
    at.session_state["pe.w.annotate_tab"] = "Team"  # the lead opened the Team tab
    run_ok(at)
    next(t for t in at.text_input if t.label.startswith("Criterion")).set_value("fluency")
    next(b for b in at.button if b.label == "Save").click()
    run_ok(at)
    assert "Saved" in at.success[0].value
    assert at.session_state["pe.w.annotate_tab"] == "Team"
    [container] = [n for n in at._tree if getattr(n, "type", None) == "tab_container"]
    assert container.proto.tab_container.default_tab_index == 3  # the browser shows Team, not "In the app"
