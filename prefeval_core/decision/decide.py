"""The decision function over many pairs at once (method.md §4; Deriu et al. Sec. 3, Alg. 1).

:func:`decide_pairs` takes the count triples ``(n, K, m)`` of P pairs and returns, per pair,
``theta = P(p> > p< | data)``, the decision at level ``gamma``, the posterior mean of ``p``
and Monte-Carlo diagnostics. Two samplers:

* ``"nuts"``: the reference, NumPyro NUTS with ``settings.nuts_*`` (paper: 5 chains, 2000
  warm-up, 10000 draws), one pair per run, as in the paper.
* ``"fast"`` (default): each pair goes to the cheapest exact method its counts allow —

  1. ``"closed_form"``: no metric-only item (or the human-only model): ``p ~ Dirichlet(n+1)``,
     ``theta = I_{1/2}(n< + 1, n> + 1)``;
  2. ``"enumeration"``: at most ``settings.enumeration_max_items`` metric-only items: exact sum
     over the latent true outcomes (:mod:`prefeval_core.decision.exact`);
  3. ``"importance"``: importance sampling with exact weights, partly in the
     ``(q = mu p, mu)`` parametrisation that straightens the metric's ridge, vectorised over
     draws (:mod:`prefeval_core.decision.fast`), in rounds: a pair stops once its decision is
     certain or its standard error is small enough;
  4. ``"nuts_fallback"``: NUTS with ``settings.fallback_*``, all remaining pairs in one model
     (padded to a power of two so the compiled sampler is reused), for pairs whose importance
     weights stay too uneven (effective sample size below ``settings.is_min_ess``).

Each pair's random draws depend only on ``seed`` and its row index, never on the other rows.

Conventions of the result: ``theta_mc_se`` is 0 and ``ess`` is ``inf`` where ``theta`` is
exact (closed form, enumeration); ``rhat`` is NaN there and for importance sampling (no
chains). For NUTS ``ess`` is NaN when every draw agrees (then ``theta_mc_se`` is 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from prefeval_core.counts import CountTriples
from prefeval_core.decision.exact import decision_from_theta, dirichlet_mean, enumerate_posterior, human_only_theta
from prefeval_core.decision.fast import importance_posterior
from prefeval_core.decision.settings import SamplerSettings

FloatArray = npt.NDArray[np.float64]
Model = Literal["human_only", "known_mu", "full"]
Sampler = Literal["fast", "nuts"]
Method = Literal["closed_form", "enumeration", "importance", "nuts_fallback", "nuts"]


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
        method: (P,) which path decided each pair (see the module docstring).
        sampler: ``"fast"`` or ``"nuts"``.
        settings: JSON-serialisable settings used (sampler sizes, model, gamma, seed).
    """

    theta: npt.NDArray[np.float64]
    decision: npt.NDArray[np.int8]
    p_mean: npt.NDArray[np.float64]
    theta_mc_se: npt.NDArray[np.float64]
    ess: npt.NDArray[np.float64]
    rhat: npt.NDArray[np.float64]
    method: tuple[str, ...]
    sampler: str
    settings: dict[str, Any]

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
    gamma: float = 0.05,
    seed: int = 0,
    settings: SamplerSettings | None = None,
) -> DecisionResult:
    """Decide P pairs from their count triples (method.md §3-4).

    Args:
        n: (P, 3) human outcome counts on the revealed items, order ``>, =, <``.
        K: (P, 3, 3) confusion counts on the revealed items, rows = metric, columns = human.
        m: (P, 3) metric outcome counts on the items without a revealed human outcome.
        model: ``"human_only"`` (ignores K and m: exact ``Dirichlet(n + 1)``), ``"known_mu"``
            (``mu`` fixed) or ``"full"`` (``mu`` uncertain).
        mu: for ``"known_mu"``: (3, 3) or (P, 3, 3) mixture matrix, rows = metric, columns =
            human, each column summing to 1.
        sampler: ``"fast"`` (default) or ``"nuts"`` (the reference; slow).
        gamma: significance level of the decision: ``>`` if ``theta > 1 - gamma/2``, ``<`` if
            ``theta < gamma/2``, else undecided.
        seed: seeds every random step; same inputs and seed give the same result bit for bit
            (on one machine and JAX configuration).
        settings: sampler sizes (default: the paper's for NUTS, production sizes for fast).

    Raises:
        ValueError: on shapes, negative counts, an invalid ``mu`` or option.
    """
    settings = settings or SamplerSettings()
    n_arr, K_arr, m_arr = check_counts(n, K, m)
    P = n_arr.shape[0]
    if model not in ("human_only", "known_mu", "full"):
        raise ValueError(f"unknown model {model!r}")
    if sampler not in ("fast", "nuts"):
        raise ValueError(f"unknown sampler {sampler!r}")
    decision_from_theta(np.zeros(0), gamma)  # validates gamma
    mu_arr = check_mu(mu, P) if model == "known_mu" else None
    if model == "human_only":
        K_arr = np.zeros_like(K_arr)
        m_arr = np.zeros_like(m_arr)
    columns = _Columns.empty(P)
    if sampler == "nuts":
        _decide_nuts(columns, n_arr, K_arr, m_arr, mu_arr, np.arange(P), seed, settings)
    else:
        _decide_fast(columns, n_arr, K_arr, m_arr, mu_arr, seed, gamma, settings)
    return DecisionResult(
        theta=columns.theta,
        decision=decision_from_theta(columns.theta, gamma),
        p_mean=columns.p_mean,
        theta_mc_se=columns.se,
        ess=columns.ess,
        rhat=columns.rhat,
        method=tuple(columns.method),
        sampler=sampler,
        settings={"model": model, "gamma": gamma, "seed": seed, **settings.as_dict()},
    )


