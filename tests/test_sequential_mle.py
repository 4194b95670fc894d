"""The constrained maximum likelihood of the metric model: against brute force, and its certificate."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from prefeval_core.sequential.mle import MetricData, Side, log_likelihood, max_log_likelihood, smoothed_fit

IDEAL = np.array([[0.8, 0.25, 0.1], [0.1, 0.5, 0.1], [0.1, 0.25, 0.8]])

CASES = [
    # K (rows = metric, columns = human), n0, m
    ([[5, 1, 0], [1, 2, 1], [0, 1, 3]], [1, 0, 2], [30, 10, 5]),
    ([[2, 0, 1], [0, 0, 0], [1, 0, 0]], [0, 0, 0], [12, 1, 20]),
    ([[0, 0, 0], [0, 0, 0], [0, 0, 0]], [3, 1, 1], [4, 4, 9]),
    ([[9, 3, 1], [2, 6, 2], [1, 2, 4]], [0, 2, 0], [0, 0, 0]),
    ([[1, 0, 0], [0, 0, 0], [0, 0, 4]], [0, 0, 0], [40, 2, 3]),
]


def _data(cases: list[tuple[list[list[int]], list[int], list[int]]]) -> MetricData:
    return MetricData(
        K=np.array([c[0] for c in cases], dtype=np.float64),
        n0=np.array([c[1] for c in cases], dtype=np.float64),
        m=np.array([c[2] for c in cases], dtype=np.float64),
    )


def _side_constraint(side: Side, columns: np.ndarray) -> float:
    """>= 0 where the side's constraint holds."""
    return float(columns[2] - columns[0]) if side == "at_most" else float(columns[0] - columns[2])


def _brute_full(data: MetricData, index: int, side: Side, seed: int = 0) -> float:
    """Max of log L over the 9-cell simplex (and the side) by SLSQP from many random starts."""
    one = data.take(np.array([index]))
    rng = np.random.default_rng(seed)

    def negative(x: np.ndarray) -> float:
        pi = np.clip(x, 1e-300, None).reshape(1, 3, 3)
        return -float(log_likelihood(one, pi)[0])

    constraints = [{"type": "eq", "fun": lambda x: x.sum() - 1.0}]
    if side != "any":
        constraints.append({"type": "ineq", "fun": lambda x: _side_constraint(side, x.reshape(3, 3).sum(axis=0))})
    best = -np.inf
    for _ in range(12):
        start = rng.dirichlet(np.ones(9))
        result = minimize(
            negative, start, method="SLSQP", bounds=[(1e-12, 1.0)] * 9, constraints=constraints, options={"maxiter": 500, "ftol": 1e-13}
        )
        x = np.clip(result.x, 0, None)
        if abs(x.sum() - 1) < 1e-6 and (side == "any" or _side_constraint(side, x.reshape(3, 3).sum(axis=0)) > -1e-7):
            best = max(best, -negative(x / x.sum()))
    return best


def _brute_known(data: MetricData, index: int, side: Side) -> float:
    """Max of log L over p on a fine grid of the simplex (and the side), mu = IDEAL."""
    one = data.take(np.array([index]))
    grid = np.linspace(1e-6, 1 - 1e-6, 801)
    better, worse = np.meshgrid(grid, grid, indexing="ij")
    tie = 1.0 - better - worse
    keep = tie > 0
    if side == "at_most":
        keep &= better <= worse
    elif side == "at_least":
        keep &= better >= worse
    p = np.stack([better[keep], tie[keep], worse[keep]], axis=1)
    pi = IDEAL[None] * p[:, None, :]
    repeated = MetricData(np.repeat(one.K, len(p), 0), np.repeat(one.n0, len(p), 0), np.repeat(one.m, len(p), 0))
    return float(log_likelihood(repeated, pi).max())


@pytest.mark.parametrize("side", ["any", "at_most", "at_least"])
def test_full_model_maximum_agrees_with_brute_force_and_the_certificate_bounds_it(side: Side) -> None:
    data = _data(CASES)
    fit = max_log_likelihood(data, side)
    for index in range(len(CASES)):
        brute = _brute_full(data, index, side)
        assert fit.upper_bound[index] >= brute - 1e-7  # the certificate is never below the true maximum
        assert fit.log_likelihood[index] >= brute - 2e-3  # and the maximiser reaches it
        assert fit.gap[index] <= 2e-3


@pytest.mark.parametrize("side", ["any", "at_most", "at_least"])
def test_known_mu_maximum_agrees_with_a_grid_search(side: Side) -> None:
    data = _data(CASES)
    fit = max_log_likelihood(data, side, IDEAL)
    for index in range(len(CASES)):
        brute = _brute_known(data, index, side)
        assert fit.upper_bound[index] >= brute - 1e-9
        assert fit.log_likelihood[index] == pytest.approx(brute, abs=2e-3)


def test_fits_lie_on_their_side_and_are_distributions() -> None:
    data = _data(CASES)
    for side, holds in (("at_most", lambda p: p[:, 0] <= p[:, 2] + 1e-12), ("at_least", lambda p: p[:, 0] >= p[:, 2] - 1e-12)):
        for pi in (max_log_likelihood(data, side).pi, smoothed_fit(data, side), max_log_likelihood(data, side, IDEAL).pi):
            np.testing.assert_allclose(pi.sum(axis=(1, 2)), 1.0)
            assert np.all(holds(pi.sum(axis=1)))
    assert np.all(smoothed_fit(data, "any") > 0)


def test_unconstrained_maximum_without_unrevealed_items_is_the_empirical_distribution() -> None:
    K = np.array([[[9, 3, 1], [2, 6, 2], [1, 2, 4]]], dtype=np.float64)
    data = MetricData(K, np.zeros((1, 3)), np.zeros((1, 3)))
    fit = max_log_likelihood(data, "any")
    np.testing.assert_allclose(fit.pi[0], K[0] / K.sum(), atol=1e-3)


def test_stopping_early_keeps_a_valid_bound() -> None:
    data = _data(CASES)
    full = max_log_likelihood(data, "at_most")
    early = max_log_likelihood(data, "at_most", stop_at=np.full(len(CASES), -np.inf))
    assert np.all(early.upper_bound >= full.upper_bound - 1e-3)


def test_a_known_mu_that_forbids_an_observed_outcome_is_refused() -> None:
    mu = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    data = MetricData(np.array([[[0, 1, 0], [0, 0, 0], [0, 0, 0]]], dtype=np.float64), np.zeros((1, 3)), np.zeros((1, 3)))
    with pytest.raises(ValueError, match="probability 0"):
        max_log_likelihood(data, "any", mu)
