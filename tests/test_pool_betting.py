"""The pool-mean statistic (method.md §13, ``pool_mean``): the without-replacement betting test's
exact increments, its validity for any fixed pool by simulation over item orders (the design's
randomness), and the protocol's use of it (reference = the pool's own mean difference)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from prefeval_core.diagnostics.comparison import pool_mean_outcomes
from prefeval_core.protocol.settings import ProtocolSettings, Question
from prefeval_core.protocol.simulation import simulate_question
from prefeval_core.sequential.betting import PairSequences
from prefeval_core.sequential.pool_betting import POOL_BET_CAP, REFUTED, pool_evidence
from prefeval_core.vocabulary.outcomes import BETTER, TIE, WORSE


def _sequences(d: np.ndarray, bound: float) -> tuple[PairSequences, np.ndarray]:
    d = np.atleast_2d(np.asarray(d, dtype=np.float64))
    sequences = PairSequences(d=d, pool=np.full(d.shape[0], d.shape[1], dtype=np.int64), bound=np.full(d.shape[0], bound))
    return sequences, np.ones(d.shape, dtype=bool)


def test_increments_exact_case() -> None:
    # Pool 2, 2, -1 on a range of 4, null Δ <= 0. Item 1: the null's conditional mean is 0, z = 2 / 4.
    # Item 2: 2 of the pool's sum 0 is spent, the two left average -1 under the null: y = 2 + 1 = 3
    # against a worst case of -(4 - 1), z = 1. Item 3: the last item must be -4 or less under the
    # null; it is -1, so the null is refuted.
    evidence = pool_evidence(*_sequences([[2.0, 2.0, -1.0]], bound=4.0))
    a_better, b_better = evidence.nulls
    assert a_better.z[0].tolist() == pytest.approx([0.5, 1.0, REFUTED])
    # Null Δ >= 0: z = -2 / 4; then the two left average -1 and the item is 2: (-1 - 2) / (4 + 1).
    assert b_better.z[0, :2].tolist() == pytest.approx([-0.5, -0.6])
    # The stakes: 0 first; then the GRAPA stake of the past z = 0.5 (mean 1/4, variance 5/32) is
    # 1.14, capped at POOL_BET_CAP.
    wealth = a_better.log_wealth()[0]
    assert wealth[:2].tolist() == pytest.approx([0.0, math.log1p(POOL_BET_CAP)])
    assert evidence.direction[0, 0] > math.log(1 / 0.001)


def test_an_unrevealed_item_counts_at_the_null_s_end_of_the_scale() -> None:
    # Pool of 4, the second item passed without a difference: under Δ <= 0 it may have been +4 at
    # most, so the two left may average (0 - 1 + 4) / 2 = 1.5: y = 1 - 1.5, worst case -(4 + 1.5).
    d = np.array([[1.0, np.nan, 1.0, 1.0]])
    evidence = pool_evidence(PairSequences(d, np.array([4]), np.array([4.0])), np.ones((1, 4), dtype=bool))
    assert evidence.nulls[0].z[0, 2] == pytest.approx(-0.5 / 5.5)
    assert evidence.nulls[0].z[0, 1] == 0.0 and not evidence.nulls[0].observed[0, 1]


@pytest.mark.parametrize("shape", ["skewed", "symmetric"])
def test_valid_for_a_fixed_pool_over_item_orders(shape: str) -> None:
    # One fixed pool of 60 differences with mean exactly 0 (skewed: many small gains, rare large
    # losses, the hard case for a mean test), 4,000 uniform orders, some items passed unrevealed:
    # the wealth against Δ <= 0 ever reaches 1 / a in at most a share a of the orders.
    rng = np.random.default_rng(5)
    values = rng.choice([-4.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5], size=60) if shape == "skewed" else rng.normal(0, 1, 60)
    values = np.clip(values - values.mean(), -4, 4)
    values -= values.mean()
    runs = 4000
    d = np.stack([rng.permutation(values) for _ in range(runs)])
    d[rng.random(d.shape) < 0.1] = np.nan
    sequences = PairSequences(d, np.full(runs, 60), np.full(runs, 4.0))
    evidence = pool_evidence(sequences, np.ones(d.shape, dtype=bool))
    for level in (0.05, 0.2):
        for column in (0, 1):
            share = float((evidence.direction[:, column] >= math.log(1 / level)).mean())
            assert share <= level + 2 * math.sqrt(level * (1 - level) / runs)


def test_equivalence_is_valid_at_the_margin_and_decided_inside_it() -> None:
    # A pool whose mean is exactly δ = 0.5: "A better by δ or more" is rejected in at most γ of the
    # orders. A pool with mean 0 and small spread is shown equivalent within 0.5 once revealed.
    rng = np.random.default_rng(9)
    values = rng.normal(0, 1, 80)
    values += 0.5 - values.mean()
    d = np.stack([rng.permutation(values) for _ in range(4000)])
    evidence = pool_evidence(*_sequences(d, bound=8.0), delta=0.5)
    assert float((evidence.equivalence[:, 0] >= math.log(20)).mean()) <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / 4000)
    flat = rng.normal(0, 0.3, (1, 80))
    inside = pool_evidence(*_sequences(flat - flat.mean(), bound=4.0), delta=0.5)
    assert (inside.equivalence[0] >= math.log(20)).all()


def test_the_whole_pool_decides_the_sign_of_its_mean() -> None:
    # Revealed in full, the pool's own mean difference is known: every pair with a non-zero mean is
    # decided in its direction, which is the statistic's reference.
    rng = np.random.default_rng(3)
    d = rng.normal(0, 1, (50, 40))
    d += rng.choice([-0.2, 0.2], size=(50, 1)) - d.mean(axis=1, keepdims=True)
    evidence = pool_evidence(*_sequences(d, bound=8.0))
    expected = pool_mean_outcomes(d)
    said = np.where(evidence.direction[:, 0] >= math.log(20), BETTER, np.where(evidence.direction[:, 1] >= math.log(20), WORSE, TIE))
    assert (said == expected).all()
    assert pool_mean_outcomes(np.array([[1.0, -1.0], [1.0, np.nan], [-1.0, -1.0]])).tolist() == [TIE, BETTER, WORSE]


def test_settings_take_pool_mean_with_betting_controls_only() -> None:
    ProtocolSettings(budget=10, model="human_only", statistic="pool_mean", delta=0.5, error_control="question", futility=0.05)
    with pytest.raises(Exception, match="pool_mean statistic"):
        ProtocolSettings(budget=10, model="human_only", statistic="pool_mean", error_control="spending", futility=None)


@pytest.mark.slow
def test_pool_mean_protects_the_pool_s_top_system() -> None:
    # Simulated studies with three tied top systems of six: their pool means differ by chance, and
    # the run must never exclude the system with the best pool mean in more than γ of the runs.
    result = simulate_question(
        n_systems=6, n_tied=3, n_items=40, question=Question("top-k", 1), statistic="pool_mean", runs=120, batch=10, seed=400
    )
    assert result.errors <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / 120)
    assert result.cost < 1.0


def test_the_evidence_ends_at_the_last_position_revealed() -> None:
    # A round computes the e-processes up to the last position any pair has revealed (the rest of
    # the study's order changes none of them): the same evidence as over the whole order.
    rng = np.random.default_rng(8)
    d = np.round(rng.normal(0.3, 1.0, (6, 40)), 1)
    d[rng.random(d.shape) < 0.3] = np.nan
    d[:, 25:] = np.nan  # nothing revealed after position 24
    in_pool = rng.random(d.shape) < 0.9
    in_pool |= ~np.isnan(d)
    sequences = PairSequences(d=d, pool=in_pool.sum(axis=1).astype(np.int64), bound=np.full(6, 4.0))
    assert sequences.revealed_width == 25 and sequences.prefix(25).n.tolist() == sequences.n.tolist()
    whole = pool_evidence(sequences, in_pool, delta=0.5)
    part = pool_evidence(sequences.prefix(25), in_pool[:, :25], delta=0.5)
    for name in ("direction", "current", "equivalence", "point", "mean"):
        np.testing.assert_allclose(getattr(part, name), getattr(whole, name), rtol=1e-12, atol=1e-12)  # sums in another order
    assert PairSequences(d=np.full((2, 5), np.nan), pool=np.full(2, 5), bound=np.ones(2)).revealed_width == 0
