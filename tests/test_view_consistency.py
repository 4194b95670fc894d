"""Views of one run that never contradict each other or the method (the dashboard audit of
2026-11-29): one verdict per pair against the full evaluation (open pairs apart) in the Pairs tab,
the *Decided so far* figure, the Baselines table and the report; a tier question scored by its tier;
the report's judge line as the Protocol page says it; system names as written; no certainty from one
judgment on the leaderboard; the futility toggle as the run uses it."""

from __future__ import annotations

import json

import numpy as np
import pytest

import prefeval_core.api as pe
from prefeval_core.cli import main
from prefeval_core.diagnostics.comparison import ERROR_LABELS, ERROR_TYPES, OPEN, OPEN_LABEL
from prefeval_core.diagnostics.leaderboard import comparison_points, leaderboard
from prefeval_core.protocol import ProtocolState
from prefeval_core.protocol.result import ProtocolResult, protocol_result
from prefeval_core.workflow import start_study, study_table
from prefeval_core.workflow.answers import leaderboard_json
from prefeval_core.workflow.baselines import FRAME_COLUMNS, TIER_COLUMNS, baselines_at, baselines_frame
from prefeval_core.workflow.replay_steps import next_round
from prefeval_core.workflow.setup import StudySetup, futility_in_force
from prefeval_core.workflow.status import NO_JUDGE_WORDS, judge_words
from prefeval_core.workflow.study_report import session_report_html, summary_section
from prefeval_core.workflow.views import decisions_dag, table_verdicts, verdicts_frame
from tests.page_fixtures import ROOT, data_dir, metric_values, page, run_ok, shown, start_protocol  # noqa: F401 (a fixture)

SAMPLE = str(ROOT / "sample_data" / "summeval")


@pytest.fixture(scope="module")
def three_rounds() -> tuple[ProtocolState, ProtocolResult]:
    """The audit's run: the default all-pairs replay on the bundled summeval sample with its judge, three rounds in."""
    data = pe.load_sample("summeval")
    setup = StudySetup(human="human:relevance", metrics=("rougeL",))
    state = start_study(study_table(data, setup), setup)
    for _ in range(3):
        state = next_round(state)
    return state, protocol_result(state)


def _dag_legend(state: ProtocolState, result: ProtocolResult) -> dict[str, object]:
    figure, _ = decisions_dag(
        tuple(state.table.pairs),
        tuple(int(d) for d in state.decisions),
        tuple(int(c) for c in result.comparison.reference),
        tuple(float(t) for t in state.status.theta),
        "decided so far",
        table_verdicts(state, result),
    )
    return {"names": [t.name for t in figure.data if t.name], "cells": int(np.sum(~np.isnan(np.asarray(figure.data[0].z, dtype=float))))}


def test_the_pairs_tab_the_dag_and_the_baselines_count_one_run_alike(three_rounds) -> None:  # type: ignore[no-untyped-def]
    state, result = three_rounds
    assert not result.finished and int(np.sum(state.decisions != 1)) == 1  # one pair decided, 119 open
    tally = result.tally()
    assert tally[OPEN] == 119 and tally["omission"] == 0 and int(result.scored.sum()) == 1  # an open pair is no omission yet
    # the Pairs tab
    frame = verdicts_frame(result)
    assert dict(zip(frame["verdict"], frame["pairs"], strict=True)) == {ERROR_LABELS["correct_significant"]: 1, OPEN_LABEL: 119}
    # the "Decided so far" matrix: the one decision drawn, the open pairs counted apart and drawn nowhere (no blue omission cells)
    legend = _dag_legend(state, result)
    assert legend["names"] == ["Correct (significant): 1 pair", f"{OPEN_LABEL}: 119 pairs, not drawn"]
    assert legend["cells"] == 1
    # the Baselines table: the run's row is the same tally, against the same reference
    table = baselines_frame(state, baselines_at(state, n_resamples=20), result)
    assert tuple(table.columns) == FRAME_COLUMNS
    run = table.iloc[0].to_dict()
    expected = {"method": "prefeval protocol (this run)", "decided": 1, "correct": 1, "inversion": 0, "omission": 0, "insertion": 0}
    assert run == expected | {"open": 119}
    assert (table[["correct", "inversion", "omission", "insertion", "open"]].sum(axis=1) == 120).all()
    assert (table["open"].iloc[1:] == 0).all()  # the baselines look once: what they leave undecided is final
    # the report says the same
    summary = summary_section(state, result, None).html_body
    assert "1 of 1 scored pairs agree with the full human evaluation; 0 inversions; 119 open" in summary


