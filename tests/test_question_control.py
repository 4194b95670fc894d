"""Question-level error control and the mean statistic (method.md §13): exact cases, the
without-replacement betting test's validity by simulation, and the whole answer's error rate on
simulated studies with truly tied top systems."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from prefeval_core.data.annotators import comparisons_behind, judgments_behind
from prefeval_core.data.dataset import load_dataset
from prefeval_core.diagnostics.comparison import paired_t_outcomes
from prefeval_core.errors import SettingsError
from prefeval_core.protocol import question_control
from prefeval_core.protocol.ideal_metric import IDEAL_METRIC_NAME
from prefeval_core.protocol.question_control import (
    PairEvidence,
    _holm,
    closed_exclusions,
    holm_directions,
    holm_equivalence,
    member_log_e,
    partition_answer,
)
from prefeval_core.protocol.run import replay_source, run_protocol
from prefeval_core.protocol.settings import ProtocolSettings, Question
from prefeval_core.protocol.simulation import (
    HUMAN,
    expected_scores,
    ideal_mu,
    simulate_question,
    tied_top_study,
    true_means,
    with_ideal_metric,
)
from prefeval_core.protocol.state import ProtocolState, new_state
from prefeval_core.protocol.table import build_study_table
from prefeval_core.sequential.betting import PairSequences, direction_nulls, mean_evidence


def _sequences(d: np.ndarray, *, bound: float = 1.0) -> PairSequences:
    d = np.atleast_2d(np.asarray(d, dtype=np.float64))
    return PairSequences(d=d, pool=np.full(d.shape[0], d.shape[1], dtype=np.int64), bound=np.full(d.shape[0], bound))


def test_symmetry_wealth_exact_case() -> None:
    # Differences 1, 1, -1 on a range of 4: the scale starts at sqrt(1^2 / 1) = 1 (a quarter of the
    # range), so u = 1, 1, -1. The first stake is 0; before the second item the mean past u is 1/2
    # and the variance (1/4 + 1 - 1 + 1/4) / 2 = 1/4: the GRAPA stake 1 is capped at 0.75 (wealth
    # 1.75); before the third the mean is 2/3, the variance 17/108: capped again, and the item
    # loses it (x 0.25).
    a_better, b_better = direction_nulls(_sequences([[1.0, 1.0, -1.0]], bound=4.0))
    assert a_better.log_wealth()[0].tolist() == pytest.approx([0.0, math.log(1.75), math.log(1.75 * 0.25)])
    assert b_better.log_wealth()[0].tolist() == pytest.approx([0.0, 0.0, 0.0])  # its past points the other way


def test_symmetry_test_is_valid_at_a_tie() -> None:
    # 4,000 runs of 60 exchangeable differences: the running maximum of the wealth reaches 1 / a
    # in at most a share a of them (Ville).
    rng = np.random.default_rng(7)
    magnitude = rng.choice([0.0, 1 / 3, 2 / 3, 1.0, 2.0], size=(4000, 60))
    sign = rng.choice([-1.0, 1.0], size=(4000, 60))
    evidence = mean_evidence(_sequences(sign * magnitude, bound=4.0))
    for level in (0.05, 0.2):
        rejected = evidence.direction[:, 0] >= math.log(1 / level)
        assert rejected.mean() <= level + 2 * math.sqrt(level * (1 - level) / 4000)


def test_equivalence_test_is_valid_at_the_margin() -> None:
    # Differences whose distribution is symmetric about δ = 0.5 (A better by exactly δ): the null
    # "A better by δ or more" is rejected in at most gamma of the runs.
    rng = np.random.default_rng(11)
    magnitude = rng.choice([0.0, 1 / 3, 2 / 3, 1.0, 2.0], size=(4000, 80))
    differences = 0.5 + rng.choice([-1.0, 1.0], size=(4000, 80)) * magnitude
    evidence = mean_evidence(_sequences(differences, bound=4.0), delta=0.5)
    upper = evidence.equivalence[:, 0] >= math.log(1 / 0.05)
    assert upper.mean() <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / 4000)


def test_betting_decides_a_clear_difference_and_equivalence() -> None:
    rng = np.random.default_rng(3)
    shifted = np.clip(np.round(rng.normal(0.6, 0.8, (1, 80)) * 3) / 3, -4, 4)
    evidence = mean_evidence(_sequences(shifted, bound=4.0))
    assert evidence.direction[0, 0] > math.log(100)
    assert evidence.direction[0, 1] == pytest.approx(0.0, abs=1e-9)
    flat = np.tile([-0.25, 0.25], 200)[None, :]
    equivalent = mean_evidence(_sequences(flat, bound=4.0), delta=0.5)
    assert (equivalent.equivalence > math.log(40)).all()


def test_holm_step_down_exact_case() -> None:
    gamma = 0.05
    log_e = np.log(np.array([[81.0, 1.0], [1.0, 61.0], [39.0, 1.0]]))
    asked = np.array([True, True, False])  # m = 4 nulls: thresholds 80, then 60
    undecided = np.ones(3, dtype=np.int8)
    assert holm_directions(log_e, asked, undecided, gamma).tolist() == [0, 2, 1]
    weaker = holm_directions(log_e - math.log(1.1), asked, undecided, gamma)
    assert weaker.tolist() == [1, 1, 1]  # 81 / 1.1 < 80: the step-down never starts


def _evidence(direction: list[list[float]], equivalence: list[list[float]]) -> PairEvidence:
    """Evidence of exact e-values: directions (>, <), equivalence (against Δ >= δ, Δ <= -δ), and the
    point null Δ = 0 as the directions' average."""
    d, e = np.log(np.array(direction)), np.log(np.array(equivalence))
    return PairEvidence(None, None, d, d, e, np.logaddexp(d[:, 0], d[:, 1]) - math.log(2.0))