def decide_counts(counts: CountTriples, **kwargs: Any) -> DecisionResult:
    """:func:`decide_pairs` on :class:`~prefeval_core.counts.CountTriples` (same keyword options)."""
    return decide_pairs(counts.n, counts.K, counts.m, **kwargs)


@dataclass
class _Columns:
    """Result columns being filled in, pair by pair or group by group (private, mutable)."""

    theta: npt.NDArray[np.float64]
    p_mean: npt.NDArray[np.float64]
    se: npt.NDArray[np.float64]
    ess: npt.NDArray[np.float64]
    rhat: npt.NDArray[np.float64]
    method: list[str]

    @classmethod
    def empty(cls, P: int) -> _Columns:
        return cls(np.full(P, np.nan), np.full((P, 3), np.nan), np.full(P, np.nan), np.full(P, np.nan), np.full(P, np.nan), [""] * P)

    def put(self, index: npt.ArrayLike, theta: Any, p_mean: Any, se: Any, ess: Any, rhat: Any, method: str) -> None:
        """Fill rows ``index`` (values broadcast like NumPy assignment)."""
        index = np.atleast_1d(np.asarray(index))
        self.theta[index] = theta
        self.p_mean[index] = p_mean
        self.se[index] = se
        self.ess[index] = ess
        self.rhat[index] = rhat
        for i in index:
            self.method[int(i)] = method


def fast_route(metric_only_items: float, settings: SamplerSettings) -> Literal["closed_form", "enumeration", "importance"]:
    """Where the fast sampler sends a pair with this many metric-only items (``sum(m)``; 0 for the
    human-only model). An importance-sampled pair goes on to NUTS if its ESS stays below ``is_min_ess``."""
    if metric_only_items == 0:
        return "closed_form"
    return "enumeration" if metric_only_items <= settings.enumeration_max_items else "importance"


def _decide_fast(
    columns: _Columns,
    n: FloatArray,
    K: FloatArray,
    m: FloatArray,
    mu: FloatArray | None,
    seed: int,
    gamma: float,
    settings: SamplerSettings,
) -> None:
    routes = np.array([fast_route(items, settings) for items in m.sum(axis=1)], dtype=object)
    closed = np.flatnonzero(routes == "closed_form")
    if closed.size:
        columns.put(closed, human_only_theta(n[closed]), dirichlet_mean(n[closed]), 0.0, np.inf, np.nan, "closed_form")
    for i in np.flatnonzero(routes == "enumeration"):
        exact = enumerate_posterior(n[i], K[i], m[i], None if mu is None else mu[i])
        columns.put(i, exact.theta, exact.p_mean, 0.0, np.inf, np.nan, "enumeration")
    fallback = []
    for i in np.flatnonzero(routes == "importance"):
        estimate = importance_posterior(
            n[i], K[i], m[i], None if mu is None else mu[i], seed=seed, pair_id=int(i), gamma=gamma, settings=settings
        )
        if estimate.ess >= settings.is_min_ess:
            columns.put(i, estimate.theta, estimate.p_mean, estimate.theta_mc_se, estimate.ess, np.nan, "importance")
        else:
            fallback.append(i)
    if fallback:
        _decide_nuts(columns, n, K, m, mu, np.asarray(fallback), seed, settings, fallback=True)


