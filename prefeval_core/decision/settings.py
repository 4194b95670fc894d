"""Sampler settings: one frozen config object for every sampler of the decision engine.

Tests and the dashboard shrink it (``SamplerSettings.small()``); the defaults are the
paper's settings for NUTS (Deriu et al. Sec. 3: 5 chains, 2000 warm-up and 10000 kept draws
per chain) and the fast path's production sizes.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

from prefeval_core.errors import settings_error

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
            (cost grows like the 4th power of this number; above it importance sampling is
            cheaper).
        is_draws: importance draws per pair in the first round; each later round doubles them,
            up to ``is_round_draws_max``.
        is_round_draws_max: see ``is_draws``.
        is_max_rounds: at most this many rounds per pair; a pair stops early once it has
            ``is_min_ess`` effective draws and either its decision is certain (``theta`` more
            than ``is_decision_z`` standard errors away from both thresholds) or its standard
            error is at most ``is_target_se``.
        is_target_se: Monte-Carlo standard error of ``theta`` the fast path aims for.
        is_decision_z: see ``is_max_rounds``.
        is_min_ess: a pair whose importance weights give fewer effective draws than this
            (after all rounds) is decided by the fallback NUTS instead.
        is_adapt_below: when a round's effective sample size per draw is below this, the
            sampler fits a Student-t proposal to the weighted draws so far and starts its
            sums afresh (at most ``is_adapt_rounds`` times per pair).
        is_adapt_rounds: see ``is_adapt_below``.
        is_chunk_draws: at most this many draws (pairs x ``is_draws``) are held in memory
            at once: memory stays bounded whatever the number of pairs.
        gibbs_chains, gibbs_warmup, gibbs_block, gibbs_max_iterations: the several-metric route
            (data augmentation, :mod:`~prefeval_core.decision.joint_fast`): chains, warm-up
            iterations, iterations between checks of the stop rule (the one-metric rule:
            ``is_min_ess``, ``is_target_se``, ``is_decision_z``) and the most iterations per chain.
            8 chains, not 4: the stop rule is checked after every block, and with 4 chains a pair
            of few revealed items could pass its split R-hat early, inside one hump (golden
            setting ``k3_strong_ok_20_500`` alone, 6 seeds: z against NUTS up to 5.8 with 4
            chains, at most 0.9 with 8); with the few pairs that reach the route, a sweep of 8
            chains costs about what one of 4 does.
        gibbs_max_rhat: a pair of that route stops only with a split R-hat at most this.
        gibbs_shift_steps: random-walk Metropolis steps per sweep of that route on ``p`` alone, ``mu``
            held, on the collapsed posterior (the latent outcomes integrated out; step covariance
            adapted during the warm-up only): data augmentation moves ``p`` slowly when the
            unrevealed items far outnumber the revealed ones, these steps do not. A step costs a
            few array operations on the cells, so 8 (each accepted about a third of the time) give
            ``p`` a few moves per sweep for roughly the cost of the sweep itself. 0 turns them off.
        gibbs_ridge_steps: with two metrics, Metropolis-Hastings steps per sweep of that route along
            the ridge of ``(p, mu)`` that the unrevealed items leave unidentified (the first metric's
            joint law with the truth times a matrix with unit row sums; module ``joint_fast``; scale
            adapted during the warm-up only): accepted on the revealed items alone, they cost a few
            operations on 3 x 3 matrices. 0 turns them off.
        fallback_chains, fallback_warmup, fallback_draws: NUTS sizes for that fallback.
    """

    nuts_chains: int = 5
    nuts_warmup: int = 2000
    nuts_draws: int = 10000
    nuts_chain_method: ChainMethod = "auto"
    nuts_target_accept: float = 0.8
    enumeration_max_items: int = 100
    is_draws: int = 2**9
    is_round_draws_max: int = 2**13
    is_max_rounds: int = 16
    is_target_se: float = 0.002
    is_decision_z: float = 5.0
    is_min_ess: float = 200.0
    is_adapt_below: float = 0.2
    is_adapt_rounds: int = 3
    is_chunk_draws: int = 2**15
    gibbs_chains: int = 8
    gibbs_warmup: int = 200
    gibbs_block: int = 250
    gibbs_max_iterations: int = 20000
    gibbs_max_rhat: float = 1.01
    gibbs_shift_steps: int = 8
    gibbs_ridge_steps: int = 4
    fallback_chains: int = 4
    fallback_warmup: int = 1000
    fallback_draws: int = 5000

    def __post_init__(self) -> None:
        for name in (
            "nuts_chains",
            "nuts_warmup",
            "nuts_draws",
            "is_draws",
            "is_round_draws_max",
            "is_max_rounds",
            "is_chunk_draws",
            "gibbs_chains",
            "gibbs_block",
            "gibbs_max_iterations",
            "fallback_chains",
            "fallback_warmup",
            "fallback_draws",
        ):
            if getattr(self, name) < 1:
                raise settings_error(f"SamplerSettings.{name} must be at least 1, got {getattr(self, name)}", field=name)
        for name in ("enumeration_max_items", "is_adapt_rounds", "gibbs_warmup", "gibbs_shift_steps", "gibbs_ridge_steps"):
            if getattr(self, name) < 0:
                raise settings_error(f"SamplerSettings.{name} must not be negative, got {getattr(self, name)}", field=name)
        if not 0.0 < self.nuts_target_accept < 1.0:
            message = f"SamplerSettings.nuts_target_accept must be in (0, 1), got {self.nuts_target_accept}"
            raise settings_error(message, field="nuts_target_accept")

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
            is_draws=2**9,
            is_round_draws_max=2**11,
            is_max_rounds=6,
            is_target_se=0.01,
            is_min_ess=150.0,
            gibbs_warmup=100,
            gibbs_block=100,
            gibbs_max_iterations=2000,
            gibbs_max_rhat=1.05,
            fallback_chains=2,
            fallback_warmup=300,
            fallback_draws=1000,
        )

    def with_(self, **changes: Any) -> SamplerSettings:
        return replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        """JSON-serialisable view."""
        return asdict(self)