def test_once_the_run_has_ended_an_undecided_pair_is_an_omission_in_every_view() -> None:
    run = pe.replay(pe.load_sample("summeval"), "human:relevance", "rougeL", budget=900)
    state, result = run.run.state, run.run.result
    assert result.finished and result.tally()[OPEN] == 0 and result.scored.all()
    types, counts = np.unique(result.comparison.error_types, return_counts=True)
    assert {t: result.tally()[t] for t in types} == dict(zip(types, counts.tolist(), strict=True))
    row = baselines_frame(state, baselines_at(state, n_resamples=20), result).iloc[0]
    assert (row["omission"], row["open"]) == (result.tally()["omission"], 0) and row["omission"] > 0
    omitted = [n for n in _dag_legend(state, result)["names"] if str(n).startswith("Omission")]  # type: ignore[attr-defined]
    assert omitted == [f"Omission: {result.tally()['omission']} pairs"]


def test_the_baselines_score_a_top_k_run_by_its_tier() -> None:
    run = pe.replay(pe.load_sample("summeval"), "human:relevance", "rougeL", question="top-k", k=1)
    state, result = run.run.state, run.run.result
    assert result.top_k is not None and result.top_k.false_exclusions == 0
    table = baselines_frame(state, baselines_at(state, n_resamples=20), result)
    assert tuple(table.columns) == TIER_COLUMNS and "omission" not in table  # no pair verdicts for a question about a tier
    own = table.iloc[0]
    assert (own["tier members left out"], own["extras"], own["exact match"]) == (0, result.top_k.extras, result.top_k.exact_match)
    assert own["tier"] == " and ".join(", ".join(result.top_k.answer.members).rsplit(", ", 1))
    assert (table["tier members left out"] >= 0).all() and len(table) > 3


def test_a_live_report_says_how_its_judge_enters_as_the_protocol_page_does() -> None:
    data = pe.load_sample("summeval")
    setup = StudySetup(human="human:relevance", metrics=("rougeL",), mode="live", budget=400)
    state = start_study(study_table(data, setup), setup)
    html = session_report_html("live", state, setup)
    said = judge_words(state.settings)
    assert said.startswith("The judge (rougeL): under question error control") and "the judge does not enter" in said
    assert said.replace("'", "&#x27;") in html and "No judge" not in html
    human_only = StudySetup(human="human:relevance", mode="live", budget=400)
    alone = start_study(study_table(data, human_only), human_only)
    assert judge_words(alone.settings) == NO_JUDGE_WORDS and NO_JUDGE_WORDS in session_report_html("live", alone, human_only)


def test_the_question_keeps_the_case_of_system_names() -> None:
    run = pe.replay(pe.load_sample("summeval"), "human:relevance", question="baseline", baselines="M8", budget=300)
    html = summary_section(run.run.state, run.run.result, None).html_body
    assert "<dd>Is each system better or worse than M8.</dd>" in html and "m8" not in html


def test_one_judgment_gives_no_interval_and_nobody_a_chance_of_being_best() -> None:
    # a: one rating of 5; b: ratings 4, 3, 5; c: none
    points = np.array([[5.0, 0, 0], [4.0, 3.0, 5.0], [0, 0, 0]])
    weights = np.array([[1.0, 0, 0], [1.0, 1.0, 1.0], [0, 0, 0]])
    board = leaderboard(["a", "b", "c"], points, weights, np.array([1, 3, 0]), kind="mean score", draws=200)
    rows = {row["system"]: row for row in leaderboard_json(board)["leaderboard"]}
    assert rows["a"]["score"] == 5.0 and rows["a"]["low"] is None and rows["a"]["high"] is None
    assert rows["b"]["low"] is not None and rows["b"]["low"] < 4.0 < rows["b"]["high"]
    assert rows["c"]["score"] is None and all(row["p_top"] is None for row in rows.values())  # unknown, not 0 or 0.64
    assert "Unknown (None on the page, – in the report)" in board.method()
    # comparisons: one comparison is one item, no interval either
    points, weights = comparison_points(2, 2, np.array([[0, 1]]), np.array([0]), np.array([1], dtype=np.int8))
    one = leaderboard(["x", "y"], points, weights, np.array([1, 1]), kind="win rate", draws=200)
    assert np.isnan(one.low).all() and np.isnan(one.p_top).all() and (one.score == 0.5).all()
    # two judged items or more everywhere: the intervals and P(top k) are back
    full = leaderboard(["a", "b"], np.array([[5.0, 4.0], [3.0, 2.0]]), np.ones((2, 2)), np.array([2, 2]), kind="mean score", draws=200)
    assert not np.isnan(full.p_top).any() and full.p_top.sum() == pytest.approx(1.0) and not full.too_few.any()


