"""Favi-Score (von Däniken et al. 2024; method.md §7): hand cases, Lemma 1, antisymmetry, posterior."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefeval_core.diagnostics.confusion import flip_confusion
from prefeval_core.diagnostics.favi import ERROR_COST, error_counts, favi_posterior, favi_score, favi_scores, system_favi
from tests.diagnostics_fixtures import TOY_CONFUSIONS, TOY_FAVI, confusion_strategy


def test_error_cost_matrix() -> None:
    # rows = metric c, columns = human h: W = v(c) - v(h)
    np.testing.assert_array_equal(ERROR_COST, [[0, 1, 2], [-1, 0, 1], [-2, -1, 0]])


def test_hand_computed_scores() -> None:
    # cost: +1 (metric >, human =) -1 * 2 (metric =, human >) -2 * 1 (metric <, human >) = -3 over 4 errors
    assert favi_score([[5, 1, 0], [2, 3, 0], [1, 0, 4]]) == pytest.approx(-0.75)
    # every error is a full inversion in favour of A
    assert favi_score([[0, 0, 3], [0, 7, 0], [0, 0, 0]]) == 2.0
    # balanced errors of equal severity: no favouritism, and 0 is a real value here
    assert favi_score([[4, 2, 0], [2, 4, 0], [0, 0, 4]]) == 0.0
    for pair, K in TOY_CONFUSIONS.items():
        assert favi_score(K) == pytest.approx(TOY_FAVI[pair])
    np.testing.assert_array_equal(error_counts([[5, 1, 0], [2, 3, 0], [1, 0, 4]]), 4)


def test_no_error_means_undefined_not_zero() -> None:
    assert math.isnan(favi_score(np.diag([3, 4, 5])))
    assert math.isnan(favi_score(np.zeros((3, 3), dtype=int)))
    scores = favi_scores(np.stack([np.diag([1, 1, 1]), [[0, 1, 0], [0, 0, 0], [0, 0, 0]]]))
    assert math.isnan(scores[0]) and scores[1] == 1.0


def test_rejects_wrong_shape() -> None:
    with pytest.raises(ValueError, match="3x3"):
        favi_score(np.ones((2, 2)))


@pytest.mark.property
@given(confusion_strategy())
def test_lemma_1_margin_identity(K: np.ndarray) -> None:
    """F = [(M> - M<) - (H> - H<)] / E with M, H the metric's (row) and human's (column) counts."""
    errors = int(K.sum() - np.trace(K))
    metric, human = K.sum(axis=1), K.sum(axis=0)
    if errors == 0:
        assert math.isnan(favi_score(K))
    else:
        expected = ((metric[0] - metric[2]) - (human[0] - human[2])) / errors
        assert favi_score(K) == pytest.approx(expected)
        assert -2 <= favi_score(K) <= 2


@pytest.mark.property
@given(confusion_strategy())
def test_swapping_a_and_b_negates_the_score(K: np.ndarray) -> None:
    score, swapped = favi_score(K), favi_score(flip_confusion(K))
    if math.isnan(score):
        assert math.isnan(swapped)
    else:
        assert swapped == pytest.approx(-score)


@pytest.mark.property
@settings(max_examples=30, deadline=None)
@given(confusion_strategy(max_count=15), st.integers(0, 2**31 - 1))
def test_posterior_is_seeded_and_bounded(K: np.ndarray, seed: int) -> None:
    posterior = favi_posterior(K, seed=seed, samples=300)
    again = favi_posterior(K, seed=seed, samples=300)
    np.testing.assert_array_equal(posterior.samples, again.samples)
    assert posterior.samples.shape == (1, 300)
    assert np.all(np.abs(posterior.samples) <= 2)
    low, high = posterior.interval[0]
    assert low <= posterior.mean[0] <= high


def test_posterior_of_the_swapped_pair_is_mirrored() -> None:
    K = np.array([[30, 9, 2], [4, 20, 7], [1, 3, 25]])
    posterior = favi_posterior(K, seed=1, samples=40_000)
    swapped = favi_posterior(flip_confusion(K), seed=2, samples=40_000)
    assert swapped.mean[0] == pytest.approx(-posterior.mean[0], abs=0.01)
    np.testing.assert_allclose(swapped.interval[0], -posterior.interval[0][::-1], atol=0.02)


def test_posterior_matches_the_off_diagonal_dirichlet_mean() -> None:
    """By aggregation, F(q) depends on q's off-diagonal cells only, Dirichlet(K_off + 1):
    its mean is sum(W * (K + 1)) / sum(off-diagonal (K + 1)) (linear in the normalised cells)."""
    K = np.array([[50, 12, 3], [6, 40, 9], [1, 4, 60]])
    posterior = favi_posterior(K, seed=3, samples=40_000)
    alpha = K + 1
    off = ~np.eye(3, dtype=bool)
    expected = (ERROR_COST * alpha)[off].sum() / alpha[off].sum()
    assert posterior.mean[0] == pytest.approx(expected, abs=0.01)


def test_posterior_concentrates_on_the_score_with_many_errors() -> None:
    K = np.array([[2000, 600, 100], [300, 2000, 500], [100, 200, 2000]])
    posterior = favi_posterior(K, seed=0, samples=4000)
    low, high = posterior.interval[0]
    assert low < favi_score(K) < high
    assert high - low < 0.15  # about 4 sd of the cost (~1) over sqrt(1800 errors)
    few = favi_posterior(np.array([[20, 1, 0], [0, 20, 0], [0, 0, 20]]), seed=0, samples=4000)
    assert few.interval[0, 1] - few.interval[0, 0] > 5 * (high - low)


def test_posterior_rejects_bad_level() -> None:
    with pytest.raises(ValueError, match="level"):
        favi_posterior(np.eye(3), seed=0, level=1.0)


def test_system_view_orients_scores_and_skips_undefined() -> None:
    pairs = [("A", "B"), ("A", "C"), ("B", "C")]
    view = system_favi(pairs, [0.5, math.nan, -1.0], [4, 0, 2])
    assert view["A"].opponents == ("B",) and view["A"].scores == (0.5,) and view["A"].errors == (4,)
    assert view["B"].opponents == ("A", "C") and view["B"].scores == (-0.5, -1.0)
    assert view["C"].opponents == ("B",) and view["C"].scores == (1.0,)
    zero = system_favi([("A", "B")], [0.0])
    assert math.copysign(1, zero["B"].scores[0]) == 1  # no -0.0 in JSON
