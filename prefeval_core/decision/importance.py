"""Self-normalised importance sampling with exact weights, in rounds, for many pairs at once.

A target (:class:`ImportanceTarget`; one per posterior family: :mod:`~prefeval_core.decision.fast`
for one metric, :mod:`~prefeval_core.decision.joint_importance` for several) works in unconstrained
coordinates ``z`` (additive log-ratios of every simplex, the last component as reference). It
draws from its own *base* proposals and evaluates, at any draws, the log density of the posterior
(up to a constant per pair) and the normalised log density of each base proposal, all with respect
to Lebesgue measure in ``z``. This module adds what every target shares:

* the proposal: a deterministic mixture of the base proposals and, once fitted, a multivariate
  Student-t in ``z`` (``T_DF`` degrees of freedom) taking half of the draws; weights by the balance
  heuristic ``w = target / sum_j share_j g_j``, so every weight is at most ``target / (share_j g_j)``
  for each component ``j`` (a base component whose ratio is bounded keeps all weights bounded);
* rounds of ``settings.is_draws`` draws per pair. When a round's effective sample size per draw
  is below ``is_adapt_below``, the t component is (re)fitted to all weighted draws of the pair so
  far (weighted mean and covariance, shrunk towards the unweighted covariance when the weights
  are uneven, widened by ``T_WIDEN``) and the sums start afresh, at most ``is_adapt_rounds``
  times: the estimates use only draws from the final proposal;
* the estimates ``theta = sum w a / sum w`` with ``a = 1[p> > p<]`` (or a target's own
  conditional probability of it, :class:`Evaluation`), ``E[p] = sum w p / sum w``, the
  Monte-Carlo standard error ``sqrt(sum w^2 (a - theta)^2) / sum w`` (delta method)
  and Kish's effective sample size ``(sum w)^2 / sum w^2``;
* the stop rule: a pair stops once it has ``is_min_ess`` effective draws and either its standard
  error is at most ``is_target_se`` or ``theta`` is more than ``is_decision_z`` standard errors
  from both decision thresholds ``gamma/2`` and ``1 - gamma/2``;
* bounded memory: pairs run in chunks of at most ``is_chunk_draws`` draws in flight.

Random draws come from NumPy (PCG64): on this machine JAX's CPU generator measured 10-40x
slower for uniform, normal and gamma variates, and the draws are the cost. The draws of the pair
with id ``i`` in its round ``r`` come from ``default_rng([seed, i, r])``, so a pair's result does
not depend on the other pairs of the call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import numpy.typing as npt
from scipy.special import gammaln

from prefeval_core.decision.settings import SamplerSettings
from prefeval_core.vocabulary.outcomes import BETTER, WORSE

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
T_DF = 5.0
"""Degrees of freedom of the fitted Student-t proposal (heavy tails: safer weights)."""
T_WIDEN = 1.5
"""The fitted t's scale matrix is this times the (shrunk) weighted covariance of the draws."""
T_SHARE = 0.5
"""Share of the draws from the fitted t once there is one; the base proposals share the rest."""


@dataclass(frozen=True)
class Evaluation:
    """A target's densities at draws ``z`` of shape (P, D, dim).

    Attributes:
        log_target: (P, D) log posterior density in ``z`` up to a constant per pair; ``-inf``
            outside the support (and where ``z`` is NaN: a base draw outside the support).
        log_base: (P, D, B) normalised log density of each base proposal in ``z``.
        p: (P, D, 3) the rates ``(p>, p=, p<)`` of each draw.
        above: (P, D) each draw's term of ``theta``: ``P(p> > p< | draw, extra)`` for a target that
            draws something more with each draw and conditions on it (Rao-Blackwellisation);
            ``None``: the indicator ``p> > p<``.
    """

    log_target: FloatArray
    log_base: FloatArray
    p: FloatArray
    above: FloatArray | None = None


