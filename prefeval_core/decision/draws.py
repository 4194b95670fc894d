"""Unweighted posterior draws of one pair's rates ``p = (p>, p=, p<)`` (method.md §4), for plots.

:func:`posterior_draws` samples the same posterior that :func:`~prefeval_core.decision.decide_pairs`
decides with, by the same route (:func:`~prefeval_core.decision.routes.fast_route`):

* ``closed_form``: ``p ~ Dirichlet(n + 1)`` directly;
* ``enumeration``: the exact mixture ``sum_S P(S | data) Dirichlet(n + 1 + S)``
  (:func:`~prefeval_core.decision.exact.latent_mixture`): a latent vector ``S`` of true outcomes
  by its exact weight, then ``p | S`` from its Dirichlet;
* ``importance``: the engine's weighted draws (:func:`~prefeval_core.decision.fast.importance_posterior`
  with pair id 0, so exactly the draws behind ``decide_pairs`` of this one pair with the same
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

from prefeval_core.decision.decide import check_counts, check_mu
from prefeval_core.decision.exact import latent_mixture, single_threaded_blas
from prefeval_core.decision.fast import importance_posterior
from prefeval_core.decision.joint_data import joint_inputs
from prefeval_core.decision.joint_fast import joint_gibbs
from prefeval_core.decision.joint_importance import joint_importance
from prefeval_core.decision.options import DecisionSettings, Model, Sampler
from prefeval_core.decision.routes import fast_route, informing_metrics
from prefeval_core.decision.settings import SamplerSettings
from prefeval_core.errors import settings_error
from prefeval_core.pairs.counts import JointCounts
from prefeval_core.vocabulary.levels import DEFAULT_GAMMA

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
    gamma: float = DEFAULT_GAMMA,
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
        SettingsError: on shapes, counts, ``mu``, options or ``draws < 1``.
    """
    settings = DecisionSettings(model, sampler, gamma, seed, settings or SamplerSettings()).sampler_settings
    if draws < 1:
        raise settings_error(f"draws must be at least 1, got {draws}", field="draws")
    n_arr, K_arr, m_arr = (
        a[0]
        for a in check_counts(np.asarray(n)[None], None if K is None else np.asarray(K)[None], None if m is None else np.asarray(m)[None])
    )
    mu_arr = check_mu(mu, m_arr[None])[0] if model == "known_mu" else None
    if model == "human_only":
        K_arr, m_arr = np.zeros_like(K_arr), np.zeros_like(m_arr)
    rng = np.random.default_rng([seed, DRAWS_STREAM])
    if sampler == "nuts":
        return _nuts_draws(rng, n_arr, K_arr, m_arr, mu_arr, seed, settings, draws, fallback=False)
    route = fast_route(float(m_arr.sum()), settings)
    if route == "closed_form":
        return dirichlet_draws(rng, np.broadcast_to(n_arr + 1.0, (draws, 3)))
    if route == "enumeration":
        with single_threaded_blas():
            mixture = latent_mixture(n_arr, K_arr, m_arr, mu_arr)
        latent = rng.choice(len(mixture.weight), size=draws, p=mixture.weight)
        return dirichlet_draws(rng, mixture.alpha[latent])
    estimate = importance_posterior(
        n_arr[None],
        K_arr[None],
        m_arr[None],
        None if mu_arr is None else mu_arr[None],
        np.zeros(1, dtype=np.int64),
        seed=seed,
        gamma=gamma,
        settings=settings,
        keep_draws=True,
    )
    if estimate.ess[0] >= settings.is_min_ess and estimate.kept is not None:
        p_draws, weights = estimate.kept[0]
        return systematic_resample(rng, p_draws, weights, draws)
    return _nuts_draws(rng, n_arr, K_arr, m_arr, mu_arr, seed, settings, draws, fallback=True)


def dirichlet_draws(rng: np.random.Generator, alpha: FloatArray) -> FloatArray:
    """Dirichlet draws over the last axis, one per leading index of ``alpha``."""
    gammas = rng.standard_gamma(alpha)
    return np.asarray(gammas / gammas.sum(axis=-1, keepdims=True), dtype=np.float64)


