"""Joint counts of several metrics: patterns, marginals and the single-metric triple agree."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefeval_core.pairs.counts import JointCounts, PairTable, count_triples, joint_counts, pattern_codes, pattern_index


def test_pattern_index_and_codes_are_inverse() -> None:
    codes = pattern_codes(3)
    assert codes.shape == (64, 3)
    np.testing.assert_array_equal(pattern_index(codes), np.arange(64))
    assert pattern_index(np.array([-1, 0, 2])) == 3 + 0 * 4 + 2 * 16


@pytest.mark.property
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(1, 3))
def test_each_metrics_marginal_is_its_count_triple(seed: int, k: int) -> None:
    rng = np.random.default_rng(seed)
    rows, pairs = 300, 5
    pair_index = np.sort(rng.integers(0, pairs, rows)).astype(np.int32)
    human = rng.integers(-1, 3, rows).astype(np.int8)
    metrics = rng.integers(-1, 3, (rows, k)).astype(np.int8)
    revealed = (human >= 0) & (rng.random(rows) < 0.5)
    joint = joint_counts(tuple(f"m{j}" for j in range(k)), pair_index, human, metrics, revealed, pairs)
    assert joint.revealed.sum() == revealed.sum()
    for j in range(k):
        table = PairTable(
            "h", f"m{j}", tuple((f"s{i}", f"t{i}") for i in range(pairs)), pair_index, np.arange(rows).astype(object), human, metrics[:, j]
        )
        expected = count_triples(table, revealed)
        got = joint.triples(j)
        np.testing.assert_array_equal(got.n, expected.n)
        np.testing.assert_array_equal(got.K, expected.K)
        np.testing.assert_array_equal(got.m, expected.m)
        if k == 1:
            back = JointCounts.from_triples(expected).triples(0)
            np.testing.assert_array_equal(back.K, expected.K)
            np.testing.assert_array_equal(back.m, expected.m)


def test_wrong_shapes_are_refused() -> None:
    with pytest.raises(ValueError, match="need revealed"):
        JointCounts(("a", "b"), np.zeros((2, 4, 3), dtype=np.int64), np.zeros((2, 4), dtype=np.int64))
