"""Where the fast sampler sends a pair: the one place that decides the route from the counts.

One metric (:func:`fast_route`, used by :func:`~prefeval_core.decision.decide_pairs`):

1. ``closed_form``: no metric-only item, or the human-only model: ``p ~ Dirichlet(n + 1)``;
2. ``enumeration``: at most ``settings.enumeration_max_items`` metric-only items: an exact
   sum over their latent true outcomes;
3. ``importance``: more: importance sampling with exact weights (:mod:`~prefeval_core.decision.fast`).

Several metrics (:func:`joint_route`, used by :func:`~prefeval_core.decision.decide_joint`): the
same with the metric-only items that at least one metric rated, where the items of only one
metric (all unrevealed items rated by the same single metric) are exactly the one-metric model
of that metric; otherwise ``joint_importance``.

An importance-sampled pair whose weights stay too uneven (effective sample size below
``settings.is_min_ess``) goes on to ``nuts_fallback`` (one metric) or ``joint_gibbs`` (several;
then ``nuts_fallback`` if its chains fail their diagnostics); :func:`is_exact` says whether a
route's ``theta`` has Monte-Carlo error.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from prefeval_core.decision.options import EXACT_ROUTES, Model, Route
from prefeval_core.decision.settings import SamplerSettings
from prefeval_core.pairs.counts import pattern_codes


def fast_route(metric_only_items: float, settings: SamplerSettings | None = None, *, model: Model = "full") -> Route:
    """The route of a pair with ``metric_only_items`` (``sum(m)``) items without a revealed human
    outcome, under ``model``."""
    settings = settings or SamplerSettings()
    if model == "human_only" or metric_only_items == 0:
        return "closed_form"
    return "enumeration" if metric_only_items <= settings.enumeration_max_items else "importance"


def informing_metrics(unrevealed: npt.NDArray[np.integer], k: int) -> npt.NDArray[np.bool_]:
    """(P, k): which metrics rated at least one unrevealed item of each pair (``unrevealed`` (P, 4**k))."""
    present = pattern_codes(k) < 3  # (J, k)
    return np.asarray(unrevealed, dtype=np.int64) @ present.astype(np.int64) > 0


def joint_route(unrevealed: npt.NDArray[np.integer], k: int, settings: SamplerSettings | None = None, *, model: Model = "full") -> Route:
    """The route of one pair of a several-metric decision, from its unrevealed counts (4**k,) by
    metric pattern (the last pattern, no metric, informs nothing)."""
    counts = np.asarray(unrevealed, dtype=np.int64)[None, :]
    informing = int(informing_metrics(counts, k)[0].sum())
    items = int(counts[0, :-1].sum())
    if model == "human_only" or informing == 0:
        return "closed_form"
    if informing == 1:
        return fast_route(items, settings, model=model)
    return "joint_importance"


def is_exact(route: Route) -> bool:
    """Whether a route's ``theta`` is exact (no Monte-Carlo error)."""
    return route in EXACT_ROUTES
