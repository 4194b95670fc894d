"""Confusion matrices per pair (method.md §7): hand-counted cases, flipping, mixture matrix, real data."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from prefeval_core.data.dataset import load_dataset
from prefeval_core.diagnostics.confusion import confusion_matrices, flip_confusion, mixture_matrix
from prefeval_core.pairs.counts import align_outcomes
from prefeval_core.pairs.preferences import pair_outcomes
from prefeval_core.vocabulary.outcomes import flip_codes
from tests.diagnostics_fixtures import TOY_CONFUSIONS, TOY_HUMAN_ALL, TOY_METRIC_ALL, toy_dataset


def toy_confusions():
    ds = toy_dataset()
    return confusion_matrices(align_outcomes(pair_outcomes(ds, "human:q"), pair_outcomes(ds, "metric")))


def test_hand_counted_confusion_matrices() -> None:
    confusions = toy_confusions()
    assert confusions.pairs == (("X", "Y"), ("X", "Z"), ("Y", "Z"))
    for index, pair in enumerate(confusions.pairs):
        np.testing.assert_array_equal(confusions.K[index], TOY_CONFUSIONS[pair])
        np.testing.assert_array_equal(confusions.human_all[index], TOY_HUMAN_ALL[pair])
        np.testing.assert_array_equal(confusions.metric_all[index], TOY_METRIC_ALL[pair])
    np.testing.assert_array_equal(confusions.items, [4, 3, 3])


def test_pairwise_confusion_hand_counted() -> None:
    rows = "\n".join(
        [
            "item_id,system_a,system_b,rater,label",
            "p1,a,b,human,>",
            "p1,a,b,judge,>",
            "p2,a,b,human,<",
            "p2,a,b,judge,>",
            "p3,a,b,human,=",
            "p3,a,b,judge,<",
            "p4,b,a,human,>",  # written as (b, a): canonical (a, b) outcome is <
            "p4,b,a,judge,=",
            "p5,a,b,human,>",  # the judge skipped p5: in human_all only
        ]
    )
    ds = load_dataset([("preferences.csv", rows.encode())])
    confusions = confusion_matrices(align_outcomes(pair_outcomes(ds, "human"), pair_outcomes(ds, "judge")))
    np.testing.assert_array_equal(confusions.K[0], [[1, 0, 1], [0, 0, 1], [0, 1, 0]])
    np.testing.assert_array_equal(confusions.human_all[0], [2, 1, 2])
    np.testing.assert_array_equal(confusions.metric_all[0], [2, 1, 1])


def test_human_only_table_is_rejected() -> None:
    ds = toy_dataset()
    with pytest.raises(ValueError, match="no metric"):
        confusion_matrices(align_outcomes(pair_outcomes(ds, "human:q")))


def test_joint_pairs_drops_pairs_the_metric_never_rated() -> None:
    rows = "item_id,system,rater,score\n" + "\n".join(
        [f"i{i},{s},human,{v}" for i in range(3) for s, v in (("a", i), ("b", 2 - i), ("c", 1))]
        + [f"i{i},{s},metric,{v}" for i in range(3) for s, v in (("a", i), ("b", i))]
    )
    ds = load_dataset([("ratings.csv", rows.encode())])
    table = align_outcomes(pair_outcomes(ds, "human"), pair_outcomes(ds, "metric"))
    assert table.pairs == (("a", "b"), ("a", "c"), ("b", "c"))
    assert len(confusion_matrices(table).K) == 3
    restricted = confusion_matrices(table, joint_only=True)
    assert restricted.pairs == (("a", "b"),)
    # human: i0 <, i1 =, i2 >; the metric scores a and b alike: always =
    np.testing.assert_array_equal(restricted.K, [[[0, 0, 0], [1, 1, 1], [0, 0, 0]]])
    np.testing.assert_array_equal(restricted.human_all, [[1, 1, 1]])
    np.testing.assert_array_equal(restricted.metric_all, [[0, 3, 0]])


def test_flipping_the_pair_flips_the_confusion_matrix() -> None:
    ds = toy_dataset()
    table = align_outcomes(pair_outcomes(ds, "human:q"), pair_outcomes(ds, "metric"))
    flipped = type(table)(
        human_rater=table.human_rater,
        metric_rater=table.metric_rater,
        pairs=tuple((b, a) for a, b in table.pairs),
        pair_index=table.pair_index,
        item_id=table.item_id,
        human=flip_codes(table.human),
        metric=flip_codes(table.metric),
    )
    np.testing.assert_array_equal(confusion_matrices(flipped).K, flip_confusion(confusion_matrices(table).K))


def test_mixture_matrix_columns_sum_to_one_and_empty_columns_are_nan() -> None:
    K = np.array([[3, 0, 1], [1, 0, 1], [0, 0, 2]])
    mixture = mixture_matrix(K)
    np.testing.assert_allclose(mixture[:, 0], [0.75, 0.25, 0.0])
    assert np.isnan(mixture[:, 1]).all()
    np.testing.assert_allclose(mixture[:, 2], [0.25, 0.25, 0.5])


@pytest.mark.property
@given(st.lists(st.integers(0, 20), min_size=9, max_size=9))
def test_mixture_matrix_property(cells: list[int]) -> None:
    K = np.array(cells).reshape(3, 3)
    mixture = mixture_matrix(K)
    filled = K.sum(axis=0) > 0
    np.testing.assert_allclose(mixture[:, filled].sum(axis=0), 1.0)
    assert np.isnan(mixture[:, ~filled]).all()


@pytest.mark.golden
def test_summeval_rougeL_confusions_cover_every_item(summeval) -> None:
    confusions = confusion_matrices(align_outcomes(pair_outcomes(summeval, "human:relevance"), pair_outcomes(summeval, "rougeL")))
    assert len(confusions.pairs) == 120  # 16 systems, all pairs, 100 documents each
    np.testing.assert_array_equal(confusions.items, 100)
    np.testing.assert_array_equal(confusions.K.sum(axis=1), confusions.human_all)
    np.testing.assert_array_equal(confusions.K.sum(axis=2), confusions.metric_all)
