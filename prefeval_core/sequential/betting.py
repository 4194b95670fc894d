"""Anytime-valid tests of a pair's mean score difference, by betting (method.md §13).

The evidence on pair (A, B) of a scalar study is the paired difference per item,
``d_i = s(A, i) - s(B, i)``, and the estimand is its mean ``Δ`` over the pair's item pool (the
``N`` items both outputs can be rated on). Items are revealed in a seeded random order that does
not depend on any score, so the revealed items are a sample *without replacement* from the pool.

**The test.** For a null ``Δ <= Δ0`` (``side = +1``; ``Δ >= Δ0`` with ``side = -1``) and the t-th
revealed item (``k`` revealed before it, ``r = N - k`` left including it), the conditional mean of
``d_t - λ_t f_t`` at the boundary ``Δ = Δ0`` is known from the past:

    m_t = (N Δ0 - sum_past d - λ_t (F - sum_past f)) / r

where ``f`` is the metric's difference on the same item, ``F`` its sum over the whole pool (known:
the metric scores every item) and ``λ_t`` any coefficient computed from the past. So
``y_t = side (d_t - λ_t f_t - m_t)`` has conditional mean ``<= 0`` under the null, and the wealth
``K_t = prod (1 + b_t y_t / C_t)`` with a predictable bet ``b_t in [0, BET_CAP]`` and a bound
``C_t >= |y_t|`` is a non-negative supermartingale: by Ville's inequality the null is ever
rejected (``K_t >= 1 / a``) with probability at most ``a``, at any look, whatever the reason a run
stops (Waudby-Smith & Ramdas 2024, *Estimating means of bounded random variables by betting*,
JRSS-B, §6 on sampling without replacement; Shafer & Vovk 2019).

**The metric as a control variate.** ``λ_t`` is the least-squares slope of ``d`` on ``f`` over the
pair's revealed items (shrunk towards 0 while few are known): the increments' spread falls by about
``1 - ρ²`` (``ρ`` the item-level correlation of human and metric differences), and so does the
number of ratings a decision needs — the prediction-powered estimate
``mean_pool(λ f) + mean_rated(d - λ f)`` of Angelopoulos et al. (2023, *Prediction-powered
inference*, Science; PPI++ 2024 for the tuned ``λ``) inside a sequential test. Without a metric
``f = 0`` and the test is on ``d`` alone.

**The bet.** ``b_t = clip(μ / (v + μ²), 0, BET_CAP)`` of the scaled past increments ``z = y / C``
(the approximate GRAPA bet of Waudby-Smith & Ramdas, their eq. 27), with a prior pseudo-observation
``z = 0``, ``v = 1/4`` so that the first bets are small.

Arrays are (P, T): P pairs, T positions of the study's item order; a position where a pair has no
revealed difference is skipped (its factor is 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
Side = Literal[1, -1]

BET_CAP = 0.75
"""Largest fraction of the wealth bet on one item (the worst outcome keeps a quarter) **(choice)**."""
PRIOR_VARIANCE = 0.25
"""Variance of the prior pseudo-observation of the scaled increments (bounded by 1)."""
SLOPE_PRIOR = 4.0
"""Pseudo-items of metric variance with slope 0 that shrink ``λ`` while few items are known."""
SLOPE_LIMIT = 4.0
"""``|λ|`` is clipped to this (a slope of human on metric differences, in their units)."""


@dataclass(frozen=True)
class PairSequences:
    """The revealed paired differences of P pairs along the study's item order.

    Attributes:
        d: (P, T) human score differences ``s(A) - s(B)``; NaN where not revealed for the pair.
        f: (P, T) metric differences on the same items (0 without a metric, or where it has none).
        pool: (P,) ``N``: items the pair can ever get (revealed or not).
        f_pool: (P,) sum of the metric differences over the whole pool (0 without a metric).
        bound: (P,) ``B >= |d|``: the human scale's range.
        f_bound: (P,) ``>= |f|``: the metric differences' range (0 without a metric).
    """

    d: FloatArray
    f: FloatArray
    pool: npt.NDArray[np.int64]
    f_pool: FloatArray
    bound: FloatArray
    f_bound: FloatArray

    @property
    def observed(self) -> BoolArray:
        return ~np.isnan(self.d)

    @property
    def n(self) -> npt.NDArray[np.int64]:
        """(P,) revealed differences per pair."""
        return self.observed.sum(axis=1).astype(np.int64)

    def subset(self, rows: npt.NDArray[np.int64]) -> PairSequences:
        return PairSequences(self.d[rows], self.f[rows], self.pool[rows], self.f_pool[rows], self.bound[rows], self.f_bound[rows])


@dataclass(frozen=True)
class Increments:
    """Per pair and position, what every null ``side · Δ <= side · Δ0`` needs (module docstring).

    Attributes:
        base: (P, T) ``d_t - λ_t f_t - m_t(0)``; 0 where not observed.
        shift: (P, T) ``N / r``: ``m_t(Δ0) = m_t(0) + Δ0 · shift``; 0 where not observed.
        spread: (P, T) ``B + |λ_t| B_f + |m_t(0)|``; 1 where not observed.
        observed: (P, T) positions with a revealed difference.
    """

    base: FloatArray
    shift: FloatArray
    spread: FloatArray
    observed: BoolArray

    def scaled(self, side: Side, null: float | FloatArray = 0.0) -> FloatArray:
        """(P, T) ``z_t = y_t / C_t`` for the null ``side · Δ <= side · null``; |z| <= 1, 0 where not observed."""
        null_p = np.broadcast_to(np.asarray(null, dtype=np.float64), (self.base.shape[0],))[:, None]
        y = side * (self.base - null_p * self.shift)
        bound = self.spread + np.abs(null_p) * self.shift
        return np.where(self.observed, y / bound, 0.0)


def increments(sequences: PairSequences) -> Increments:
    """The centred increments of every pair (module docstring), vectorised over pairs and positions."""
    observed = sequences.observed
    d = np.where(observed, sequences.d, 0.0)
    f = np.where(observed, sequences.f, 0.0)
    k = np.cumsum(observed, axis=1) - observed  # revealed before each position
    sum_d, sum_f = _before(d), _before(f)
    slope = _slope(k, sum_d, sum_f, _before(d * f), _before(f * f))
    remaining = np.maximum(sequences.pool[:, None] - k, 1).astype(np.float64)
    mean0 = (-sum_d - slope * (sequences.f_pool[:, None] - sum_f)) / remaining
    base = np.where(observed, d - slope * f - mean0, 0.0)
    shift = np.where(observed, sequences.pool[:, None] / remaining, 0.0)
    spread = sequences.bound[:, None] + np.abs(slope) * sequences.f_bound[:, None] + np.abs(mean0)
    return Increments(base=base, shift=shift, spread=np.where(observed, spread, 1.0), observed=observed)


def _before(values: FloatArray) -> FloatArray:
    """Running sums over the positions strictly before each one."""
    total = np.cumsum(values, axis=1)
    return total - values


def _slope(k: npt.NDArray[np.int64], sd: FloatArray, sf: FloatArray, sdf: FloatArray, sff: FloatArray) -> FloatArray:
    """Predictable least-squares slope of d on f, shrunk to 0 by :data:`SLOPE_PRIOR` pseudo-items."""
    count = np.maximum(k, 1)
    cov = sdf - sd * sf / count
    var = sff - sf * sf / count
    prior = SLOPE_PRIOR * var / count
    slope = np.where(k >= 2, cov / np.maximum(var + prior, 1e-12), 0.0)
    return np.clip(slope, -SLOPE_LIMIT, SLOPE_LIMIT)


def log_wealth(z: FloatArray, observed: BoolArray) -> FloatArray:
    """(P, T) log wealth after each position of the betting process on the scaled increments
    ``z`` (|z| <= 1; module docstring); constant where not observed."""
    count = np.cumsum(observed, axis=1) - observed
    mean = _before(z) / (count + 1.0)
    square = _before(z * z)
    variance = (PRIOR_VARIANCE + square - 2 * mean * _before(z) + count * mean * mean) / (count + 1.0)
    bet = np.clip(mean / np.maximum(variance + mean * mean, 1e-12), 0.0, BET_CAP)
    return np.cumsum(np.where(observed, np.log1p(bet * z), 0.0), axis=1)


def current_log_e(z: FloatArray, observed: BoolArray) -> FloatArray:
    """(P,) log wealth after the last position."""
    if z.shape[1] == 0:
        return np.zeros(z.shape[0])
    return log_wealth(z, observed)[:, -1]


def running_max_log_e(z: FloatArray, observed: BoolArray) -> FloatArray:
    """(P,) the largest log wealth reached so far (Ville's inequality bounds the supremum too)."""
    if z.shape[1] == 0:
        return np.zeros(z.shape[0])
    return np.maximum(log_wealth(z, observed).max(axis=1), 0.0)


@dataclass(frozen=True)
class MeanEvidence:
    """Log e-values of every pair's directional and equivalence nulls.

    Attributes:
        direction: (P, 2) running-max log e-values against ``Δ <= 0`` (column 0: evidence that A
            is better) and ``Δ >= 0`` (column 1: B better).
        current: (P, 2) the same processes' current log e-values (what an average of e-processes
            over pairs may use).
        equivalence: (P, 2) against ``Δ >= δ`` and ``Δ <= -δ`` (both rejected: ``|Δ| < δ``); NaN
            without a margin.
        mean: (P,) mean revealed difference (NaN with none).
    """

    direction: FloatArray
    current: FloatArray
    equivalence: FloatArray
    mean: FloatArray


def mean_evidence(sequences: PairSequences, delta: float | None = None) -> MeanEvidence:
    """:class:`MeanEvidence` of P pairs; ``delta`` is the equivalence margin δ (> 0) in score units."""
    parts = increments(sequences)
    observed = parts.observed
    scaled = [parts.scaled(side) for side in (1, -1)]
    direction = np.stack([running_max_log_e(z, observed) for z in scaled], axis=1)
    current = np.stack([current_log_e(z, observed) for z in scaled], axis=1)
    if delta is None:
        equivalence = np.full_like(direction, np.nan)
    else:
        equivalence = np.stack(
            [running_max_log_e(parts.scaled(-1, delta), observed), running_max_log_e(parts.scaled(1, -delta), observed)], axis=1
        )
    n = sequences.n
    total = np.where(observed, sequences.d, 0.0).sum(axis=1)
    mean = np.where(n > 0, total / np.maximum(n, 1), np.nan)
    return MeanEvidence(direction=direction, current=current, equivalence=equivalence, mean=mean)
