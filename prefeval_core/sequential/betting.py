"""Anytime-valid tests of paired score differences, by betting (method.md §13).

The evidence on pair (A, B) of a scalar study is the paired difference per item,
``d_i = s(A, i) - s(B, i)``, revealed in a seeded random item order that does not depend on any
score. Two tests, both non-negative supermartingales under their nulls, so that by Ville's
inequality a null is ever rejected (wealth ``>= 1 / a``) with probability at most ``a``, at any
look and whatever the reason a run stops (Ville 1939; Shafer & Vovk 2019; Ramdas, Grünwald, Vovk
& Shafer 2023, *Game-theoretic statistics and safe anytime-valid inference*):

**Direction: the paired symmetry test.** A is *not better* than B on an item when, given the size
of their difference, A's output is at most as likely as B's to score higher; a true tie
(exchangeable outputs: what a permutation test assumes) is the boundary. Under that null the
sign of the next increment ``x_t`` is at most a fair coin given ``|x_t|``, so a bet on
``u_t = x_t / max(|x_t|, s_t)`` with a predictable scale ``s_t`` and a predictable stake
``b_t in [0, BET_CAP]`` has conditional mean ``<= 0``: the wealth ``prod (1 + b_t u_t)`` is a
supermartingale (the betting form of the paired sign-flip test: Ramdas, Ruf, Larsson & Koolen 2022,
*Testing exchangeability: fork-convexity, supermartingales and e-processes*, IJAR; Shekhar &
Ramdas 2023, *Nonparametric two-sample testing by betting*, IEEE Trans. Inf. Theory). Differences
larger than the scale count by their sign, smaller ones by their size, so the stake is bounded
by the typical difference ``s_t`` rather than by the scale's range.

**No metric inside.** At a tie the metric's difference flips with the human one, so a corrected
``d - λ f`` stays symmetric, but the correction also removes the metric's share of the *signal*, and
adding back its pool mean breaks the per-item symmetry; both tests here use the human differences
alone (method.md §13 says what was measured).

**Equivalence.** A is *better by δ or more* when ``d - δ`` is, in the sense above, not more likely
negative than positive at any size (a location shift of δ or more with symmetric noise is the
boundary). The pair is equivalent within δ when the symmetry test on ``δ - d`` rejects "A better by δ
or more" and the one on ``d + δ`` rejects "B better by δ or more" (two one-sided tests, TOST). A
bounded test of the mean itself would be exact for any distribution but its stakes are capped by the
score range (Waudby-Smith & Ramdas 2024): on a 1-5 scale it showed no SummEval pair equivalent within
0.5 on 100 items.

**The stake.** ``b_t = clip(μ / (v + μ²), 0, BET_CAP)`` of the past scaled increments (the
approximate GRAPA bet of Waudby-Smith & Ramdas, their eq. 27), with a prior pseudo-observation
``0`` of variance :data:`PRIOR_VARIANCE` so that the first stakes are small.

Arrays are (P, T): P pairs, T positions of the study's item order; a position where a pair has no
revealed difference is skipped (its factor is 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from prefeval_core.sequential.mixture import mixture_log_e

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
Side = Literal[1, -1]

BET_CAP = 0.75
"""Largest fraction of the wealth bet on one item (the worst outcome keeps a quarter) **(choice)**."""
PRIOR_VARIANCE = 0.25
"""Variance of the prior pseudo-observation of the scaled increments (bounded by 1)."""
SCALE_PRIOR = 0.25
"""The symmetry test's scale starts at this share of the score range (one pseudo-item) **(choice)**."""


@dataclass(frozen=True)
class PairSequences:
    """The revealed paired differences of P pairs along the study's item order.

    Attributes:
        d: (P, T) human score differences ``s(A) - s(B)``; NaN where not revealed for the pair.
        pool: (P,) ``N``: items the pair can ever get (revealed or not).
        bound: (P,) ``B >= |d|``: the human scale's range.
    """

    d: FloatArray
    pool: npt.NDArray[np.int64]
    bound: FloatArray

    @property
    def observed(self) -> BoolArray:
        return ~np.isnan(self.d)

    @property
    def n(self) -> npt.NDArray[np.int64]:
        """(P,) revealed differences per pair."""
        return self.observed.sum(axis=1).astype(np.int64)

    def subset(self, rows: npt.NDArray[np.int64]) -> PairSequences:
        return PairSequences(self.d[rows], self.pool[rows], self.bound[rows])

    @property
    def revealed_width(self) -> int:
        """Positions up to the last one revealed for any pair: every e-process here is constant after it."""
        seen = np.flatnonzero(self.observed.any(axis=0))
        return int(seen[-1]) + 1 if len(seen) else 0

    def prefix(self, width: int) -> PairSequences:
        """The first ``width`` positions (the pools keep their sizes)."""
        return PairSequences(self.d[:, :width], self.pool, self.bound)


