"""The pool's net win rate under question-level control (method.md §13, ``pool_sign`` and
``pool_sign_clt``): outcome values instead of score differences, their own reference, their margin's
units, and their error rates at true ties."""

from __future__ import annotations

import math

import numpy as np
import pytest

from prefeval_core.errors import SettingsError
from prefeval_core.protocol import new_state, replay_source, run_protocol
from prefeval_core.protocol.ideal_metric import draw_metric_outcomes
from prefeval_core.protocol.question_control import outcome_values, pair_sequences, pool_differences
from prefeval_core.protocol.result import reference_outcomes
from prefeval_core.protocol.settings import ProtocolSettings, Question
from prefeval_core.protocol.simulation import ideal_mu, simulate_question
from prefeval_core.vocabulary.outcomes import BETTER, VALUES, WORSE
from tests.protocol_fixtures import ratings_table

GAMMA = 0.05
# A wins by 4 points on one item and loses by 1 on three: the mean difference favours A (+0.25),
# the net win rate favours B (1/4 - 3/4 = -0.5).
LOPSIDED = {"a": [5, 2, 2, 2], "b": [1, 3, 3, 3]}


def _settings(statistic: str, **options: object) -> ProtocolSettings:
    return ProtocolSettings(
        budget=100, model="human_only", unit="ratings", statistic=statistic, error_control="question", futility=0.05, **options
    )  # type: ignore[arg-type]


def test_outcome_values_exact_case() -> None:
    d = np.array([[0.5, -0.2, 0.05, np.nan, -0.1 - 1e-12]])
    assert np.array_equal(outcome_values(d, 0.0), [[1.0, -1.0, 1.0, np.nan, -1.0]], equal_nan=True)
    assert np.array_equal(outcome_values(d, 0.1), [[1.0, -1.0, 0.0, np.nan, 0.0]], equal_nan=True)  # |d| <= eps (+1e-9) ties


@pytest.mark.parametrize(
    ("statistic", "expected"), [("pool_mean", BETTER), ("pool_mean_clt", BETTER), ("pool_sign", WORSE), ("pool_sign_clt", WORSE)]
)
def test_the_reference_is_the_pool_s_own_mean_of_the_statistic_s_values(statistic: str, expected: int) -> None:
    table = ratings_table(LOPSIDED)
    state = new_state(table, _settings(statistic))
    assert reference_outcomes(state).tolist() == [expected]
    means = np.nanmean(pool_differences(table, state.settings.statistic), axis=1)
    assert means.tolist() == pytest.approx([0.25 if statistic.startswith("pool_mean") else -0.5])


def test_revealed_sequences_are_outcome_values() -> None:
    table = ratings_table(LOPSIDED)
    state = run_protocol(new_state(table, _settings("pool_sign")), replay_source(table))
    d = pair_sequences(state).d[0]
    revealed = d[~np.isnan(d)]
    assert len(revealed) == 4 and sorted(revealed.tolist()) == [-1.0, -1.0, -1.0, 1.0]
    assert pair_sequences(state).bound.tolist() == [1.0]


def test_the_margin_is_a_net_win_rate() -> None:
    _settings("pool_sign_clt", delta=0.2)
    with pytest.raises(SettingsError, match="net win rate, at most 1"):
        _settings("pool_sign", delta=1.5)
    with pytest.raises(SettingsError, match="decided by betting"):
        ProtocolSettings(budget=10, model="human_only", statistic="pool_sign_clt", error_control="spending", futility=None)
    with pytest.raises(SettingsError, match="decided by betting"):
        ProtocolSettings(budget=10, model="human_only", statistic="sign", error_control="question", futility=0.05, delta=0.2)


@pytest.mark.parametrize("statistic", ["pool_sign", "pool_sign_clt"])
def test_tied_top_members_stay_in_the_answer(statistic: str) -> None:
    # Three systems exactly tied at the top of six (40 items, N = 10): the share of runs that exclude one
    # of them from the top-1 answer stays within γ + 2 s.e.
    result = simulate_question(
        n_systems=6, n_tied=3, n_items=40, question=Question("top-k", 1), statistic=statistic, runs=60, batch=10, seed=700
    )
    assert result.errors <= GAMMA + 2 * math.sqrt(GAMMA * (1 - GAMMA) / result.runs)


def test_all_pairs_under_the_global_null_with_a_margin() -> None:
    # Four exchangeable systems (every pair's pool net win rate near 0), all-pairs with δ = 0.3: any false
    # directional decision, or an equivalence where the pool's net win rate is 0.3 or more, stays within γ + 2 s.e.
    result = simulate_question(
        n_systems=4, n_tied=4, n_items=60, question=Question(), statistic="pool_sign_clt", runs=100, batch=10, seed=900, delta=0.3
    )
    assert result.errors <= GAMMA + 2 * math.sqrt(GAMMA * (1 - GAMMA) / result.runs)


@pytest.mark.parametrize(("counts", "delta"), [((40, 20, 40), None), ((10, 80, 10), None), ((50, 20, 30), 0.2)])
def test_valid_on_a_fixed_pool_of_outcomes(counts: tuple[int, int, int], delta: float | None) -> None:
    # One fixed pool of 100 outcomes (+1, 0, -1 counts), 3,000 orders: with a net win rate of exactly 0 the
    # share of orders whose evidence ever reaches 1 / a that A (or B) is better stays within a + 2 s.e.; with a
    # net win rate exactly at the margin δ, so does the share that reject "A better by δ or more". Human only
    # and with the ideal metric at sign accuracy 0.8 as the control variate.
    from prefeval_core.sequential.betting import PairSequences
    from prefeval_core.sequential.pool_clt import clt_pool_evidence

    rng = np.random.default_rng(31)
    values = np.repeat([1.0, 0.0, -1.0], counts)
    metric = VALUES[draw_metric_outcomes(rng, np.asarray(ideal_mu(0.8)), (1 - values).astype(np.int64))].astype(np.float64)
    runs = 3000
    orders = np.stack([rng.permutation(100) for _ in range(runs)])
    sequences = PairSequences(d=values[orders], pool=np.full(runs, 100), bound=np.ones(runs))
    limit = GAMMA + 2 * math.sqrt(GAMMA * (1 - GAMMA) / runs)
    for f in (None, metric[orders][None]):
        evidence = clt_pool_evidence(sequences, np.ones(orders.shape, dtype=bool), delta, f)
        rejected = evidence.direction if delta is None else evidence.equivalence[:, :1]
        assert float((rejected >= math.log(1 / GAMMA)).any(axis=1).mean()) <= limit


def test_a_saved_run_restores_with_its_statistic_and_margin() -> None:
    from prefeval_core.protocol import state_from_dict, state_to_dict

    table = ratings_table(LOPSIDED)
    state = run_protocol(new_state(table, _settings("pool_sign_clt", delta=0.25)), replay_source(table))
    restored = state_from_dict(state_to_dict(state), table)
    assert restored.settings.statistic == "pool_sign_clt" and restored.settings.delta == 0.25
    assert np.array_equal(pair_sequences(restored).d, pair_sequences(state).d, equal_nan=True)
