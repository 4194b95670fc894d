"""The pool mean by betting, sampling without replacement, with the metric as control variate (method.md §13).

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

**The metric inside.** Each metric's pair outcome ``f_i`` (+1 ``>``, 0 ``=`` or no judgment, -1 ``<``)
is known on every pool item before any human judgment is bought. The mean of ``f`` over the items
left is therefore known too, and ``c_t = λ_t · (f_t - mean_left(f))`` has conditional mean 0 for any
``λ_t`` fixed before item t is revealed. Betting on ``d_t - c_t`` instead of ``d_t`` keeps the null
mean and removes the part of the spread the metric predicts: about ``1 - ρ²`` of the variance with
``ρ`` the item-level correlation of ``d`` and ``f`` — a prediction-powered estimate
(``mean_pool(λ f) + mean_rated(d - λ f)``: Angelopoulos, Bates, Fannjiang, Jordan & Zrnic 2023,
*Prediction-powered inference*, Science; Angelopoulos, Duchi & Zrnic 2023, *PPI++*) made sequential
and exact. ``λ_t`` is the ridge regression of the past revealed ``d`` on the past ``f`` (predictable;
:data:`RIDGE` pseudo-items toward 0). A metric that predicts nothing costs only the spread its noisy
``λ`` adds; a metric that favours one system (a biased metric) shifts ``f`` on every item alike and
is removed by the centring: the metric changes the speed, never the target.

**The wager.** For a null "Δ <= m" the increment is ``y_t = d_t - c_t - μ_t`` with ``μ_t`` the largest
conditional mean the null allows; ``y_t >= -R_t`` with the predictable ``R_t = B + Σ|λ_t| (1 +
|mean_left(f)|) + μ_t``, so ``z_t = y_t / R_t >= -1`` and the wealth ``prod (1 + b_t z_t)`` with a
predictable stake ``b_t in [0, BET_CAP]`` (:func:`~prefeval_core.sequential.betting.log_wealth`) is a
non-negative supermartingale under the null: by Ville's inequality it ever reaches ``1 / a`` with
probability at most ``a``. "Δ >= m" is the mirror image. Where the passed items already rule the
null out (the items left would need a mean beyond the scale), the increment is set to the
largest value :data:`REFUTED` — the null's evidence is then decisive.

Arrays are (P, T): P pairs, T positions of the study's item order, with K metrics (P, T, K).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from prefeval_core.sequential.betting import Hypothesis, MeanEvidence, PairSequences

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

RIDGE = 4.0
"""Pseudo-items of zero covariance that shrink the predictable ``λ`` toward 0 **(choice)**: with a
handful of revealed items an estimated slope mostly adds noise."""
REFUTED = 1.0e6
"""The scaled increment recorded when the passed items alone refute the null (the stake then wins
``log(1 + BET_CAP · REFUTED)`` ≈ 13 nats at once: beyond any threshold in use)."""


@dataclass(frozen=True)
class PoolSequences:
    """The revealed differences of P pairs along the item order, with the pool and the metric.

    Attributes:
        pairs: the revealed human differences (``d`` NaN where not revealed), pool sizes and range B.
        in_pool: (P, T) positions whose item the pair can ever get.
        metric: (P, T, K) the K metrics' pair outcomes as +1 / 0 / -1 (0 also where a metric has
            none), known on every pool position; K = 0: human only.
    """

    pairs: PairSequences
    in_pool: BoolArray
    metric: FloatArray


@dataclass(frozen=True)
class _Bookkeeping:
    """Per position, what the items passed before it leave: ``left`` items, the sum of the
    revealed ``d`` before it, the passed-but-unrevealed count, and the control variate's
    ``centred`` metric ``f_t - mean_left(f)`` (P, T, K) and its bound ``1 + |mean_left(f)|``."""

    left: FloatArray
    revealed_sum: FloatArray
    skipped: FloatArray
    centred: FloatArray
    centred_bound: FloatArray


def pool_evidence(sequences: PoolSequences, delta: float | None = None) -> MeanEvidence:
    """:class:`~prefeval_core.sequential.betting.MeanEvidence` of the pool-mean tests (module
    docstring): directions against ``Δ <= 0`` and ``Δ >= 0``; with a margin ``delta``, equivalence
    against ``Δ >= δ`` and ``Δ <= -δ``."""
    book = _bookkeeping(sequences)
    corrected, spread = _corrected(sequences, book)
    nulls = (_null(sequences, book, corrected, spread, 0.0, above=False), _null(sequences, book, corrected, spread, 0.0, above=True))
    direction = np.stack([h.running_max() for h in nulls], axis=1)
    current = np.stack([h.current() for h in nulls], axis=1)
    if delta is None:
        equivalence = np.full_like(direction, np.nan)
    else:
        margins = (_null(sequences, book, corrected, spread, delta, above=True), _null(sequences, book, corrected, spread, -delta, above=False))
        equivalence = np.stack([h.running_max() for h in margins], axis=1)
    pairs = sequences.pairs
    n = pairs.n
    total = np.where(pairs.observed, pairs.d, 0.0).sum(axis=1)
    mean = np.where(n > 0, total / np.maximum(n, 1), np.nan)
    return MeanEvidence(direction=direction, current=current, equivalence=equivalence, mean=mean, nulls=nulls)


def _bookkeeping(sequences: PoolSequences) -> _Bookkeeping:
    pairs, in_pool = sequences.pairs, sequences.in_pool
    observed = pairs.observed
    d = np.where(observed, pairs.d, 0.0)
    passed = np.cumsum(in_pool, axis=1) - in_pool
    left = pairs.pool[:, None] - passed
    unrevealed = in_pool & ~observed
    skipped = np.cumsum(unrevealed, axis=1) - unrevealed
    revealed_sum = np.cumsum(d, axis=1) - d
    f = np.where(in_pool[:, :, None], sequences.metric, 0.0)
    f_left = f.sum(axis=1, keepdims=True) - (np.cumsum(f, axis=1) - f)
    mean_left = f_left / np.maximum(left, 1)[:, :, None]
    centred = f - mean_left
    bound = (1.0 + np.abs(mean_left)) if f.shape[2] else np.zeros_like(f)
    return _Bookkeeping(left.astype(np.float64), revealed_sum, skipped.astype(np.float64), centred, bound)


def _corrected(sequences: PoolSequences, book: _Bookkeeping) -> tuple[FloatArray, FloatArray]:
    """(P, T) ``d_t - λ_t · centred_t`` and the control variate's predictable bound ``Σ|λ_t| bound_t``."""
    pairs = sequences.pairs
    observed = pairs.observed
    d = np.where(observed, pairs.d, 0.0)
    if book.centred.shape[2] == 0:
        return d, np.zeros_like(d)
    slope = _predictable_slope(d, np.where(observed[:, :, None], book.centred, 0.0), observed)
    corrected = d - np.einsum("ptk,ptk->pt", slope, book.centred)
    return corrected, np.einsum("ptk,ptk->pt", np.abs(slope), book.centred_bound)


