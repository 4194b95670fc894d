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

import jax
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


def joint_preference_model(n: ArrayLike, K: ArrayLike, patterns: ArrayLike, u: ArrayLike) -> None:
    """NumPyro model of P pairs' counts with k metrics at once (Dawid–Skene; docs/model.md).

    * ``p ~ Dirichlet(n + 1)`` as in :func:`preference_model`;
    * for each metric j and human outcome h, ``mu_j[:, h] ~ Dirichlet(K[:, j, :, h] + 1)``: metric
      j's own mixture matrix from its confusion counts on the revealed items;
    * the metrics are conditionally independent given the true outcome: an item without a revealed
      human outcome whose metric pattern is ``c = (c_1..c_k)`` (3: metric j gave no outcome) has
      likelihood ``sum_h p_h prod_{j: c_j < 3} mu_j[c_j, h]``; ``u`` counts such items per pattern.

    Args:
        n: (P, 3) revealed human outcomes.
        K: (P, k, 3, 3) each metric's confusion counts on the revealed items (rows = metric,
            columns = human).
        patterns: (J, k) integer metric codes of the patterns counted in ``u`` (0, 1, 2; 3 missing).
        u: (P, J) items without a revealed human outcome, by pattern.

    Sites: ``p`` (P, 3); ``mu_columns`` (P, k, 3, 3) with ``mu_columns[:, j, h, :] = mu_j[:, h]``;
    the factor ``metric_only`` (the log likelihood of ``u``). With k = 1 the posterior is the one of
    :func:`preference_model` (the multinomial coefficient is a constant).
    """
    n = jnp.asarray(n)
    K = jnp.asarray(K)
    u = jnp.asarray(u)
    codes = jnp.asarray(patterns)
    with numpyro.plate("pairs", n.shape[0]):
        p = numpyro.sample("p", dist.Dirichlet(n + 1.0))
        columns = numpyro.sample("mu_columns", dist.Dirichlet(jnp.swapaxes(K, -1, -2) + 1.0).to_event(2))  # (P, k, h, c)
        log_mu = jnp.log(jnp.swapaxes(columns, -1, -2))  # (P, k, c, h)
        padded = jnp.concatenate([log_mu, jnp.zeros_like(log_mu[:, :, :1, :])], axis=2)  # row 3: no outcome, factor 1
        k = log_mu.shape[1]
        per_metric = padded[:, jnp.arange(k)[None, :], codes, :]  # (P, J, k, h)
        log_rates = jax.nn.logsumexp(jnp.log(p)[:, None, :] + per_metric.sum(axis=2), axis=-1)  # (P, J)
        numpyro.factor("metric_only", (u * log_rates).sum(-1))
