"""The reference sampler: NumPyro NUTS on :func:`~prefeval_core.decision.model.preference_model`
(one metric) and :func:`~prefeval_core.decision.model.joint_preference_model` (several).

With the paper's settings (``SamplerSettings()``: 5 chains, 2000 warm-up + 10000 draws per
chain) this is the ground truth the fast path is tested against. Compiled samplers are cached
per (settings, number of pairs, model variant) and run with ``jit_model_args=True``, so a
second call with new counts of the same shape does not recompile.

Diagnostics use NumPyro's own functions: the effective sample size of the indicator
``1[p> > p<]`` (``numpyro.diagnostics.effective_sample_size``), whose mean is ``theta``, gives
the Monte-Carlo standard error ``sqrt(theta (1 - theta) / ESS)``; split R-hat
(``numpyro.diagnostics.split_gelman_rubin``) is computed on ``p> - p<``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import lru_cache

import jax
import numpy as np
import numpy.typing as npt
from numpyro.diagnostics import effective_sample_size, split_gelman_rubin
from numpyro.infer import MCMC, NUTS

from prefeval_core.decision.model import joint_preference_model, preference_model
from prefeval_core.decision.settings import SamplerSettings
from prefeval_core.vocabulary.outcomes import BETTER, WORSE

FloatArray = npt.NDArray[np.float64]
_LOCK = threading.Lock()  # a cached MCMC object holds its last run: one run at a time


@dataclass(frozen=True)
class NutsSummary:
    """Posterior summaries of P pairs from NUTS draws (all arrays have leading dimension P).

    Attributes:
        theta: fraction of draws with ``p> > p<``.
        p_mean: (P, 3) mean of ``p``.
        theta_mc_se: ``sqrt(theta (1 - theta) / ess)``; 0 where every draw agrees.
        ess: effective sample size of ``1[p> > p<]`` over all chains; NaN where every draw
            agrees (the indicator is constant) or the estimate is not positive (too few draws).
        rhat: split R-hat of ``p> - p<``; NaN with one chain.
        divergences: number of divergent transitions after warm-up (of the joint sampler when
            several pairs ran together).
        chain_method: how the chains ran.
    """

    theta: FloatArray
    p_mean: FloatArray
    theta_mc_se: FloatArray
    ess: FloatArray
    rhat: FloatArray
    divergences: npt.NDArray[np.int64]
    chain_method: str


def nuts_posterior(
    n: npt.ArrayLike,
    K: npt.ArrayLike,
    m: npt.ArrayLike,
    mu: npt.ArrayLike | None = None,
    *,
    seed: int = 0,
    settings: SamplerSettings | None = None,
    warmup: int | None = None,
    draws: int | None = None,
    chains: int | None = None,
) -> NutsSummary:
    """Run NUTS on P pairs at once (independent posteriors in one model) and summarise.

    The reference runs one pair per call (P = 1), as the paper did; the fast path's fallback
    runs several. ``warmup``, ``draws`` and ``chains`` override the settings' ``nuts_*``.

    Args:
        n: (P, 3); K: (P, 3, 3); m: (P, 3) integer counts; mu: known (3, 3) / (P, 3, 3) or None.
        seed: NumPyro's PRNG seed.
    """
    draws_ = nuts_draws(n, K, m, mu, seed=seed, settings=settings, warmup=warmup, draws=draws, chains=chains)
    return summarise_draws(draws_.p, draws_.divergences, draws_.chain_method)


@dataclass(frozen=True)
class NutsDraws:
    """The kept NUTS draws of P pairs.

    Attributes:
        p: (chains, draws, P, 3) draws of ``(p>, p=, p<)``.
        divergences: (P,) divergent transitions after warm-up (of the joint sampler, shared).
        chain_method: how the chains ran.
    """

    p: FloatArray
    divergences: npt.NDArray[np.int64]
    chain_method: str


def nuts_draws(
    n: npt.ArrayLike,
    K: npt.ArrayLike,
    m: npt.ArrayLike,
    mu: npt.ArrayLike | None = None,
    *,
    seed: int = 0,
    settings: SamplerSettings | None = None,
    warmup: int | None = None,
    draws: int | None = None,
    chains: int | None = None,
) -> NutsDraws:
    """Run NUTS on P pairs at once and keep the draws (arguments of :func:`nuts_posterior`)."""
    n_arr = np.asarray(n, dtype=np.float64)
    mu_arr = None if mu is None else np.broadcast_to(np.asarray(mu, dtype=np.float64), (n_arr.shape[0], 3, 3))
    args = (n_arr, np.asarray(K, dtype=np.float64), np.asarray(m, dtype=np.float64), mu_arr)
    return _run("triple" if mu is None else "triple_known_mu", args, seed, settings, warmup, draws, chains)


def joint_nuts_draws(
    n: npt.ArrayLike,
    K: npt.ArrayLike,
    patterns: npt.ArrayLike,
    u: npt.ArrayLike,
    *,
    seed: int = 0,
    settings: SamplerSettings | None = None,
    warmup: int | None = None,
    draws: int | None = None,
    chains: int | None = None,
) -> NutsDraws:
    """NUTS on :func:`~prefeval_core.decision.model.joint_preference_model` (several metrics) for P
    pairs at once: n (P, 3), K (P, k, 3, 3), patterns (J, k), u (P, J); other arguments as
    :func:`nuts_posterior`."""
    args = (
        np.asarray(n, dtype=np.float64),
        np.asarray(K, dtype=np.float64),
        np.asarray(patterns, dtype=np.int64),
        np.asarray(u, dtype=np.float64),
    )
    return _run("joint", args, seed, settings, warmup, draws, chains)


def _run(
    variant: str,
    args: tuple[object, ...],
    seed: int,
    settings: SamplerSettings | None,
    warmup: int | None,
    draws: int | None,
    chains: int | None,
) -> NutsDraws:
    settings = settings or SamplerSettings()
    chains = chains or settings.nuts_chains
    method = _chain_method(settings.nuts_chain_method, chains)
    mcmc = _cached_mcmc(warmup or settings.nuts_warmup, draws or settings.nuts_draws, chains, method, settings.nuts_target_accept, variant)
    with _LOCK:
        mcmc.run(jax.random.PRNGKey(seed), *args, extra_fields=("diverging",))
        p = np.asarray(mcmc.get_samples(group_by_chain=True)["p"], dtype=np.float64)  # (chains, draws, P, 3)
        diverging = np.asarray(mcmc.get_extra_fields(group_by_chain=True)["diverging"])
    # divergences are per transition of the joint (all pairs') sampler: shared by its pairs
    return NutsDraws(p=p, divergences=np.full(p.shape[2], int(diverging.sum()), dtype=np.int64), chain_method=method)


def summarise_draws(p: FloatArray, divergences: npt.ArrayLike, chain_method: str) -> NutsSummary:
    """Summaries of draws ``p`` of shape (chains, draws, P, 3) (see :class:`NutsSummary`)."""
    chains = p.shape[0]
    above = (p[..., BETTER] > p[..., WORSE]).astype(np.float64)  # (chains, draws, P)
    theta = above.mean(axis=(0, 1))
    constant = above.min(axis=(0, 1)) == above.max(axis=(0, 1))
    with np.errstate(divide="ignore", invalid="ignore"):  # a constant indicator has no autocorrelation
        ess = np.asarray(effective_sample_size(above), dtype=np.float64)
        rhat = (
            np.asarray(split_gelman_rubin(p[..., BETTER] - p[..., WORSE]), dtype=np.float64) if chains > 1 else np.full(theta.shape, np.nan)
        )
    ess = np.where(constant | ~(ess > 0), np.nan, ess)  # too few draws can give a non-positive estimate
    variance = np.divide(theta * (1.0 - theta), ess, out=np.full_like(theta, np.nan), where=ess > 0)
    se = np.where(constant, 0.0, np.sqrt(variance))
    return NutsSummary(
        theta=theta,
        p_mean=p.mean(axis=(0, 1)),
        theta_mc_se=se,
        ess=ess,
        rhat=rhat,
        divergences=np.asarray(divergences, dtype=np.int64).reshape(theta.shape),
        chain_method=chain_method,
    )


def _chain_method(requested: str, chains: int) -> str:
    if requested != "auto":
        return requested
    return "parallel" if chains > 1 and jax.local_device_count() >= chains else "sequential"


@lru_cache(maxsize=16)
def _cached_mcmc(warmup: int, draws: int, chains: int, chain_method: str, target_accept: float, variant: str) -> MCMC:
    """One compiled sampler per configuration; ``variant`` is the model: ``triple`` (one metric,
    ``mu`` uncertain), ``triple_known_mu`` (its sites differ) or ``joint`` (several metrics)."""
    kernel = NUTS(joint_preference_model if variant == "joint" else preference_model, target_accept_prob=target_accept)
    return MCMC(
        kernel,
        num_warmup=warmup,
        num_samples=draws,
        num_chains=chains,
        chain_method=chain_method,
        progress_bar=False,
        jit_model_args=True,
    )
