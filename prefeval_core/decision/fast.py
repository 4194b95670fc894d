"""The importance route for one metric: exact weights in coordinates where the metric's ridge is straight.

**Full model** (``mu`` uncertain, method.md §4). Write the joint law of (metric outcome ``c``,
true outcome ``h``) of an item as the 3x3 table ``pi[c, h] = mu[c, h] p[h]``. Factorised by
columns it is ``(p, mu)``; factorised by rows it is ``(q, r)`` with ``q = mu @ p`` the metric's
outcome rates and ``r[c, h] = P(truth h | metric said c) = pi[c, h] / q[c]``. With the Jacobians
``prod_h p_h^2`` (columns) and ``prod_c q_c^2`` (rows) of the two factorisations, the posterior
``Dir(p | n + 1) prod_h Dir(mu[:, h] | K[:, h] + 1) prod_c q_c^m_c`` becomes, exactly,

    Dir(q | K.sum(1) + m + 3) × prod_c Dir(r[c] | K[c] + 1) × prod_h p_h^(d_h - 2),
    p = r^T q,  d = n - K.sum(0)  (revealed human outcomes the metric did not rate).

The many metric-only items pin ``q`` (a straight ridge); the rest is a product of Dirichlets
times a smooth factor of ``p``. Proposals (in additive log-ratio coordinates ``z`` of ``q`` and of
each row of ``r``; :mod:`~prefeval_core.decision.importance` adds a fitted Student-t when they do
badly):

* ``rows`` (7/8 of the draws): ``q ~ Dir(K.sum(1) + m + 3)``, ``r[c] ~ Dir(K[c] + 1)``: the
  posterior but for ``prod_h p_h^(d_h - 2)``;
* ``humans`` (1/8): ``p ~ Dir(n + 1)``, ``mu[:, h] ~ Dir(K[:, h] + 1)``, mapped to ``(q, r)``. The
  posterior over this proposal is ``prod_c q_c^m_c <= 1``: bounded, so every weight is bounded.

**Known mu** (step two of the paper): the posterior ``Dir(p | n + 1) prod_c (mu p)_c^m_c`` of
``p`` alone (``z``: log-ratios of ``p``), proposals ``humans`` (``p ~ Dir(n + 1)``, ratio
``prod_c (mu p)_c^m_c <= 1``) and ``metric`` (``q ~ Dir(m + 1)``, ``p = mu^{-1} q``, a draw outside
the simplex has weight 0), half each.

The decision engine sends a pair here when it has more metric-only items than
``settings.enumeration_max_items`` (:mod:`~prefeval_core.decision.routes`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from prefeval_core.decision.importance import (
    Evaluation,
    ImportanceSummary,
    importance_sample,
    log_beta,
    log_ratios,
    simplex_from_ratios,
)
from prefeval_core.decision.settings import SamplerSettings

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


SHARES = (0.3, 0.6, 0.1)
"""Shares of the full model's base proposals ``rows``, ``tilted``, ``humans``."""


def _tilted(n: FloatArray, K: FloatArray) -> FloatArray:
    """``b[c, h] (n_h + 1) / (K[:, h].sum() + 3)`` with ``b = K + 1`` (shape of ``K``, any leading axes)."""
    return (K + 1.0) * ((n + 1.0) / (K.sum(axis=-2) + 3.0))[..., None, :]


