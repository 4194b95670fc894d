"""The pool mean by betting, for sampling without replacement (method.md §13).

The estimand of pair (A, B) is ``Δ = mean_pool(d)``, the mean paired human difference
``d_i = s(A, i) - s(B, i)`` over the pair's item pool (the N items the study can ever reveal for
both). The pool is fixed; what is random is the seeded item order, a uniform permutation drawn
before any score is seen. So, whatever the scores, the next revealed item is uniform over the
pool items not yet passed, and its expected difference is known under a null value ``m`` of Δ:

    E[d_t | past] = (N m - sum of the passed d) / (items left).

Items passed without being revealed (a system not rated on it) have unknown d in ``[-B, B]``; the
bound is taken at its least favourable end, which keeps the test valid. This is the design-based
(randomisation) view of Waudby-Smith & Ramdas 2020, *Confidence sequences for sampling without
replacement* (NeurIPS), and their betting form (Waudby-Smith & Ramdas 2024, *Estimating means of
bounded random variables by betting*, JRSS-B, §6): no assumption on the scores beyond their range,
and the evidence tightens to the pool's value as the pool is exhausted.

**No metric inside.** A control variate fits this test exactly: the metric's pair outcome ``f_i`` is
known on every pool item, so ``c_t = λ_t (f_t - mean of f over the items left)`` has conditional
mean 0 for any predictable ``λ_t``, and betting on ``d_t - c_t`` removes the part of the spread the
metric predicts (a sequential prediction-powered estimate). It was built and measured, and it does
not pay here: the wealth must stay positive for the worst item the scale allows, so the stake is capped
at about ``1 / range`` (``R_t`` below), and with differences of typical size 0.8 on a range of 4 that
cap binds. The evidence per item is then ``≈ b μ - b² σ² / 2`` with ``b`` at its cap: the variance the
metric removes enters only the second, smaller term, while ``|λ_t|`` widens the range and so lowers
the cap. On the simulated top-1 studies of method.md §10 (60 runs) the ideal metric at sign
accuracy 0.8 and 0.9 *raised* the cost from 0.732 to 0.767 and 0.777 (docs/results_question_control.md).
The same increments with the control inside, judged by an asymptotic normal mixture whose width
follows the spread instead of the range, are the ``pool_mean_clt`` statistic
(:mod:`~prefeval_core.sequential.pool_clt`).

**The wager.** For a null "Δ <= m" the increment is ``y_t = d_t - μ_t`` with ``μ_t`` the largest
conditional mean the null allows; ``y_t >= -R_t`` with the predictable ``R_t = B + μ_t``, so
``z_t = y_t / R_t >= -1`` and the wealth ``prod (1 + b_t z_t)`` with a predictable stake
``b_t in [0, POOL_BET_CAP]`` (:func:`~prefeval_core.sequential.betting.log_wealth`) is a non-negative
supermartingale under the null: by Ville's inequality it ever reaches ``1 / a`` with probability at
most ``a``. "Δ >= m" is the mirror image. Where an item rules the null out — the
items left could not bring the pool's mean back within the null even if every one of them sat at
the scale's end (at the last item: any difference beyond the null's) — the null has probability 0
of producing the data; the increment is then set to :data:`REFUTED`, which makes its evidence
decisive.

Arrays are (P, T): P pairs, T positions of the study's item order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from prefeval_core.sequential.betting import Hypothesis, MeanEvidence, PairSequences, evidence_of

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

POOL_BET_CAP = 0.95
"""Largest fraction of the wealth staked on one item **(choice)**: the increments are scaled by the
worst item the scale allows, so a typical one is far from -1 and a cap of 0.75 (the symmetry
test's) binds; at 0.95 an item at the scale's very end keeps 5 % of the wealth. Measured on
simulated Likert pairs (100 items, Δ = 0.3, sd 0.8): 54 -> 49 items to a decision."""
REFUTED = 1.0e6
"""The scaled increment recorded at an item that refutes the null (the stake then wins
``log(1 + POOL_BET_CAP · REFUTED)`` ≈ 14 nats at once: beyond any threshold in use)."""


def pool_evidence(sequences: PairSequences, in_pool: BoolArray, delta: float | None = None) -> MeanEvidence:
    """:class:`~prefeval_core.sequential.betting.MeanEvidence` of the pool-mean tests (module
    docstring) of the pairs' revealed differences ``sequences``, with ``in_pool`` (P, T) the
    positions whose item each pair can ever get: directions against ``Δ <= 0`` and ``Δ >= 0``;
    with a margin ``delta``, equivalence against ``Δ >= δ`` and ``Δ <= -δ``."""
    passed = passed_items(sequences, in_pool)
    nulls = (_null(sequences, passed, 0.0, above=False), _null(sequences, passed, 0.0, above=True))
    margins = None if delta is None else (_null(sequences, passed, delta, above=True), _null(sequences, passed, -delta, above=False))
    return evidence_of(sequences, nulls, margins)


@dataclass(frozen=True)
class Passed:
    """Per position (P, T), what the pool items passed before it leave: ``left`` items, the sum of
    the revealed differences, and the count passed unrevealed; ``d`` the differences (0 where none)."""

    d: FloatArray
    left: FloatArray
    revealed_sum: FloatArray
    skipped: FloatArray


def passed_items(sequences: PairSequences, in_pool: BoolArray) -> Passed:
    """:class:`Passed` of the pairs' revealed differences, ``in_pool`` (P, T) their pool positions;
    shared by every null of the exact and the asymptotic pool tests."""
    observed = sequences.observed
    d = np.where(observed, sequences.d, 0.0)
    passed: npt.NDArray[np.int64] = np.cumsum(in_pool, axis=1) - in_pool
    unrevealed = in_pool & ~observed
    skipped: npt.NDArray[np.int64] = np.cumsum(unrevealed, axis=1) - unrevealed
    left = np.maximum(sequences.pool[:, None] - passed, 1).astype(np.float64)
    return Passed(d=d, left=left, revealed_sum=np.cumsum(d, axis=1) - d, skipped=skipped.astype(np.float64))


@dataclass(frozen=True)
class PoolNull:
    """One pool null's increments (P, T): ``y`` the signed step toward rejecting it (conditional mean
    <= 0 under the null), ``reach`` the predictable worst case ``-y`` the scale allows (> 0), and
    ``refuted`` the positions whose item rules the null out."""

    y: FloatArray
    reach: FloatArray
    refuted: BoolArray


def pool_null(sequences: PairSequences, passed: Passed, m: float, *, above: bool, control: FloatArray | None = None) -> PoolNull:
    """The increments against "Δ <= m" (``above=False``; evidence that Δ > m) or "Δ >= m"
    (``above=True``; evidence that Δ < m); a ``control`` (P, T) with conditional mean 0 given the
    past is subtracted from the differences (the refutation stays on the differences themselves)."""
    observed, d, left = sequences.observed, passed.d, passed.left
    B = sequences.bound[:, None]
    sign = -1.0 if above else 1.0
    # the least favourable conditional mean the null allows; unrevealed passed items at the null's end of [-B, B]
    null_mean = (sequences.pool[:, None] * m - passed.revealed_sum + sign * B * passed.skipped) / left
    y = sign * ((d if control is None else d - control) - null_mean)
    reach = np.maximum(B + sign * null_mean, 1e-12)
    # after this item, the items left could not bring the pool back within the null even at the scale's end
    tolerance = 1e-9 * B * sequences.pool[:, None]
    refuted = observed & (sign * (null_mean * left - d) < -B * (left - 1) - tolerance)
    return PoolNull(y=np.where(observed, y, 0.0), reach=reach, refuted=refuted)


def _null(sequences: PairSequences, passed: Passed, m: float, *, above: bool) -> Hypothesis:
    """The betting process of :func:`pool_null`'s null: scaled increments ``y / reach``."""
    observed = sequences.observed
    null = pool_null(sequences, passed, m, above=above)
    z = np.where(null.refuted, REFUTED, np.minimum(null.y / null.reach, REFUTED))
    z = np.where(observed, z, 0.0)
    return Hypothesis(z=np.asarray(z, dtype=np.float64), allowed=observed, observed=observed, cap=POOL_BET_CAP)
