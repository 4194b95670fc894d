"""The decision function over many pairs at once (method.md §4; Deriu et al. Sec. 3, Alg. 1).

:func:`decide_pairs` takes the count triples ``(n, K, m)`` of P pairs and returns, per pair,
``theta = P(p> > p< | data)``, the decision at level ``gamma``, the posterior mean of ``p``
and Monte-Carlo diagnostics. Two samplers:

* ``"nuts"``: the reference, NumPyro NUTS with ``settings.nuts_*`` (paper: 5 chains, 2000
  warm-up, 10000 draws), one pair per run, as in the paper.
* ``"fast"`` (default): each pair goes to the cheapest exact route its counts allow
  (:mod:`~prefeval_core.decision.routes`): ``closed_form``, ``enumeration``
  (:mod:`~prefeval_core.decision.exact`), ``importance`` (importance sampling with exact
  weights in rounds, :mod:`~prefeval_core.decision.fast`), and ``nuts_fallback`` (NUTS with
  ``settings.fallback_*``, all remaining pairs in one model padded to a power of two so the
  compiled sampler is reused) for pairs whose importance weights stay too uneven (effective
  sample size below ``settings.is_min_ess``).

Each pair's random draws depend only on ``seed`` and its row index, never on the other rows.

Conventions of the result: ``theta_mc_se`` is 0 and ``ess`` is ``inf`` where ``theta`` is
exact (closed form, enumeration); ``rhat`` is NaN there and for importance sampling (no
chains). For NUTS ``ess`` is NaN when every draw agrees (then ``theta_mc_se`` is 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from prefeval_core.decision.exact import decision_from_theta, dirichlet_mean, enumerate_posterior, human_only_theta, single_threaded_blas
from prefeval_core.decision.fast import importance_posterior
from prefeval_core.decision.options import MAX_SEED, DecisionSettings, Model, Route, Sampler
from prefeval_core.decision.routes import fast_route
from prefeval_core.decision.settings import SamplerSettings
from prefeval_core.errors import settings_error
from prefeval_core.pairs.counts import CountTriples
from prefeval_core.vocabulary.levels import DEFAULT_GAMMA
from prefeval_core.vocabulary.outcomes import SYMBOLS

if TYPE_CHECKING:
    from prefeval_core.decision.reference import NutsSummary  # imports JAX: only when NUTS runs

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class DecisionResult:
    """Decisions of P pairs; every array has leading dimension P, in the order of the input rows.

    Attributes:
        theta: (P,) float64, ``P(p> > p< | data)``.
        decision: (P,) int8 outcome codes: 0 ``>`` (A better), 2 ``<`` (B better), 1 undecided.
        p_mean: (P, 3) posterior mean of ``(p>, p=, p<)``.
        theta_mc_se: (P,) Monte-Carlo standard error of ``theta``; 0 where exact.
        ess: (P,) effective sample size behind ``theta``: ``inf`` where exact; Kish's
            ``(sum w)^2 / sum w^2`` for importance sampling; NumPyro's ESS of ``1[p> > p<]``
            for NUTS (NaN when every draw agrees).
        rhat: (P,) split R-hat of ``p> - p<`` (NUTS with several chains); NaN otherwise.
        method: (P,) the route that decided each pair (:data:`~prefeval_core.decision.options.Route`).
        sampler: ``"fast"`` or ``"nuts"``.
        settings: what the decision was made with (``settings.as_dict()`` is JSON-ready).
    """

    theta: npt.NDArray[np.float64]
    decision: npt.NDArray[np.int8]
    p_mean: npt.NDArray[np.float64]
    theta_mc_se: npt.NDArray[np.float64]
    ess: npt.NDArray[np.float64]
    rhat: npt.NDArray[np.float64]
    method: tuple[Route, ...]
    sampler: Sampler
    settings: DecisionSettings

    @property
    def n_pairs(self) -> int:
        return int(self.theta.shape[0])


def decide_pairs(
    n: npt.ArrayLike,
    K: npt.ArrayLike | None = None,
    m: npt.ArrayLike | None = None,
    *,
    model: Model = "full",
    mu: npt.ArrayLike | None = None,
    sampler: Sampler = "fast",
    gamma: float = DEFAULT_GAMMA,
    seed: int = 0,
    settings: SamplerSettings | None = None,
    pair_ids: npt.ArrayLike | None = None,
) -> DecisionResult:
    """Decide P pairs from their count triples (method.md §3-4).

    Args:
        n: (P, 3) human outcome counts on the revealed items, order ``>, =, <``.
        K: (P, 3, 3) confusion counts on the revealed items, rows = metric, columns = human;
            each column sums to at most ``n`` (``n - K.sum(1)``: revealed items the metric did
            not rate). ``None``: zeros.
        m: (P, 3) metric outcome counts on the items without a revealed human outcome.
        model: ``"human_only"`` (ignores K and m: exact ``Dirichlet(n + 1)``), ``"known_mu"``
            (``mu`` fixed) or ``"full"`` (``mu`` uncertain).
        mu: for ``"known_mu"``: (3, 3) or (P, 3, 3) mixture matrix, rows = metric, columns =
            human, each column summing to 1.
        sampler: ``"fast"`` (default) or ``"nuts"`` (the reference; slow).
        gamma: significance level of the decision: ``>`` if ``theta > 1 - gamma/2``, ``<`` if
            ``theta < gamma/2``, else undecided.
        seed: seeds every random step, an integer in ``[0, 2**63)``; same inputs and seed give
            the same result bit for bit (on one machine and JAX configuration).
        settings: sampler sizes (default: the paper's for NUTS, production sizes for fast).
        pair_ids: (P,) non-negative integers seeding each pair's importance draws (default: the
            row index). Give a pair the same id in every call (e.g. its index in the study, or its
            line in a file) and its result does not depend on which other pairs are decided with it.

    Raises:
        SettingsError: on shapes, counts that are not non-negative integers or contradict each
            other, an invalid ``mu``, or an unknown or out-of-range option.
    """
    decision_settings = DecisionSettings(model, sampler, gamma, seed, settings or SamplerSettings())
    n_arr, K_arr, m_arr = check_counts(n, K, m)
    P = n_arr.shape[0]
    mu_arr = check_mu(mu, m_arr) if model == "known_mu" else None
    if model == "human_only":
        K_arr = np.zeros_like(K_arr)
        m_arr = np.zeros_like(m_arr)
    ids = check_pair_ids(pair_ids, P)
    columns = Columns.empty(P)
    if sampler == "nuts":
        fill_nuts(columns, np.arange(P), n_arr, K_arr, m_arr, mu_arr, seed, decision_settings.sampler_settings)
    else:
        fill_fast(columns, np.arange(P), n_arr, K_arr, m_arr, mu_arr, seed, gamma, decision_settings.sampler_settings, ids)
    return columns.result(decision_settings)


def check_pair_ids(pair_ids: npt.ArrayLike | None, P: int) -> npt.NDArray[np.int64]:
    """``pair_ids`` as (P,) int64 (``None``: ``0..P-1``); SettingsError unless non-negative integers."""
    if pair_ids is None:
        return np.arange(P, dtype=np.int64)
    ids = _array(pair_ids, "pair_ids")
    if ids.shape != (P,) or not np.all(np.isfinite(ids)) or np.any(ids < 0) or np.any(ids != np.round(ids)) or np.any(ids >= MAX_SEED):
        raise settings_error(f"pair_ids must be {P} non-negative integers below 2**63", field="pair_ids")
    return ids.astype(np.int64)


def decide_counts(counts: CountTriples, **kwargs: Any) -> DecisionResult:
    """:func:`decide_pairs` on :class:`~prefeval_core.pairs.counts.CountTriples` (same keyword options)."""
    return decide_pairs(counts.n, counts.K, counts.m, **kwargs)


@dataclass
class Columns:
    """Result columns being filled in, pair by pair or group by group (mutable; shared by the
    one- and several-metric decisions, never returned)."""

    theta: npt.NDArray[np.float64]
    p_mean: npt.NDArray[np.float64]
    se: npt.NDArray[np.float64]
    ess: npt.NDArray[np.float64]
    rhat: npt.NDArray[np.float64]
    method: list[Route]

    @classmethod
    def empty(cls, P: int) -> Columns:
        return cls(np.full(P, np.nan), np.full((P, 3), np.nan), np.full(P, np.nan), np.full(P, np.nan), np.full(P, np.nan), ["nuts"] * P)

    def put(self, index: npt.ArrayLike, theta: Any, p_mean: Any, se: Any, ess: Any, rhat: Any, method: Route) -> None:
        """Fill rows ``index`` (values broadcast like NumPy assignment)."""
        index = np.atleast_1d(np.asarray(index, dtype=np.int64))
        self.theta[index] = theta
        self.p_mean[index] = p_mean
        self.se[index] = se
        self.ess[index] = ess
        self.rhat[index] = rhat
        for i in index:
            self.method[int(i)] = method

    def put_summary(self, rows: npt.NDArray[np.int64], summary: NutsSummary, method: Route) -> None:
        """Fill rows ``rows`` from the first ``len(rows)`` pairs of a NUTS summary (the rest is padding)."""
        k = len(rows)
        self.put(rows, summary.theta[:k], summary.p_mean[:k], summary.theta_mc_se[:k], summary.ess[:k], summary.rhat[:k], method)

    def result(self, settings: DecisionSettings) -> DecisionResult:
        return DecisionResult(
            theta=self.theta,
            decision=decision_from_theta(self.theta, settings.gamma),
            p_mean=self.p_mean,
            theta_mc_se=self.se,
            ess=self.ess,
            rhat=self.rhat,
            method=tuple(self.method),
            sampler=settings.sampler,
            settings=settings,
        )


def fill_fast(
    columns: Columns,
    rows: npt.NDArray[np.int64],
    n: FloatArray,
    K: FloatArray,
    m: FloatArray,
    mu: FloatArray | None,
    seed: int,
    gamma: float,
    settings: SamplerSettings,
    ids: npt.NDArray[np.int64],
) -> None:
    """Decide the pairs with counts ``n``, ``K``, ``m`` (and known ``mu``) by the fast sampler into
    ``columns`` at ``rows``; ``ids`` seed each pair's importance draws."""
    routes = np.array([fast_route(items, settings) for items in m.sum(axis=1)], dtype=object)
    closed = np.flatnonzero(routes == "closed_form")
    if closed.size:
        columns.put(rows[closed], human_only_theta(n[closed]), dirichlet_mean(n[closed]), 0.0, np.inf, np.nan, "closed_form")
    enumerated = np.flatnonzero(routes == "enumeration")
    if enumerated.size:
        with single_threaded_blas():
            for i in enumerated:
                exact = enumerate_posterior(n[i], K[i], m[i], None if mu is None else mu[i])
                columns.put(rows[i], exact.theta, exact.p_mean, 0.0, np.inf, np.nan, "enumeration")
    sampled = np.flatnonzero(routes == "importance")
    if not sampled.size:
        return
    known = None if mu is None else mu[sampled]
    estimate = importance_posterior(n[sampled], K[sampled], m[sampled], known, ids[sampled], seed=seed, gamma=gamma, settings=settings)
    good = estimate.ess >= settings.is_min_ess
    theta, p_mean, se, ess = estimate.theta[good], estimate.p_mean[good], estimate.theta_mc_se[good], estimate.ess[good]
    columns.put(rows[sampled[good]], theta, p_mean, se, ess, np.nan, "importance")
    bad = sampled[~good]
    if bad.size:
        fill_nuts(columns, rows[bad], n[bad], K[bad], m[bad], None if mu is None else mu[bad], seed, settings, fallback=True)


