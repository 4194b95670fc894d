"""The Bayesian model of a metric's errors (method.md §4; Deriu et al. Sec. 3, Alg. 1) as a NumPyro model.

For each pair (a leading plate of size P; independent across pairs):

* ``p = (p>, p=, p<) ~ Dirichlet(n + 1)``: the true (human) outcome rates, given the
  revealed human outcomes ``n``;
* ``mu[:, h] ~ Dirichlet(K[:, h] + 1)`` for each human outcome ``h``: column ``h`` of the
  mixture matrix, ``mu[c, h] = P(metric says c | human says h)`` (rows = metric, columns =
  human; each column sums to 1), given the confusion counts ``K`` on the revealed items;
* ``m ~ Multinomial(sum(m), mu @ p)``: the metric's outcomes on the items without a revealed
  human outcome.

With ``mu`` given ("known mu", step two of the paper) the ``mu`` site disappears. The human
only variant is the same model with ``m = 0`` (then ``p``'s posterior is exactly
``Dirichlet(n + 1)``); the decision engine never needs a sampler for it.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist
from jax.typing import ArrayLike


def preference_model(n: ArrayLike, K: ArrayLike, m: ArrayLike, mu: ArrayLike | None = None) -> None:
    """NumPyro model of P pairs' counts.

    Args:
        n: human outcome counts, shape (P, 3), order ``>, =, <``.
        K: confusion counts, shape (P, 3, 3), ``K[:, c, h]`` = metric said ``c``, human ``h``.
        m: metric-only outcome counts, shape (P, 3).
        mu: the known mixture matrix, shape (3, 3) or (P, 3, 3) (columns sum to 1), or
            ``None`` for the full model (``mu`` uncertain).

    Sites: ``p`` (P, 3); ``mu_columns`` (P, 3, 3) with ``mu_columns[:, h, :] = mu[:, :, h]``
    (full model only); observed ``m``.
    """
    n = jnp.asarray(n)
    K = jnp.asarray(K)
    m = jnp.asarray(m)
    with numpyro.plate("pairs", n.shape[0]):
        p = numpyro.sample("p", dist.Dirichlet(n + 1.0))
        if mu is None:
            # one Dirichlet per human outcome h over the metric outcome c: rows of K^T
            columns = numpyro.sample("mu_columns", dist.Dirichlet(jnp.swapaxes(K, -1, -2) + 1.0).to_event(1))
            mixture = jnp.swapaxes(columns, -1, -2)
        else:
            mixture = jnp.broadcast_to(jnp.asarray(mu, dtype=p.dtype), (n.shape[0], 3, 3))
        rates = jnp.einsum("pch,ph->pc", mixture, p)
        numpyro.sample("m", dist.Multinomial(total_count=m.sum(-1), probs=rates), obs=m)