@dataclass(frozen=True)
class Hypothesis:
    """One null's increments and how its e-process is made of them.

    A betting process (``horizon`` None): scaled increments ``z`` (``z >= -1``) and the largest
    stake ``cap``. A normal mixture (:mod:`~prefeval_core.sequential.mixture`): raw increments
    ``z`` with conditional mean <= 0 under the null, the mixture's tuning ``horizon`` (rows,) in
    items, and the positions ``refuted`` that rule the null out. Both: the positions where it may be
    bet on and the observed ones (all (P, T)).
    """

    z: FloatArray
    allowed: BoolArray
    observed: BoolArray
    cap: float = BET_CAP
    horizon: FloatArray | None = None
    refuted: BoolArray | None = None

    def log_wealth(self) -> FloatArray:
        return self.path(self.z, self.observed, self.allowed, self.refuted, self.horizon)

    def path(
        self, z: FloatArray, observed: BoolArray, allowed: BoolArray, refuted: BoolArray | None = None, horizon: FloatArray | None = None
    ) -> FloatArray:
        """(rows, T) log e-values of this null's kind of process on other increments ``z`` (the
        leader process of top-1 strings several pairs' increments together)."""
        if self.horizon is None:
            return log_wealth(z, observed, allowed, cap=self.cap)
        return mixture_log_e(z, observed, allowed, self.horizon if horizon is None else horizon, refuted)

    def summary(self) -> tuple[FloatArray, FloatArray]:
        """(P,) the largest log wealth reached so far (Ville's inequality bounds the supremum too)
        and (P,) the log wealth after the last position, from one pass over the path."""
        return path_summary(self.log_wealth())


def path_summary(wealth: FloatArray) -> tuple[FloatArray, FloatArray]:
    """(P,) the running maximum (at least 0: the start) and (P,) the last value of log-wealth paths (P, T)."""
    if not wealth.shape[1]:
        return np.zeros(wealth.shape[0]), np.zeros(wealth.shape[0])
    return np.maximum(wealth.max(axis=1), 0.0), wealth[:, -1]


def direction_nulls(sequences: PairSequences) -> tuple[Hypothesis, Hypothesis]:
    """The paired symmetry test's two nulls (module docstring): "A is not better" (its wealth is
    the evidence that A is better) and "B is not better"."""
    u = _symmetric_increments(sequences, 0.0)
    observed = sequences.observed
    return Hypothesis(z=u, allowed=observed, observed=observed), Hypothesis(z=-u, allowed=observed, observed=observed)


def equivalence_nulls(sequences: PairSequences, delta: float) -> tuple[Hypothesis, Hypothesis]:
    """The nulls "A is better by δ or more" and "B is better by δ or more" (module docstring; both
    rejected: the pair is equivalent within δ): the symmetry test on ``d - δ`` and ``d + δ``."""
    observed = sequences.observed
    above, below = _symmetric_increments(sequences, delta), _symmetric_increments(sequences, -delta)
    return Hypothesis(z=-above, allowed=observed, observed=observed), Hypothesis(z=below, allowed=observed, observed=observed)


def _symmetric_increments(sequences: PairSequences, shift: float) -> FloatArray:
    """(P, T) ``u_t = x_t / max(|x_t|, s_t)`` of ``x = d - shift``, with the predictable scale
    ``s_t``: the root mean square of the past ``x`` and one prior pseudo-item of
    :data:`SCALE_PRIOR` times the score range."""
    observed = sequences.observed
    x = np.where(observed, sequences.d - shift, 0.0)
    k: npt.NDArray[np.int64] = np.cumsum(observed, axis=1) - observed
    prior = (SCALE_PRIOR * sequences.bound[:, None]) ** 2
    scale = np.sqrt((prior + sums_before(x * x)) / (k + 1.0))
    return np.asarray(np.where(observed, x / np.maximum(np.abs(x), scale), 0.0), dtype=np.float64)


def sums_before(values: FloatArray) -> FloatArray:
    """Running sums along the last axis over the positions strictly before each one."""
    total = np.cumsum(values, axis=-1)
    return np.asarray(total - values, dtype=np.float64)


def log_wealth(z: FloatArray, observed: BoolArray, allowed: BoolArray | None = None, *, cap: float = BET_CAP) -> FloatArray:
    """(P, T) log wealth after each position of the betting process on the scaled increments
    ``z`` (``z >= -1``; module docstring) with stakes up to ``cap`` (< 1); constant where not
    observed, and no bet where not ``allowed``."""
    count: npt.NDArray[np.int64] = np.cumsum(observed, axis=1) - observed
    past = sums_before(z)
    mean = past / (count + 1.0)
    variance = (PRIOR_VARIANCE + sums_before(z * z) - 2 * mean * past + count * mean * mean) / (count + 1.0)
    bet = np.clip(mean / np.maximum(variance + mean * mean, 1e-12), 0.0, cap)
    if allowed is not None:
        bet = np.where(allowed, bet, 0.0)
    return np.cumsum(np.where(observed, np.log1p(bet * z), 0.0), axis=1)


