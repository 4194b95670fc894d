"""Issue 19: deciding part-way through a round loses nothing. 16 of 100 requested ratings are
made; the lead decides now: the 84 open requests stay queued (the next request asks for each of
them again), the 16 judgments count, every stored judgment is still there; the page asks first.
Or the lead withdraws the open requests: nobody is asked for them, the next request asks for
others, a judgment that still comes in is stored and fed once its task is asked again; the
withdrawal survives a reload and goes with an undo."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from prefeval_core.errors import SettingsError
from prefeval_core.protocol import next_request, state_from_dict, state_from_json, state_to_dict, state_to_json, undo_round
from prefeval_core.protocol.settings import Question
from prefeval_core.store import Rating, Store, open_store, utc_now
from prefeval_core.vocabulary.tasks import RatingTask
from prefeval_core.workflow import StudySetup
from prefeval_core.workflow.feed import decide_now, round_progress, stored_judgments
from prefeval_core.workflow.queue import requested_tasks
from prefeval_core.workflow.session import DataChoice
from prefeval_core.workflow.studies import Study, begin_study, record_state, resume_study
from tests.page_fixtures import data_dir, page, run_ok

__all__ = ["data_dir"]

SYSTEMS = {"s1": 1, "s2": 2, "s3": 3, "s4": 4}


def four_systems(items: int = 40) -> DataChoice:
    texts = "".join(f"i{k:02d},{s},text {k} of {s}\n" for k in range(items) for s in SYSTEMS)
    ratings = "".join(f"i{k:02d},{s},human,{q}\n" for k in range(3) for s, q in SYSTEMS.items())
    files = (
        ("texts.csv", ("item_id,system,output\n" + texts).encode()),
        ("ratings.csv", ("item_id,system,rater,score\n" + ratings).encode()),
    )
    return DataChoice("upload", f"four-systems-{items}", files)


def study_with_16_of_100(store: Store) -> tuple[Study, list[RatingTask]]:
    data = four_systems()
    setup = StudySetup(human="human", unit="ratings", mode="live", budget=150, batch=25)
    study = begin_study(store, data, data.load(), setup)
    tasks = [t for t in next_request(study.state).tasks if isinstance(t, RatingTask)]
    assert len(tasks) == 100
    for k, task in enumerate(tasks[:16]):
        store.add(Rating(data.key, task.item_id, task.system, 1 + k % 5, f"ann{k % 2}", utc_now(), study_id=study.id))
    return study, tasks


def test_deciding_after_16_of_100_keeps_the_84_open_requests(data_dir: Path) -> None:
    store = open_store(data_dir)
    study, asked = study_with_16_of_100(store)
    fed = stored_judgments(store, study.data.key, study.state, study_id=study.id)
    progress = round_progress(study.state, fed)
    assert (progress.requested, progress.judged, progress.open, progress.extra) == (100, 16, 84, 0)
    early = decide_now(study.state, fed)
    assert early.kept == 84 and early.state.round == 1 and early.state.cost_used == 16
    again = set(next_request(early.state).tasks)
    assert set(asked[16:]) <= again and not set(asked[:16]) & again  # the open ones asked again, the judged ones not
    assert len(store.ratings(study.data.key, study_id=study.id)) == 16  # nothing lost


def rate(store: Store, study: Study, tasks: list[RatingTask], annotator: str) -> None:
    for k, task in enumerate(tasks):
        store.add(Rating(study.data.key, task.item_id, task.system, 1 + k % 5, annotator, utc_now(), study_id=study.id))


def test_withdrawing_the_open_requests_asks_for_others_and_survives_a_reload(data_dir: Path) -> None:
    store = open_store(data_dir)
    data = four_systems()
    setup = StudySetup(human="human", unit="ratings", mode="live", budget=150, batch=10)
    study = begin_study(store, data, data.load(), setup)
    asked = [t for t in next_request(study.state).tasks if isinstance(t, RatingTask)]
    rate(store, study, asked[:6], "ann0")
    fed = stored_judgments(store, data.key, study.state, study_id=study.id)
    early = decide_now(study.state, fed, "withdraw")
    assert (early.withdrawn, early.kept, early.state.round, early.state.cost_used) == (34, 0, 1, 6)
    again = set(requested_tasks(early.state))
    assert len(again) == 40 and not again & set(asked)  # nobody is served the withdrawn ones; the next request asks for others
    assert undo_round(early.state).withdrawn == () and set(asked[6:]) <= set(next_request(undo_round(early.state)).tasks)

    record_state(store, study.id, early.state, "feed")
    resumed = resume_study(store, study.id, data.load())
    assert resumed.state.withdrawn == early.state.withdrawn and set(next_request(resumed.state).tasks) == again
    assert "withdrawn" not in state_to_dict(study.state)  # nothing withdrawn: the state is saved as before
    older = state_to_json(study.state)  # a state saved before requests could be withdrawn still loads
    assert state_from_json(older, study.table).withdrawn == ()

    rate(store, study, asked[6:7], "ann1")  # a late judgment of a withdrawn task: stored, not fed
    assert len(store.ratings(data.key, study_id=study.id)) == 7
    assert stored_judgments(store, data.key, resumed.state, study_id=study.id) == []


def test_a_late_judgment_of_a_withdrawn_task_is_fed_once_the_task_is_asked_again(data_dir: Path) -> None:
    store = open_store(data_dir)
    data = four_systems(items=12)  # 10 items asked in round 1, only 2 left after: withdrawn ones are asked again
    setup = StudySetup(human="human", unit="ratings", mode="live", budget=150, batch=10)
    study = begin_study(store, data, data.load(), setup)
    asked = [t for t in next_request(study.state).tasks if isinstance(t, RatingTask)]
    rate(store, study, asked[:4], "ann0")
    early = decide_now(study.state, stored_judgments(store, data.key, study.state, study_id=study.id), "withdraw")
    again = list(next_request(early.state).tasks)
    fresh = [t for t in again if t not in asked]
    assert len(fresh) == 8 and again[:2] == [t for t in fresh if t.system == "s1"]  # the others first, then the withdrawn
    asked_again = [t for t in asked[4:] if t in again]
    not_again = [t for t in asked[4:] if t not in again]
    assert early.kept == len(asked_again) > 0 and not_again
    rate(store, study, [asked_again[0], not_again[0]], "ann1")
    late = stored_judgments(store, data.key, early.state, study_id=study.id)
    assert [(j.item_id, j.system) for j in late] == [(asked_again[0].item_id, asked_again[0].system)]


def test_studies_step_withdraws_the_open_requests_when_asked(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from prefeval_core.cli import main

    monkeypatch.setenv("PREFEVAL_DATA_DIR", str(data_dir))
    store = open_store(data_dir)
    study, _ = study_with_16_of_100(store)
    assert main(["studies", "step", str(study.id), "--withdraw-open", "--json"]) == 0
    stepped = resume_study(store, study.id, four_systems().load()).state
    assert (stepped.round, stepped.cost_used, len(stepped.withdrawn)) == (1, 16, 84)


@pytest.mark.parametrize(
    ("withdrawn", "refusal"),
    [([[10**6, 1]], r"withdrawn\[0\]\[0\].*outside the study table"), ([[0, 1]], r"withdrawn\[0\]\[1\].*after the last decided round")],
)
def test_a_saved_state_with_impossible_withdrawals_is_refused(withdrawn: list[list[int]], refusal: str) -> None:
    from prefeval_core.workflow.study import start_study, study_table

    setup = StudySetup(human="human", unit="ratings", budget=150, batch=10)
    table = study_table(four_systems().load(), setup)
    saved = state_to_dict(start_study(table, setup)) | {"withdrawn": withdrawn}
    with pytest.raises(SettingsError, match=refusal):
        state_from_dict(saved, table)


def test_the_annotate_page_asks_before_deciding_part_way(data_dir: Path) -> None:
    store = open_store(data_dir)
    study, asked = study_with_16_of_100(store)
    at = page("annotate.py")
    at.query_params["study"] = str(study.id)
    run_ok(at)
    assert "16 of 100 requested" in at.button(key="pe_feed").label
    at.button(key="pe_feed").click()
    run_ok(at)
    assert "84 of the 100 requested judgments are not made yet" in at.warning[0].value
    assert at.session_state["pe.protocol"].round == 0  # asking decides nothing
    at.button(key="pe_decide_keep").click()
    run_ok(at)
    assert "the 84 still open stay in the queue" in at.success[0].value
    resumed = resume_study(store, study.id, four_systems().load())
    assert resumed.state.round == 1 and set(asked[16:]) <= set(next_request(resumed.state).tasks)
    assert len(store.ratings(study.data.key, study_id=study.id)) == 16


def test_the_annotate_page_withdraws_the_open_requests_by_choice(data_dir: Path) -> None:
    store = open_store(data_dir)
    study, _ = study_with_16_of_100(store)
    at = page("annotate.py")
    at.query_params["study"] = str(study.id)
    run_ok(at)
    at.button(key="pe_feed").click()
    run_ok(at).button(key="pe_decide_withdraw").click()
    run_ok(at)
    assert "the 84 still open are withdrawn" in at.success[0].value
    resumed = resume_study(store, study.id, four_systems().load())
    assert resumed.state.round == 1 and len(resumed.state.withdrawn) == 84
    assert len(store.ratings(study.data.key, study_id=study.id)) == 16


def test_budget_used_and_the_forecast_with_its_rule() -> None:
    from prefeval_core.protocol import replay_source, run_protocol
    from prefeval_core.workflow.forecast import budget_forecast
    from prefeval_core.workflow.study import start_study, study_table
    from prefeval_core.workflow.views import study_status

    close = {"s1": 0, "s2": 0, "s3": 4, "s4": 8}  # s1 and s2 alike: their pair stays open
    rows = "".join(f"i{k:02d},{s},human,{q + (k + i) % 3}\n" for k in range(40) for i, (s, q) in enumerate(close.items()))
    data = DataChoice("upload", "clear", (("ratings.csv", ("item_id,system,rater,score\n" + rows).encode()),)).load()
    setup = StudySetup("human", unit="ratings", batch=5, budget=150)
    state = start_study(study_table(data, setup), setup)
    fresh = budget_forecast(state)
    assert (fresh.used, fresh.budget, fresh.likely_needed) == (0, 150, 150) and fresh.rule == "no pair decided yet: the budget left"
    later = run_protocol(state, replay_source(state.table), max_rounds=2)
    status, forecast = study_status(later), budget_forecast(later)
    assert 0 < status.decided < status.pairs and status.matter > 0 and forecast.used == status.cost_used
    per_pair = status.cost_used / status.decided
    assert forecast.likely_needed == min(150 - status.cost_used, math.ceil(per_pair * status.matter))
    assert forecast.sentence().startswith(f"Budget: {status.cost_used} / 150 ratings used; likely still needed: about ")
    top = setup.with_(question=Question("top-k", 1), budget=600)  # a tier question: the rate is per system ruled out
    state = start_study(study_table(data, top), top)
    assert budget_forecast(state).rule == "no system ruled out yet: the budget left"
    later = next(s for s in (run_protocol(state, replay_source(state.table), max_rounds=r) for r in range(1, 20)) if (~s.members).any())
    status, forecast = study_status(later), budget_forecast(later)
    per_system = status.cost_used / status.ruled_out
    still = status.systems - status.ruled_out - 1
    assert forecast.likely_needed == min(600 - status.cost_used, math.ceil(per_system * still)) and "per system ruled out" in forecast.rule


def test_deciding_now_refuses_a_stored_rating_far_off_the_scale(data_dir: Path) -> None:
    """The dashboard's *Decide now* checks what it feeds as ``studies step`` does: a rating no
    prefeval screen or import could store (1e308 on a 1-5 scale) stops the round, naming the study."""
    from prefeval_core.workflow.feed import decide_stored
    from prefeval_core.workflow.studies import request_scale

    store = open_store(data_dir)
    study, asked = study_with_16_of_100(store)
    scale = request_scale(four_systems().load(), study.state)
    assert decide_stored(store, study.data.key, study.state, mode="live", study_id=study.id, scale=scale).state.round == 1
    store.add(Rating(study.data.key, asked[20].item_id, asked[20].system, 1e308, "ann0", utc_now(), study_id=study.id))
    with pytest.raises(SettingsError, match=f"study {study.id} cannot be used: the store holds 1 rating"):
        decide_stored(store, study.data.key, study.state, mode="live", study_id=study.id, scale=scale)