def fill_nuts(
    columns: Columns,
    rows: npt.NDArray[np.int64],
    n: FloatArray,
    K: FloatArray,
    m: FloatArray,
    mu: FloatArray | None,
    seed: int,
    settings: SamplerSettings,
    fallback: bool = False,
) -> None:
    """Decide the given pairs by NUTS into ``columns`` at ``rows``: the reference (one pair per run,
    ``settings.nuts_*``) or, with ``fallback``, all of them in one run with ``settings.fallback_*``
    (padded to a power of two by repeating the first pair: one compiled sampler per bucket)."""
    from prefeval_core.decision.reference import nuts_posterior

    if fallback:
        padded = pad_to_power_of_two(len(rows))
        summary = nuts_posterior(
            n[padded],
            K[padded],
            m[padded],
            None if mu is None else mu[padded],
            seed=seed,
            settings=settings,
            warmup=settings.fallback_warmup,
            draws=settings.fallback_draws,
            chains=settings.fallback_chains,
        )
        columns.put_summary(rows, summary, "nuts_fallback")
        return
    for i, row in enumerate(rows):
        one = slice(i, i + 1)
        summary = nuts_posterior(n[one], K[one], m[one], None if mu is None else mu[one], seed=seed, settings=settings)
        columns.put_summary(np.array([row]), summary, "nuts")


