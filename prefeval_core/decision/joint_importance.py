"""The ``joint_importance`` route: several metrics' posterior by importance sampling with exact weights.

The model (:mod:`~prefeval_core.decision.joint`) has ``B = 1 + 3k`` simplices: ``p`` (block 0) and
every column ``mu_j[:, h]`` (block ``1 + 3j + h``). In additive log-ratio coordinates ``z`` (two per
simplex, its last component the reference) its log density is, exactly and up to a constant,

    sum_b alpha_b . log x_b + sum_c u_c log sum_h p_h prod_j mu_j[c_j, h],

with ``alpha = n + 1`` for ``p`` and ``K_j[:, h] + 1`` for ``mu_j[:, h]`` (the Dirichlet's
``alpha - 1`` plus the Jacobian of the log-ratios). The pattern terms ``T[c, h] = log p_h +
sum_j log mu_j[c_j, h]`` are a fixed 0/1 linear map of the ``log x`` (:class:`PatternMap`, each
pair's own patterns only): one matrix product per draw.

With few revealed items and many metric-only ones this posterior is a wide, curved ridge (which
true outcome a metric pattern stands for is barely pinned down), often with several relabelled
humps: a Student-t at the maximum, even at the posterior's own mean and covariance, measured an
effective sample size of about 1% of its draws on SummEval pairs. The proposal is instead the
mixture of the data-augmentation sampler's full conditionals (Gelfand and Smith's
Rao-Blackwellised density estimate): ``EXPLORE_CHAINS`` chains per pair, started from prior draws,
run ``EXPLORE_WARMUP`` sweeps and then keep every ``EXPLORE_THIN``-th of ``EXPLORE_KEPT * EXPLORE_THIN``
sweeps (:func:`~prefeval_core.decision.joint_fast.conditional_parameters`); each kept latent draw
``L`` contributes the product of Dirichlets ``p | L``, ``mu_j[:, h] | L`` (every other one widened:
``WIDEN_COUNTS`` of the latent counts), all with equal shares.
The chains need not have converged: the weights are exact, and the mixture's density is linear
in ``log x`` per component (one matrix product per block of draws gives every component's and
the prior's log density, :func:`density_matrix`). Base proposals of
:func:`~prefeval_core.decision.importance.importance_sample`:

* ``conditionals`` (``1 - PRIOR_SHARE`` of the draws): that mixture;
* ``prior`` (``PRIOR_SHARE``): ``p ~ Dir(n + 1)``, ``mu_j[:, h] ~ Dir(K_j[:, h] + 1)``; the
  posterior over it is the likelihood of the unrevealed items, at most 1, so with the balance
  heuristic every weight is bounded.

The estimate of ``theta`` is Rao-Blackwellised: with each draw of ``(p, mu)`` comes one draw of
the latent outcomes from their exact conditional ``L[c] ~ Multinomial(u_c, normalise(exp T[c]))``,
so the weighted pairs ``((p, mu), L)`` are a weighted sample of the joint posterior, and the draw's
term is ``P(p> > p< | L) = I_{1/2}(n< + 1 + S<, n> + 1 + S>)`` (``p | L ~ Dirichlet(n + 1 + S)``,
``S = sum_c L[c]``) rather than an indicator: the measured standard errors were 1.2-4x smaller.

**Larger mixtures.** Most pairs settle within ``FIRST_ROUNDS`` rounds on the mixture of
``EXPLORE_CHAINS * EXPLORE_KEPT`` components. The others (those whose weights have a heavy tail:
one draw can hold a third of the weight; on SummEval 14-21 of 66, and they took three quarters of
the draws) start afresh, their earlier draws dropped, on a mixture of ``EXPLORE_CHAINS *
WIDE_KEPT`` components from new chains (``default_rng([seed, EXPLORE_STREAM, 1])``): on those
pairs 4x the components gave 3x less variance per draw at twice the cost per draw, and their
heavy tails mostly went. Their draws come from ``default_rng([seed, i, round, 1])``. A pair whose
weights stay too uneven there (below) gets one more such mixture from new chains
(``default_rng([seed, EXPLORE_STREAM, 2])``, draws ``default_rng([seed, i, round, 2])``;
``WIDE_ATTEMPTS``): whether a mixture of a few hundred chain states covers a curved, humped
posterior is partly luck, and on SummEval such a pair sampled alone settled at once.

The sampler's fitted Student-t is switched off here (``is_adapt_rounds=0``): on the SummEval pairs
it took half the draws where it does worse than the mixture, and its refits discard the draws so
far (the call took 1.8x the CPU time with it).

A pair whose weights stay too uneven (effective sample size below ``settings.is_min_ess``, or
below ``GIVE_UP_PER_DRAW`` per draw of the mixture its estimate comes from: ``usable`` of the
summary; each larger mixture stops such a pair after ``GIVE_UP_ROUNDS`` rounds) goes on to the
data-augmentation route (:mod:`~prefeval_core.decision.joint_fast`). The importance draws of the
pair with id ``i`` come from ``default_rng([seed, i, round])`` (larger mixtures: above); the
exploring chains of a batch of pairs share one stream (``default_rng([seed, EXPLORE_STREAM])``),
so the proposal, not the estimate's expectation, depends on the other pairs of the batch.
BLAS runs single-threaded in the call (its products are small: threads only spun, 1.6x the CPU time).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt
from scipy.special import betainc

from prefeval_core.decision.exact import single_threaded_blas
from prefeval_core.decision.importance import RATIO_LIMIT, Evaluation, ImportanceSummary, importance_sample, log_beta, log_ratios, settled
from prefeval_core.decision.joint_data import JointInputs
from prefeval_core.decision.joint_fast import conditional_parameters
from prefeval_core.decision.settings import SamplerSettings
from prefeval_core.vocabulary.outcomes import BETTER, WORSE

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
EXPLORE_CHAINS = 32
"""Data-augmentation chains per pair whose full conditionals make the proposal."""
EXPLORE_WARMUP = 20
"""Sweeps of those chains before the first kept one."""
EXPLORE_KEPT = 8
"""Kept sweeps per chain (the mixture has ``EXPLORE_CHAINS * EXPLORE_KEPT`` components)."""
EXPLORE_THIN = 4
"""Sweeps between kept ones (consecutive ones are nearly the same component)."""
EXPLORE_STREAM = 0x6A18
"""Second word of the seed of the exploring chains' stream."""
WIDEN_COUNTS = 0.5
"""Every other component keeps only this share of its latent counts: wider, it covers the gaps
between the chains (without it the weights' tails left some standard errors far too small)."""
FIRST_ROUNDS = 3
"""Rounds with the first mixture; a pair still unsettled after them (7 in 10 settle, with at most
3,584 draws at the default sizes) starts afresh with ``WIDE_KEPT`` kept sweeps per chain."""
WIDE_ATTEMPTS = 2
"""Mixtures of ``WIDE_KEPT`` kept sweeps a pair may get, each from new chains, before it goes on to
the data-augmentation route: a second one only for the pairs whose weights stayed too uneven on the
first (on SummEval ~1 pair in 80 per call; such a pair, sampled alone, settles in 0.03-0.3 s, while
``joint_gibbs`` with 4 chains took 0.6-14 s)."""
WIDE_KEPT = 32
"""Kept sweeps per chain of the larger mixtures (4x the components: about 3x less variance per draw
on the pairs that get there, at twice the cost per draw)."""
GIVE_UP_ROUNDS, GIVE_UP_PER_DRAW = 3, 0.05
"""A pair with fewer than 5 effective draws per 100 after 3 rounds of a larger mixture stops, and
no estimate with fewer is used: the mixture misses part of its posterior, and the
data-augmentation route takes the pair. (A missed hump biases the estimate while its standard
error looks fine: on ``k2_ok_ok_10_200`` of the golden settings the second mixture settled at
0.4-4.7 effective draws per 100 and was ~0.013 too high on 7 of 8 seeds, up to 4.2 standard
errors; the SummEval pairs that reach it have 7-42 per 100. The first mixture's estimates have at
least 200 in at most 3,584 draws, 5.6 per 100.)"""
PRIOR_SHARE = 0.05
"""Share of the draws from the prior proposal (the bound on the weights)."""