class ImportanceTarget(Protocol):
    """One posterior family over P pairs, in unconstrained coordinates of dimension ``dim``."""

    @property
    def dim(self) -> int: ...

    def base_shares(self, pairs: IntArray) -> FloatArray:
        """(len(pairs), B) shares of the draws of each base proposal (rows sum to 1)."""
        ...

    def draw_base(self, rng: np.random.Generator, pair: int, counts: Sequence[int]) -> FloatArray:
        """``sum(counts)`` draws in ``z`` for pair ``pair``, ``counts[j]`` from base proposal j, in
        that order; a row of NaN is a draw outside the support (weight 0)."""
        ...

    def evaluate(self, pairs: IntArray, z: FloatArray, rngs: Sequence[np.random.Generator]) -> Evaluation:
        """Densities at ``z`` (len(pairs), D, dim); row ``i`` belongs to pair ``pairs[i]`` and
        ``rngs[i]`` is its generator (for what a target draws with its draws, after them)."""
        ...


@dataclass(frozen=True)
class StudentT:
    """Multivariate Student-t proposals of P pairs: ``mean`` (P, dim), lower Cholesky factor of the
    scale matrix ``chol`` (P, dim, dim)."""

    mean: FloatArray
    chol: FloatArray

    def draw(self, rng: np.random.Generator, index: int, size: int) -> FloatArray:
        """``size`` draws (size, dim) of proposal ``index``."""
        dim = self.mean.shape[1]
        y = rng.standard_normal((size, dim))
        scale = np.sqrt(T_DF / rng.chisquare(T_DF, size))
        return self.mean[index] + (y @ self.chol[index].T) * scale[:, None]

    def log_pdf(self, index: IntArray, z: FloatArray) -> FloatArray:
        """Log densities (P', D) of proposals ``index`` at their draws ``z`` (P', D, dim)."""
        dim = z.shape[-1]
        chol = self.chol[index]
        centred = z - self.mean[index][:, None, :]
        y = np.einsum("pij,pdj->pdi", np.linalg.inv(chol), centred)  # L y = z - mean
        log_det = np.log(np.abs(np.diagonal(chol, axis1=-2, axis2=-1))).sum(axis=-1)
        const = gammaln((T_DF + dim) / 2.0) - gammaln(T_DF / 2.0) - dim / 2.0 * np.log(T_DF * np.pi)
        return const - log_det[:, None] - (T_DF + dim) / 2.0 * np.log1p(np.einsum("pdk,pdk->pd", y, y) / T_DF)


def fit_student_t(z: FloatArray, log_w: FloatArray) -> tuple[FloatArray, FloatArray] | None:
    """Mean (dim,) and Cholesky factor (dim, dim) of a t proposal for weighted draws ``z`` (N, dim).

    The weighted covariance is shrunk towards the unweighted one by ``ess / (ess + dim)`` (few
    effective draws say little about the spread) and widened by :data:`T_WIDEN`. ``None`` when no
    draw has a positive weight.
    """
    ok = np.isfinite(log_w) & np.all(np.isfinite(z), axis=1)
    if not np.any(ok):
        return None
    z, log_w = z[ok], log_w[ok]
    w = np.exp(log_w - log_w.max())
    w /= w.sum()
    ess = 1.0 / float(np.sum(w * w))
    mean = w @ z
    centred = z - mean
    weighted = centred.T @ (centred * w[:, None])
    spread = np.cov(z, rowvar=False) if len(z) > 1 else np.eye(z.shape[1])
    dim = z.shape[1]
    shrink = ess / (ess + dim)
    cov = T_WIDEN * (shrink * weighted + (1.0 - shrink) * spread) + 1e-9 * np.eye(dim)
    try:
        return mean, np.linalg.cholesky(cov)
    except np.linalg.LinAlgError:
        return mean, np.diag(np.sqrt(np.maximum(np.diag(cov), 1e-9)))


