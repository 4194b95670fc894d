"""Futility: the exact predictive probability against simulation, its fast screen, and the rules."""

from __future__ import annotations

import math

import numpy as np
import pytest

from prefeval_core.errors import SettingsError
from prefeval_core.pairs.counts import JointCounts
from prefeval_core.sequential import METRIC_SHARE, initial_log_numerator
from prefeval_core.sequential.futility import approximate_human_success, futility, human_success_probability
from prefeval_core.sequential.human import decisive_log_e

THRESHOLD = math.log(40.0)
CASES = np.array([[10, 5, 8], [30, 40, 25], [5, 0, 0], [0, 0, 0], [40, 20, 20], [22, 3, 30]], dtype=np.float64)
REMAINING = np.array([50, 100, 20, 60, 150, 80])


def _simulated_success(n: np.ndarray, remaining: int, draws: int, seed: int) -> float:
    """Posterior-predictive simulation: p ~ Dirichlet(n + 1), the remaining items drawn from p, the
    e-process checked after every item."""
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(n + 1.0, size=draws)
    outcome = (rng.random((draws, remaining))[..., None] > np.cumsum(p, axis=1)[:, None, :]).sum(axis=-1)
    a = (n[0] + np.cumsum(outcome == 0, axis=1)).astype(np.int64)
    b = (n[2] + np.cumsum(outcome == 2, axis=1)).astype(np.int64)
    # the e-process on the grid of every (n>, n<) reached (tens of thousands, not draws x remaining)
    grid_a, grid_b = np.meshgrid(np.arange(a.max() + 1), np.arange(b.max() + 1), indexing="ij")
    crossed = np.asarray((decisive_log_e(grid_a, grid_b) >= THRESHOLD).any(axis=-1))
    return float(crossed[a, b].any(axis=1).mean())


def test_exact_predictive_probability_agrees_with_simulation() -> None:
    exact = human_success_probability(CASES, REMAINING, THRESHOLD)
    draws = 20000
    for index, (n, remaining) in enumerate(zip(CASES, REMAINING)):
        simulated = _simulated_success(n, int(remaining), draws, seed=index)
        se = math.sqrt(max(exact[index] * (1 - exact[index]), 1e-4) / draws)
        assert abs(simulated - exact[index]) <= 4.5 * se


def test_the_brownian_screen_is_close_to_the_exact_value_where_futility_is_decided() -> None:
    grid = np.array(
        [[a, ties, D - a] for D in (5, 20, 50, 100, 300) for ties in (0, 30) for a in (D // 2, round(0.55 * D), round(0.65 * D))]
    )
    remaining = np.resize([10, 50, 200, 500], len(grid))
    exact = human_success_probability(grid, remaining, THRESHOLD)
    approximate = approximate_human_success(grid, remaining, THRESHOLD)
    small = exact < 0.2
    assert small.sum() >= 5
    assert np.max(np.abs(approximate - exact)[small]) < 0.02
    assert np.max(np.abs(approximate - exact)) < 0.25


def test_exact_rule_stops_only_pairs_that_cannot_be_decided() -> None:
    n = np.array([[50, 0, 50], [50, 0, 50], [3, 0, 0]], dtype=np.float64)
    remaining = np.array([5, 400, 0])
    result = futility(n, remaining, 0.05, rule="exact")
    np.testing.assert_array_equal(result.futile, [True, False, True])
    best = decisive_log_e(55, 50)[0]
    assert best < math.log(40.0)  # the first pair: even five more ">" fall short


def test_predictive_rule_stops_a_near_tie_with_few_items_left_and_keeps_a_promising_pair() -> None:
    n = np.array([[150, 100, 152], [60, 20, 40]], dtype=np.float64)
    result = futility(n, np.array([60, 60]), 0.05)
    np.testing.assert_array_equal(result.futile, [True, False])
    assert result.success_probability[0] < 0.05 < result.success_probability[1]
    assert result.beta == 0.05
    assert not futility(n, np.array([60, 60]), 0.05, rule="off").futile.any()


def test_metric_futility_is_reproducible_and_counts_the_human_part() -> None:
    revealed = np.zeros((2, 4, 3), dtype=np.int64)
    revealed[:, 0, 0], revealed[:, 2, 2], revealed[:, 1, 1] = 70, 70, 40
    unrevealed = np.array([[20, 10, 20, 0], [20, 10, 20, 0]])
    counts = JointCounts(("m",), revealed, unrevealed)
    pool = np.array([[10, 5, 10, 0], [20, 10, 20, 0]])
    kwargs = {"log_numerator": initial_log_numerator(2), "remaining_patterns": pool, "seed": 3}
    first = futility(counts, pool.sum(axis=1), 0.05, **kwargs)
    again = futility(counts, pool.sum(axis=1), 0.05, **kwargs)
    np.testing.assert_array_equal(first.success_probability, again.success_probability)
    assert np.all(first.reachable)
    assert first.futile[0]
    # with a metric the human e-process needs 2 / ((1 - w) gamma): the human-only rule at (1 - w) gamma
    human_part = futility(counts.n, pool.sum(axis=1), 0.05 * (1 - METRIC_SHARE))
    assert np.all(first.success_probability >= human_part.success_probability - 1e-12)


def test_bad_settings_are_refused() -> None:
    with pytest.raises(SettingsError):
        futility(np.zeros((1, 3)), np.array([3]), 0.05, rule="sometimes")  # type: ignore[arg-type]
    with pytest.raises(SettingsError):
        futility(np.zeros((1, 3)), np.array([3]), 0.05, beta=1.5)
    with pytest.raises(SettingsError):
        futility(np.zeros((1, 3)), np.array([3]), 0.0)
