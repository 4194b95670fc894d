"""The human-only e-process: closed forms against integration and exact binomial sums, the
martingale property by exact enumeration, and Ville's bound by exact dynamic programming."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.stats import beta as beta_distribution

from prefeval_core.decision import human_only_theta
from prefeval_core.sequential.futility import decisive_boundary
from prefeval_core.sequential.human import decisive_log_e, human_log_e
from prefeval_core.sequential.tails import log_betainc_half


def _exact_log_binomial_tail(s: int, n: int) -> float:
    """log P(Bin(n, 1/2) >= s) from exact integers."""
    count = sum(math.comb(n, k) for k in range(s, n + 1))
    return math.log(count) - n * math.log(2.0)


@pytest.mark.parametrize(("p", "q"), [(1, 1), (3, 7), (50, 20), (700, 40), (2001, 1), (1500, 300), (4000, 900)])
def test_log_betainc_half_matches_exact_binomial_tails_far_below_underflow(p: int, q: int) -> None:
    # I_{1/2}(p, q) = P(Bin(p + q - 1, 1/2) >= p) for integers
    assert log_betainc_half(p, q) == pytest.approx(_exact_log_binomial_tail(p, p + q - 1), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("c", [1.0, 10.0])
@pytest.mark.parametrize(("a", "b"), [(0, 0), (3, 1), (10, 12), (40, 25), (7, 0)])
def test_e_values_match_numerical_integration_of_the_mixture(a: int, b: int, c: float) -> None:
    D = a + b

    def mixed(t: float) -> float:
        return float(t**a * (1 - t) ** b * beta_distribution.pdf(t, c, c))

    greater = 2**D * 2 * quad(mixed, 0.5, 1.0, epsabs=0, epsrel=1e-12)[0]
    less = 2**D * 2 * quad(mixed, 0.0, 0.5, epsabs=0, epsrel=1e-12)[0]
    log_e = human_log_e([a, 5, b], concentration=c)
    assert log_e[0] == pytest.approx(math.log(greater), rel=1e-9, abs=1e-12)
    assert log_e[1] == pytest.approx(math.log(less), rel=1e-9, abs=1e-12)


def test_with_concentration_one_it_is_the_engine_statistic_times_a_closed_form() -> None:
    n = np.array([[12, 3, 5], [0, 9, 0], [30, 1, 41]])
    a, b = n[:, 0], n[:, 2]
    theta = human_only_theta(n)
    expected = (a + b + 1) * np.log(2) + np.array([math.lgamma(x + 1) + math.lgamma(y + 1) - math.lgamma(x + y + 2) for x, y in zip(a, b)])
    np.testing.assert_allclose(human_log_e(n, concentration=1.0)[:, 0], expected + np.log(theta), rtol=1e-12)
    np.testing.assert_allclose(human_log_e(n, concentration=1.0)[:, 1], expected + np.log1p(-theta), rtol=1e-12)


@pytest.mark.parametrize("c", [1.0, 10.0, 0.5])
@pytest.mark.parametrize("D", [0, 1, 2, 5, 17, 40])
def test_mean_is_one_at_the_null_boundary_by_exact_enumeration(D: int, c: float) -> None:
    a = np.arange(D + 1)
    weights = np.array([math.comb(D, int(k)) for k in a], dtype=np.float64) / 2.0**D
    e = np.exp(decisive_log_e(a, D - a, c))
    assert weights @ e[:, 0] == pytest.approx(1.0, rel=1e-12)
    assert weights @ e[:, 1] == pytest.approx(1.0, rel=1e-12)


@pytest.mark.parametrize("t0", [0.0, 0.2, 0.45])
def test_supermartingale_inside_the_null(t0: float) -> None:
    D = 25
    a = np.arange(D + 1)
    weights = np.array([math.comb(D, int(k)) * t0**k * (1 - t0) ** (D - k) for k in a])
    assert weights @ np.exp(decisive_log_e(a, D - a)[:, 0]) <= 1.0
    assert weights @ np.exp(decisive_log_e(a, D - a, 1.0)[:, 0]) <= 1.0


def test_ties_do_not_move_it_and_directions_mirror() -> None:
    np.testing.assert_array_equal(human_log_e([7, 0, 3]), human_log_e([7, 100, 3]))
    np.testing.assert_allclose(human_log_e([7, 2, 3])[::-1], human_log_e([3, 2, 7]))
    assert np.all(np.diff(decisive_log_e(np.arange(10), 5)[:, 0]) > 0)


def test_boundary_matches_a_direct_scan() -> None:
    threshold = math.log(80.0)
    boundary = decisive_boundary(120, threshold)
    for D in range(121):
        crossing = [a for a in range(D + 1) if decisive_log_e(a, D - a)[0] >= threshold]
        assert boundary[D] == (crossing[0] if crossing else D + 1)


@pytest.mark.parametrize("gamma", [0.05, 0.2])
def test_ville_the_fair_coin_walk_crosses_with_probability_at_most_gamma_over_two(gamma: float) -> None:
    """Exact: P(some prefix of up to 600 fair decisive outcomes has E_> >= 2 / gamma) <= gamma / 2."""
    steps = 600
    boundary = decisive_boundary(steps, math.log(2.0 / gamma))
    alive = np.zeros(steps + 1)
    alive[0] = 1.0
    crossed = 0.0
    for j in range(1, steps + 1):
        moved = 0.5 * alive
        alive = moved.copy()
        alive[1:] += moved[:-1]
        hit = np.arange(steps + 1) >= boundary[j]
        crossed += alive[hit].sum()
        alive[hit] = 0.0
    assert 0.3 * gamma / 2 < crossed <= gamma / 2
