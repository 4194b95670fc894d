"""Sampler settings: one frozen config object for every sampler of the decision engine.

Tests and the dashboard shrink it (``SamplerSettings.small()``); the defaults are the
paper's settings for NUTS (Deriu et al. Sec. 3: 5 chains, 2000 warm-up and 10000 kept draws
per chain) and the fast path's production sizes.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

ChainMethod = Literal["auto", "parallel", "sequential", "vectorized"]
MuRows = tuple[tuple[float, float, float], tuple[float, float, float], tuple[float, float, float]]
"""A known 3 x 3 mixture matrix as nested tuples (rows = metric outcome, columns = human outcome), as settings store it."""


@dataclass(frozen=True)
class SamplerSettings:
    """Sizes and thresholds of the samplers (method.md §4).

    Attributes:
        nuts_chains, nuts_warmup, nuts_draws: the reference sampler (NumPyro NUTS): chains,
            warm-up iterations and kept draws per chain. Paper: 5, 2000, 10000.
        nuts_chain_method: NumPyro's ``chain_method``; ``"auto"`` runs chains in parallel when
            there is one host device per chain (see :func:`prefeval_core.runtime.configure_jax`)
            and one after the other otherwise (each chain gets the same PRNG key either way).
        nuts_target_accept: NUTS's target acceptance probability during warm-up.
        enumeration_max_items: the fast path computes ``theta`` exactly by enumerating the
            true outcomes of the metric-only items when there are at most this many of them
            (cost grows like the 4th power of this number).
        is_draws: importance draws per pair and round of the fast path.
        is_max_rounds: at most this many rounds of ``is_draws`` per pair; a pair stops early
            once its decision is certain (``theta`` more than ``is_decision_z`` standard errors
            away from both thresholds) and its standard error is at most ``is_target_se``.
        is_target_se: Monte-Carlo standard error of ``theta`` the fast path aims for.
        is_decision_z: see ``is_max_rounds``.
        is_min_ess: a pair whose importance weights give fewer effective draws than this
            (after all rounds) is decided by the fallback NUTS instead.
        fallback_chains, fallback_warmup, fallback_draws: NUTS sizes for that fallback.
    """

    nuts_chains: int = 5
    nuts_warmup: int = 2000
    nuts_draws: int = 10000
    nuts_chain_method: ChainMethod = "auto"
    nuts_target_accept: float = 0.8
    enumeration_max_items: int = 160
    is_draws: int = 2**13
    is_max_rounds: int = 32
    is_target_se: float = 0.002
    is_decision_z: float = 5.0
    is_min_ess: float = 1000.0
    fallback_chains: int = 4
    fallback_warmup: int = 1000
    fallback_draws: int = 5000

    def __post_init__(self) -> None:
        for name in ("nuts_chains", "nuts_warmup", "nuts_draws", "is_draws", "is_max_rounds", "fallback_chains", "fallback_draws"):
            if getattr(self, name) < 1:
                raise ValueError(f"SamplerSettings.{name} must be at least 1")

    @classmethod
    def paper(cls) -> SamplerSettings:
        """The paper's settings (the defaults)."""
        return cls()

    @classmethod
    def small(cls) -> SamplerSettings:
        """Small sizes for tests and previews: seconds, not minutes; larger Monte-Carlo error."""
        return cls(
            nuts_chains=2,
            nuts_warmup=300,
            nuts_draws=1000,
            is_draws=2**12,
            is_max_rounds=6,
            is_target_se=0.01,
            is_min_ess=150.0,
            fallback_chains=2,
            fallback_warmup=300,
            fallback_draws=1000,
        )

    def with_(self, **changes: Any) -> SamplerSettings:
        return replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        """JSON-serialisable view."""
        return asdict(self)