@dataclass(frozen=True)
class PatternMap:
    """The 0/1 maps from the logs of the B simplices to the pattern terms ``T[c, h] = log p_h +
    sum_j log mu_j[c_j, h]`` of each pair's own patterns (those with an unrevealed item).

    Attributes:
        matrix: (P, B*3, 3*M): pair i's map, column ``h * M + m`` the term of its m-th pattern
            (M: the most patterns any pair has; a pair with fewer repeats its first pattern in
            the spare columns, which carry no items).
        items: (P, M) unrevealed items of each of those patterns (0 in the spare columns).
        used: (P,) how many patterns each pair has.
        blocks: B.
    """

    matrix: FloatArray
    items: FloatArray
    used: IntArray
    blocks: int

    @classmethod
    def build(cls, patterns: IntArray, u: FloatArray) -> PatternMap:
        J, k = patterns.shape
        blocks = 1 + 3 * k
        G = np.zeros((J, 3, blocks, 3))  # pattern c, outcome h -> the log x entries of T[c, h]
        for h in range(3):
            G[:, h, 0, h] = 1.0
            for j in range(k):
                present = patterns[:, j] < 3
                G[present, h, 1 + 3 * j + h, patterns[present, j]] = 1.0
        used = (u > 0).sum(axis=1)
        M = max(1, int(used.max(initial=0)))
        order = np.argsort(u <= 0, axis=1, kind="stable")[:, :M]  # each pair's patterns first, in their order
        spare = np.arange(M)[None, :] >= used[:, None]
        order = np.where(spare, order[:, :1], order)
        items = np.where(spare, 0.0, np.take_along_axis(u, order, axis=1))
        matrix = G[order].transpose(0, 2, 1, 3, 4).reshape(len(u), 3 * M, blocks * 3)  # (P, h, M, B, 3) flattened
        return cls(np.ascontiguousarray(matrix.swapaxes(1, 2)), items, used.astype(np.int64), blocks)

    def terms(self, pairs: IntArray, log_x: FloatArray) -> FloatArray:
        """``T`` transposed, (P, D, 3, M), of ``pairs`` from ``log x`` (P, D, B, 3)."""
        P, D = log_x.shape[:2]
        return np.matmul(log_x.reshape(P, D, -1), self.matrix[pairs]).reshape(P, D, 3, -1)