def test_the_command_line_prints_a_leaderboard_with_unknown_values(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["replay", "--data", SAMPLE, "--human", "human:relevance", "--question", "top-k", "--k", "1", "--budget", "20", "--batch", "1"]
    assert main([*argv, "--json"]) == 0
    board = json.loads(capsys.readouterr().out)["summary"]["leaderboard"]
    assert any(row["low"] is None for row in board) and all(row["p_top"] is None for row in board)  # the keys stay, as null
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "[-]  P(top 1) -" in out


def test_the_paper_s_rule_runs_without_a_futility_stop() -> None:
    assert futility_in_force("none", 0.05) is None and futility_in_force("question", 0.05) == 0.05


@pytest.mark.page
@pytest.mark.usefixtures("data_dir")
def test_the_protocol_page_shows_one_tally_in_its_tabs() -> None:
    at = start_protocol(0)
    for _ in range(3):
        at.button(key="pe_next").click()
        run_ok(at)
    result = protocol_result(at.session_state["pe.protocol"])
    tally = result.tally()
    assert tally[OPEN] > 0
    at.session_state["pe.w.protocol_tab"] = "Pairs"
    run_ok(at)
    scored = int(result.scored.sum())
    correct = tally["correct_significant"] + tally["correct_undecided"]
    assert metric_values(at)["Correct decisions"] == f"{correct / scored:.1%}"
    (verdicts,) = [d.value for d in at.dataframe if "verdict" in d.value.columns]
    assert dict(zip(verdicts["verdict"], verdicts["pairs"], strict=True))[OPEN_LABEL] == tally[OPEN]
    at.session_state["pe.w.protocol_tab"] = "Decided so far"
    run_ok(at)
    (chart,) = at.get("plotly_chart")
    names = [t.get("name", "") for t in json.loads(chart.proto.spec)["data"]]
    assert f"{OPEN_LABEL}: {tally[OPEN]} pairs, not drawn" in names and not any(n.startswith("Omission") for n in names)
    at.session_state["pe.w.protocol_tab"] = "Baselines"
    run_ok(at)
    assert "))" not in " ".join(c.value for c in at.caption) and ").)" not in " ".join(c.value for c in at.caption)
    at.button(key="pe_baselines").click()
    run_ok(at)
    own = at.dataframe[-1].value.iloc[0]
    assert own["open"] == tally[OPEN] and own["omission"] == tally["omission"]
    assert own["correct"] == correct and own["inversion"] == tally["inversion"] and own["insertion"] == tally["insertion"]
    assert set(ERROR_TYPES) >= {k for k, n in tally.items() if n and k != OPEN}


@pytest.mark.page
@pytest.mark.usefixtures("data_dir")
def test_the_question_header_keeps_system_names_and_reads_apart_from_the_answer() -> None:
    at = run_ok(page("protocol.py"))
    next(s for s in at.selectbox if s.label == "Question").set_value("baseline")
    at.multiselect[0].set_value(["M8"])
    next(n for n in at.number_input if n.label.startswith("Budget")).set_value(300)
    at.button[0].click()
    run_ok(at)
    header = shown(at.info[0].value)
    assert header.startswith("**Question:** Is each system better or worse than M8  \n**Answer:** ")


@pytest.mark.page
@pytest.mark.usefixtures("data_dir")
def test_the_futility_toggle_is_off_under_the_paper_s_rule_and_says_why() -> None:
    at = start_protocol(300, **{"Error control": "none"})
    assert at.session_state["pe.protocol"].settings.futility is None  # what the run does
    toggle = next(t for t in at.toggle if t.label == "Futility stop")
    assert toggle.value is False
    assert any("the paper's rule (error control none) has no futility stop" in shown(c.value) for c in at.caption)
    assert toggle.disabled  # nothing to turn on: the level is kept for the other rules
    next(s for s in at.selectbox if s.label == "Error control").set_value("question")
    next(b for b in at.button if "Start protocol" in b.label).click()
    run_ok(at)
    assert at.session_state["pe.protocol"].settings.futility == 0.05  # back under another rule, the stop is back


@pytest.mark.page
@pytest.mark.usefixtures("data_dir")
def test_under_the_default_rule_the_futility_toggle_is_on_and_nothing_is_said_against_it() -> None:
    at = start_protocol(300)
    assert at.session_state["pe.protocol"].settings.futility is not None
    assert next(t for t in at.toggle if t.label == "Futility stop").value is True
    assert not any("no futility stop" in shown(c.value) for c in at.caption)
