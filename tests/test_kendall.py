"""Segment-level Kendall tau-b (method.md §9): hand-computed cases, a brute-force property, real data."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefeval_core.diagnostics.kendall import KendallResult, kendall_tau, kendall_tau_segments, tau_b
from prefeval_core.errors import CoverageError, UnknownNameError


def brute_tau_b(x: list[float], y: list[float]) -> float:
    """tau-b = (C - D) / sqrt((n0 - n1)(n0 - n2)) by enumerating all pairs."""
    concordant = discordant = ties_x = ties_y = 0
    for i, j in itertools.combinations(range(len(x)), 2):
        dx, dy = x[i] - x[j], y[i] - y[j]
        ties_x += dx == 0
        ties_y += dy == 0
        if dx * dy > 0:
            concordant += 1
        elif dx * dy < 0:
            discordant += 1
    n0 = len(x) * (len(x) - 1) // 2
    return (concordant - discordant) / math.sqrt((n0 - ties_x) * (n0 - ties_y))


def ratings_frame(rows: list[tuple[str, str, str, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["item_id", "system", "rater", "score"])


def test_tau_b_hand_computed() -> None:
    # pairs (1,2) and (1,3) concordant, (2,3) discordant: (2 - 1) / 3
    assert tau_b(np.array([1.0, 2.0, 3.0]), np.array([1.0, 3.0, 2.0])) == pytest.approx(1 / 3)
    # one tie in x: C = 2, D = 0, n0 = 3, n1 = 1, n2 = 0 -> 2 / sqrt(2 * 3)
    assert tau_b(np.array([1.0, 1.0, 2.0]), np.array([1.0, 2.0, 3.0])) == pytest.approx(2 / math.sqrt(6))
    assert tau_b(np.array([1.0, 2.0]), np.array([2.0, 1.0])) == pytest.approx(-1.0)


def test_tau_b_undefined_is_nan_without_warning() -> None:
    assert math.isnan(tau_b(np.array([2.0, 2.0, 2.0]), np.array([1.0, 2.0, 3.0])))
    assert math.isnan(tau_b(np.array([1.0]), np.array([1.0])))
    with pytest.raises(ValueError):
        tau_b(np.array([1.0, 2.0]), np.array([1.0, 2.0, 3.0]))


def test_kendall_tau_overall_and_grouped_by_item() -> None:
    human = {("a", "s1"): 1, ("a", "s2"): 2, ("a", "s3"): 3, ("b", "s1"): 1, ("b", "s2"): 1, ("b", "s3"): 2, ("c", "s1"): 4, ("c", "s2"): 4}
    metric = {
        ("a", "s1"): 1,
        ("a", "s2"): 3,
        ("a", "s3"): 2,
        ("b", "s1"): 1,
        ("b", "s2"): 2,
        ("b", "s3"): 3,
        ("c", "s1"): 0,
        ("c", "s2"): 5,
    }
    rows = [(i, s, "human:x", float(v)) for (i, s), v in human.items()]
    rows += [(i, s, "m", float(v)) for (i, s), v in metric.items()]
    rows.append(("d", "s1", "m", 9.0))  # not rated by the human: not a segment
    result = kendall_tau(ratings_frame(rows), human="human:x", metric="m")
    keys = list(human)
    assert isinstance(result, KendallResult)
    assert result.segments == 8
    assert result.tau == pytest.approx(brute_tau_b([human[k] for k in keys], [metric[k] for k in keys]))
    # item a: 1/3; item b: 2/sqrt(6); item c: the human is constant -> skipped
    assert result.tau_grouped == pytest.approx((1 / 3 + 2 / math.sqrt(6)) / 2)
    assert (result.items, result.items_skipped) == (2, 1)
    assert (result.human, result.metric) == ("human:x", "m")


def test_kendall_tau_errors() -> None:
    frame = ratings_frame([("a", "s1", "h", 1.0), ("b", "s1", "m", 2.0)])
    with pytest.raises(UnknownNameError):
        kendall_tau(frame, human="h", metric="nope")
    with pytest.raises(CoverageError):
        kendall_tau(frame, human="h", metric="m")


@pytest.mark.property
@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 4), st.integers(0, 4)), min_size=2, max_size=25))
def test_kendall_matches_brute_force_and_is_symmetric(rows: list[tuple[int, int, int]]) -> None:
    items = np.array([f"i{r[0]}" for r in rows])
    x = np.array([r[1] for r in rows], dtype=float)
    y = np.array([r[2] for r in rows], dtype=float)
    result = kendall_tau_segments(items, x, y)
    swapped = kendall_tau_segments(items, y, x)
    negated = kendall_tau_segments(items, x, -y)
    defined = len(set(x)) > 1 and len(set(y)) > 1
    assert math.isnan(result.tau) != defined
    if defined:
        assert result.tau == pytest.approx(brute_tau_b(list(x), list(y)))
        assert swapped.tau == pytest.approx(result.tau)
        assert negated.tau == pytest.approx(-result.tau)
    assert result.items + result.items_skipped == len(set(items))
    assert result.segments == len(rows)


@pytest.mark.golden
def test_kendall_on_summeval_rouge(summeval) -> None:
    result = kendall_tau(summeval, human="human:relevance", metric="rougeL")
    assert result.segments == 1600
    assert result.items + result.items_skipped == 100
    # relevance and rougeL agree weakly but clearly (SummEval reports a segment-level tau near 0.2)
    assert 0.05 < result.tau < 0.4
    assert 0.05 < result.tau_grouped < 0.4