def test_partition_answer_exact_case() -> None:
    # Two asked pairs, a margin, γ = 0.05: every piece is tested at P / γ = 40.
    # Pair 0: E_> = 200 (pieces -δ < Δ < 0 and, with the average 100.5, Δ = 0) and 50 against Δ <= -δ:
    # A is better. Pair 1: 45 and 42 against both outer pieces: equivalent.
    asked, undecided, apart = np.array([True, True]), np.ones(2, dtype=np.int8), np.zeros(2, dtype=bool)
    found = _evidence([[200.0, 1.0], [1.0, 1.0]], [[1.0, 50.0], [45.0, 42.0]])
    decisions, equivalent = partition_answer(found, asked, undecided, apart, 0.05)
    assert decisions.tolist() == [0, 1] and equivalent.tolist() == [False, True]
    # Δ = 0 binds a direction: E_> = 70 passes its own piece, but (70 + 1) / 2 < 40
    decisions, _ = partition_answer(_evidence([[70.0, 1.0], [1.0, 1.0]], [[1.0, 50.0], [1.0, 1.0]]), asked, undecided, apart, 0.05)
    assert decisions.tolist() == [1, 1]
    # so does Δ <= -δ (30 < 40), and one outer piece is not equivalence (42 / 1.3 < 40)
    decisions, equivalent = partition_answer(
        _evidence([[200.0, 1.0], [1.0, 1.0]], [[1.0, 30.0], [45.0, 42.0 / 1.3]]), asked, undecided, apart, 0.05
    )
    assert decisions.tolist() == [1, 1] and equivalent.tolist() == [False, False]
    # the same evidence with one pair asked: 20 is the threshold; kept decisions stay
    kept = np.array([1, 2], dtype=np.int8)
    decisions, equivalent = partition_answer(found, np.array([True, False]), kept, apart, 0.05)
    assert decisions.tolist() == [0, 2] and equivalent.tolist() == [False, False]


def test_point_null_is_the_average_of_the_directions() -> None:
    # Δ = 0 lies in both direction nulls: its e-process is their average, maximised along the path.
    rng = np.random.default_rng(4)
    flat = rng.normal(0.3, 1.0, size=(3, 80)).clip(-2, 2)
    found = mean_evidence(_sequences(flat, bound=4.0), delta=0.5)
    paths = [null.log_wealth() for null in found.nulls]
    expected = np.maximum((np.logaddexp(*paths) - math.log(2.0)).max(axis=1), 0.0)
    np.testing.assert_allclose(found.point, expected)
    assert (found.point <= found.direction.max(axis=1) + 1e-12).all()  # an average is at most the larger
    assert np.isnan(mean_evidence(_sequences(flat, bound=4.0)).point).all()  # no margin: not computed


