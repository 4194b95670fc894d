"""Comparison with the full human evaluation (method.md §6): hand-computed cases."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest

from prefeval_core.diagnostics.comparison import (
    annotation_fraction,
    compare_with_reference,
    error_types,
    human_only_theta,
    human_reference_outcomes,
    kl_divergence,
    naive_metric_comparison,
    naive_metric_outcomes,
)

GT, EQ, LT = 0, 1, 2


def test_human_reference_theta_closed_form() -> None:
    # Dirichlet(n + 1) with n = (3, 0, 0): P(p> > p<) = I_{1/2}(1, 4) = 1 - 2**-4
    assert human_only_theta([3, 0, 0]) == pytest.approx(1 - 2.0**-4)
    assert human_only_theta([0, 7, 0]) == pytest.approx(0.5)
    assert human_reference_outcomes([[5, 0, 0], [4, 0, 0], [0, 9, 5]]).tolist() == [GT, EQ, LT]  # 1-2**-6 > .975 > 1-2**-5


def test_naive_sign_test_drops_ties() -> None:
    # 9 vs 1 (p = 0.0215) is significant, 8 vs 2 (p = 0.109) is not; ties never count
    assert binomtest(9, 10).pvalue < 0.05 < binomtest(8, 10).pvalue
    assert naive_metric_outcomes([[9, 100, 1], [8, 0, 2], [1, 0, 9], [0, 50, 0]]).tolist() == [GT, EQ, LT, EQ]


def test_error_types_all_five() -> None:
    outcomes = [GT, EQ, LT, EQ, GT]
    reference = [GT, EQ, GT, LT, EQ]
    assert error_types(outcomes, reference).tolist() == ["correct_significant", "correct_undecided", "inversion", "omission", "insertion"]


def test_compare_with_reference_counts_and_kld() -> None:
    n_all = np.array([[10, 0, 0], [2, 2, 2]])
    p_estimate = np.array([[11 / 13, 1 / 13, 1 / 13], [0.5, 0.25, 0.25]])
    comparison = compare_with_reference([GT, GT], p_estimate, n_all)
    assert comparison.reference.tolist() == [GT, EQ]
    assert comparison.error_types.tolist() == ["correct_significant", "insertion"]
    assert comparison.frequencies.correct == 0.5 and comparison.frequencies.insertion == 0.5
    assert comparison.kld[0] == pytest.approx(0.0)  # same distribution as the human posterior mean
    expected = 0.5 * np.log(0.5 / (1 / 3)) + 2 * 0.25 * np.log(0.25 / (1 / 3))
    assert comparison.kld[1] == pytest.approx(expected)
    assert comparison.mean_kld == pytest.approx(expected / 2)


def test_naive_metric_comparison_uses_add_one_rates() -> None:
    comparison = naive_metric_comparison([[9, 0, 1]], [[0, 1, 0]])
    assert comparison.outcomes.tolist() == [GT] and comparison.error_types.tolist() == ["insertion"]
    p_x, p_hum = np.array([10, 1, 2]) / 13, np.array([1, 2, 1]) / 4
    assert comparison.kld[0] == pytest.approx(float(kl_divergence(p_x, p_hum)))


def test_annotation_fraction() -> None:
    assert annotation_fraction(43, 100) == pytest.approx(0.43)
    assert annotation_fraction(0, 0) == 0.0
    with pytest.raises(ValueError):
        annotation_fraction(5, 4)
