"""The simulated ideal metric (method.md §10)."""

from __future__ import annotations

import numpy as np
import pytest

from prefeval_core.pairs.counts import count_triples
from prefeval_core.protocol import ProtocolSettings
from prefeval_core.protocol.ideal_metric import IDEAL_MU, IDEAL_MU_ROWS, ideal_metric_table
from tests.protocol_fixtures import comparison_table

GT, EQ, LT = 0, 1, 2


def test_identity_mu_copies_the_human_outcomes() -> None:
    table = comparison_table({("a", "b"): ([GT, EQ, LT, -1], None)}, metric=None).pair_table(None)
    simulated = ideal_metric_table(table, seed=0, mu=np.eye(3))
    assert simulated.metric.tolist() == [GT, EQ, LT, -1]
    assert simulated.metric_rater == "ideal"


def test_confusion_frequencies_follow_the_columns_of_mu() -> None:
    human = [GT] * 4000 + [EQ] * 4000 + [LT] * 4000
    table = comparison_table({("a", "b"): (human, None)}, metric=None).pair_table(None)
    simulated = ideal_metric_table(table, seed=1)
    K = count_triples(simulated, simulated.human >= 0).K[0]
    observed = K / K.sum(axis=0, keepdims=True)
    # 4000 draws per column: standard error <= 0.008, so 0.03 is ~4 standard errors
    np.testing.assert_allclose(observed, IDEAL_MU, atol=0.03)


def test_extra_items_draw_truth_from_the_pair_rates_and_stay_unrevealable() -> None:
    table = comparison_table({("a", "b"): ([GT] * 10, None), ("a", "c"): ([LT] * 10, None)}, metric=None).pair_table(None)
    simulated = ideal_metric_table(table, seed=2, extra_items=3000, mu=np.eye(3))
    assert len(simulated.item_id) == 20 + 6000
    assert np.all(np.diff(simulated.pair_index) >= 0)  # rows stay grouped by pair
    assert simulated.human_pool().tolist() == [10, 10]
    m = count_triples(simulated, np.zeros(len(simulated.item_id), dtype=bool)).m
    assert m.tolist() == [[3010, 0, 0], [0, 0, 3010]]  # rates (1, 0, 0) and (0, 0, 1) through the identity


def test_same_seed_same_metric_and_settings_accept_the_matrix() -> None:
    table = comparison_table({("a", "b"): ([GT, EQ, LT] * 50, None)}, metric=None).pair_table(None)
    first = ideal_metric_table(table, seed=5, extra_items=10)
    assert np.array_equal(first.metric, ideal_metric_table(table, seed=5, extra_items=10).metric)
    assert not np.array_equal(first.metric, ideal_metric_table(table, seed=6, extra_items=10).metric)
    ProtocolSettings(
        budget=10, model="known_mu", mu=IDEAL_MU_ROWS, metrics=("ideal",), error_control="none", futility=None
    )  # columns sum to 1
    with pytest.raises(ValueError):
        ideal_metric_table(table, seed=0, mu=np.ones((3, 3)))
