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

from typing import TYPE_CHECKING

from prefeval_core.lazy import lazy_package

if TYPE_CHECKING:  # the package's names, imported on first use (`X as X`: re-exported)
    from prefeval_core.decision.decide import DecisionResult as DecisionResult
    from prefeval_core.decision.decide import decide_counts as decide_counts
    from prefeval_core.decision.decide import decide_pairs as decide_pairs
    from prefeval_core.decision.draws import joint_posterior_draws as joint_posterior_draws
    from prefeval_core.decision.draws import posterior_draws as posterior_draws
    from prefeval_core.decision.exact import decision_from_theta as decision_from_theta
    from prefeval_core.decision.exact import dirichlet_mean as dirichlet_mean
    from prefeval_core.decision.exact import enumerate_posterior as enumerate_posterior
    from prefeval_core.decision.exact import human_only_theta as human_only_theta
    from prefeval_core.decision.joint import MetricContributions as MetricContributions
    from prefeval_core.decision.joint import decide_joint as decide_joint
    from prefeval_core.decision.joint import metric_contributions as metric_contributions
    from prefeval_core.decision.options import EXACT_ROUTES as EXACT_ROUTES
    from prefeval_core.decision.options import MAX_SEED as MAX_SEED
    from prefeval_core.decision.options import MODELS as MODELS
    from prefeval_core.decision.options import SAMPLERS as SAMPLERS
    from prefeval_core.decision.options import DecisionSettings as DecisionSettings
    from prefeval_core.decision.options import Model as Model
    from prefeval_core.decision.options import Route as Route
    from prefeval_core.decision.options import Sampler as Sampler
    from prefeval_core.decision.routes import fast_route as fast_route
    from prefeval_core.decision.routes import is_exact as is_exact
    from prefeval_core.decision.routes import joint_route as joint_route
    from prefeval_core.decision.settings import MuRows as MuRows
    from prefeval_core.decision.settings import SamplerSettings as SamplerSettings

__getattr__, __all__ = lazy_package(__name__, __file__)