@dataclass(frozen=True)
class FullMuTarget:
    """The full model of P pairs in ``(q, r)`` coordinates (module docstring); ``z`` has 8 columns:
    log-ratios of ``q`` (2), then of ``r[0]``, ``r[1]``, ``r[2]`` (2 each)."""

    n: FloatArray
    K: FloatArray
    m: FloatArray

    @property
    def dim(self) -> int:
        return 8

    def base_shares(self, pairs: IntArray) -> FloatArray:
        return np.broadcast_to(np.array(SHARES), (len(pairs), 3))

    def draw_base(self, rng: np.random.Generator, pair: int, counts: Sequence[int]) -> FloatArray:
        rows, tilted, humans = counts
        n, K, m = self.n[pair], self.K[pair], self.m[pair]
        a = K.sum(axis=1) + m + 3.0
        parts = []
        for size, b in ((rows, K + 1.0), (tilted, _tilted(n, K))):
            log_g = np.log(rng.standard_gamma(np.concatenate([a, b.ravel()]), size=(size, 12)))  # q, then the rows of r
            parts.append(np.concatenate([log_ratios(log_g[:, :3]), log_ratios(log_g[:, 3:].reshape(size, 3, 3)).reshape(size, 6)], axis=1))
        log_g = np.log(rng.standard_gamma(np.concatenate([n + 1.0, K.T.ravel() + 1.0]), size=(humans, 12)))  # p, then mu's columns
        log_p = log_g[:, :3] - np.log(np.exp(log_g[:, :3]).sum(axis=1, keepdims=True))
        log_mu_t = log_g[:, 3:].reshape(humans, 3, 3)  # (h, c): columns of mu, unnormalised
        log_mu_t = log_mu_t - np.log(np.exp(log_mu_t).sum(axis=2, keepdims=True))
        log_pi = np.swapaxes(log_mu_t, 1, 2) + log_p[:, None, :]  # (c, h): log mu[c, h] p[h]
        log_q = np.log(np.exp(log_pi).sum(axis=2))
        parts.append(np.concatenate([log_ratios(log_q), log_ratios(log_pi).reshape(humans, 6)], axis=1))
        return np.concatenate(parts)

    def evaluate(self, pairs: IntArray, z: FloatArray, rngs: Sequence[np.random.Generator]) -> Evaluation:
        q, log_q = simplex_from_ratios(z[..., :2])  # (P, D, 3)
        r, log_r = simplex_from_ratios(z[..., 2:].reshape(*z.shape[:2], 3, 2))  # (P, D, c, h)
        p = np.einsum("pdc,pdch->pdh", q, r)
        # every log density here is linear in the features (log q, log r, log p): one product
        features = np.concatenate([log_q, log_r.reshape(*z.shape[:2], 9), np.log(p)], axis=-1)  # (P, D, 15)
        weights, offsets = self._linear_densities(pairs)
        densities = np.matmul(features, weights) + offsets[:, None, :]
        return Evaluation(log_target=densities[..., 0], log_base=densities[..., 1:], p=p)

    def _linear_densities(self, pairs: IntArray) -> tuple[FloatArray, FloatArray]:
        """Coefficients (P, 15, 4) and offsets (P, 4) of the log target and of the log densities of
        ``rows``, ``tilted`` and ``humans`` (all in ``z``) in the features ``(log q, log r, log p)``."""
        n, K, m = self.n[pairs], self.K[pairs], self.m[pairs]
        P = len(pairs)
        a = K.sum(axis=2) + m + 3.0
        b = K + 1.0
        b_tilted = _tilted(n, K)
        d = n - K.sum(axis=1)
        zeros = np.zeros((P, 3))
        target = np.concatenate([a, b.reshape(P, 9), d - 2.0], axis=1)
        rows = np.concatenate([a, b.reshape(P, 9), zeros], axis=1)
        tilted = np.concatenate([a, b_tilted.reshape(P, 9), zeros], axis=1)
        humans = np.concatenate([K.sum(axis=2) + 3.0, b.reshape(P, 9), d - 2.0], axis=1)
        offsets = np.stack(
            [
                np.zeros(P),
                -log_beta(a) - log_beta(b).sum(axis=1),
                -log_beta(a) - log_beta(b_tilted).sum(axis=1),
                -log_beta(n + 1.0) - log_beta(np.swapaxes(K, 1, 2) + 1.0).sum(axis=1),
            ],
            axis=1,
        )
        return np.stack([target, rows, tilted, humans], axis=-1), offsets