def pad_to_power_of_two(size: int) -> npt.NDArray[np.int64]:
    """Indices ``0..size-1`` followed by zeros up to the next power of two."""
    bucket = 1 << (size - 1).bit_length()
    return np.concatenate([np.arange(size), np.zeros(bucket - size, dtype=np.int64)])


def check_counts(n: npt.ArrayLike, K: npt.ArrayLike | None, m: npt.ArrayLike | None) -> tuple[FloatArray, FloatArray, FloatArray]:
    """``n`` (P, 3), ``K`` (P, 3, 3) and ``m`` (P, 3) as float64 (``None``: zeros).

    Raises:
        SettingsError: on wrong shapes, counts that are not non-negative integers, or a
            confusion column holding more items than the human outcomes it is part of
            (``K[i, :, h].sum() > n[i, h]``), naming the pair and the outcome.
    """
    n_arr = _array(n, "n")
    if n_arr.ndim != 2 or n_arr.shape[1] != 3:
        raise settings_error(f"n must have shape (P, 3), got {n_arr.shape}", field="n")
    P = n_arr.shape[0]
    K_arr = np.zeros((P, 3, 3)) if K is None else _array(K, "K")
    m_arr = np.zeros((P, 3)) if m is None else _array(m, "m")
    if K_arr.shape != (P, 3, 3):
        raise settings_error(f"K must have shape ({P}, 3, 3), got {K_arr.shape}", field="K")
    if m_arr.shape != (P, 3):
        raise settings_error(f"m must have shape ({P}, 3), got {m_arr.shape}", field="m")
    arrays = []
    for name, arr in (("n", n_arr), ("K", K_arr), ("m", m_arr)):
        if not np.all(np.isfinite(arr)) or np.any(arr < 0) or np.any(arr != np.round(arr)):
            raise settings_error(f"{name} must hold non-negative integer counts", field=name)
        arrays.append(arr.astype(np.float64))
    excess = arrays[1].sum(axis=1) > arrays[0]
    if np.any(excess):
        pair, h = (int(v) for v in np.argwhere(excess)[0])
        raise settings_error(
            f"pair {pair}: the confusion column of human outcome '{SYMBOLS[h]}' holds {int(arrays[1][pair, :, h].sum())} items, "
            f"more than the {int(arrays[0][pair, h])} human outcomes '{SYMBOLS[h]}' in n ({int(excess.sum())} such column(s) in all)",
            field="K",
        )
    return arrays[0], arrays[1], arrays[2]


