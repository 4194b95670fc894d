"""The pool mean with an asymptotic guarantee, and the metric inside it (method.md §13, ``pool_mean_clt``).

The estimand and the design are :mod:`~prefeval_core.sequential.pool_betting`'s: the mean paired
human difference ``Δ`` over the pair's fixed item pool, revealed in a seeded uniform item order, so
that under a null value ``m`` of Δ the next difference has the known conditional mean
``(N m - sum of the passed d) / (items left)``. The increments toward rejecting a null are the
same (:func:`~prefeval_core.sequential.pool_betting.pool_null`), and so is the exact refutation as
the pool runs out; what changes is how they become evidence: a normal mixture of the
self-normalised sum (:mod:`~prefeval_core.sequential.mixture`), whose width scales with the
increments' spread rather than with the score range. The guarantee is asymptotic.

**The metric as a control variate.** The metric's pair outcome ``f_i`` (+1 / 0 / -1; 0 where it has
none) is known on every pool item before any human rates it. At position ``t`` the next item is
uniform over the items not yet passed, so ``g_t = f_t - mean of f over the items left`` has
conditional mean 0, and for any predictable ``λ_t`` the increment ``d_t - λ_t · g_t - null mean``
keeps the null's conditional mean: a sequential prediction-powered estimate (Angelopoulos, Bates,
Fannjiang, Jordan & Zrnic 2023, *Prediction-powered inference*, Science; its anytime form:
Waudby-Smith et al. 2024, §4) whose spread is what the metric leaves unexplained. ``λ_t`` is the
ridge regression of the past differences on the past ``g`` (every metric of the run at once),
shrunk by :data:`PRIOR_ITEMS` pseudo-items toward the same regression over every pair of the run
(:func:`pooled_coefficient`, itself shrunk toward 0), so that a pair's first items already use what
the others have shown and an uninformative metric costs little. With
an item-level correlation ``r`` between the human and metric differences the spread shrinks by
``1 - r²``, and the items needed with it.

Arrays are (P, T): P pairs, T positions of the study's item order; metrics (K, P, T).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from prefeval_core.sequential.betting import Hypothesis, MeanEvidence, PairSequences, evidence_of, sums_before
from prefeval_core.sequential.mixture import HORIZON_SHARE
from prefeval_core.sequential.pool_betting import Passed, passed_items, pool_null

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

PRIOR_ITEMS = 4.0
"""Pseudo-items shrinking the control variate's coefficients toward 0 (ridge, in units of the
metric's difference: an outcome, or a score difference scaled to root mean square 1) **(choice)**."""
PAIRS_PER_CHUNK = 256
"""Pairs whose control variate is computed at once: the regression's (K, K, P, T) sums stay within
tens of MB at 100 systems (4,950 pairs) and hundreds of items."""


def clt_pool_evidence(
    sequences: PairSequences,
    in_pool: BoolArray,
    delta: float | None = None,
    metric: FloatArray | None = None,
    prior: FloatArray | None = None,
    width: int | None = None,
) -> MeanEvidence:
    """:class:`~prefeval_core.sequential.betting.MeanEvidence` of the asymptotic pool-mean tests
    (module docstring) of the pairs' revealed differences, ``in_pool`` (P, T) the positions whose
    item each pair can ever get, ``metric`` (K, P, T) the metrics' pair outcomes on them (``None``:
    human only), ``prior`` (K, T) the coefficients the pairs' own are shrunk toward (``None``: the
    :func:`pooled_coefficient` of these pairs): directions against ``Δ <= 0`` and ``Δ >= 0``; with a
    margin ``delta``, equivalence against ``Δ >= δ`` and ``Δ <= -δ``. With ``width``, the processes
    cover the first ``width`` positions only (none revealed after them: the control, which needs
    the items left, is computed on them all first)."""
    control = None if metric is None or metric.shape[0] == 0 else metric_control(sequences, in_pool, metric, prior)
    if width is not None:
        sequences, in_pool = sequences.prefix(width), in_pool[:, :width]
        control = None if control is None else control[:, :width]
    passed = passed_items(sequences, in_pool)
    horizon = np.maximum(HORIZON_SHARE * sequences.pool, 1.0).astype(np.float64)

    def null(m: float, above: bool) -> Hypothesis:
        return _mixture(sequences, passed, m, above, control, horizon)

    margins = None if delta is None else (null(delta, True), null(-delta, False))
    return evidence_of(sequences, (null(0.0, False), null(0.0, True)), margins)