def _decide_nuts(
    columns: _Columns,
    n: FloatArray,
    K: FloatArray,
    m: FloatArray,
    mu: FloatArray | None,
    index: npt.NDArray[np.int64],
    seed: int,
    settings: SamplerSettings,
    fallback: bool = False,
) -> None:
    from prefeval_core.decision.reference import nuts_posterior

    if fallback:
        # pad to a power of two (repeating the first pair): one compiled sampler per bucket
        bucket = 1 << (len(index) - 1).bit_length()
        padded = np.concatenate([index, np.repeat(index[:1], bucket - len(index))])
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
        keep = slice(0, len(index))
        columns.put(
            index,
            summary.theta[keep],
            summary.p_mean[keep],
            summary.theta_mc_se[keep],
            summary.ess[keep],
            summary.rhat[keep],
            "nuts_fallback",
        )
        return
    for i in index:
        one = slice(i, i + 1)
        summary = nuts_posterior(n[one], K[one], m[one], None if mu is None else mu[one], seed=seed, settings=settings)
        columns.put(i, summary.theta, summary.p_mean, summary.theta_mc_se, summary.ess, summary.rhat, "nuts")


def check_counts(n: npt.ArrayLike, K: npt.ArrayLike | None, m: npt.ArrayLike | None) -> tuple[FloatArray, FloatArray, FloatArray]:
    """``n`` (P, 3), ``K`` (P, 3, 3) and ``m`` (P, 3) as float64 (``None``: zeros); ValueError on
    wrong shapes or counts that are not non-negative integers."""
    n_arr = np.asarray(n)
    if n_arr.ndim != 2 or n_arr.shape[1] != 3:
        raise ValueError(f"n must have shape (P, 3), got {n_arr.shape}")
    P = n_arr.shape[0]
    K_arr = np.zeros((P, 3, 3)) if K is None else np.asarray(K)
    m_arr = np.zeros((P, 3)) if m is None else np.asarray(m)
    if K_arr.shape != (P, 3, 3):
        raise ValueError(f"K must have shape ({P}, 3, 3), got {K_arr.shape}")
    if m_arr.shape != (P, 3):
        raise ValueError(f"m must have shape ({P}, 3), got {m_arr.shape}")
    arrays = []
    for name, arr in (("n", n_arr), ("K", K_arr), ("m", m_arr)):
        if not np.all(np.isfinite(arr)) or np.any(arr < 0) or np.any(arr != np.round(arr)):
            raise ValueError(f"{name} must hold non-negative integer counts")
        arrays.append(arr.astype(np.float64))
    return arrays[0], arrays[1], arrays[2]


def check_mu(mu: npt.ArrayLike | None, P: int) -> FloatArray:
    """A known ``mu`` as (P, 3, 3) float64; ValueError if missing, misshapen or not column-stochastic."""
    if mu is None:
        raise ValueError("model 'known_mu' needs mu")
    mu_arr = np.asarray(mu, dtype=np.float64)
    if mu_arr.shape == (3, 3):
        mu_arr = np.broadcast_to(mu_arr, (P, 3, 3)).copy()
    if mu_arr.shape != (P, 3, 3):
        raise ValueError(f"mu must have shape (3, 3) or ({P}, 3, 3), got {mu_arr.shape}")
    if np.any(mu_arr < 0) or not np.allclose(mu_arr.sum(axis=1), 1.0, atol=1e-9):
        raise ValueError("mu must be non-negative with columns (over the metric outcome, axis -2) summing to 1")
    return mu_arr
