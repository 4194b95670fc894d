"""Equivalence within a margin δ is a decision, and every view says so (method.md §13): the pairs
table, the run's status, the command line and the stable ``replay --json`` shape, which adds
``equivalent`` / ``false_equivalence`` per pair and ``equivalent_pairs`` / ``false_equivalences``
to the summary, the latter checked against the full evaluation's mean differences."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from prefeval_core.cli import main
from prefeval_core.data.dataset import load_dataset
from prefeval_core.diagnostics.comparison import mean_differences
from prefeval_core.protocol.question_control import pool_differences
from prefeval_core.protocol.result import false_equivalences, protocol_result
from prefeval_core.vocabulary.outcomes import TIE
from prefeval_core.workflow.answers import study_leaderboard
from prefeval_core.workflow.session import DataChoice
from prefeval_core.workflow.status import study_status
from prefeval_core.workflow.study import replay_json, replay_setup, run_replay, study_table
from prefeval_core.workflow.study_report import decisions_matrix_section
from prefeval_core.workflow.views import EQUIVALENT_WORDS, pairs_frame
from tests.page_fixtures import ROOT, data_dir, page, run_ok  # noqa: F401 (a fixture)

TED = ROOT / "sample_data" / "wmt21_ted"


@pytest.fixture(scope="module")
def ted_run():  # type: ignore[no-untyped-def]
    """A finished all-pairs replay of the bundled TED sample with δ = 1 MQM point (the default statistic)."""
    dataset = load_dataset(TED)
    setup = replay_setup("human", question="all-pairs", delta=1.0)
    return run_replay(study_table(dataset, setup), setup)


def test_equivalent_pairs_are_decisions_in_every_view(ted_run) -> None:  # type: ignore[no-untyped-def]
    state = ted_run.state
    equivalent = state.status.equivalent
    assert equivalent.sum() > 5  # the margin is in play on this sample
    frame = pairs_frame(state)
    words = frame["decision"].to_numpy()
    assert (np.char.find(words.astype(str), EQUIVALENT_WORDS) >= 0).sum() == equivalent.sum()
    assert set(words[equivalent & (state.decisions == TIE)]) == {EQUIVALENT_WORDS}
    status = study_status(state)
    assert status.equivalent == int(equivalent.sum())
    assert status.undecided == int(np.sum((state.decisions == TIE) & ~equivalent))
    assert f", {status.equivalent} equivalent" in status.progress_words
    output = replay_json(ted_run)
    assert [pair["equivalent"] for pair in output["pairs"]] == equivalent.tolist()
    assert output["summary"]["equivalent_pairs"] == int(equivalent.sum())
    assert output["summary"]["false_equivalences"] == sum(pair["false_equivalence"] for pair in output["pairs"])


def test_a_false_equivalence_is_found_against_the_full_evaluation(ted_run) -> None:  # type: ignore[no-untyped-def]
    # Mark the pair farthest apart on the full data as equivalent: exactly it (and any pair the run
    # itself got wrong, here none) is a false equivalence.
    state = ted_run.state
    apart = np.abs(mean_differences(pool_differences(state.table, state.settings.statistic)))
    assert apart.max() >= 1.0 and not false_equivalences(state).any()
    far = int(np.argmax(apart))
    last = state.records[-1]
    forced = np.zeros(state.table.n_pairs, dtype=bool)
    forced[last.pairs] = last.equivalent
    forced[far] = True
    rows = np.arange(state.table.n_pairs)
    record = dataclasses.replace(
        last,
        pairs=rows,
        equivalent=forced,
        decision=state.decisions,
        theta=state.status.theta,
        p_mean=state.status.p_mean,
        log_evidence=state.status.log_evidence,
        log_numerator=state.status.log_numerator,
        futile=state.status.futile,
    )
    tampered = dataclasses.replace(state, records=(*state.records[:-1], record))
    assert np.flatnonzero(false_equivalences(tampered)).tolist() == [far]
    assert int(protocol_result(tampered).false_equivalent.sum()) == 1


def test_the_json_says_what_each_pair_s_test_saw_and_what_the_full_evaluation_holds(ted_run) -> None:  # type: ignore[no-untyped-def]
    # counted by hand from the grid: the revealed items both systems were rated on, and every item
    state, output = ted_run.state, replay_json(ted_run)
    grid, table = state.table.grid, state.table
    S = len(table.systems)
    rated = state.reveals.round.reshape(S, -1) > 0
    index = {pair: k for k, pair in enumerate(table.pairs)}
    for pair in output["pairs"]:
        a, b = table.pair_systems[index[pair["system_a"], pair["system_b"]]]
        both = rated[a] & rated[b]
        revealed = (grid.scores[a] - grid.scores[b])[both]
        assert pair["mean_difference"] == pytest.approx(revealed.mean() if both.any() else None, abs=1e-12)
        assert pair["reference_mean_difference"] == pytest.approx(np.nanmean(grid.scores[a] - grid.scores[b]), abs=1e-12)
        assert pair["false_equivalence"] == (pair["equivalent"] and abs(pair["reference_mean_difference"]) >= 1.0)
    assert sum(pair["mean_difference"] is not None for pair in output["pairs"]) > 0


def test_the_command_line_shows_equivalence(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["replay", "--data", str(TED), "--human", "human", "--question", "all-pairs", "--delta", "1"]
    assert main([*argv, "--json"]) == 0
    output = json.loads(capsys.readouterr().out)
    equivalent = sum(pair["equivalent"] for pair in output["pairs"])
    assert equivalent == output["summary"]["equivalent_pairs"] > 0
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert captured.out.count("equivalent within δ") == equivalent
    assert captured.out.count(" ≈ ") == sum(p["equivalent"] and p["outcome"] == "=" for p in output["pairs"])
    assert f"equivalent {equivalent} (false 0)" in captured.out
    assert " equivalent" in captured.err  # the progress lines count them apart from the undecided pairs


@pytest.mark.page
@pytest.mark.usefixtures("data_dir")
def test_the_protocol_page_counts_equivalent_pairs_as_decided() -> None:
    at = page("protocol.py")
    at.session_state["pe.data"] = DataChoice.sample("wmt21_ted")
    at.session_state["pe.human"], at.session_state["pe.metrics"] = "human", ()
    run_ok(at)
    next(n for n in at.number_input if n.label.startswith("Equivalence margin")).set_value(1.0)
    at.button[0].click()  # Start protocol
    run_ok(at)
    at.button(key="pe_run").click()
    run_ok(at)
    status = study_status(at.session_state["pe.protocol"])
    assert status.equivalent and status.equivalent > 5
    decided = next(m for m in at.metric if m.label == "Decided pairs")
    assert decided.value == f"{status.pairs - status.undecided} / {status.pairs}"
    assert "practically equal within the margin" in at.info[0].value


def test_the_report_marks_equivalent_pairs_in_the_decisions_matrix(ted_run) -> None:  # type: ignore[no-untyped-def]
    state, result = ted_run.state, ted_run.result
    section = decisions_matrix_section(state, result, study_leaderboard(state))
    equivalent = int(state.status.equivalent.sum())
    assert section.html_body.count(">≈</td>") == 2 * equivalent  # both cells of each equivalent pair
    assert "≈ equivalent within the margin δ" in section.html_body
    assert section.html_body.count("background:") >= int(np.sum(state.decisions != TIE))  # directions still coloured
