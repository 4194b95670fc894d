"""Unweighted posterior draws of one pair's rates ``p = (p>, p=, p<)`` (method.md §4), for plots.

:func:`posterior_draws` samples the same posterior that :func:`~prefeval_core.decision.decide_pairs`
decides with, by the same route (:func:`~prefeval_core.decision.decide.fast_route`):

* ``closed_form``: ``p ~ Dirichlet(n + 1)`` directly;
* ``enumeration``: the exact mixture ``sum_S P(S | data) Dirichlet(n + 1 + S)``
  (:func:`~prefeval_core.decision.exact.latent_mixture`): a latent vector ``S`` of true outcomes
  by its exact weight, then ``p | S`` from its Dirichlet;
* ``importance``: the engine's weighted draws (:func:`~prefeval_core.decision.fast.importance_posterior`
  with ``pair_id = 0``, so exactly the draws behind ``decide_pairs`` of this one pair with the same
  seed), turned into unweighted ones by systematic resampling. **Resampled draws repeat**: a draw
  with a large weight appears several times, and there are at most about ESS distinct values;
* ``nuts_fallback`` (importance ESS below ``is_min_ess``) and ``sampler="nuts"``: the kept NUTS
  draws of all chains, ``draws`` of them picked by the same systematic resampling with equal
  weights (evenly spaced; they repeat when fewer were kept than asked for).

Everything random is seeded: the engine's own streams, and ``default_rng([seed, DRAWS_STREAM])``
for the extra steps here. Same arguments, same draws, bit for bit.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from prefeval_core.decision.decide import Model, Sampler, check_counts, check_mu, fast_route
from prefeval_core.decision.exact import latent_mixture
from prefeval_core.decision.fast import _dirichlet, importance_posterior
from prefeval_core.decision.settings import SamplerSettings

FloatArray = npt.NDArray[np.float64]
DRAWS_STREAM = 0x5D2A
"""Second word of the seed of the steps here (the engine's importance rounds use ``[seed, pair, round]``)."""


def posterior_draws(
    n: npt.ArrayLike,
    K: npt.ArrayLike | None = None,
    m: npt.ArrayLike | None = None,
    *,
    model: Model = "full",
    mu: npt.ArrayLike | None = None,
    sampler: Sampler = "fast",
    gamma: float = 0.05,
    draws: int = 4000,
    seed: int = 0,
    settings: SamplerSettings | None = None,
) -> FloatArray:
    """``draws`` unweighted draws of ``p`` of ONE pair from the decision engine's posterior.

    Args:
        n: (3,) human outcome counts; K: (3, 3) confusion counts (rows = metric, columns =
            human); m: (3,) metric-only outcome counts (``None``: zeros).
        model, mu, sampler, seed, settings: as in :func:`~prefeval_core.decision.decide_pairs`.
        gamma: the decision's level (the importance sampler stops early on certain decisions,
            so the draws depend on it, as the decision does).
        draws: number of rows returned.

    Returns:
        (draws, 3) float64, rows on the simplex, in random order. The mean of the rows
        estimates ``decide_pairs(...).p_mean`` and the fraction with ``p> > p<`` its ``theta``.

    Raises:
        ValueError: on shapes, counts, ``mu``, options or ``draws < 1``.
    """
    settings = settings or SamplerSettings()
    if model not in ("human_only", "known_mu", "full"):
        raise ValueError(f"unknown model {model!r}")
    if sampler not in ("fast", "nuts"):
        raise ValueError(f"unknown sampler {sampler!r}")
    if draws < 1:
        raise ValueError(f"draws must be at least 1, got {draws}")
    n_arr, K_arr, m_arr = (
        a[0]
        for a in check_counts(np.asarray(n)[None], None if K is None else np.asarray(K)[None], None if m is None else np.asarray(m)[None])
    )
    mu_arr = check_mu(mu, 1)[0] if model == "known_mu" else None
    if model == "human_only":
        K_arr, m_arr = np.zeros_like(K_arr), np.zeros_like(m_arr)
    rng = np.random.default_rng([seed, DRAWS_STREAM])
    if sampler == "nuts":
        return _nuts_draws(rng, n_arr, K_arr, m_arr, mu_arr, seed, settings, draws, fallback=False)
    route = fast_route(float(m_arr.sum()), settings)
    if route == "closed_form":
        return _dirichlet(rng, np.broadcast_to(n_arr + 1.0, (draws, 3)))
    if route == "enumeration":
        mixture = latent_mixture(n_arr, K_arr, m_arr, mu_arr)
        latent = rng.choice(len(mixture.weight), size=draws, p=mixture.weight)
        return _dirichlet(rng, mixture.alpha[latent])
    estimate = importance_posterior(n_arr, K_arr, m_arr, mu_arr, seed=seed, pair_id=0, gamma=gamma, settings=settings, keep_draws=True)
    if estimate.ess >= settings.is_min_ess and estimate.p_draws is not None and estimate.weights is not None:
        return systematic_resample(rng, estimate.p_draws, estimate.weights, draws)
    return _nuts_draws(rng, n_arr, K_arr, m_arr, mu_arr, seed, settings, draws, fallback=True)


def systematic_resample(rng: np.random.Generator, values: FloatArray, weights: FloatArray, size: int) -> FloatArray:
    """``size`` rows of ``values`` (N, ...) drawn with probabilities ``weights / sum(weights)`` by
    systematic resampling (one uniform offset, evenly spaced positions: lower variance than
    multinomial), returned in random order. Rows of weight 0 are never chosen; rows repeat."""
    cumulative = np.cumsum(np.asarray(weights, dtype=np.float64))
    if not cumulative[-1] > 0:
        raise ValueError("the weights must have a positive sum")
    positions = (rng.random() + np.arange(size)) / size * cumulative[-1]
    chosen = np.minimum(np.searchsorted(cumulative, positions, side="right"), len(cumulative) - 1)
    return values[rng.permutation(chosen)]


def _nuts_draws(
    rng: np.random.Generator,
    n: FloatArray,
    K: FloatArray,
    m: FloatArray,
    mu: FloatArray | None,
    seed: int,
    settings: SamplerSettings,
    draws: int,
    *,
    fallback: bool,
) -> FloatArray:
    """The kept NUTS draws of the pair (reference or fallback sizes), ``draws`` of them evenly spaced."""
    from prefeval_core.decision.reference import nuts_draws  # imports JAX: only when NUTS runs

    sizes = {"warmup": settings.fallback_warmup, "draws": settings.fallback_draws, "chains": settings.fallback_chains} if fallback else {}
    kept = nuts_draws(n[None], K[None], m[None], None if mu is None else mu[None], seed=seed, settings=settings, **sizes)
    p = kept.p[:, :, 0, :].reshape(-1, 3)
    return systematic_resample(rng, p, np.ones(len(p)), draws)
