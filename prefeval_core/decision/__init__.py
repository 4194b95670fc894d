"""The Bayesian decision engine (method.md §4; several metrics: docs/model.md): is system A better than system B, given the counts?

Public API: ``decide_pairs(n, K, m, ...) -> DecisionResult`` for P pairs at once,
:func:`decide_counts` over :class:`~prefeval_core.pairs.counts.CountTriples`, the decision function
:func:`decision_from_theta`, the closed form :func:`human_only_theta`, :class:`SamplerSettings`,
:func:`posterior_draws` (unweighted draws of one pair's ``p`` from the same posterior, for plots),
the routing (:func:`fast_route`, :func:`is_exact`) and the options (:data:`Model`,
:data:`Sampler`, :data:`Route`, :class:`DecisionSettings`). Modules: ``options``, ``routes``,
``model`` (the NumPyro models), ``reference`` (NUTS), ``exact`` (closed form and enumeration),
``importance`` (importance sampling in rounds), ``fast`` (its one-metric targets), ``decide``
(the decision over count triples), ``draws`` (posterior draws). Importing this package does not
configure JAX; entry points call :func:`prefeval_core.runtime.configure_jax`.
"""

from prefeval_core.decision.decide import DecisionResult, decide_counts, decide_pairs
from prefeval_core.decision.draws import joint_posterior_draws, posterior_draws
from prefeval_core.decision.exact import decision_from_theta, dirichlet_mean, enumerate_posterior, human_only_theta
from prefeval_core.decision.joint import MetricContributions, decide_joint, metric_contributions
from prefeval_core.decision.options import EXACT_ROUTES, MAX_SEED, MODELS, SAMPLERS, DecisionSettings, Model, Route, Sampler
from prefeval_core.decision.routes import fast_route, is_exact, joint_route
from prefeval_core.decision.settings import MuRows, SamplerSettings

__all__ = [
    "EXACT_ROUTES",
    "MAX_SEED",
    "MODELS",
    "SAMPLERS",
    "DecisionResult",
    "DecisionSettings",
    "MetricContributions",
    "Model",
    "MuRows",
    "Route",
    "Sampler",
    "SamplerSettings",
    "decide_counts",
    "decide_joint",
    "decide_pairs",
    "decision_from_theta",
    "dirichlet_mean",
    "enumerate_posterior",
    "fast_route",
    "human_only_theta",
    "is_exact",
    "joint_posterior_draws",
    "joint_route",
    "metric_contributions",
    "posterior_draws",
]
