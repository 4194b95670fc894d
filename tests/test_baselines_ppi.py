"""PPI++ per pair (prefeval_core/baselines/ppi.py): exact small cases against hand computations."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from prefeval_core.baselines import metric_predictions, ppi_decisions
from prefeval_core.errors import SettingsError
from tests.baselines_fixtures import EQ, GT, LT, comparisons, pair_table

Z = norm.ppf(0.975)


def values(codes: list[int]) -> np.ndarray:
    return np.array([1.0, 0.0, -1.0])[codes]


def test_perfect_predictor_matches_the_classical_interval_on_all_items() -> None:
    # The metric equals the human everywhere; labelled and unlabelled rows have the same mix
    # (60 / 20 / 20 %), so power tuning makes PPI++ the classical CLT interval on all 1,000 items
    # (up to ppi_py's n-1 vs n variance normalisations: relative 1e-5 here).
    labelled, unlabelled = comparisons(120, 40, 40), comparisons(480, 160, 160)
    codes = labelled + unlabelled
    table = pair_table([("A", "B")], [codes], [codes])
    revealed = np.arange(len(codes)) < len(labelled)
    result = ppi_decisions(table, revealed, gamma=0.05)
    y = values(codes)
    half = Z * y.std() / np.sqrt(y.size)
    assert result.estimate[0] == pytest.approx(y.mean(), abs=1e-12)
    assert result.low[0] == pytest.approx(y.mean() - half, rel=1e-4)
    assert result.high[0] == pytest.approx(y.mean() + half, rel=1e-4)
    assert result.decision.tolist() == [GT]
    assert (result.labelled.tolist(), result.unlabelled.tolist()) == ([200], [800])


def test_power_tuned_interval_is_the_ppi_plus_plus_formula() -> None:
    # PPI++ (Angelopoulos et al. 2023, mean estimation): lambda = Cov(Y, f) / ((1 + n/N) Var(f)),
    # clipped to [0, 1], with ppi_py's normalisations (Cov over the n labelled rows with 1/n, Var
    # over all n + N predictions with 1/(n+N-1)); estimate mean(lambda f_U) + mean(Y - lambda f_L),
    # variance Var(lambda f_U)/N + Var(Y - lambda f_L)/n (both 1/size).
    human_labelled = [GT, GT, GT, EQ, LT, GT, EQ, GT, LT, GT]
    metric_labelled = [GT, EQ, GT, GT, LT, GT, LT, EQ, EQ, GT]
    metric_unlabelled = [GT, GT, EQ, LT, GT, GT, EQ, GT, LT, GT, GT, EQ, GT, GT, LT]
    table = pair_table([("A", "B")], [human_labelled + [GT] * 15], [metric_labelled + metric_unlabelled])
    revealed = np.arange(25) < 10
    y, f, f_u = values(human_labelled), values(metric_labelled), values(metric_unlabelled)
    n, N = y.size, f_u.size
    cov = np.mean((y - y.mean()) * (f - f.mean()))
    lam = float(np.clip(cov / ((1 + n / N) * np.var(np.concatenate([f, f_u]), ddof=1)), 0, 1))
    estimate = np.mean(lam * f_u) + np.mean(y - lam * f)
    se = np.sqrt(np.var(lam * f_u) / N + np.var(y - lam * f) / n)
    result = ppi_decisions(table, revealed, gamma=0.05)
    assert 0 < lam < 1
    assert result.estimate[0] == pytest.approx(estimate, abs=1e-12)
    assert (result.low[0], result.high[0]) == pytest.approx((estimate - Z * se, estimate + Z * se), abs=1e-12)


def test_constant_predictor_and_no_unlabelled_rows_give_the_classical_interval_on_labelled_rows() -> None:
    human = [GT, GT, EQ, GT, LT, GT]
    y = values(human)
    classical = (y.mean() - Z * y.std() / np.sqrt(6), y.mean() + Z * y.std() / np.sqrt(6))
    constant = pair_table([("A", "B")], [[*human, GT, LT]], [[EQ] * 8])  # the metric always says "="
    all_revealed = pair_table([("A", "B")], [human], [[GT, EQ, EQ, GT, LT, LT]])
    for table, revealed in ((constant, np.arange(8) < 6), (all_revealed, np.ones(6, dtype=bool))):
        result = ppi_decisions(table, revealed)
        assert (result.low[0], result.high[0]) == pytest.approx(classical, abs=1e-12)


def test_too_few_labelled_rows_give_no_interval() -> None:
    table = pair_table([("A", "B"), ("A", "C")], [[GT, GT, GT], [GT, GT, GT]], [[GT, GT, GT], [GT, GT, GT]])
    result = ppi_decisions(table, np.array([True, False, False, True, True, False]))
    assert np.isnan(result.low[0]) and np.isnan(result.high[0]) and np.isnan(result.estimate[0])
    assert result.decision.tolist() == [EQ, GT]


def test_balanced_human_outcomes_are_undecided_and_flipping_the_pair_flips_everything() -> None:
    human = comparisons(7, 6, 7)
    metric = [GT, LT] * 10
    table = pair_table([("A", "B")], [human], [metric])
    flipped = pair_table([("A", "B")], [[2 - c for c in human]], [[2 - c for c in metric]])
    revealed = np.arange(20) % 2 == 0
    result, mirror = ppi_decisions(table, revealed), ppi_decisions(flipped, revealed)
    assert result.decision.tolist() == [EQ]
    assert result.low[0] < 0 < result.high[0]
    assert (mirror.low[0], mirror.high[0], mirror.estimate[0]) == pytest.approx((-result.high[0], -result.low[0], -result.estimate[0]))


def test_clear_preferences_are_decided_in_their_direction() -> None:
    a_better, b_better = comparisons(15, 3, 2), comparisons(2, 3, 15)
    table = pair_table([("A", "B"), ("A", "C")], [a_better, b_better], [a_better, b_better])
    result = ppi_decisions(table, np.ones(40, dtype=bool))
    assert result.decision.tolist() == [GT, LT]


def test_several_metrics_predict_with_their_mean_value_and_missing_rows_predict_zero() -> None:
    assert metric_predictions(np.array([[GT, LT], [GT, -1], [-1, -1], [EQ, GT]])).tolist() == [0.0, 1.0, 0.0, 0.5]
    assert metric_predictions(np.array([LT, -1, GT])).tolist() == [-1.0, 0.0, 1.0]
    table = pair_table([("A", "B")], [comparisons(10, 5, 5)], [comparisons(10, 5, 5)])
    two = np.stack([table.metric, np.where(np.arange(20) < 10, table.metric, -1)], axis=1)
    result = ppi_decisions(table, np.arange(20) % 2 == 0, metric_codes=two, metric_names=("m1", "m2"))
    assert result.predictor == "mean(m1, m2)"
    # where both metrics rated a row they agree, elsewhere only the first did: the mean is the first's v
    same = ppi_decisions(table, np.arange(20) % 2 == 0)
    assert (result.low[0], result.high[0]) == pytest.approx((same.low[0], same.high[0]), abs=1e-12)


def test_revealed_rows_without_a_metric_outcome_are_labelled_with_prediction_zero() -> None:
    human = comparisons(6, 2, 2)
    metric = [-1, -1, GT, GT, GT, EQ, -1, EQ, LT, LT]
    table = pair_table([("A", "B")], [[*human, GT, GT, LT]], [[*metric, GT, EQ, -1]])
    result = ppi_decisions(table, np.arange(13) < 10)
    assert result.labelled.tolist() == [10]
    assert result.unlabelled.tolist() == [3]
    as_ties = ppi_decisions(table, np.arange(13) < 10, metric_codes=np.where(table.metric < 0, EQ, table.metric))
    assert (result.low[0], result.high[0]) == (as_ties.low[0], as_ties.high[0])


def test_bad_settings_are_typed_errors() -> None:
    table = pair_table([("A", "B")], [[GT, -1]], [[GT, GT]])
    with pytest.raises(SettingsError, match="cannot be revealed"):
        ppi_decisions(table, np.array([True, True]))
    with pytest.raises(SettingsError, match="gamma"):
        ppi_decisions(table, np.array([True, False]), gamma=1.5)
    with pytest.raises(SettingsError, match="shape"):
        ppi_decisions(table, np.array([True]))
