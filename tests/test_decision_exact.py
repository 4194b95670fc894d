"""Closed form, decision function and exact enumeration of the decision model (method.md §4)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import betainc, gammaln

from prefeval_core.decision import decision_from_theta, dirichlet_mean, enumerate_posterior, human_only_theta
from tests.decision_fixtures import flipped, golden_cases

IDENTITY = np.eye(3)


def test_human_only_theta_hand_computed() -> None:
    # no data: symmetric; one win for A: P(Beta(2, 1) > 1/2) = 1 - (1/2)^2
    assert human_only_theta([0, 0, 0]) == pytest.approx(0.5, abs=1e-15)
    assert human_only_theta([1, 0, 0]) == pytest.approx(0.75, abs=1e-15)
    assert human_only_theta([0, 0, 1]) == pytest.approx(0.25, abs=1e-15)
    # two wins for A, one for B: P(Beta(3, 2) > 1/2) = 11/16; ties never matter
    assert human_only_theta([2, 7, 1]) == pytest.approx(11 / 16, abs=1e-15)
    assert human_only_theta(np.array([[0, 30, 0], [2, 0, 1]])) == pytest.approx([0.5, 11 / 16], abs=1e-15)


def test_dirichlet_mean() -> None:
    assert dirichlet_mean([40, 10, 50]) == pytest.approx(np.array([41, 11, 51]) / 103)


def test_decision_function_thresholds_are_strict() -> None:
    theta = np.array([0.0, 0.025, 0.0249, 0.5, 0.975, 0.9751, 1.0])
    assert decision_from_theta(theta, 0.05).tolist() == [2, 1, 2, 1, 1, 0, 0]
    assert decision_from_theta(theta, 0.05).dtype == np.int8
    with pytest.raises(ValueError):
        decision_from_theta(theta, 0.0)


def test_enumeration_without_metric_items_is_the_closed_form() -> None:
    K = np.array([[30, 5, 2], [6, 3, 4], [4, 2, 44]])
    exact = enumerate_posterior([40, 10, 50], K, [0, 0, 0])
    assert exact.theta == pytest.approx(human_only_theta([40, 10, 50]), abs=1e-14)
    assert exact.p_mean == pytest.approx(dirichlet_mean([40, 10, 50]), abs=1e-14)


def test_enumeration_with_an_error_free_known_metric_adds_its_counts() -> None:
    # mu = I: the metric's outcome is the truth, so p ~ Dirichlet(n + m + 1)
    exact = enumerate_posterior([3, 1, 5], np.zeros((3, 3)), [20, 7, 11], mu=IDENTITY)
    assert exact.theta == pytest.approx(human_only_theta([23, 8, 16]), abs=1e-12)
    assert exact.p_mean == pytest.approx(dirichlet_mean([23, 8, 16]), abs=1e-12)


def test_enumeration_with_a_useless_known_metric_ignores_it() -> None:
    # every column of mu equal: the metric's outcome says nothing about the truth
    useless = np.full((3, 3), 1 / 3)
    exact = enumerate_posterior([6, 2, 3], np.zeros((3, 3)), [30, 5, 1], mu=useless)
    assert exact.theta == pytest.approx(human_only_theta([6, 2, 3]), abs=1e-12)


def _brute_force_theta(n, K, m) -> float:  # type: ignore[no-untyped-def]
    """theta by summing P(L | data) over every table L (method.md §4 full model), no convolution."""
    n, K = np.asarray(n, float), np.asarray(K, float)
    rows = [[(a, b, mc - a - b) for a in range(mc + 1) for b in range(mc + 1 - a)] for mc in m]
    total_w = total_wt = 0.0
    for L in itertools.product(*rows):
        L = np.array(L, dtype=float)
        S = L.sum(axis=0)
        log_w = np.sum(gammaln(K + 1 + L) - gammaln(L + 1))
        log_w += np.sum(gammaln(n + 1 + S)) - np.sum(gammaln(K.sum(axis=0) + 3 + S))
        w = np.exp(log_w)
        total_w += w
        total_wt += w * betainc(n[2] + 1 + S[2], n[0] + 1 + S[0], 0.5)
    return total_wt / total_w


@pytest.mark.parametrize(
    ("n", "K", "m"),
    [
        ([1, 0, 0], [[1, 0, 0], [0, 0, 0], [0, 0, 0]], [2, 1, 0]),
        ([2, 1, 3], [[2, 0, 1], [0, 1, 0], [0, 0, 2]], [3, 0, 4]),
        ([0, 0, 0], [[0, 0, 0], [0, 0, 0], [0, 0, 0]], [4, 1, 0]),
    ],
)
def test_enumeration_matches_a_brute_force_sum_over_tables(n, K, m) -> None:  # type: ignore[no-untyped-def]
    assert enumerate_posterior(n, K, m).theta == pytest.approx(_brute_force_theta(n, K, m), abs=1e-12)


@pytest.mark.golden
def test_enumeration_agrees_with_the_nuts_reference() -> None:
    cases = [c for c in golden_cases() if "theta_exact" in c]
    assert len(cases) >= 5
    for case in cases:
        exact = (
            human_only_theta(case["n"]) if sum(case["m"]) == 0 else enumerate_posterior(case["n"], case["K"], case["m"], case["mu"]).theta
        )
        assert exact == pytest.approx(case["theta_exact"], abs=1e-12)
        assert abs(exact - case["theta_ref"]) <= 4 * case["theta_ref_se"] + 1e-4, case["name"]


counts = st.lists(st.integers(0, 6), min_size=3, max_size=3)


@pytest.mark.property
@settings(max_examples=40, deadline=None)
@given(n=counts, K=st.lists(counts, min_size=3, max_size=3), m=st.lists(st.integers(0, 8), min_size=3, max_size=3))
def test_enumeration_is_a_probability_and_antisymmetric(n, K, m) -> None:  # type: ignore[no-untyped-def]
    n, K, m = np.array(n), np.array(K), np.array(m)
    exact = enumerate_posterior(n, K, m)
    assert 0.0 <= exact.theta <= 1.0
    assert exact.p_mean.sum() == pytest.approx(1.0, abs=1e-12)
    swapped = enumerate_posterior(*flipped(n, K, m))
    assert swapped.theta == pytest.approx(1.0 - exact.theta, abs=1e-10)
    assert swapped.p_mean == pytest.approx(exact.p_mean[::-1], abs=1e-10)