def prior_alpha(inputs: JointInputs) -> FloatArray:
    """(P, B, 3): ``n + 1`` for ``p``, then ``K_j[:, h] + 1`` for each ``mu_j[:, h]``."""
    P, k = inputs.K.shape[:2]
    columns = np.swapaxes(inputs.K, -1, -2).reshape(P, 3 * k, 3)  # block 3j + h: mu_j[:, h]
    return np.concatenate([inputs.n[:, None, :], columns], axis=1) + 1.0


def density_matrix(components: FloatArray, alpha: FloatArray) -> FloatArray:
    """(P, B*3 + 1, T + 1): with a 1 appended to ``log x`` (B*3,), one product gives the log density
    in ``z`` of every component (columns ``:T``) and of the prior (column ``T``): the Dirichlets'
    parameters, and in the last row minus their log normalising constants."""
    both = np.concatenate([components, alpha[:, None]], axis=1)  # (P, T + 1, B, 3)
    P, T1 = both.shape[:2]
    flat = np.concatenate([both.reshape(P, T1, -1), -log_beta(both).sum(axis=2)[..., None]], axis=2)
    return np.ascontiguousarray(flat.swapaxes(1, 2))


MIXTURE_BLOCK = 512
"""Draws per block of the mixture's density (its (block, T) arrays stay in the cache)."""