def _array(values: npt.ArrayLike, name: str) -> FloatArray:
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise settings_error(f"{name} must be an array of counts", field=name) from None


def check_mu(mu: npt.ArrayLike | None, m: FloatArray) -> FloatArray:
    """A known ``mu`` as (P, 3, 3) float64 for counts ``m`` (P, 3).

    Raises:
        SettingsError: if ``mu`` is missing, misshapen, not column-stochastic, or gives
            probability 0 to a metric outcome observed on a metric-only item.
    """
    P = m.shape[0]
    if mu is None:
        raise settings_error("model 'known_mu' needs mu", field="mu")
    mu_arr = _array(mu, "mu")
    if mu_arr.shape == (3, 3):
        mu_arr = np.broadcast_to(mu_arr, (P, 3, 3)).copy()
    if mu_arr.shape != (P, 3, 3):
        raise settings_error(f"mu must have shape (3, 3) or ({P}, 3, 3), got {mu_arr.shape}", field="mu")
    if not np.all(np.isfinite(mu_arr)) or np.any(mu_arr < 0) or not np.allclose(mu_arr.sum(axis=1), 1.0, atol=1e-9):
        raise settings_error("mu must be non-negative with columns (over the metric outcome, axis -2) summing to 1", field="mu")
    impossible = (mu_arr.sum(axis=2) <= 0.0) & (m > 0)
    if np.any(impossible):
        pair, c = (int(v) for v in np.argwhere(impossible)[0])
        message = f"pair {pair}: the known mu gives probability 0 to the metric outcome '{SYMBOLS[c]}' observed in m"
        raise settings_error(message, field="mu")
    return mu_arr