def test_shaffer_s_bound_exact_cases() -> None:
    # _holm's threshold is min(m - r, most_true) / γ: 4 nulls, at most 2 true -> 40, then 40, 40, 20.
    log_e = np.log(np.array([[50.0, 45.0], [30.0, 1.0]]))
    family, none = np.ones((2, 2), dtype=bool), np.zeros((2, 2), dtype=bool)
    assert _holm(log_e, family, none, 0.05).tolist() == [[False, False], [False, False]]  # Holm: 80 first
    assert _holm(log_e, family, none, 0.05, most_true=2).tolist() == [[True, True], [False, False]]  # 30 < 40 (m - r = 2)
    assert _holm(log_e, family, np.array([[True, True], [False, True]]), 0.05, most_true=2)[1, 0]  # r = 3: 1 / γ = 20
    # the equivalence family: at most one of a pair's two margin nulls holds, so 2 pairs divide γ by 2
    equivalent = holm_equivalence(np.log(np.array([[50.0, 50.0], [100.0, 1.0]])), np.array([True, True]), np.zeros(2, dtype=bool), 0.05)
    assert equivalent.tolist() == [True, False]  # 50 >= 40 (Holm alone: 80)


def test_holm_equivalence_needs_both_sides() -> None:
    log_e = np.log(np.array([[100.0, 100.0], [100.0, 1.0]]))
    equivalent = holm_equivalence(log_e, np.array([True, True]), np.zeros(2, dtype=bool), 0.05)
    assert equivalent.tolist() == [True, False]


def test_closed_testing_exact_case() -> None:
    # 1/gamma = 20. e = (1, 100, 100): the sets containing system 1 have means 100, 50.5, 67: out.
    assert closed_exclusions(np.log([1.0, 100.0, 100.0]), 0.05).tolist() == [False, True, True]
    # e = (1, 30, 100): {1, 0} has mean 15.5 < 20, so system 1 stays; system 2's smallest mean is 43.7.
    assert closed_exclusions(np.log([1.0, 30.0, 100.0]), 0.05).tolist() == [False, False, True]


def test_member_e_value_exact_case() -> None:
    # Four systems; row x holds E_{y > x}. For top-2 each X drops its largest (at most one system may
    # be better than a member) and sums the rest over S - 1 = 3: system 0 faces 40, 8 and 1 ->
    # (8 + 1) / 3 = 3; system 3 faces 100, 2 and 0.5 -> 2.5 / 3. For top-1 nothing is dropped.
    e = np.array([[1.0, 40.0, 8.0, 1.0], [1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 1.0, 2.0], [100.0, 2.0, 0.5, 1.0]])
    against = np.where(np.eye(4, dtype=bool), -np.inf, np.log(e))  # no e-value against oneself
    assert np.exp(member_log_e(against, 2)).tolist() == pytest.approx([3.0, 2 / 3, 4 / 3, 2.5 / 3])
    assert np.exp(member_log_e(against, 1)).tolist() == pytest.approx([49 / 3, 1.0, 2.0, 102.5 / 3])


def test_paired_t_reference_exact_case() -> None:
    d = np.array([[1.0, 2.0, 3.0, np.nan], [1.0, -1.0, 1.0, -1.0], [0.1, 0.2, 0.1, 0.2]])
    # row 0: mean 2, sd 1, t = 2 sqrt(3) = 3.46 on 2 df: p = 0.074; row 2: t = 5.2 on 3 df: p = 0.014
    assert paired_t_outcomes(d, 0.05).tolist() == [1, 1, 0]
    assert paired_t_outcomes(d, 0.1).tolist() == [0, 1, 0]


def test_settings_refuse_mean_without_a_betting_control() -> None:
    for per_pair in ("spending", "anytime"):  # the per-pair rules decide on the outcome counts
        with pytest.raises(SettingsError, match="mean statistic"):
            ProtocolSettings(budget=10, model="human_only", statistic="mean", error_control=per_pair, futility=None)
    with pytest.raises(SettingsError, match=r"equivalence margin .* with the sign statistic \(error control anytime\)"):
        ProtocolSettings(budget=10, model="human_only", delta=0.5, error_control="anytime", futility=None)


def test_tied_study_draws_the_tied_systems_alike() -> None:
    data = tied_top_study(5, 3, 400, seed=1)
    means = data.ratings.groupby("system")["score"].mean()
    assert abs(means["s00"] - means["s01"]) < 0.15 and abs(means["s00"] - means["s02"]) < 0.15
    assert means["s03"] < means["s00"] - 0.3


def test_expected_scores_exact_case_and_against_a_large_study() -> None:
    # 3 lies midway between the clipping bounds on the grid of thirds: rounding and clipping are
    # symmetric around it, so its expected score is exactly 3
    assert expected_scores((3.0,)) == pytest.approx((3.0,), abs=1e-12)
    lead = expected_scores(true_means(5, 2))
    assert lead[0] == lead[1] and lead[2] == lead[4]  # exact ties stay exact
    assert 0.44 < lead[0] - lead[2] < 0.47  # clipping at 5 takes more from the higher mean
    data = tied_top_study(5, 2, 100_000, seed=4)
    means = data.ratings.groupby("system")["score"].mean().to_numpy()
    assert np.abs(means - np.array(lead)).max() < 4 * 0.95 / math.sqrt(100_000)