@dataclass(frozen=True)
class MeanEvidence:
    """Log e-values of every pair's directional and equivalence nulls.

    Attributes:
        direction: (P, 2) running-max log e-values of the symmetry test against "A is not better"
            (column 0: evidence that A is better) and "B is not better" (column 1).
        current: (P, 2) the same processes' current log e-values (what an average of e-processes
            over pairs may use).
        equivalence: (P, 2) of the bounded mean test against ``Δ >= δ`` and ``Δ <= -δ`` (both
            rejected: ``|Δ| < δ``); NaN without a margin.
        point: (P,) running-max log e-value against ``Δ = 0`` exactly: the average of the two
            direction processes, each valid there (:func:`point_log_e`); NaN without a margin,
            the only case that uses it (method.md §13, the partition of a pair's differences).
        mean: (P,) mean revealed difference (NaN with none).
        nulls: the two direction nulls' increments (:func:`direction_nulls`).
        margins: the two equivalence nulls' increments ("A better by δ or more", "B better by δ or
            more"); None without a margin.
    """

    direction: FloatArray
    current: FloatArray
    equivalence: FloatArray
    point: FloatArray
    mean: FloatArray
    nulls: tuple[Hypothesis, Hypothesis]
    margins: tuple[Hypothesis, Hypothesis] | None = None


def mean_evidence(sequences: PairSequences, delta: float | None = None) -> MeanEvidence:
    """:class:`MeanEvidence` of P pairs; ``delta`` is the equivalence margin δ (> 0) in score units."""
    margins = None if delta is None else equivalence_nulls(sequences, delta)
    return evidence_of(sequences, direction_nulls(sequences), margins)


def evidence_of(
    sequences: PairSequences, nulls: tuple[Hypothesis, Hypothesis], margins: tuple[Hypothesis, Hypothesis] | None
) -> MeanEvidence:
    """:class:`MeanEvidence` of a test's direction ``nulls`` and, with a margin, its equivalence
    nulls ``margins`` ("A better by δ or more", "B better by δ or more"), on ``sequences``."""
    paths = [h.log_wealth() for h in nulls]
    summaries = [path_summary(path) for path in paths]
    direction = np.stack([largest for largest, _ in summaries], axis=1)
    current = np.stack([last for _, last in summaries], axis=1)
    if margins is None:
        equivalence, point = np.full_like(direction, np.nan), np.full(len(direction), np.nan)
    else:
        equivalence, point = np.stack([h.summary()[0] for h in margins], axis=1), point_log_e(paths[0], paths[1])
    n = sequences.n
    total = np.where(sequences.observed, sequences.d, 0.0).sum(axis=1)
    mean = np.where(n > 0, total / np.maximum(n, 1), np.nan)
    return MeanEvidence(direction=direction, current=current, equivalence=equivalence, point=point, mean=mean, nulls=nulls, margins=margins)


def point_log_e(better: FloatArray, worse: FloatArray) -> FloatArray:
    """(P,) the running maximum of ``log((E_> + E_<) / 2)`` from the two direction nulls' log-wealth
    paths (P, T): both are e-processes under ``Δ = 0`` (it lies in both nulls), so their average is
    one too (Vovk & Wang 2021), and Ville's inequality bounds its supremum."""
    return path_summary(np.logaddexp(better, worse) - math.log(2.0))[0]


def joined(parts: list[MeanEvidence]) -> MeanEvidence:
    """One :class:`MeanEvidence` of consecutive blocks of pairs (each computed on its own rows: every
    test here is per pair, so the blocks' evidence is the whole's)."""
    if len(parts) == 1:
        return parts[0]

    def stacked(name: str) -> FloatArray:
        return np.concatenate([getattr(part, name) for part in parts])

    nulls = tuple(_joined_nulls([part.nulls[side] for part in parts]) for side in (0, 1))
    margins = None
    if all(part.margins is not None for part in parts):
        sides = [_joined_nulls([part.margins[side] for part in parts if part.margins is not None]) for side in (0, 1)]
        margins = (sides[0], sides[1])
    return MeanEvidence(
        stacked("direction"), stacked("current"), stacked("equivalence"), stacked("point"), stacked("mean"), (nulls[0], nulls[1]), margins
    )


def _joined_nulls(parts: list[Hypothesis]) -> Hypothesis:
    def stacked(name: str) -> npt.NDArray[np.generic] | None:
        values = [getattr(part, name) for part in parts]
        return None if values[0] is None else np.concatenate(values)

    return Hypothesis(
        z=np.concatenate([h.z for h in parts]),
        allowed=np.concatenate([h.allowed for h in parts]),
        observed=np.concatenate([h.observed for h in parts]),
        cap=parts[0].cap,
        horizon=stacked("horizon"),  # type: ignore[arg-type]
        refuted=stacked("refuted"),  # type: ignore[arg-type]
    )
