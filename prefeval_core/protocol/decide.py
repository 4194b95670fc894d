"""The decision step of a protocol round: count triples in, ``theta`` and decisions out.

``human_only`` is computed exactly (``theta = I_{1/2}(n< + 1, n> + 1)``, posterior mean
``(n + 1) / (sum + 3)``), without sampling; the metric models call the decision engine
(:func:`prefeval_core.decision.decide_pairs`, method.md §4), imported only when needed so the
human-only protocol runs without JAX.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from prefeval_core.comparison import decision_from_theta, dirichlet_mean, human_only_theta
from prefeval_core.counts import CountTriples
from prefeval_core.protocol.settings import ProtocolSettings


@dataclass(frozen=True)
class PairDecisions:
    """Decisions on a set of pairs: ``theta`` (P,) ``P(p> > p<)``, ``decision`` (P,) int8 codes
    (0 ``>``, 1 undecided, 2 ``<``), ``p_mean`` (P, 3) posterior mean of ``(p>, p=, p<)``."""

    theta: npt.NDArray[np.float64]
    decision: npt.NDArray[np.int8]
    p_mean: npt.NDArray[np.float64]


def decide_counts(counts: CountTriples, settings: ProtocolSettings, seed: int, sampler_settings: Any = None) -> PairDecisions:
    """Run the decision function of ``settings.model`` on every pair of ``counts``."""
    if settings.model == "human_only":
        theta = human_only_theta(counts.n)
        return PairDecisions(theta, decision_from_theta(theta, settings.gamma), dirichlet_mean(counts.n))
    from prefeval_core.decision import decide_pairs

    result = decide_pairs(
        counts.n,
        counts.K,
        counts.m,
        model=settings.model,
        mu=None if settings.mu is None else np.asarray(settings.mu, dtype=np.float64),
        sampler=settings.sampler,
        gamma=settings.gamma,
        seed=seed,
        settings=sampler_settings,
    )
    return PairDecisions(
        np.asarray(result.theta, dtype=np.float64),
        np.asarray(result.decision, dtype=np.int8),
        np.asarray(result.p_mean, dtype=np.float64),
    )
