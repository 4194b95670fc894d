"""Several metrics in one posterior (Dawid–Skene; docs/model.md): the decision over :class:`JointCounts`.

Model: ``p ~ Dirichlet(n + 1)`` from all revealed human outcomes; metric j has its own mixture
matrix ``mu_j`` (rows = metric, columns = human), each column ``mu_j[:, h] ~ Dirichlet(K_j[:, h]
+ 1)`` from metric j's confusion counts on the revealed items; the metrics are conditionally
independent given the true outcome, so an item without a revealed human outcome whose metric
pattern is ``c = (c_1..c_k)`` (metrics that gave no outcome simply absent) has likelihood
``sum_h p_h prod_j mu_j[c_j, h]``. With one metric this is method.md §4 exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from prefeval_core.decision.decide import Columns, DecisionResult, check_pair_ids, decide_counts, fill_fast, pad_to_power_of_two
from prefeval_core.decision.exact import decision_from_theta, dirichlet_mean, human_only_theta
from prefeval_core.decision.joint_data import JointInputs, joint_inputs
from prefeval_core.decision.joint_fast import joint_gibbs
from prefeval_core.decision.joint_importance import joint_importance
from prefeval_core.decision.options import DecisionSettings, Model, Sampler
from prefeval_core.decision.routes import informing_metrics, joint_route
from prefeval_core.decision.settings import SamplerSettings
from prefeval_core.errors import settings_error
from prefeval_core.pairs.counts import JointCounts
from prefeval_core.vocabulary.levels import DEFAULT_GAMMA

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def decide_joint(
    counts: JointCounts,
    *,
    model: Model = "full",
    sampler: Sampler = "fast",
    gamma: float = DEFAULT_GAMMA,
    seed: int = 0,
    settings: SamplerSettings | None = None,
    pair_ids: npt.ArrayLike | None = None,
) -> DecisionResult:
    """Decide P pairs from the joint counts of k metrics (module docstring; docs/model.md).

    Each pair goes to the cheapest route its counts allow (:func:`~prefeval_core.decision.routes.joint_route`):
    ``closed_form`` when no metric rated an unrevealed item (or ``model="human_only"``); when only
    one metric did, that metric's one-metric model, which is then the exact posterior
    (``closed_form``, ``enumeration`` or ``importance``, draws seeded by the pair's row as in
    :func:`~prefeval_core.decision.decide_pairs`); otherwise ``joint_importance``
    (:mod:`~prefeval_core.decision.joint_importance`); its pairs whose weights stay too uneven go
    on to ``joint_gibbs`` (:mod:`~prefeval_core.decision.joint_fast`), and those whose chains do
    not pass their diagnostics to ``nuts_fallback``. ``sampler="nuts"`` runs the reference (NUTS on
    :func:`~prefeval_core.decision.model.joint_preference_model`, ``settings.nuts_*``) pair by pair.
    With k = 1 the result is :func:`~prefeval_core.decision.decide_counts` on ``counts.triples(0)``,
    with ``settings.metrics`` set.

    Args:
        counts: revealed (P, 4**k, 3) and unrevealed (P, 4**k) counts by metric pattern.
        model: ``"full"`` or ``"human_only"`` (a known ``mu`` per metric is not supported here).
        sampler, gamma, seed, settings, pair_ids: as in :func:`~prefeval_core.decision.decide_pairs`
            (``pair_ids`` seed each pair's importance draws; the chains that build the
            several-metric proposal, and ``joint_gibbs``, draw one stream for all their pairs).

    Raises:
        SettingsError: on counts that are not non-negative integers, ``model="known_mu"`` or an
            unknown or out-of-range option.
    """
    decision_settings = DecisionSettings(model, sampler, gamma, seed, settings or SamplerSettings(), counts.metrics)
    if model == "known_mu":
        raise settings_error(
            "decide_joint supports the models 'full' and 'human_only'; a known mu is one metric's (decide_pairs)", field="model"
        )
    _check_joint(counts)
    if counts.k == 1:
        single = decide_counts(
            counts.triples(0), model=model, sampler=sampler, gamma=gamma, seed=seed, settings=settings, pair_ids=pair_ids
        )
        return replace(single, settings=decision_settings)
    sampler_settings = decision_settings.sampler_settings
    P = counts.n_pairs
    ids = check_pair_ids(pair_ids, P)
    columns = Columns.empty(P)
    inputs = joint_inputs(counts)
    if sampler == "nuts":
        fill_joint_nuts(columns, np.arange(P), inputs, seed, sampler_settings, fallback=False)
        return columns.result(decision_settings)
    routes = [joint_route(row, counts.k, sampler_settings, model=model) for row in counts.unrevealed]
    closed = np.array([i for i, route in enumerate(routes) if route == "closed_form"], dtype=np.int64)
    if closed.size:
        n = inputs.n[closed]
        columns.put(closed, human_only_theta(n), dirichlet_mean(n), 0.0, np.inf, np.nan, "closed_form")
    informing = informing_metrics(counts.unrevealed, counts.k)
    for j in range(counts.k):
        alone = np.array(
            [i for i, route in enumerate(routes) if route in ("enumeration", "importance") and informing[i, j]], dtype=np.int64
        )
        if alone.size:
            triple = counts.subset(alone).triples(j)
            n, K, m = (np.asarray(a, dtype=np.float64) for a in (triple.n, triple.K, triple.m))
            fill_fast(columns, alone, n, K, m, None, seed, gamma, sampler_settings, ids[alone])
    several = np.array([i for i, route in enumerate(routes) if route == "joint_importance"], dtype=np.int64)
    if several.size:
        estimate = joint_importance(_subset(inputs, several), ids[several], seed=seed, gamma=gamma, settings=sampler_settings)
        good = estimate.ess >= sampler_settings.is_min_ess if estimate.usable is None else estimate.usable
        theta, p_mean, se, ess = estimate.theta[good], estimate.p_mean[good], estimate.theta_mc_se[good], estimate.ess[good]
        columns.put(several[good], theta, p_mean, se, ess, np.nan, "joint_importance")
        if not np.all(good):
            fill_joint_gibbs(columns, several[~good], _subset(inputs, several[~good]), seed, gamma, sampler_settings)
    return columns.result(decision_settings)


def fill_joint_gibbs(columns: Columns, rows: IntArray, inputs: JointInputs, seed: int, gamma: float, settings: SamplerSettings) -> None:
    """The data-augmentation route into ``columns`` at ``rows``, and NUTS for its pairs whose chains
    do not pass their diagnostics."""
    summary = joint_gibbs(inputs, seed=seed, gamma=gamma, settings=settings)
    ok = summary.settled
    columns.put(rows[ok], summary.theta[ok], summary.p_mean[ok], summary.theta_mc_se[ok], summary.ess[ok], summary.rhat[ok], "joint_gibbs")
    if not np.all(ok):
        fill_joint_nuts(columns, rows[~ok], _subset(inputs, np.flatnonzero(~ok)), seed, settings, fallback=True)


def fill_joint_nuts(columns: Columns, rows: IntArray, inputs: JointInputs, seed: int, settings: SamplerSettings, *, fallback: bool) -> None:
    """NUTS on the several-metric model into ``columns`` at ``rows``: the reference pair by pair,
    or (``fallback``) all pairs in one run with ``settings.fallback_*``, padded to a power of two."""
    from prefeval_core.decision.reference import joint_nuts_draws, summarise_draws

    if fallback:
        padded = pad_to_power_of_two(len(rows))
        sizes = {"warmup": settings.fallback_warmup, "draws": settings.fallback_draws, "chains": settings.fallback_chains}
        draws = joint_nuts_draws(
            inputs.n[padded], inputs.K[padded], inputs.patterns, inputs.u[padded], seed=seed, settings=settings, **sizes
        )
        columns.put_summary(rows, summarise_draws(draws.p, draws.divergences, draws.chain_method), "nuts_fallback")
        return
    for i, row in enumerate(rows):
        one = _subset(inputs, np.array([i]))
        draws = joint_nuts_draws(one.n, one.K, one.patterns, one.u, seed=seed, settings=settings)
        columns.put_summary(np.array([row]), summarise_draws(draws.p, draws.divergences, draws.chain_method), "nuts")


def _subset(inputs: JointInputs, rows: IntArray) -> JointInputs:
    """The inputs of some pairs, without the patterns none of them has."""
    u = inputs.u[rows]
    used = np.flatnonzero(u.sum(axis=0) > 0)
    return JointInputs(inputs.n[rows], inputs.K[rows], inputs.patterns[used], u[:, used])


def _check_joint(counts: JointCounts) -> None:
    for name, array in (("revealed", counts.revealed), ("unrevealed", counts.unrevealed)):
        values = np.asarray(array)
        if (
            not np.issubdtype(values.dtype, np.number)
            or not np.all(np.isfinite(values))
            or np.any(values < 0)
            or np.any(values != np.round(values))
        ):
            raise settings_error(f"JointCounts.{name} must hold non-negative integer counts", field=name)


@dataclass(frozen=True)
class MetricContributions:
    """What each metric adds to the decisions of P pairs (θ = ``P(p> > p< | data)``).

    Attributes:
        metrics: the k metric names.
        theta_all: (P,) with every metric (:func:`decide_joint`).
        theta_without: (P, k) without metric j (the other k - 1 metrics).
        theta_alone: (P, k) with metric j alone (its count triple, :func:`~prefeval_core.decision.decide_counts`).
        theta_human: (P,) human outcomes only (exact).
        gamma: the level; ``decision(theta)`` gives the codes (0 ``>``, 1 undecided, 2 ``<``).
    """

    metrics: tuple[str, ...]
    theta_all: FloatArray
    theta_without: FloatArray
    theta_alone: FloatArray
    theta_human: FloatArray
    gamma: float

    def decision(self, theta: npt.ArrayLike) -> npt.NDArray[np.int8]:
        return decision_from_theta(theta, self.gamma)


def metric_contributions(
    counts: JointCounts, *, gamma: float = DEFAULT_GAMMA, seed: int = 0, settings: SamplerSettings | None = None
) -> MetricContributions:
    """θ with all metrics, without each one, each alone and with humans only (full model, fast
    sampler): 2k + 1 decisions of the same pairs, for showing what each metric contributes."""
    with_all = decide_joint(counts, gamma=gamma, seed=seed, settings=settings)
    without = np.stack([decide_joint(counts.without(j), gamma=gamma, seed=seed, settings=settings).theta for j in range(counts.k)], axis=1)
    alone = np.stack([decide_counts(counts.triples(j), gamma=gamma, seed=seed, settings=settings).theta for j in range(counts.k)], axis=1)
    return MetricContributions(counts.metrics, with_all.theta, without, alone, human_only_theta(counts.n), gamma)