@pytest.mark.slow
def test_equivalence_just_outside_the_margin_stays_within_gamma() -> None:
    # All-pairs, the two top systems 0.452 above three others (expected scores), δ = 0.45: every
    # top-vs-other equivalence is false, and any false direction too; the whole answer errs in at
    # most γ + 2 s.e. of the runs (the full grid, N in {1, 10} and three statistics: bench/bench_question_control.py
    # --part equivalence).
    result = simulate_question(
        n_systems=5, n_tied=2, n_items=200, question=Question(), statistic="mean", runs=150, batch=10, seed=31_000, delta=0.45
    )
    assert result.errors <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / result.runs)
    assert result.equivalent > 0.5  # the tied pairs are shown equivalent: the margin is in play


@pytest.mark.slow
def test_a_margin_keeps_the_point_null_within_gamma() -> None:
    # All five systems tied, δ = 0.15 (the partition's Δ = 0 piece is the true one of every pair: any
    # direction is false, and so is an equivalence where the pool's difference reaches δ): the whole
    # answer errs in at most γ + 2 s.e. of the runs (1,000 runs per cell, N in {1, 10}, three statistics:
    # bench/bench_question_control.py --part equivalence, results_question_control.md §12).
    result = simulate_question(
        n_systems=5, n_tied=5, n_items=200, question=Question(), statistic="mean", runs=100, batch=10, seed=32_000, delta=0.15
    )
    assert result.errors <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / result.runs)
    assert result.cost < 0.9  # the run ends before the pool does


@pytest.mark.slow
def test_question_control_keeps_tied_top_members_in_the_answer() -> None:
    # Three exactly tied top systems of six, top-1: the run excludes one of them in at most
    # gamma of the runs (+ 2 Monte-Carlo s.e.); the full grid (2, 3, 4 tied, N in {1, 10},
    # >= 1,000 runs) is bench/bench_question_control.py.
    result = simulate_question(n_systems=6, n_tied=3, n_items=40, question=Question("top-k", 1), runs=120, batch=10, seed=100)
    assert result.errors <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / 120)
    assert result.cost < 1.0


@pytest.mark.parametrize(("question", "systems", "tied"), [(Question("top-k", 1), 6, 3), (Question("all-pairs"), 5, 5)])
def test_the_default_keeps_its_guarantee_in_a_comparisons_study(question: Question, systems: int, tied: int) -> None:
    # The default (question-level control, pool_mean) on comparisons (+1 / 0 / -1, each pair in its
    # own order): no tied top member excluded / no false direction against each pair's pool net win
    # rate in more than gamma of the runs (+ 2 s.e.); the 1,000-run grid is bench_question_control.py --unit comparisons.
    result = simulate_question(
        n_systems=systems, n_tied=tied, n_items=60, question=question, statistic="pool_mean", runs=120, seed=500, unit="comparisons"
    )
    assert result.errors <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / 120)
    assert 0.0 < result.cost < 1.0


@pytest.mark.slow
def test_question_control_all_pairs_under_the_global_null() -> None:
    result = simulate_question(n_systems=4, n_tied=4, n_items=40, question=Question("all-pairs"), runs=120, batch=10, seed=300)
    assert result.errors <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / 120)


def test_cost_counts_annotators_the_study_paid(shared_data: Path) -> None:
    summeval = load_dataset(shared_data / "summeval")
    assert int(judgments_behind(summeval.ratings, "human:relevance")["judgments"].sum()) == 16 * 100 * 3
    wmt20 = load_dataset(shared_data / "wmt20_ende_mqm")
    behind = judgments_behind(wmt20.ratings, "human")  # the DA scores are not annotators of the MQM score
    assert int(behind["judgments"].sum()) == len(behind) == 14_180
    ted = load_dataset(shared_data / "wmt21_ted_ende_mqm")
    behind = judgments_behind(ted.ratings, "human")  # one MQM rater per output, kept apart: one rating each
    assert int(behind["judgments"].sum()) == len(behind) == 7_406
    pandalm = load_dataset(shared_data / "pandalm")  # three annotators per comparison, their majority published
    behind = comparisons_behind(pandalm.preferences, "human")
    assert int(behind["judgments"].sum()) == 3 * len(behind) == 2_997
    assert build_study_table(pandalm, "human").cost_available() == 2_997
    assert build_study_table(pandalm, "human", pool="all").cost_available() == 999  # a live study buys one comparison
    assert build_study_table(pandalm, "human", pool="all", judgments_per_item=3).cost_available() == 2_997
    live = build_study_table(summeval, "human:relevance", pool="all")  # a live request buys one rating, not the three paid
    assert live.cost_available() == 16 * 100