@dataclass(frozen=True)
class JointTarget:
    """The several-metric model of P pairs in log-ratio coordinates (module docstring); base
    proposals ``conditionals`` (the mixture of ``components`` (P, T, B, 3), equal shares) and ``prior``."""

    alpha: FloatArray
    pattern_map: PatternMap
    components: FloatArray
    densities: FloatArray

    @classmethod
    def build(cls, alpha: FloatArray, u: FloatArray, patterns: IntArray, components: FloatArray) -> JointTarget:
        return cls(alpha, PatternMap.build(patterns, u), components, density_matrix(components, alpha))

    @property
    def dim(self) -> int:
        return 2 * self.pattern_map.blocks

    def base_shares(self, pairs: IntArray) -> FloatArray:
        return np.broadcast_to(np.array([1.0 - PRIOR_SHARE, PRIOR_SHARE]), (len(pairs), 2))

    def draw_base(self, rng: np.random.Generator, pair: int, counts: Sequence[int]) -> FloatArray:
        conditionals, prior = counts
        which = rng.integers(0, self.components.shape[1], conditionals)
        alpha = np.concatenate([self.components[pair, which], np.broadcast_to(self.alpha[pair], (prior, *self.alpha.shape[1:]))])
        return log_ratios(np.log(rng.standard_gamma(alpha))).reshape(len(alpha), self.dim)

    def evaluate(self, pairs: IntArray, z: FloatArray, rngs: Sequence[np.random.Generator]) -> Evaluation:
        """Densities at ``z``, and each draw's term of theta given one draw of the latent outcomes
        (module docstring) from the pair's generator."""
        P, D = z.shape[:2]
        B = self.pattern_map.blocks
        flat = np.empty((P, D, 3 * B + 1))
        flat[..., -1] = 1.0
        x = _log_simplex(z.reshape(P, D, B, 2), flat[..., :-1].reshape(P, D, B, 3))
        log_x = flat[..., :-1].reshape(P, D, B, 3)
        log_bases = np.empty((P, D, 2))
        for i, pair in enumerate(pairs):
            self._mixture(int(pair), flat[i], log_bases[i])
        terms = self.pattern_map.terms(pairs, log_x)  # (P, D, 3, M)
        top = terms.max(axis=2)
        shares = np.exp(terms - top[:, :, None])
        total = shares.sum(axis=2)
        rates = np.log(total) + top  # log sum_h exp T[c, h]: the log likelihood of one item of pattern c
        log_target = log_bases[..., 1] + np.matmul(rates, self.pattern_map.items[pairs][:, :, None])[..., 0]
        shares /= total[:, :, None]
        above = self._rao_blackwell(pairs, shares, rngs)
        return Evaluation(log_target=log_target, log_base=log_bases, p=x, above=above)

    def _mixture(self, pair: int, flat: FloatArray, out: FloatArray) -> None:
        """Log densities (D, 2) of the mixture and the prior at one pair's draws (``flat``: (D, B*3 + 1),
        ``log x`` with a 1 appended), block by block."""
        matrix = self.densities[pair]
        T = matrix.shape[1] - 1
        D = flat.shape[0]
        per = np.empty((min(D, MIXTURE_BLOCK), T + 1))
        relative = np.empty((min(D, MIXTURE_BLOCK), T), dtype=np.float32)
        for start in range(0, D, MIXTURE_BLOCK):
            stop = min(D, start + MIXTURE_BLOCK)
            d = stop - start
            np.matmul(flat[start:stop], matrix, out=per[:d])
            top = per[:d, :T].max(axis=1)
            # the terms relative to the largest (finite: log x is clipped) are exponentiated in
            # single precision, ~1e-7 relative error
            np.subtract(per[:d, :T], top[:, None], out=relative[:d], casting="same_kind")
            np.exp(relative[:d], out=relative[:d])
            out[start:stop, 0] = np.log(relative[:d].sum(axis=1, dtype=np.float64) / T) + top
            out[start:stop, 1] = per[:d, T]

    def _rao_blackwell(self, pairs: IntArray, shares: FloatArray, rngs: Sequence[np.random.Generator]) -> FloatArray:
        """``P(p> > p< | L) = I_{1/2}(n< + 1 + S<, n> + 1 + S>)`` (P, D) at one draw of the latent
        outcomes ``L[c] ~ Multinomial(u_c, normalise(exp T[c]))`` per draw (``shares`` (P, D, 3, M):
        those probabilities; the pair's own patterns only)."""
        S = np.empty((len(pairs), shares.shape[1], 3))
        for i, rng in enumerate(rngs):
            pair = int(pairs[i])
            used = int(self.pattern_map.used[pair])
            prob = shares[i, :, :, :used]  # (D, 3, used)
            items = np.broadcast_to(self.pattern_map.items[pair, :used].astype(np.int64), (shares.shape[1], used))
            first = rng.binomial(items, np.clip(prob[:, 0], 0.0, 1.0))
            rest = items - first
            with np.errstate(divide="ignore", invalid="ignore"):
                share = np.where(prob[:, 0] < 1.0, prob[:, 1] / (1.0 - prob[:, 0]), 0.0)
            second = rng.binomial(rest, np.clip(share, 0.0, 1.0))
            S[i, :, 0] = first.sum(axis=1)
            S[i, :, 1] = second.sum(axis=1)
            S[i, :, 2] = items.sum(axis=1) - S[i, :, 0] - S[i, :, 1]
        alpha = self.alpha[pairs, 0][:, None, :] + S  # p | L ~ Dirichlet(n + 1 + S)
        return np.asarray(betainc(alpha[..., WORSE], alpha[..., BETTER], 0.5), dtype=np.float64)


def _log_simplex(z: FloatArray, log_x: FloatArray) -> FloatArray:
    """Write the logs of the simplex points with additive log-ratios ``z`` (..., B, 2) into ``log_x``
    (..., B, 3); returns the first simplex's points (..., 3) (``p``). As
    :func:`~prefeval_core.decision.importance.simplex_from_ratios`, without its temporaries."""
    z = np.clip(z, -RATIO_LIMIT, RATIO_LIMIT)
    e = np.exp(z)
    log_total = np.log1p(e[..., 0] + e[..., 1])
    np.subtract(z, log_total[..., None], out=log_x[..., :2])
    np.negative(log_total, out=log_x[..., 2])
    return np.exp(log_x[..., 0, :])