@dataclass(frozen=True)
class KnownMuTarget:
    """The known-mu model of P pairs in log-ratio coordinates of ``p`` (``z`` has 2 columns).

    ``mu`` (P, 3, 3), rows = metric, columns = human, columns summing to 1. A singular ``mu``
    gets no ``metric`` proposal draws (its inverse does not exist)."""

    n: FloatArray
    m: FloatArray
    mu: FloatArray

    @property
    def dim(self) -> int:
        return 2

    def base_shares(self, pairs: IntArray) -> FloatArray:
        invertible = np.abs(np.linalg.det(self.mu[pairs])) > 1e-12
        return np.stack([np.where(invertible, 0.5, 1.0), np.where(invertible, 0.5, 0.0)], axis=1)

    def draw_base(self, rng: np.random.Generator, pair: int, counts: Sequence[int]) -> FloatArray:
        humans, metric = counts
        from_humans = log_ratios(np.log(rng.standard_gamma(self.n[pair] + 1.0, size=(humans, 3))))
        if not metric:
            return from_humans
        q = rng.standard_gamma(self.m[pair] + 1.0, size=(metric, 3))
        p = np.linalg.solve(self.mu[pair], (q / q.sum(axis=1, keepdims=True)).T).T
        inside = np.all(p > 0.0, axis=1)
        from_metric = np.full((metric, 2), np.nan)
        from_metric[inside] = log_ratios(np.log(p[inside]))
        return np.concatenate([from_humans, from_metric])

    def evaluate(self, pairs: IntArray, z: FloatArray, rngs: Sequence[np.random.Generator]) -> Evaluation:
        n, m, mu = self.n[pairs], self.m[pairs], self.mu[pairs]
        p, log_p = simplex_from_ratios(z)
        q = np.einsum("pch,pdh->pdc", mu, p)
        with np.errstate(divide="ignore"):  # a zero rate of an outcome the metric never gave: 0 log 0 = 0 below
            log_q = np.log(q)
        likelihood = np.einsum("pdc,pc->pd", np.where(m[:, None, :] > 0, log_q, 0.0), m)
        p_term = np.einsum("pdh,ph->pd", log_p, n + 1.0)
        with np.errstate(divide="ignore"):
            log_det = np.log(np.abs(np.linalg.det(mu)))
        humans = p_term - log_beta(n + 1.0)[:, None]
        metric = likelihood - log_beta(m + 1.0)[:, None] + log_det[:, None] + log_p.sum(axis=-1)
        log_target = np.where(np.isnan(z).any(axis=-1), -np.inf, p_term + likelihood)
        return Evaluation(log_target=log_target, log_base=np.stack([humans, metric], axis=-1), p=p)


def importance_posterior(
    n: FloatArray,
    K: FloatArray,
    m: FloatArray,
    mu: FloatArray | None,
    pair_ids: IntArray,
    *,
    seed: int,
    gamma: float,
    settings: SamplerSettings,
    keep_draws: bool = False,
) -> ImportanceSummary:
    """Importance-sample P pairs' posteriors (full model, or known ``mu`` when given).

    Args:
        n: (P, 3), K: (P, 3, 3) (rows = metric, columns = human), m: (P, 3) counts.
        mu: (P, 3, 3) known mixture matrices, or ``None`` for the full model.
        pair_ids: (P,) ids seeding each pair's draws (its row in the caller's input).
        seed, gamma, settings: see :func:`~prefeval_core.decision.importance.importance_sample`.
        keep_draws: also return the weighted draws of ``p`` behind the estimates.
    """
    target = FullMuTarget(n, K, m) if mu is None else KnownMuTarget(n, m, mu)
    return importance_sample(target, np.arange(len(n)), pair_ids, seed=seed, gamma=gamma, settings=settings, keep_draws=keep_draws)