def test_a_comparison_costs_the_annotators_behind_its_majority() -> None:
    """A preferences file with an ``annotator`` column: the majority is the rater's outcome, and each
    annotator's comparison is one the study paid; a metric's samples are not annotators."""
    rows = "item_id,system_a,system_b,rater,annotator,label\n"
    rows += "i1,X,Y,human,u,>\ni1,X,Y,human,v,>\ni1,X,Y,human,w,<\ni2,Y,X,human,u,=\ni3,X,Y,human,,>\n"
    rows += "i1,X,Y,judge,s1,>\ni1,X,Y,judge,s2,<\n"
    dataset = load_dataset([("p.csv", rows.encode())])
    assert dataset.annotator_raters == ("human::u", "human::v", "human::w") and dataset.metric_raters == ("judge",)
    behind = comparisons_behind(dataset.preferences, "human").set_index("item_id")["judgments"]
    assert behind.to_dict() == {"i1": 3, "i2": 1, "i3": 1}  # i3's only label has no annotator named
    assert build_study_table(dataset, "human").cost_available() == 5


def test_all_pairs_with_a_margin_at_the_ladder_s_step() -> None:
    # Five systems, two tied at the top, the others 0.5 apart, δ = 0.5 (100 items, N = 10, pool_mean_clt):
    # about half the adjacent pairs' pools differ by δ or more, so an equivalence there is false, as is any
    # direction against the pool's own order (the estimand); with the partition's thresholds the share of runs
    # with any false decision stays within γ + 2 s.e.
    result = simulate_question(
        n_systems=5,
        n_tied=2,
        n_items=100,
        question=Question(),
        statistic="pool_mean_clt",
        runs=100,
        batch=10,
        seed=20005,
        ladder=True,
        delta=0.5,
    )
    assert result.errors <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / result.runs)


@pytest.mark.parametrize(
    ("statistic", "question", "delta", "metric_accuracy"),
    [
        ("mean", Question("all-pairs"), 0.5, None),
        ("pool_mean", Question("top-k", 1), None, None),
        ("pool_mean", Question("all-pairs"), 0.5, None),
        ("pool_mean_clt", Question("top-k", 1), None, 0.8),
    ],
)
def test_evidence_in_blocks_of_pairs_is_the_whole_s(
    monkeypatch: pytest.MonkeyPatch, statistic: str, question: Question, delta: float | None, metric_accuracy: float | None
) -> None:
    # Every test is per pair, so computing the e-processes a few pairs at a time (to bound memory
    # at thousands of pairs) must change nothing: the same evidence after two rounds, and the same run.
    def run(block: int, max_rounds: int | None) -> tuple[ProtocolState, PairEvidence]:
        monkeypatch.setattr(question_control, "PAIRS_PER_BLOCK", block)
        data = tied_top_study(8, 2, 60, seed=7)
        table = build_study_table(data, HUMAN) if metric_accuracy is None else with_ideal_metric(data, metric_accuracy, 7)
        settings = ProtocolSettings(
            budget=table.cost_available(), batch=10, model="human_only" if metric_accuracy is None else "known_mu",
            mu=None if metric_accuracy is None else ideal_mu(metric_accuracy),
            metrics=() if metric_accuracy is None else (IDEAL_METRIC_NAME,), seed=7, question=question, unit="ratings",
            error_control="question", statistic=statistic, futility=0.05, delta=delta, max_rounds=max_rounds,
        )  # fmt: skip
        state = run_protocol(new_state(table, settings), replay_source(table))
        return state, question_control.pair_evidence(state)

    for max_rounds in (2, None):
        (whole, whole_evidence), (blocks, block_evidence) = run(10_000, max_rounds), run(5, max_rounds)
        for name in ("direction", "current", "equivalence", "point"):
            np.testing.assert_array_equal(getattr(whole_evidence, name), getattr(block_evidence, name))
        for side in (0, 1):
            np.testing.assert_array_equal(whole_evidence.evidence.nulls[side].z, block_evidence.evidence.nulls[side].z)
        np.testing.assert_array_equal(whole.status.decision, blocks.status.decision)
        np.testing.assert_array_equal(whole.members, blocks.members)
        assert whole.cost_used == blocks.cost_used and whole.round == blocks.round
