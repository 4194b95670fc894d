"""The decision step of a protocol round: count triples in, ``theta`` and decisions out.

A thin adapter over the decision engine (:func:`prefeval_core.decision.decide_counts`,
method.md §4) that reads the model, ``mu``, sampler and ``gamma`` from the protocol's
settings. ``human_only`` is exact there (``theta = I_{1/2}(n< + 1, n> + 1)``, no sampling).
"""

from __future__ import annotations

import numpy as np

from prefeval_core.counts import CountTriples
from prefeval_core.decision import DecisionResult, SamplerSettings, decide_counts
from prefeval_core.protocol.settings import ProtocolSettings


def decide_with_settings(
    counts: CountTriples, settings: ProtocolSettings, seed: int, sampler_settings: SamplerSettings | None = None
) -> DecisionResult:
    """Run the decision function of ``settings.model`` on every pair of ``counts``; the result's
    ``theta`` (P,), ``decision`` (P,) int8 (0 ``>``, 1 undecided, 2 ``<``) and ``p_mean`` (P, 3)
    are what a round records."""
    return decide_counts(
        counts,
        model=settings.model,
        mu=None if settings.mu is None else np.asarray(settings.mu, dtype=np.float64),
        sampler=settings.sampler,
        gamma=settings.gamma,
        seed=seed,
        settings=sampler_settings,
    )
