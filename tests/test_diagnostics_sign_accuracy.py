"""Sample- and system-level sign accuracy (method.md §7): hand cases and the identical metric."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from prefeval_core.diagnostics.favi import favi_scores
from prefeval_core.diagnostics.metric_report import metric_report
from prefeval_core.diagnostics.sign_accuracy import margins, pair_sign_agreement, sign_accuracy
from prefeval_core.pairs.counts import align_outcomes
from prefeval_core.pairs.preferences import pair_outcomes
from tests.diagnostics_fixtures import TOY_CONFUSIONS, toy_dataset


def test_hand_computed_toy() -> None:
    K = np.array(list(TOY_CONFUSIONS.values()))
    result = sign_accuracy(K)
    # diagonals 0 + 2 + 1 over 4 + 3 + 3 items
    assert result.sample == pytest.approx(0.3)
    assert result.items == 10
    # margins (metric, human): XY (-1, +1), XZ (0, +1), YZ (-1, 0): no pair agrees
    metric_margin, human_margin = margins(K)
    np.testing.assert_array_equal(metric_margin, [-1, 0, -1])
    np.testing.assert_array_equal(human_margin, [1, 1, 0])
    assert result.system == 0.0 and result.pairs == 3


def test_system_level_counts_zero_margins_as_a_sign() -> None:
    agree = pair_sign_agreement(
        np.array(
            [
                [[3, 0, 0], [0, 1, 0], [1, 0, 1]],  # metric +1, human +1
                [[1, 0, 0], [0, 1, 0], [0, 0, 1]],  # 0 and 0
                [[1, 0, 0], [0, 1, 1], [0, 0, 0]],  # metric +1, human 0
            ]
        )
    )
    np.testing.assert_array_equal(agree, [True, True, False])


def test_empty_pairs_are_left_out_and_nothing_is_nan() -> None:
    K = np.array([np.zeros((3, 3), dtype=int), np.diag([2, 0, 1])])
    result = sign_accuracy(K)
    assert result.pairs == 1 and result.system == 1.0 and result.sample == 1.0
    empty = sign_accuracy(np.zeros((2, 3, 3), dtype=int))
    assert math.isnan(empty.sample) and math.isnan(empty.system)


@pytest.mark.property
@given(st.lists(st.lists(st.integers(0, 20), min_size=3, max_size=3), min_size=1, max_size=6))
def test_a_perfect_metric_has_accuracy_one_and_undefined_favi(counts: list[list[int]]) -> None:
    K = np.array([np.diag(c) for c in counts])
    result = sign_accuracy(K)
    if K.sum():
        assert result.sample == 1.0 and result.system == 1.0
    assert np.isnan(favi_scores(K)).all()


def test_metric_equal_to_the_human_on_real_data(summeval) -> None:
    report = metric_report(summeval, "human:relevance", "human:relevance")
    assert report.sign.sample == 1.0 and report.sign.system == 1.0
    assert np.isnan(report.favi).all() and np.isnan(report.mean_abs_favi)
    assert report.kendall is not None and report.kendall.tau == pytest.approx(1.0)
    assert all(not entry.scores for entry in report.systems.values())


def test_toy_report_uses_the_same_numbers() -> None:
    ds = toy_dataset()
    table = align_outcomes(pair_outcomes(ds, "human:q"), pair_outcomes(ds, "metric"))
    report = metric_report(ds, "human:q", "metric")
    assert report.pairs == table.pairs
    assert report.sign == sign_accuracy(np.array(list(TOY_CONFUSIONS.values())))
    assert report.mean_abs_favi == pytest.approx((0.5 + 1.0 + 0.5) / 3)
