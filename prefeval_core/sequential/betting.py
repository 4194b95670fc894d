"""Anytime-valid tests of a pair's mean score difference, by betting (method.md §13).

The evidence on pair (A, B) of a scalar study is the paired difference per item,
``d_i = s(A, i) - s(B, i)``, and the estimand is its mean ``Δ`` over the pair's item pool (the
``N`` items both outputs can be rated on). Items are revealed in a seeded random order that does
not depend on any score: the revealed items are a sample *without replacement* from the pool.

**The test.** For the null ``Δ <= Δ0`` (``side = +1``; ``Δ >= Δ0`` with ``side = -1``), after
``k`` revealed items with sum ``D``, the next difference has conditional mean
``(N Δ - D) / (N - k)``, which under the null is at most ``Δ0`` whenever ``D >= k Δ0`` (the past
points *towards* the alternative). The wealth ``K_t = prod (1 + b_t y_t / C_t)`` of the increments
``y_t = side (x_t - Δ0)`` (below) is therefore a non-negative supermartingale under the null if the
predictable bet ``b_t in [0, BET_CAP]`` is 0 whenever ``side (D - k Δ0) < 0`` and ``C_t >= |y_t|``:
by Ville's inequality the null is ever rejected (``K_t >= 1 / a``) with probability at most ``a``,
at any look, whatever the reason a run stops. The same process is exactly valid when the items are
instead an i.i.d. sample of a larger population (the view of the replay's reference test), since
its increments then have mean ``Δ - Δ0``. Unlike a test that re-centres on what the pool has left,
it does not become certain as the pool runs out: it decides what the items show, like the
reference's paired test on all items (Waudby-Smith & Ramdas 2024, *Estimating means of bounded
random variables by betting*, JRSS-B; Shafer & Vovk 2019, *Game-theoretic foundations*).

**The metric as a control variate.** ``x_t = d_t - λ_t (f_t - φ_t)`` where ``f`` is the metric's
difference on the same item and ``φ_t`` the mean of ``f`` over the pool items not yet revealed
(known: the metric scores every item), so the correction has conditional mean exactly 0 and the
spread of ``x`` falls by about ``1 - ρ²`` (``ρ`` the item-level correlation of human and metric
differences). ``λ_t`` is the least-squares slope of ``d`` on ``f`` over the revealed items (shrunk
towards 0 while few are known): the prediction-powered estimate ``mean_pool(λ f) + mean_rated(d -
λ f)`` of Angelopoulos et al. (2023, *Prediction-powered inference*, Science; PPI++ 2024 for the
tuned ``λ``) inside a sequential test. The price is a wider bound ``C_t`` (the correction's range
adds to the scores'), which caps the bets: the metric helps where the bets are not at their cap.

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
        base: (P, T) ``x_t = d_t - λ_t (f_t - φ_t)``; 0 where not observed.
        spread: (P, T) ``B + 2 |λ_t| B_f >= |x_t|``; 1 where not observed.
        past_sum: (P, T) ``D``: the sum of the differences revealed before the position.
        past_count: (P, T) ``k``: how many were revealed before it.
        observed: (P, T) positions with a revealed difference.
    """

    base: FloatArray
    spread: FloatArray
    past_sum: FloatArray
    past_count: npt.NDArray[np.int64]
    observed: BoolArray

    def null(self, side: Side, value: float = 0.0) -> Hypothesis:
        """The scaled increments and the positions where a bet is allowed, for the null
        ``side · Δ <= side · value``."""
        bound = self.spread + abs(value)
        z = np.where(self.observed, side * (self.base - value) / bound, 0.0)
        allowed = side * (self.past_sum - self.past_count * value) >= 0
        return Hypothesis(z=z, allowed=allowed & self.observed, observed=self.observed)


@dataclass(frozen=True)
class Hypothesis:
    """One null's scaled increments ``z`` (|z| <= 1), the positions where it may be bet on, and the
    observed positions (all (P, T))."""

    z: FloatArray
    allowed: BoolArray
    observed: BoolArray

    def log_wealth(self) -> FloatArray:
        return log_wealth(self.z, self.observed, self.allowed)

    def current(self) -> FloatArray:
        """(P,) log wealth after the last position."""
        return self.log_wealth()[:, -1] if self.z.shape[1] else np.zeros(self.z.shape[0])

    def running_max(self) -> FloatArray:
        """(P,) the largest log wealth reached so far (Ville's inequality bounds the supremum too)."""
        return np.maximum(self.log_wealth().max(axis=1), 0.0) if self.z.shape[1] else np.zeros(self.z.shape[0])


def increments(sequences: PairSequences) -> Increments:
    """The increments of every pair (module docstring), vectorised over pairs and positions."""
    observed = sequences.observed
    d = np.where(observed, sequences.d, 0.0)
    f = np.where(observed, sequences.f, 0.0)
    k = np.cumsum(observed, axis=1) - observed  # revealed before each position
    sum_f = _before(f)
    slope = _slope(k, _before(d), sum_f, _before(d * f), _before(f * f))
    remaining = np.maximum(sequences.pool[:, None] - k, 1).astype(np.float64)
    unseen_f = (sequences.f_pool[:, None] - sum_f) / remaining
    base = np.where(observed, d - slope * (f - unseen_f), 0.0)
    spread = sequences.bound[:, None] + 2.0 * np.abs(slope) * sequences.f_bound[:, None]
    return Increments(base=base, spread=np.where(observed, spread, 1.0), past_sum=_before(d), past_count=k, observed=observed)


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


def log_wealth(z: FloatArray, observed: BoolArray, allowed: BoolArray | None = None) -> FloatArray:
    """(P, T) log wealth after each position of the betting process on the scaled increments
    ``z`` (|z| <= 1; module docstring); constant where not observed, and no bet where not
    ``allowed``."""
    count = np.cumsum(observed, axis=1) - observed
    past = _before(z)
    mean = past / (count + 1.0)
    variance = (PRIOR_VARIANCE + _before(z * z) - 2 * mean * past + count * mean * mean) / (count + 1.0)
    bet = np.clip(mean / np.maximum(variance + mean * mean, 1e-12), 0.0, BET_CAP)
    if allowed is not None:
        bet = np.where(allowed, bet, 0.0)
    return np.cumsum(np.where(observed, np.log1p(bet * z), 0.0), axis=1)


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
    nulls = [parts.null(side) for side in (1, -1)]
    direction = np.stack([h.running_max() for h in nulls], axis=1)
    current = np.stack([h.current() for h in nulls], axis=1)
    if delta is None:
        equivalence = np.full_like(direction, np.nan)
    else:
        equivalence = np.stack([parts.null(-1, delta).running_max(), parts.null(1, -delta).running_max()], axis=1)
    n = sequences.n
    total = np.where(sequences.observed, sequences.d, 0.0).sum(axis=1)
    mean = np.where(n > 0, total / np.maximum(n, 1), np.nan)
    return MeanEvidence(direction=direction, current=current, equivalence=equivalence, mean=mean)
