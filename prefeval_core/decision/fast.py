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

Everything is vectorised over pairs (``vmap``) and over draws, jitted once per
(number of pairs rounded up to a power of two, draws per round, model variant).
Randomness: the key of pair ``i`` in round ``r`` and chunk ``j`` is
``fold_in(fold_in(fold_in(key(seed), i), r), j)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import numpy.typing as npt

from prefeval_core.outcomes import BETTER, WORSE

_CHUNK = 4096  # draws generated at once per pair: bounds memory at pairs x 4096 x 9 floats


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
    n: npt.NDArray[np.float64],
    K: npt.NDArray[np.float64],
    m: npt.NDArray[np.float64],
    mu: npt.NDArray[np.float64] | None,
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
    P = n.shape[0]
    bucket = max(8, 1 << (P - 1).bit_length())
    pad = bucket - P

    def padded(x: npt.NDArray) -> jnp.ndarray:
        return jnp.asarray(np.concatenate([x, np.repeat(x[:1], pad, axis=0)]) if pad else x)

    known = mu is not None
    sums = _round_kernel(
        jax.random.key(seed),
        padded(np.asarray(pair_ids)),
        round_index,
        padded(n),
        padded(K),
        padded(m),
        padded(mu) if known else padded(np.zeros((P, 3, 3))),
        draws=draws,
        known_mu=known,
    )
    return WeightSums(*(np.asarray(s, dtype=np.float64)[:P] for s in sums))


@partial(jax.jit, static_argnames=("draws", "known_mu"))
def _round_kernel(key, pair_ids, round_index, n, K, m, mu, *, draws: int, known_mu: bool):
    def one_pair(pair_id, n_i, K_i, m_i, mu_i):
        pair_key = jax.random.fold_in(jax.random.fold_in(key, pair_id), round_index)
        chunks = max(1, draws // _CHUNK)

        def body(carry, chunk):
            out = _chunk_sums(jax.random.fold_in(pair_key, chunk), n_i, K_i, m_i, mu_i, min(draws, _CHUNK), known_mu)
            return tuple(a + b for a, b in zip(carry, out, strict=True)), None

        dtype = jnp.result_type(float)
        zero = jnp.zeros((), dtype)
        init = (zero, zero, zero, zero, jnp.zeros(3, dtype))
        sums, _ = jax.lax.scan(body, init, jnp.arange(chunks))
        return sums

    return jax.vmap(one_pair)(pair_ids, n, K, m, mu)


def _chunk_sums(key, n, K, m, mu_known, draws: int, known_mu: bool):
    """Weight sums of ``draws`` importance draws of one pair (module docstring)."""
    key_q, key_mu = jax.random.split(key)
    dtype = jnp.result_type(float)
    q = jax.random.dirichlet(key_q, m.astype(dtype) + 1.0, shape=(draws,))  # (D, 3) over c
    if known_mu:
        mu = jnp.broadcast_to(mu_known.astype(dtype), (draws, 3, 3))
    else:
        # column h of mu ~ Dirichlet(K[:, h] + 1): draw rows of mu^T, then transpose
        mu = jnp.swapaxes(jax.random.dirichlet(key_mu, K.T.astype(dtype) + 1.0, shape=(draws, 3)), -1, -2)
    a, b, c = mu[..., 0], mu[..., 1], mu[..., 2]  # columns (D, 3)
    bc, ca, ab = jnp.cross(b, c), jnp.cross(c, a), jnp.cross(a, b)
    det = jnp.sum(a * bc, axis=-1)
    numer = jnp.stack([jnp.sum(bc * q, -1), jnp.sum(ca * q, -1), jnp.sum(ab * q, -1)], axis=-1)
    p = numer / det[:, None]  # = mu^{-1} q by Cramer's rule
    inside = jnp.all(p > 0.0, axis=-1)
    n = n.astype(dtype)
    total = n.sum()
    # shift by the maximum of sum_h n_h log p_h (at p = n / total) so that exp never overflows
    shift = jnp.sum(jnp.where(n > 0, n * jnp.log(jnp.where(n > 0, n, 1.0) / jnp.maximum(total, 1.0)), 0.0))
    log_prior = jnp.sum(jnp.where(n > 0, n * jnp.log(jnp.where(inside[:, None], p, 1.0)), 0.0), axis=-1) - shift
    log_w = log_prior - jnp.log(jnp.where(inside, jnp.abs(det), 1.0))
    w = jnp.where(inside, jnp.exp(log_w), 0.0)
    above = (p[:, BETTER] > p[:, WORSE]).astype(dtype)
    w2 = w * w
    p_safe = jnp.where(inside[:, None], p, 0.0)
    return jnp.sum(w), jnp.sum(w2), jnp.sum(w * above), jnp.sum(w2 * above), jnp.sum(w[:, None] * p_safe, axis=0)