@dataclass(frozen=True)
class ImportanceSummary:
    """Estimates of P pairs (arrays in the order of the ``pairs`` given).

    Attributes:
        theta: (P,) ``P(p> > p< | data)``.
        p_mean: (P, 3) ``E[p | data]``.
        theta_mc_se: (P,) Monte-Carlo standard error of ``theta``.
        ess: (P,) Kish's effective sample size of the draws behind the estimates.
        draws: (P,) draws made (all rounds, adaptation included).
        kept: with ``keep_draws=True``, per pair the draws of ``p`` (N, 3) behind the estimates
            and their weights (N,) on one scale; else ``None``.
        usable: (P,) whether each estimate may be used, from a caller with a rule of its own
            (:func:`~prefeval_core.decision.joint_importance.joint_importance`); ``None``: the
            caller judges by ``ess >= settings.is_min_ess``.
    """

    theta: FloatArray
    p_mean: FloatArray
    theta_mc_se: FloatArray
    ess: FloatArray
    draws: IntArray
    kept: tuple[tuple[FloatArray, FloatArray], ...] | None = None
    usable: npt.NDArray[np.bool_] | None = None


@dataclass
class _Sums:
    """Running weighted sums of a chunk of pairs, on a per-pair log scale (private, mutable)."""

    scale: FloatArray
    w: FloatArray
    w2: FloatArray
    w_above: FloatArray
    w2_above: FloatArray
    w2_above2: FloatArray
    w_p: FloatArray
    kept: list[list[tuple[FloatArray, FloatArray]]] = field(default_factory=list)

    @classmethod
    def empty(cls, size: int) -> _Sums:
        w, w2, w_above, w2_above, w2_above2 = (np.zeros(size) for _ in range(5))
        return cls(np.full(size, -np.inf), w, w2, w_above, w2_above, w2_above2, np.zeros((size, 3)), [[] for _ in range(size)])

    def reset(self, rows: IntArray) -> None:
        self.scale[rows] = -np.inf
        for array in (self.w, self.w2, self.w_above, self.w2_above, self.w2_above2, self.w_p):
            array[rows] = 0.0
        for row in rows:
            self.kept[int(row)] = []

    def add(self, rows: IntArray, log_w: FloatArray, p: FloatArray, above: FloatArray, keep: bool) -> FloatArray:
        """Add a round's draws of pairs ``rows`` (log weights (R, D), p (R, D, 3), their terms of
        theta (R, D)); returns the round's own effective sample size per draw (R,)."""
        top = np.max(log_w, axis=1)
        new_scale = np.maximum(self.scale[rows], top)
        finite = np.isfinite(new_scale)
        old = np.where(finite, np.exp(np.where(finite, self.scale[rows] - new_scale, 0.0)), 0.0)
        self.scale[rows] = new_scale
        w = np.exp(log_w - np.where(finite, new_scale, 0.0)[:, None])
        w[~finite] = 0.0
        w2 = w * w
        self.w[rows] = self.w[rows] * old + w.sum(axis=1)
        self.w2[rows] = self.w2[rows] * old**2 + w2.sum(axis=1)
        self.w_above[rows] = self.w_above[rows] * old + np.einsum("rd,rd->r", w, above)
        self.w2_above[rows] = self.w2_above[rows] * old**2 + np.einsum("rd,rd->r", w2, above)
        self.w2_above2[rows] = self.w2_above2[rows] * old**2 + np.einsum("rd,rd->r", w2, above * above)
        self.w_p[rows] = self.w_p[rows] * old[:, None] + np.einsum("rd,rdk->rk", w, p)
        if keep:
            for j, row in enumerate(rows):
                self.kept[int(row)].append((p[j], log_w[j]))
        round_w, round_w2 = w.sum(axis=1), w2.sum(axis=1)
        return np.divide(round_w**2, round_w2 * log_w.shape[1], out=np.zeros_like(round_w), where=round_w2 > 0)

    def theta(self) -> FloatArray:
        ratio = np.divide(self.w_above, self.w, out=np.full_like(self.w, np.nan), where=self.w > 0)
        return np.clip(ratio, 0.0, 1.0)  # rounding can leave a sum of weights a hair above its total

    def ess(self) -> FloatArray:
        return np.divide(self.w**2, self.w2, out=np.zeros_like(self.w), where=self.w2 > 0)

    def se(self) -> FloatArray:
        theta = self.theta()
        # sum w^2 (above - theta)^2; the last term is exactly 0 for an indicator (above^2 = above)
        spread = self.w2_above * (1.0 - 2.0 * theta) + theta**2 * self.w2 + (self.w2_above2 - self.w2_above)
        spread = np.maximum(spread, 0.0)
        return np.divide(np.sqrt(spread), self.w, out=np.full_like(self.w, np.nan), where=self.w > 0)


