"""prefeval and the baselines side by side (prefeval_core/baselines/evaluation.py)."""

from __future__ import annotations

import numpy as np
import pytest

from prefeval_core.baselines import bradley_terry_decisions, compare_methods, human_ratings, ppi_decisions, withhold_human
from prefeval_core.errors import SettingsError
from tests.baselines_fixtures import EQ, GT, LT, comparisons, pair_table

PAIRS = [("A", "B"), ("A", "C"), ("B", "C")]
A_BEATS_B = [GT] * 10
A_EVEN_C = [GT, LT] * 5
B_TIES_C = [EQ] * 10


def tiny_table():  # type: ignore[no-untyped-def]
    """3 systems on items i0..i9: A beats B everywhere, A and C split evenly, B and C always tie;
    the metric agrees with the human on every item."""
    human = [A_BEATS_B, A_EVEN_C, B_TIES_C]
    return pair_table(PAIRS, human, human)


def first_six_items(table) -> np.ndarray:  # type: ignore[no-untyped-def]
    return np.isin(table.item_id, [f"i{k}" for k in range(6)])


def test_tiny_table_decisions_are_the_hand_computed_ones() -> None:
    # Reference on all 10 items: A-B (10,0,0): theta = 1 - 2**-11 -> '>'; A-C (5,0,5) and
    # B-C (0,10,0): theta = 1/2 -> undecided. On the first 6 items human only: (6,0,0) gives
    # 1 - 2**-7 = 0.992 > 0.975 -> '>'; the other two stay at 1/2. The full model with a metric
    # that agrees everywhere is symmetric under swapping '>' and '<' on A-C and B-C (theta = 1/2)
    # and only adds '>' evidence on A-B. PPI++: A-B's predictor is constant, so the classical
    # interval on six +1's, [1, 1]; A-C's labelled and unlabelled values average 0; B-C is all 0.
    table = tiny_table()
    revealed = first_six_items(table)
    result = compare_methods(table, revealed, 0.05, 7, n_resamples=200)
    assert result.reference.tolist() == [GT, EQ, EQ]
    expected = {"prefeval human only": [GT, EQ, EQ], "prefeval full (metric)": [GT, EQ, EQ], "PPI++ (metric)": [GT, EQ, EQ]}
    for name, decisions in expected.items():
        summary = result.method(name)
        assert summary.decision.tolist() == decisions, name
        assert (summary.correct, summary.counts["correct_significant"], summary.decided) == (3, 1, 1)
    assert result.method("PPI++ (metric)").kind == "ppi++"
    bt = bradley_terry_decisions(table, revealed, seed=7, n_resamples=200)
    assert result.method("Bradley–Terry").decision.tolist() == bt.decision.tolist()
    assert result.method("CLT (human only)").decision.tolist() == [GT, EQ, EQ]  # as PPI++: constant or symmetric
    assert [m.name for m in result.methods] == [
        "prefeval human only",
        "prefeval full (metric)",
        "PPI++ (metric)",
        "CLT (human only)",
        "Bradley–Terry",
    ]
    assert (result.pair_outcomes_used, result.pair_outcomes_available) == (18, 30)
    assert (result.ratings_used, result.ratings_available) == (18, 30)  # 6 items x 3 systems of 10 x 3


def test_error_types_count_every_pair_once() -> None:
    # The metric is reversed on A-B: PPI++ then sees a predictor that disagrees with the labels.
    table = pair_table(PAIRS, [A_BEATS_B, A_EVEN_C, B_TIES_C], [[LT] * 10, A_EVEN_C, B_TIES_C])
    result = compare_methods(table, first_six_items(table), n_resamples=50)
    for summary in result.methods:
        assert sum(summary.counts.values()) == 3
        assert summary.frequencies.correct == pytest.approx(summary.correct / 3)


def test_several_metrics_add_one_full_model_and_one_ppi_per_metric_and_a_mean_predictor() -> None:
    table = tiny_table()
    codes = np.stack([table.metric, np.where(table.item_id == "i9", -1, table.metric)], axis=1)
    result = compare_methods(table, first_six_items(table), metric_codes=codes, metric_names=("m1", "m2"), n_resamples=20)
    names = [m.name for m in result.methods]
    assert names == [
        "prefeval human only",
        "prefeval full (m1)",
        "prefeval full (m2)",
        "prefeval full (all 2 metrics)",
        "PPI++ (m1)",
        "PPI++ (m2)",
        "PPI++ (mean(m1, m2))",
        "CLT (human only)",
        "Bradley–Terry",
    ]
    mean = ppi_decisions(table, first_six_items(table), metric_codes=codes, metric_names=("m1", "m2"))
    assert result.method("PPI++ (mean(m1, m2))").decision.tolist() == mean.decision.tolist()
    with pytest.raises(KeyError, match="no method"):
        result.method("PPI++ (m3)")


def test_without_a_metric_only_human_methods_run() -> None:
    table = pair_table(PAIRS, [A_BEATS_B, A_EVEN_C, B_TIES_C])
    result = compare_methods(table, first_six_items(table), n_resamples=20)
    assert [m.kind for m in result.methods] == ["prefeval_human_only", "clt", "bradley_terry"]


def test_withholding_keeps_the_same_share_of_each_pair_on_shared_items_and_reproduces() -> None:
    human = comparisons(4, 3, 3)
    table = pair_table(PAIRS, [human, human, [*human[:7], -1, -1, -1]], [human, human, human])
    revealed = withhold_human(table, 0.3, seed=5)
    per_pair = np.bincount(table.pair_index[revealed], minlength=3)
    assert per_pair.tolist() == [3, 3, 2]  # floor(0.3 * 10 + 1/2), floor(0.3 * 7 + 1/2)
    assert not np.any(revealed & (table.human < 0))
    kept = [set(table.item_id[revealed & (table.pair_index == p)]) for p in range(3)]
    assert kept[0] == kept[1]  # one item order shared by every pair
    assert np.array_equal(revealed, withhold_human(table, 0.3, seed=5))
    assert any(not np.array_equal(revealed, withhold_human(table, 0.3, seed=s)) for s in range(6, 10))
    assert np.array_equal(withhold_human(table, 1.0, seed=0), table.human >= 0)
    ratings = {(item, system) for p, (a, b) in enumerate(PAIRS) for item in kept[p] for system in (a, b)}
    assert human_ratings(table, revealed) == len(ratings)
    for bad in (0.0, 1.5):
        with pytest.raises(SettingsError, match="fraction"):
            withhold_human(table, bad, seed=0)


@pytest.mark.golden
def test_summeval_relevance_at_human_fraction_0_3(summeval) -> None:  # type: ignore[no-untyped-def]
    from prefeval_core.protocol import build_study_table

    table = build_study_table(summeval, "human:relevance", ("rougeL",), unit="comparisons").pair_table(0)
    revealed = withhold_human(table, 0.3, seed=0)
    result = compare_methods(table, revealed, 0.05, 0, n_resamples=100)
    assert (result.ratings_used, result.ratings_available) == (480, 1600)  # 30 of 100 documents x 16 systems
    assert (result.pair_outcomes_used, result.pair_outcomes_available) == (3600, 12000)
    assert int(np.sum(result.reference != EQ)) == 90
    human_only = result.method("prefeval human only")
    assert human_only.counts["inversion"] == 0
    assert all(sum(m.counts.values()) == 120 for m in result.methods)
