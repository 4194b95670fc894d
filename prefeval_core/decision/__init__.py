"""The Bayesian decision engine (method.md §4): is system A better than system B, given the counts?

Public API (see :func:`decide_pairs`): ``decide_pairs(n, K, m, ...) -> DecisionResult`` for P
pairs at once, :func:`decide_counts` over :class:`~prefeval_core.counts.CountTriples`, the
decision function :func:`decision_from_theta`, the closed form :func:`human_only_theta`, and
:class:`SamplerSettings`; :func:`posterior_draws` (unweighted draws of one pair's ``p`` from
the same posterior, for plots). Modules: ``model`` (the NumPyro model), ``reference`` (NUTS),
``exact`` (closed form and enumeration), ``fast`` (vectorised importance sampling),
``decide`` (routing), ``draws`` (posterior draws). Importing this package does not configure JAX; entry points call
:func:`prefeval_core.runtime.configure_jax`.
"""

from prefeval_core.decision.decide import DecisionResult, Method, Model, Sampler, decide_counts, decide_pairs
from prefeval_core.decision.draws import posterior_draws
from prefeval_core.decision.exact import decision_from_theta, dirichlet_mean, enumerate_posterior, human_only_theta
from prefeval_core.decision.settings import MuRows, SamplerSettings

__all__ = [
    "DecisionResult",
    "Method",
    "Model",
    "MuRows",
    "Sampler",
    "SamplerSettings",
    "decide_counts",
    "decide_pairs",
    "decision_from_theta",
    "dirichlet_mean",
    "enumerate_posterior",
    "human_only_theta",
    "posterior_draws",
]
