"""Fast path: exact importance sampling in a reparametrisation where the metric's ridge is straight.

The hard part of the posterior (method.md §4) is that many metric-only items pin the
metric's outcome rates ``q = mu @ p`` to a thin, curved ridge in ``(p, mu)``. Change variables
from ``(p, mu)`` to ``(q, mu)``: for fixed ``mu`` (columns on the simplex) ``p = mu^{-1} q`` is
linear, maps the simplex plane to itself and has Jacobian ``1 / |det mu|``. The posterior
density in ``(q, mu)`` is

    prod_h Dirichlet(mu[:, h] | K[:, h] + 1) × Dirichlet(q | m + 1)
        × Dirichlet(p | n + 1) / |det mu| × 1[p in the simplex],   p = mu^{-1} q,

exactly (``prod_c q_c^{m_c}`` is the multinomial likelihood). So drawing ``mu`` from its
Dirichlet factors and ``q ~ Dirichlet(m + 1)`` (the ridge itself, sampled directly) and
weighting each draw by ``w = Dirichlet(p | n + 1) / |det mu|`` (0 outside the simplex) is an
importance sampler whose proposal already contains every factor but the human prior of
``p``. For a known ``mu`` the determinant is a constant. Self-normalised estimates:

    theta = sum w 1[p> > p<] / sum w,   E[p] = sum w p / sum w,
    MC standard error = sqrt(sum w^2 (1[p> > p<] - theta)^2) / sum w,
    effective sample size (Kish) = (sum w)^2 / sum w^2.

The weights are heavy-tailed where ``mu`` can be nearly singular (a near-useless metric with
few human items); the engine checks the effective sample size and hands such pairs to NUTS.

The mixture of two proposals makes the weights bounded (``w <= 2``, balance heuristic):

* A: ``p ~ Dirichlet(n + 1)``, ``mu`` from its Dirichlet factors, ``q = mu p``;
* B: ``q ~ Dirichlet(m + 1)``, ``mu`` from its Dirichlet factors, ``p = mu^{-1} q``;

half of the draws from each, ``w = target / (A + B) / 2`` with both densities in ``(p, mu)``
coordinates (B's carries ``|det mu|``). A covers posteriors dominated by the human outcomes,
B those dominated by many metric-only items.

Random draws come from NumPy (PCG64): on this machine JAX's CPU generator measured 10-40x
slower for uniform, normal and gamma variates, and the draws dominate the cost. The generator
of pair ``i`` in round ``r`` is ``default_rng([seed, i, r])``, so a pair's draws do not depend
on the other pairs in the call.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.special import gammaln

from prefeval_core.outcomes import BETTER, WORSE

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class WeightSums:
    """Running sums of importance weights of P pairs (leading dimension P), float64.

    ``w`` is scaled per pair by a constant (the same in every round), which cancels.
    """

    sum_w: npt.NDArray[np.float64]
    sum_w2: npt.NDArray[np.float64]
    sum_w_above: npt.NDArray[np.float64]
    sum_w2_above: npt.NDArray[np.float64]
    sum_w_p: npt.NDArray[np.float64]  # (P, 3)

    def __add__(self, other: WeightSums) -> WeightSums:
        return WeightSums(*(a + b for a, b in zip(self.astuple(), other.astuple(), strict=True)))

    def astuple(self) -> tuple[npt.NDArray[np.float64], ...]:
        return (self.sum_w, self.sum_w2, self.sum_w_above, self.sum_w2_above, self.sum_w_p)

    def take(self, index: npt.NDArray[np.int64]) -> WeightSums:
        return WeightSums(*(a[index] for a in self.astuple()))

    @property
    def theta(self) -> npt.NDArray[np.float64]:
        return np.divide(self.sum_w_above, self.sum_w, out=np.full_like(self.sum_w, np.nan), where=self.sum_w > 0)

    @property
    def p_mean(self) -> npt.NDArray[np.float64]:
        total = np.where(self.sum_w > 0, self.sum_w, 1.0)[:, None]
        return np.where(self.sum_w[:, None] > 0, self.sum_w_p / total, np.nan)

    @property
    def ess(self) -> npt.NDArray[np.float64]:
        return np.divide(self.sum_w**2, self.sum_w2, out=np.zeros_like(self.sum_w), where=self.sum_w2 > 0)

    @property
    def theta_mc_se(self) -> npt.NDArray[np.float64]:
        theta = np.nan_to_num(self.theta)
        spread = self.sum_w2_above * (1.0 - 2.0 * theta) + theta**2 * self.sum_w2
        total = np.where(self.sum_w > 0, self.sum_w, 1.0)
        return np.where(self.sum_w > 0, np.sqrt(np.clip(spread, 0.0, None)) / total, np.nan)


def importance_round(
    n: FloatArray,
    K: FloatArray,
    m: FloatArray,
    mu: FloatArray | None,
    pair_ids: npt.NDArray[np.int64],
    *,
    seed: int,
    round_index: int,
    draws: int,
) -> WeightSums:
    """One round of ``draws`` importance draws for each of P pairs; returns their weight sums.

    Args:
        n: (P, 3), K: (P, 3, 3), m: (P, 3) counts; mu: (P, 3, 3) known mixture matrices or None.
        pair_ids: (P,) the identity of each pair in the caller's batch (seeds its draws).
    """
    parts = [
        _pair_sums(np.random.default_rng([seed, int(pair_ids[i]), round_index]), n[i], K[i], m[i], None if mu is None else mu[i], draws)
        for i in range(n.shape[0])
    ]
    return WeightSums(*(np.array(values) for values in zip(*parts, strict=True)))


def _pair_sums(rng: np.random.Generator, n: FloatArray, K: FloatArray, m: FloatArray, mu_known: FloatArray | None, draws: int):  # type: ignore[no-untyped-def]
    """Weight sums of ``draws`` importance draws of one pair (module docstring)."""
    half = draws // 2
    if mu_known is None:
        # column h of mu ~ Dirichlet(K[:, h] + 1): gamma variates normalised over the metric outcome c
        gammas = rng.standard_gamma(np.broadcast_to(K + 1.0, (draws, 3, 3)))
        mu = gammas / gammas.sum(axis=1, keepdims=True)
    else:
        mu = np.broadcast_to(mu_known, (draws, 3, 3))
    col_a, col_b, col_c = mu[..., 0], mu[..., 1], mu[..., 2]  # columns, (D, 3)
    bc, ca, ab = np.cross(col_b, col_c), np.cross(col_c, col_a), np.cross(col_a, col_b)
    det = np.einsum("dc,dc->d", col_a, bc)
    p = np.empty((draws, 3))
    q = np.empty((draws, 3))
    p[:half] = _dirichlet(rng, n + 1.0, half)  # component A
    q[:half] = np.einsum("dch,dh->dc", mu[:half], p[:half])
    q[half:] = _dirichlet(rng, m + 1.0, draws - half)  # component B
    adj = np.stack([bc[half:], ca[half:], ab[half:]], axis=1)  # rows of det * mu^{-1}
    with np.errstate(divide="ignore", invalid="ignore"):  # det = 0: a singular mu, handled by use_b
        p[half:] = np.einsum("dhc,dc->dh", adj, q[half:]) / det[half:, None]
    use_b = np.abs(det) > 1e-12  # a singular (known) mu has no component B
    valid = np.all(p > 0.0, axis=1) & np.concatenate([np.ones(half, bool), use_b[half:]])
    p_in = np.where(valid[:, None], p, 1.0 / 3.0)
    q_in = np.where(valid[:, None], q, 1.0 / 3.0)
    log_prior = _log_dirichlet(p_in, n + 1.0)
    log_lik = _log_dirichlet(q_in, m + 1.0)  # = sum_c m_c log q_c + const
    with np.errstate(divide="ignore"):
        log_b = np.where(use_b, log_lik + np.log(np.where(use_b, np.abs(det), 1.0)), -np.inf)
    log_w = log_prior + log_lik - np.logaddexp(log_prior, log_b) - np.log(0.5)
    w = np.where(valid, np.exp(np.where(valid, log_w, 0.0)), 0.0)
    above = (p_in[:, BETTER] > p_in[:, WORSE]).astype(np.float64)
    w2 = w * w
    return w.sum(), w2.sum(), w @ above, w2 @ above, w @ np.where(valid[:, None], p_in, 0.0)


def _dirichlet(rng: np.random.Generator, alpha: FloatArray, size: int) -> FloatArray:
    gammas = rng.standard_gamma(np.broadcast_to(alpha, (size, alpha.shape[-1])))
    return gammas / gammas.sum(axis=-1, keepdims=True)


def _log_dirichlet(x: FloatArray, alpha: FloatArray) -> FloatArray:
    """log Dirichlet(x | alpha) over the last axis (x strictly inside the simplex)."""
    norm = gammaln(alpha).sum() - gammaln(alpha.sum())
    return np.log(x) @ (alpha - 1.0) - norm