def systematic_resample(rng: np.random.Generator, values: FloatArray, weights: FloatArray, size: int) -> FloatArray:
    """``size`` rows of ``values`` (N, ...) drawn with probabilities ``weights / sum(weights)`` by
    systematic resampling (one uniform offset, evenly spaced positions: lower variance than
    multinomial), returned in random order. Rows of weight 0 are never chosen; rows repeat."""
    cumulative = np.cumsum(np.asarray(weights, dtype=np.float64))
    if not cumulative.size or not cumulative[-1] > 0:
        raise settings_error("the weights must have a positive sum", field="weights")
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


def joint_posterior_draws(
    counts: JointCounts,
    pair: int = 0,
    *,
    model: Model = "full",
    sampler: Sampler = "fast",
    gamma: float = DEFAULT_GAMMA,
    draws: int = 4000,
    seed: int = 0,
    settings: SamplerSettings | None = None,
) -> FloatArray:
    """``draws`` unweighted draws of ``p`` of pair ``pair`` of ``counts`` from the several-metric
    posterior (:func:`~prefeval_core.decision.decide_joint`), by the same route:

    * ``closed_form``: ``p ~ Dirichlet(n + 1)``;
    * one informing metric: :func:`posterior_draws` of that metric's count triple;
    * ``joint_importance``: the route's weighted draws, resampled systematically;
    * ``joint_gibbs``: for each draw, a kept Gibbs iteration (of any chain, evenly spaced by
      systematic resampling) and ``p`` from its exact conditional ``Dirichlet(n + 1 + S)``;
    * chains that fail their diagnostics, and ``sampler="nuts"``: NUTS draws (fallback or
      reference sizes), evenly spaced.

    Returns (draws, 3) float64 in random order. Raises SettingsError as :func:`~prefeval_core.decision.decide_joint`.
    """
    from prefeval_core.decision.joint import decide_joint  # the decision validates every argument

    if not 0 <= pair < counts.n_pairs:
        raise settings_error(f"pair {pair} out of range for {counts.n_pairs} pairs", field="pair")
    if draws < 1:
        raise settings_error(f"draws must be at least 1, got {draws}", field="draws")
    one = counts.subset(np.array([pair]))
    decided = decide_joint(one, model=model, sampler=sampler, gamma=gamma, seed=seed, settings=settings)
    settings = decided.settings.sampler_settings
    rng = np.random.default_rng([seed, DRAWS_STREAM])
    route = decided.method[0]
    if counts.k == 1 or route in ("enumeration", "importance"):
        j = 0 if counts.k == 1 else int(np.flatnonzero(informing_metrics(one.unrevealed, counts.k)[0])[0])
        triple = one.triples(j)
        return posterior_draws(
            triple.n[0], triple.K[0], triple.m[0], model=model, sampler=sampler, gamma=gamma, draws=draws, seed=seed, settings=settings
        )
    if route == "closed_form":
        return dirichlet_draws(rng, np.broadcast_to(one.n[0] + 1.0, (draws, 3)))
    inputs = joint_inputs(one)
    if route == "joint_importance":
        weighted = joint_importance(inputs, np.zeros(1, dtype=np.int64), seed=seed, gamma=gamma, settings=settings, keep_draws=True).kept
        assert weighted is not None  # asked for
        return systematic_resample(rng, weighted[0][0], weighted[0][1], draws)
    if route == "joint_gibbs":
        kept = joint_gibbs(inputs, seed=seed, gamma=gamma, settings=settings, keep_draws=True).kept
        assert kept is not None  # asked for
        chosen = systematic_resample(rng, kept[0], np.ones(len(kept[0])), draws)
        return dirichlet_draws(rng, chosen)
    from prefeval_core.decision.reference import joint_nuts_draws

    sizes = (
        {"warmup": settings.fallback_warmup, "draws": settings.fallback_draws, "chains": settings.fallback_chains}
        if route == "nuts_fallback"
        else {}
    )
    nuts = joint_nuts_draws(inputs.n, inputs.K, inputs.patterns, inputs.u, seed=seed, settings=settings, **sizes)
    p = nuts.p[:, :, 0, :].reshape(-1, 3)
    return systematic_resample(rng, p, np.ones(len(p)), draws)