def joint_importance(
    inputs: JointInputs, pair_ids: IntArray, *, seed: int, gamma: float, settings: SamplerSettings, keep_draws: bool = False
) -> ImportanceSummary:
    """Importance-sample the several-metric posteriors of every pair of ``inputs`` (module docstring).

    Args:
        inputs: the pairs' data (every pair with at least one unrevealed item some metric rated).
        pair_ids: (P,) ids seeding each pair's importance draws.
        seed, gamma, settings: see :func:`~prefeval_core.decision.importance.importance_sample`.
        keep_draws: also return the weighted draws of ``p`` behind the estimates.
    """
    P = inputs.n.shape[0]
    pairs = np.arange(P)
    fixed = settings.with_(is_adapt_rounds=0)  # the proposal stays the mixture (module docstring)
    first = fixed.with_(is_max_rounds=min(FIRST_ROUNDS, settings.is_max_rounds))
    give_up = (GIVE_UP_ROUNDS, GIVE_UP_PER_DRAW)
    with single_threaded_blas():  # small products: BLAS threads only spin (module docstring)
        target = _mixture_target(inputs, np.random.default_rng([seed, EXPLORE_STREAM]), EXPLORE_KEPT)
        out = importance_sample(target, pairs, pair_ids, seed=seed, gamma=gamma, settings=first, keep_draws=keep_draws)
        behind = out.draws.copy()  # draws of the mixture each estimate comes from
        rest = settings.is_max_rounds - first.is_max_rounds
        hard = np.flatnonzero(~settled(out.theta, out.theta_mc_se, out.ess, gamma, settings))
        if not hard.size or rest < 1:
            return _judged(out, behind, settings)
        # the pairs still unsettled start afresh with a mixture of more components, and those whose
        # weights stay too uneven once more with new chains (module docstring)
        for attempt in range(1, WIDE_ATTEMPTS + 1):
            subset = JointInputs(inputs.n[hard], inputs.K[hard], inputs.patterns, inputs.u[hard])
            target = _mixture_target(subset, np.random.default_rng([seed, EXPLORE_STREAM, attempt]), WIDE_KEPT)
            again = importance_sample(
                target, np.arange(hard.size), pair_ids[hard], seed=seed, gamma=gamma, settings=fixed.with_(is_max_rounds=rest),
                keep_draws=keep_draws, give_up=give_up, stream=(attempt,),
            )  # fmt: skip
            out = _replaced(out, hard, again)
            behind[hard] = again.draws
            hard = hard[~_usable(again, again.draws, settings)]
            if not hard.size:
                break
    return _judged(out, behind, settings)


def _replaced(out: ImportanceSummary, rows: IntArray, again: ImportanceSummary) -> ImportanceSummary:
    """``out`` with the estimates of ``rows`` from ``again`` (their draws added to the count)."""
    for name in ("theta", "p_mean", "theta_mc_se", "ess"):
        getattr(out, name)[rows] = getattr(again, name)
    out.draws[rows] += again.draws
    if out.kept is None or again.kept is None:
        return out
    kept = list(out.kept)
    for i, row in enumerate(rows):
        kept[row] = again.kept[i]
    return replace(out, kept=tuple(kept))


def _usable(out: ImportanceSummary, behind: IntArray, settings: SamplerSettings) -> npt.NDArray[np.bool_]:
    """At least ``settings.is_min_ess`` effective draws and at least ``GIVE_UP_PER_DRAW`` per draw of
    the mixture the estimate comes from (``behind``)."""
    return (out.ess >= settings.is_min_ess) & (out.ess >= GIVE_UP_PER_DRAW * behind)


def _judged(out: ImportanceSummary, behind: IntArray, settings: SamplerSettings) -> ImportanceSummary:
    """``out`` with ``usable`` (:func:`_usable`)."""
    return replace(out, usable=_usable(out, behind, settings))


def _mixture_target(inputs: JointInputs, rng: np.random.Generator, kept: int) -> JointTarget:
    """The target whose ``conditionals`` proposal is the mixture of ``EXPLORE_CHAINS * kept`` full
    conditionals per pair (every other one widened; module docstring)."""
    components = conditional_parameters(inputs, rng, chains=EXPLORE_CHAINS, warmup=EXPLORE_WARMUP, kept=kept, thin=EXPLORE_THIN)
    alpha = prior_alpha(inputs)
    components[:, 1::2] = alpha[:, None] + WIDEN_COUNTS * (components[:, 1::2] - alpha[:, None])
    return JointTarget.build(alpha, inputs.u, inputs.patterns, components)