def importance_sample(
    target: ImportanceTarget,
    pairs: IntArray,
    pair_ids: IntArray,
    *,
    seed: int,
    gamma: float,
    settings: SamplerSettings,
    initial_t: StudentT | None = None,
    keep_draws: bool = False,
    give_up: tuple[int, float] | None = None,
    stream: tuple[int, ...] = (),
) -> ImportanceSummary:
    """Importance-sample the posteriors of ``pairs`` (indices into ``target``) in rounds (module docstring).

    Args:
        target: the posterior family.
        pairs: (P,) which of the target's pairs to sample.
        pair_ids: (P,) the id seeding each pair's draws (``default_rng([seed, id, round])``).
        seed: the seed.
        gamma: the decision's level (for the stop rule).
        settings: rounds, draws and thresholds (``is_*``).
        initial_t: a t proposal per target pair (indexed like the target) to mix in from the
            first round; else the t is fitted only when the base proposals do badly.
        keep_draws: also return the weighted draws behind the estimates.
        give_up: ``(rounds, per_draw)``: a pair whose effective sample size per draw is below
            ``per_draw`` after ``rounds`` rounds stops there (its caller hands it to another
            sampler instead of spending every round on it).
        stream: more words of each draw's seed (``default_rng([seed, id, round, *stream])``): a
            caller that samples the same pairs again with another proposal gives it new draws.
    """
    pairs = np.asarray(pairs, dtype=np.int64)
    pair_ids = np.asarray(pair_ids, dtype=np.int64)
    P = len(pairs)
    out = ImportanceSummary(np.full(P, np.nan), np.full((P, 3), np.nan), np.full(P, np.nan), np.zeros(P), np.zeros(P, dtype=np.int64))
    kept: list[tuple[FloatArray, FloatArray]] = []
    chunk = max(1, settings.is_chunk_draws // settings.is_draws)
    for start in range(0, P, chunk):
        rows = np.arange(start, min(P, start + chunk))
        kept += _sample_chunk(
            target, pairs[rows], pair_ids[rows], rows, out, (seed, stream), gamma, settings, initial_t, keep_draws, give_up
        )
    return ImportanceSummary(out.theta, out.p_mean, out.theta_mc_se, out.ess, out.draws, tuple(kept) if keep_draws else None)


def _sample_chunk(
    target: ImportanceTarget,
    pairs: IntArray,
    pair_ids: IntArray,
    out_rows: IntArray,
    out: ImportanceSummary,
    seed: tuple[int, tuple[int, ...]],
    gamma: float,
    settings: SamplerSettings,
    initial_t: StudentT | None,
    keep_draws: bool,
    give_up: tuple[int, float] | None,
) -> list[tuple[FloatArray, FloatArray]]:
    """Run the rounds of one chunk of pairs and write their estimates into ``out`` (rows ``out_rows``)."""
    size, dim = len(pairs), target.dim
    sums = _Sums.empty(size)
    t_mean = np.zeros((size, dim)) if initial_t is None else initial_t.mean[pairs].copy()
    t_chol = np.broadcast_to(np.eye(dim), (size, dim, dim)).copy() if initial_t is None else initial_t.chol[pairs].copy()
    t_on = np.full(size, initial_t is not None)
    adaptations = np.zeros(size, dtype=np.int64)
    history: list[list[tuple[FloatArray, FloatArray]]] = [[] for _ in range(size)]  # (z, log w) of the rounds that refitted
    active = np.arange(size)
    base_shares = target.base_shares(pairs)
    for round_number in range(settings.is_max_rounds):
        if not active.size:
            break
        draws = round_draws(round_number, settings)
        student = StudentT(t_mean, t_chol)
        per_draw = np.empty(active.size)
        batch = max(1, settings.is_chunk_draws // draws)
        for start in range(0, active.size, batch):
            rows = active[start : start + batch]
            t_share = np.where(t_on[rows], T_SHARE, 0.0)
            shares = np.concatenate([base_shares[rows] * (1.0 - t_share)[:, None], t_share[:, None]], axis=1)
            z, log_w, p, above = _draw_round(target, pairs[rows], pair_ids[rows], rows, shares, student, seed, round_number, draws)
            per_draw[start : start + batch] = sums.add(rows, log_w, p, above, keep_draws)
            if round_number + 1 >= settings.is_max_rounds:
                continue
            for j in np.flatnonzero(per_draw[start : start + batch] < settings.is_adapt_below):
                row = int(rows[j])
                if adaptations[row] < settings.is_adapt_rounds:
                    history[row].append((z[j], log_w[j]))  # the fit uses every round that asked for one
        out.draws[out_rows[active]] += draws
        adapt = (per_draw < settings.is_adapt_below) & (adaptations[active] < settings.is_adapt_rounds)
        adapt &= round_number + 1 < settings.is_max_rounds
        for row in active[adapt]:
            fitted = fit_student_t(np.concatenate([h[0] for h in history[row]]), np.concatenate([h[1] for h in history[row]]))
            if fitted is not None:
                t_mean[row], t_chol[row] = fitted
                t_on[row] = True
            adaptations[row] += 1
        sums.reset(active[adapt])
        active = active[adapt | ~_settled(sums, active, gamma, settings)]
        if give_up is not None and round_number + 1 >= give_up[0]:
            active = active[sums.ess()[active] >= give_up[1] * out.draws[out_rows[active]]]
    theta, se, ess = sums.theta(), sums.se(), sums.ess()
    out.theta[out_rows] = theta
    out.theta_mc_se[out_rows] = se
    out.ess[out_rows] = ess
    out.p_mean[out_rows] = np.divide(sums.w_p, sums.w[:, None], out=np.full_like(sums.w_p, np.nan), where=sums.w[:, None] > 0)
    if not keep_draws:
        return []
    return [_kept(sums.kept[row], sums.scale[row]) for row in range(size)]


def round_draws(round_number: int, settings: SamplerSettings) -> int:
    """Draws per pair in round ``round_number`` (0-based): ``is_draws`` doubling each round up to
    ``is_round_draws_max`` (cheap first rounds for pairs that settle at once, big ones for the rest)."""
    return int(min(settings.is_draws << min(round_number, 30), max(settings.is_draws, settings.is_round_draws_max)))


def _draw_round(
    target: ImportanceTarget,
    pairs: IntArray,
    pair_ids: IntArray,
    rows: IntArray,
    shares: FloatArray,
    student: StudentT,
    seed: tuple[int, tuple[int, ...]],
    round_number: int,
    draws: int,
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """One round of ``draws`` draws for each of a batch of pairs: ``z`` (B, D, dim), log weights
    (B, D) (``-inf``: weight 0), ``p`` (B, D, 3) and their terms of theta (B, D)."""
    counts = _split(draws, shares)
    z = np.empty((len(rows), draws, target.dim))
    rngs = []
    for j, row in enumerate(rows):
        rng = np.random.default_rng([seed[0], int(pair_ids[j]), round_number, *seed[1]])
        base = target.draw_base(rng, int(pairs[j]), counts[j, :-1].tolist())
        z[j] = np.concatenate([base, student.draw(rng, int(row), int(counts[j, -1]))]) if counts[j, -1] else base
        rngs.append(rng)
    evaluation = target.evaluate(pairs, z, rngs)
    parts = [evaluation.log_base + _log(shares[:, None, :-1])]
    if np.any(shares[:, -1] > 0):
        parts.append((student.log_pdf(rows, z) + _log(shares[:, -1])[:, None])[..., None])
    with np.errstate(invalid="ignore"):  # NaN draws (outside the support) get weight 0 below
        log_w = evaluation.log_target - log_sum_exp(np.concatenate(parts, axis=-1))
    log_w = np.where(np.isfinite(log_w), log_w, -np.inf)
    p = np.where(np.isfinite(log_w)[..., None], evaluation.p, 1.0 / 3.0)  # weight 0: any finite value
    above = (p[..., BETTER] > p[..., WORSE]).astype(np.float64) if evaluation.above is None else evaluation.above
    return z, log_w, p, np.where(np.isfinite(log_w), above, 0.0)


def _kept(rounds: list[tuple[FloatArray, FloatArray]], scale: float) -> tuple[FloatArray, FloatArray]:
    if not rounds:
        return np.zeros((0, 3)), np.zeros(0)
    p = np.concatenate([r[0] for r in rounds])
    log_w = np.concatenate([r[1] for r in rounds])
    return p, np.exp(log_w - scale) if np.isfinite(scale) else np.zeros(len(log_w))


def _settled(sums: _Sums, rows: IntArray, gamma: float, settings: SamplerSettings) -> npt.NDArray[np.bool_]:
    return settled(sums.theta()[rows], sums.se()[rows], sums.ess()[rows], gamma, settings)


def settled(theta: FloatArray, se: FloatArray, ess: FloatArray, gamma: float, settings: SamplerSettings) -> npt.NDArray[np.bool_]:
    """The stop rule (module docstring) on estimates ``theta``, ``se`` and ``ess`` (arrays of one shape)."""
    distance = np.minimum(np.abs(theta - gamma / 2.0), np.abs(theta - (1.0 - gamma / 2.0)))
    with np.errstate(invalid="ignore"):
        return (ess >= settings.is_min_ess) & ((se <= settings.is_target_se) | (distance > settings.is_decision_z * se))


def _split(total: int, shares: FloatArray) -> IntArray:
    """Integer counts (P, C) summing to ``total`` per row, proportional to ``shares`` (P, C)
    (largest remainders; a zero share gets no draw)."""
    raw = shares * total
    counts = np.floor(raw).astype(np.int64)
    short = total - counts.sum(axis=1)
    order = np.argsort(-(raw - counts), axis=1, kind="stable")
    for i in range(len(counts)):
        counts[i, order[i, : short[i]]] += 1
    return counts


def _log(x: FloatArray) -> FloatArray:
    with np.errstate(divide="ignore"):
        return np.log(x)


def log_sum_exp(x: FloatArray) -> FloatArray:
    """``log(sum(exp(x)))`` over the last axis, stable; ``-inf`` where every term is ``-inf``, NaN
    where one is NaN. (SciPy's ``logsumexp`` costs several times more on these short axes.)"""
    top = np.max(x, axis=-1, keepdims=True)
    shift = np.where(np.isfinite(top), top, 0.0)
    return np.asarray(np.log(np.sum(np.exp(x - shift), axis=-1)) + shift[..., 0], dtype=np.float64)


RATIO_LIMIT = 300.0
"""Log-ratios are clipped to +-this before exponentiating: such a point is a vertex of the
simplex to double precision anyway, and its posterior density is 0 to double precision."""


def simplex_from_ratios(z: FloatArray) -> tuple[FloatArray, FloatArray]:
    """A point of the 3-simplex and its log from its additive log-ratios ``z`` (..., 2) (the last
    component is the reference): two arrays (..., 3). Cheaper than a general log-softmax: two
    exponentials and one logarithm per point."""
    z = np.clip(z, -RATIO_LIMIT, RATIO_LIMIT)
    e = np.exp(z)
    total = 1.0 + e[..., 0] + e[..., 1]
    log_total = np.log(total)[..., None]
    x = np.concatenate([e, np.ones((*z.shape[:-1], 1))], axis=-1) / total[..., None]
    return x, np.concatenate([z - log_total, -log_total], axis=-1)


def log_ratios(log_x: FloatArray) -> FloatArray:
    """Additive log-ratios (..., k-1) of simplex points given by their logs (..., k) (or of
    unnormalised positive vectors, e.g. gamma variates: normalisation cancels)."""
    return log_x[..., :-1] - log_x[..., -1:]


def log_beta(alpha: FloatArray) -> FloatArray:
    """log of the multivariate beta function over the last axis."""
    return np.asarray(gammaln(alpha).sum(axis=-1) - gammaln(alpha.sum(axis=-1)), dtype=np.float64)