def _predictable_slope(d: FloatArray, x: FloatArray, observed: BoolArray) -> FloatArray:
    """(P, T, K) ``λ_t``: ridge regression of ``d`` on ``x`` over the revealed positions strictly
    before t (centred sums, :data:`RIDGE` pseudo-items per metric)."""
    K = x.shape[2]

    def before(values: FloatArray) -> FloatArray:
        return np.cumsum(values, axis=1) - values

    n = before(observed.astype(np.float64))[:, :, None]
    sx = before(x)
    sd = before(d)[:, :, None]
    sxx = before(x[:, :, :, None] * x[:, :, None, :])
    sxd = before(x * d[:, :, None])
    safe = np.maximum(n, 1.0)
    cxx = sxx - sx[:, :, :, None] * sx[:, :, None, :] / safe[:, :, :, None]
    cxd = sxd - sx * sd / safe
    system = cxx + RIDGE * np.eye(K)
    return np.asarray(np.linalg.solve(system, cxd[..., None])[..., 0], dtype=np.float64)


def _null(sequences: PoolSequences, book: _Bookkeeping, corrected: FloatArray, spread: FloatArray, m: float, *, above: bool) -> Hypothesis:
    """The betting process against "Δ <= m" (``above=False``; its wealth is evidence that Δ > m)
    or "Δ >= m" (``above=True``; evidence that Δ < m)."""
    pairs = sequences.pairs
    observed = pairs.observed
    B = pairs.bound[:, None]
    pool = pairs.pool[:, None].astype(np.float64)
    left = np.maximum(book.left, 1.0)
    sign = -1.0 if above else 1.0
    # the least favourable conditional mean the null allows, unrevealed passed items at the null's end of [-B, B]
    null_mean = (pool * m - book.revealed_sum + sign * B * book.skipped) / left
    y = sign * (corrected - null_mean)
    reach = B + spread + sign * null_mean
    refuted = sign * null_mean < -B
    z = np.where(refuted, REFUTED, y / np.maximum(reach, 1e-12))
    z = np.where(observed, np.minimum(z, REFUTED), 0.0)
    return Hypothesis(z=np.asarray(z, dtype=np.float64), allowed=observed, observed=observed)