def _mixture(
    sequences: PairSequences, passed: Passed, m: float, above: bool, control: FloatArray | None, horizon: FloatArray
) -> Hypothesis:
    found = pool_null(sequences, passed, m, above=above, control=control)
    observed = sequences.observed
    return Hypothesis(z=found.y, allowed=observed, observed=observed, horizon=horizon, refuted=found.refuted)


def metric_control(sequences: PairSequences, in_pool: BoolArray, metric: FloatArray, prior: FloatArray | None = None) -> FloatArray:
    """(P, T) the control variate ``λ_t · g_t`` at the revealed positions (module docstring), 0
    elsewhere; each pair's ``λ_t`` shrunk toward ``prior`` (K, T) (``None``: :func:`pooled_coefficient`)."""
    toward = pooled_coefficient(sequences, in_pool, metric) if prior is None else prior
    K, parts = metric.shape[0], []
    for rows in _chunks(len(in_pool)):
        # the sums are computed again rather than kept from the pooled pass: kept for every pair at
        # 100 systems (4,950 pairs) they would take hundreds of MB
        moments = _moments(sequences.subset(rows), in_pool[rows], metric[:, rows])
        system = np.moveaxis(moments.gg, (0, 1), (2, 3)) + PRIOR_ITEMS * np.eye(K)  # (P, T, K, K)
        target = np.moveaxis(moments.gd + PRIOR_ITEMS * toward[:, None, :], 0, 2)[..., None]  # (P, T, K, 1)
        coefficient = np.linalg.solve(system, target)[..., 0]  # (P, T, K)
        observed = moments.observed
        parts.append(np.where(observed, np.einsum("ptk,kpt->pt", coefficient, moments.g), 0.0))
    return np.concatenate(parts, axis=0) if parts else np.zeros(in_pool.shape)


def pooled_coefficient(sequences: PairSequences, in_pool: BoolArray, metric: FloatArray) -> FloatArray:
    """(K, T) at each position the ridge regression (:data:`PRIOR_ITEMS` toward 0) of every pair's
    past differences on its past ``g``, each pair centred on its own means: the coefficient the
    pairs' own are shrunk toward. A metric relates to the human differences in much the same way on
    every pair of a study, so a pair with few items borrows the others' (partial pooling); it is
    predictable because it uses the positions before each one only."""
    K, T = metric.shape[0], in_pool.shape[1]
    gg, gd = np.zeros((K, K, T)), np.zeros((K, T))
    for rows in _chunks(len(in_pool)):
        moments = _moments(sequences.subset(rows), in_pool[rows], metric[:, rows])
        gg += moments.gg.sum(axis=2)
        gd += moments.gd.sum(axis=1)
    system = np.moveaxis(gg, (0, 1), (1, 2)) + PRIOR_ITEMS * np.eye(K)  # (T, K, K)
    return np.asarray(np.linalg.solve(system, gd.T[..., None])[..., 0].T, dtype=np.float64)


def _chunks(pairs: int) -> list[npt.NDArray[np.int64]]:
    return [np.arange(start, min(start + PAIRS_PER_CHUNK, pairs)) for start in range(0, pairs, PAIRS_PER_CHUNK)]


@dataclass(frozen=True)
class Moments:
    """One chunk's regression sums over the positions before each one (P pairs, T positions, K
    metrics): ``g`` (K, P, T) the centred metric at the revealed positions, ``gg`` (K, K, P, T) and
    ``gd`` (K, P, T) the centred cross-products, ``observed`` (P, T)."""

    g: FloatArray
    gg: FloatArray
    gd: FloatArray
    observed: BoolArray


def _moments(sequences: PairSequences, in_pool: BoolArray, metric: FloatArray) -> Moments:
    f = np.where(in_pool[None], np.nan_to_num(metric, nan=0.0), 0.0)
    ahead = np.cumsum(in_pool[:, ::-1], axis=1)[:, ::-1].astype(np.float64)  # pool items at or after each position
    left_mean = np.cumsum(f[:, :, ::-1], axis=2)[:, :, ::-1] / np.maximum(ahead, 1.0)[None]
    observed = sequences.observed
    g = np.where(observed[None], f - left_mean, 0.0)  # (K, P, T)
    d = np.where(observed, sequences.d, 0.0)
    n = sums_before(observed.astype(np.float64))
    sum_d, sum_g = sums_before(d), sums_before(g)
    cross = sums_before(g * d[None])
    outer = sums_before(g[:, None] * g[None, :])  # (K, K, P, T)
    count = np.maximum(n, 1.0)
    gg = outer - sum_g[:, None] * sum_g[None, :] / count
    gd = cross - sum_g * sum_d[None] / count
    return Moments(g=g, gg=gg, gd=gd, observed=observed)
