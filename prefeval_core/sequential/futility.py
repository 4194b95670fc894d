"""Futility: stop asking for a pair's judgments when the items it has left will not separate the systems.

A futility stop can only *remove* decisions, never add one, so the error control of
:mod:`prefeval_core.sequential.evidence` is untouched; its price is power, bounded as follows.

* ``exact``: even if every remaining pool item were decisive in the favoured direction, no
  e-process could reach its threshold. The human e-process grows with each ``>`` and shrinks with
  each ``<`` (factors ``2t`` and ``2(1-t)`` of the mixture), so its largest reachable value is at
  ``(n> + R, n<)``: checked in closed form. No decision is ever lost. (The metric e-process has no
  such bound: for metric models ``exact`` stops only pairs without items left.)
* ``predictive``: the posterior-predictive probability that the run reaches a decision before
  the pool ends is below ``beta`` ("predictive power", Spiegelhalter, Freedman & Blackburn 1986).
  Under the model's prior predictive this loses at most ``beta`` of the decisions: a run is
  stopped at most once, and where it is stopped the probability it would still have decided is
  below ``beta``. ``beta`` is a setting; the default is ``gamma`` **(choice)**: as much power
  risked as error allowed, fixed in advance, not tuned to any data set.

**Human only, exactly.** With ``p ~ Dirichlet(n + 1)`` the future decisive outcomes follow a
Pólya urn with ``(n> + 1, n< + 1)`` balls, independently of how many of the R remaining items
are decisive, which is beta-binomial ``(R, n> + n< + 2, n= + 1)``. The e-process crosses its
threshold in direction ``>`` exactly when ``n>`` reaches an integer boundary ``g(D)`` that
depends only on the number D of decisive outcomes (:func:`decisive_boundary`; ``<`` is the mirror
image), so the probability of crossing within d more decisive outcomes is a walk between two
absorbing boundaries, computed exactly by dynamic programming over the urn
(:func:`human_success_probability`; continuous monitoring, so it can only overstate the chance of
the protocol, which looks once a round: a safe error). It costs ``O(R^2)`` per pair, so a fast
Brownian-motion approximation (:func:`approximate_human_success`: the walk as a Brownian motion
with drift ``2t - 1`` for t on a grid of the posterior, the boundary replaced by its chord, whose
crossing probability is closed-form; the boundary is concave, so the chord lies below it) only
screens out the pairs that are clearly far from futile; the exact computation decides the rest.

**With a metric** the union bound of the decision rule gives ``P(decision) <= P_human + P_metric``.
``P_metric`` is approximated by simulation (:func:`approximate_metric_success`): remaining pool
items' human outcomes drawn from a data-augmentation approximation of the posterior (a Dirichlet
over the expected complete cell counts at the smoothed fit), the e-process evaluated halfway and
at the end of the pool, with the current predictor for the new items. Its error against the
decisions actually lost is measured in ``bench/bench_error_control.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy.special import betaincinv, betaln, gammaln, log_ndtr

from prefeval_core.errors import settings_error
from prefeval_core.pairs.counts import JointCounts
from prefeval_core.sequential.evidence import METRIC_SHARE, check_concentration, check_gamma, log_thresholds
from prefeval_core.sequential.human import MIXTURE_CONCENTRATION, decisive_log_e
from prefeval_core.sequential.metric import ALTERNATIVE_SIDES, metric_data, metric_log_e, predictive_log_score
from prefeval_core.sequential.mle import MetricData, smoothed_fit
from prefeval_core.vocabulary.outcomes import BETTER, TIE, WORSE

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

Futility = Literal["off", "exact", "predictive"]
"""``off``: ask until decided or the pool ends; ``exact``: stop when no decision is reachable any
more; ``predictive``: also stop when a decision has posterior-predictive probability below ``beta``."""
FUTILITY_RULES: tuple[Futility, ...] = ("off", "exact", "predictive")

SCREEN_FACTOR = 2.0
"""The approximation screens out a pair when it puts the success probability above this many ``beta``."""
QUANTILE_NODES = 32
"""Grid of the posterior of ``t = p> / (p> + p<)`` in the approximation: midpoints of equal-probability bins."""
METRIC_SIMULATIONS = 32
"""Simulated completions per pair for ``P_metric``."""


@dataclass(frozen=True)
class FutilityResult:
    """Futility of P pairs.

    Attributes:
        futile: (P,) bool: stop asking for this pair's judgments.
        reachable: (P,) bool: some e-process can still reach its threshold with the items left
            (``False`` is certain futility; always ``True`` with a metric and items left).
        success_probability: (P,) posterior-predictive probability of a decision before the pool
            ends: exact for the human part where the Brownian screen put it below
            ``SCREEN_FACTOR * beta`` (with monitoring after every outcome, so never below the
            protocol's chance), the screen's value above that; with a metric, plus the simulated
            metric part for pairs whose human part is below beta. 0 for unreachable pairs; NaN
            for the rules ``off`` and ``exact``.
        beta: the bound on the lost decisions used.
    """

    futile: npt.NDArray[np.bool_]
    reachable: npt.NDArray[np.bool_]
    success_probability: FloatArray
    beta: float


def futility(
    counts: JointCounts | npt.ArrayLike,
    remaining: npt.ArrayLike,
    gamma: float,
    *,
    rule: Futility = "predictive",
    beta: float | None = None,
    log_numerator: npt.ArrayLike | None = None,
    mu: npt.ArrayLike | None = None,
    remaining_patterns: npt.ArrayLike | None = None,
    metric_share: float = METRIC_SHARE,
    concentration: float = MIXTURE_CONCENTRATION,
    seed: int = 0,
) -> FutilityResult:
    """Which undecided pairs to stop asking about (module docstring).

    Args:
        counts: as in :func:`~prefeval_core.sequential.evidence.anytime_decisions`: JointCounts, or
            human outcome counts ``n`` (P, 3) for human only.
        remaining: (P,) items of each pair's pool whose human outcome can still be revealed
            (capped by what the budget can still buy, if the caller wants the budget counted).
        gamma: the level of the decisions.
        rule: the futility rule.
        beta: the bound on lost decisions for ``predictive``; default ``gamma``.
        log_numerator, mu: the metric e-process's state and known ``mu``, as in
            ``anytime_decisions``; ``None`` for human only.
        remaining_patterns: with a metric, (P, J) the remaining pool items by metric pattern (J =
            4^k as in JointCounts; they are among ``counts.unrevealed``); their sum is ``remaining``.
        metric_share, concentration: as in ``anytime_decisions``.
        seed: seeds the simulation of ``P_metric`` (same inputs and seed, same result).
    """
    check_gamma(gamma)
    check_concentration(concentration)
    if rule not in FUTILITY_RULES:
        raise settings_error(f"unknown futility rule {rule!r}; expected one of {', '.join(FUTILITY_RULES)}", field="futility")
    beta = gamma if beta is None else beta
    if not 0.0 < beta < 1.0:
        raise settings_error(f"beta must be in (0, 1), got {beta}", field="beta")
    n = np.asarray(counts.n if isinstance(counts, JointCounts) else counts, dtype=np.float64)
    remaining_arr = np.asarray(remaining, dtype=np.int64)
    if remaining_arr.shape != (n.shape[0],) or np.any(remaining_arr < 0):
        raise settings_error(f"remaining must be (P,) = ({n.shape[0]},) and non-negative")
    with_metric = log_numerator is not None
    threshold, metric_threshold = log_thresholds(gamma, metric_share if with_metric else None)
    P = n.shape[0]
    probability = np.full(P, np.nan)
    if rule == "off":
        return FutilityResult(np.zeros(P, dtype=bool), np.ones(P, dtype=bool), probability, beta)
    a, b = n[:, BETTER].astype(np.int64), n[:, WORSE].astype(np.int64)
    best = decisive_log_e(np.stack([a + remaining_arr, a]), np.stack([b, b + remaining_arr]), concentration)
    human_reachable = (best[0, :, 0] >= threshold) | (best[1, :, 1] >= threshold)
    reachable = human_reachable | (with_metric & (remaining_arr > 0))
    futile = ~reachable
    if rule == "exact":
        return FutilityResult(futile, reachable, probability, beta)
    open_pairs = np.flatnonzero(reachable)
    human = np.zeros(P)
    human[open_pairs] = human_success(n[open_pairs], remaining_arr[open_pairs], threshold, beta, concentration)
    probability[:] = human
    if with_metric:
        if not isinstance(counts, JointCounts) or remaining_patterns is None:
            raise settings_error("futility with a metric needs JointCounts and remaining_patterns")
        candidates = open_pairs[human[open_pairs] < beta]
        if candidates.size:
            probability[candidates] += approximate_metric_success(
                counts.subset(candidates),
                np.asarray(log_numerator, dtype=np.float64)[candidates],
                np.asarray(remaining_patterns, dtype=np.int64)[candidates],
                metric_threshold,
                None if mu is None else np.broadcast_to(np.asarray(mu, dtype=np.float64), (P, 3, 3))[candidates],
                seed,
            )
    futile[open_pairs] = probability[open_pairs] < beta
    return FutilityResult(futile, reachable, probability, beta)


def human_success(
    n: FloatArray, remaining: IntArray, threshold: float, beta: float, concentration: float = MIXTURE_CONCENTRATION
) -> FloatArray:
    """(P,) the probability of a human-only decision before the pool ends: the approximation where it is
    above ``SCREEN_FACTOR * beta``, the exact value (:func:`human_success_probability`) elsewhere."""
    approximate = approximate_human_success(n, remaining, threshold, concentration)
    close = np.flatnonzero(approximate < SCREEN_FACTOR * beta)
    if close.size:
        approximate[close] = human_success_probability(n[close], remaining[close], threshold, concentration)
    return approximate


def decisive_boundary(max_decisive: int, threshold: float, concentration: float = MIXTURE_CONCENTRATION) -> IntArray:
    """``g(D)`` for ``D = 0..max_decisive``: the least ``n>`` with ``log E_>(n>, D - n>) >= threshold``
    among D decisive outcomes (``D + 1``, i.e. never, where even ``n> = D`` falls short). By symmetry
    ``log E_< >= threshold`` exactly when ``n< >= g(D)``. ``log E_>`` increases with ``n>`` at fixed D."""
    totals = np.arange(max_decisive + 1, dtype=np.int64)
    low = np.zeros_like(totals)
    high = totals + 1  # invariant: the boundary lies in [low, high]; high = D + 1 means none
    while np.any(low < high):
        middle = (low + high) // 2
        probe = np.minimum(middle, totals)
        crosses = (decisive_log_e(probe, totals - probe, concentration)[:, 0] >= threshold) & (middle <= totals)
        high = np.where(crosses & (low < high), middle, high)
        low = np.where(~crosses & (low < high), middle + 1, low)
    return low


def human_success_probability(
    n: FloatArray, remaining: IntArray, threshold: float, concentration: float = MIXTURE_CONCENTRATION
) -> FloatArray:
    """(P,) exact posterior-predictive probability that the human e-process crosses ``threshold`` in
    either direction within the ``remaining`` items (module docstring; continuous monitoring).

    Dynamic programming over the Pólya urn of the decisive outcomes, vectorised over pairs. Only the
    band of future ``>`` counts x that have crossed neither boundary is kept (x from
    ``j + n< - g + 1`` to ``g - n> - 1`` after j decisive outcomes, g = ``g(D + j)``), so a pair costs
    ``O(R * band)``, the band about ``2 sqrt(D log D)`` wide.
    """
    n = np.asarray(n, dtype=np.float64)
    P = n.shape[0]
    if P == 0:
        return np.zeros(0)
    a, ties, b = n[:, BETTER], n[:, TIE], n[:, WORSE]
    D = (a + b).astype(np.int64)
    a_int, b_int = a.astype(np.int64), b.astype(np.int64)
    R = int(remaining.max())
    boundary = decisive_boundary(int(D.max()) + R, threshold, concentration)
    steps = np.arange(R + 1)
    g = boundary[D[:, None] + steps[None, :]]  # (P, R + 1)
    low = np.maximum(steps[None, :] + b_int[:, None] - g + 1, 0)  # least alive x after j steps
    high = np.minimum(steps[None, :], g - a_int[:, None] - 1)  # largest alive x
    width = int(max((high - low).max(), 0)) + 2
    offsets = np.arange(width)
    alive = np.where((offsets[None, :] == 0) & (low[:, :1] <= 0) & (high[:, :1] >= 0), 1.0, 0.0)
    crossed = np.zeros((P, R + 1))
    crossed[:, 0] = 1.0 - alive.sum(axis=1)
    for j in range(R):
        x = low[:, j : j + 1] + offsets[None, :]
        up = alive * (a[:, None] + 1.0 + x) / (a[:, None] + b[:, None] + 2.0 + j)
        moved = alive - up  # stays at x (a <), in window coordinates of step j
        moved[:, 1:] += up[:, :-1]  # x + 1 (a >)
        shift = (low[:, j + 1] - low[:, j])[:, None]  # 0 or 1: re-anchor the window at step j + 1
        source = offsets[None, :] + shift
        alive = np.where(source < width, np.take_along_axis(moved, np.minimum(source, width - 1), axis=1), 0.0)
        alive[offsets[None, :] > (high[:, j + 1] - low[:, j + 1])[:, None]] = 0.0
        crossed[:, j + 1] = 1.0 - alive.sum(axis=1)
    # P(d of the remaining items decisive): beta-binomial(R, D + 2, ties + 1)
    d = steps[None, :]
    log_pmf = (
        gammaln(remaining[:, None] + 1.0)
        - gammaln(d + 1.0)
        - gammaln(np.maximum(remaining[:, None] - d, 0) + 1.0)
        + betaln(d + D[:, None] + 2.0, np.maximum(remaining[:, None] - d, 0) + ties[:, None] + 1.0)
        - betaln(D[:, None] + 2.0, ties[:, None] + 1.0)
    )
    pmf = np.where(d <= remaining[:, None], np.exp(log_pmf), 0.0)
    return np.asarray(np.clip((pmf * crossed).sum(axis=1), 0.0, 1.0), dtype=np.float64)


def approximate_human_success(
    n: FloatArray, remaining: IntArray, threshold: float, concentration: float = MIXTURE_CONCENTRATION
) -> FloatArray:
    """(P,) a fast approximation of :func:`human_success_probability` (module docstring): the decisive
    walk ``n> - n<`` as a Brownian motion with drift ``2t - 1`` and variance ``4t(1 - t)`` per decisive
    outcome, for t at ``QUANTILE_NODES`` posterior quantiles, over the expected number of future
    decisive outcomes, against the chord of the boundary (Bachelier-Lévy formula)."""
    n = np.asarray(n, dtype=np.float64)
    a, ties, b = n[:, BETTER], n[:, TIE], n[:, WORSE]
    D = a + b
    future = remaining * (D + 2.0) / (D + ties + 3.0)
    P = n.shape[0]
    D_int = D.astype(np.int64)
    horizon = np.maximum(np.rint(future).astype(np.int64), 1)
    boundary = decisive_boundary(int((D_int + horizon).max()) if P else 0, threshold, concentration).astype(np.float64)
    start, end = boundary[D_int], boundary[D_int + horizon]
    nodes = (np.arange(QUANTILE_NODES) + 0.5) / QUANTILE_NODES
    t = betaincinv(a[:, None] + 1.0, b[:, None] + 1.0, nodes[None, :])
    total = np.zeros(P)
    for own, other, drift_sign in ((a, b, 1.0), (b, a, -1.0)):
        # the walk W = own - other must reach 2 g(D + s) - (D + s) - (own - other) at step s
        gap_now = 2.0 * start - D - (own - other)
        gap_end = 2.0 * end - (D + horizon) - (own - other)
        slope = (gap_end - gap_now) / horizon
        drift = drift_sign * (2.0 * t - 1.0) - slope[:, None]
        variance = np.maximum(4.0 * t * (1.0 - t), 1e-12)
        crossing = _first_passage(np.maximum(gap_now, 0.0)[:, None], drift, variance, horizon[:, None].astype(np.float64))
        possible = (end <= D + horizon)[:, None]  # g = D + 1 means the end is out of reach
        total += np.where(possible, crossing, 0.0).mean(axis=1)
    return np.asarray(np.clip(total, 0.0, 1.0), dtype=np.float64)


def _first_passage(level: FloatArray, drift: FloatArray, variance: FloatArray, horizon: FloatArray) -> FloatArray:
    """``P(sup_{s <= T} (drift s + sigma B_s) >= level)`` for ``level >= 0`` (Bachelier-Lévy)."""
    sd = np.sqrt(variance * horizon)
    direct = np.exp(log_ndtr((drift * horizon - level) / sd))
    reflected = np.exp(np.minimum(2.0 * level * drift / variance + log_ndtr((-drift * horizon - level) / sd), 0.0))
    return np.asarray(np.minimum(direct + reflected, 1.0), dtype=np.float64)


def approximate_metric_success(
    counts: JointCounts,
    log_numerator: FloatArray,
    remaining_patterns: IntArray,
    threshold: float,
    mu: FloatArray | None,
    seed: int,
) -> FloatArray:
    """(P,) approximate probability that the metric e-process crosses ``threshold`` before the pool
    ends (module docstring): ``METRIC_SIMULATIONS`` completions per pair, checked halfway and at the end."""
    data = metric_data(counts)
    pool = metric_data(JointCounts(counts.metrics, np.zeros(counts.revealed.shape, dtype=np.int64), remaining_patterns))
    pool_metric, pool_plain = pool.m, remaining_patterns.sum(axis=1) - pool.m.sum(axis=1)
    P, S = data.n_pairs, METRIC_SIMULATIONS
    rng = np.random.default_rng(seed)
    cells = _posterior_cells(data, mu, rng, S)  # (P, S, 3, 3)
    predictors = [smoothed_fit(data, side, mu) for side in ALTERNATIVE_SIDES]
    halfway = rng.binomial(pool_metric.astype(np.int64)[:, None, :], 0.5, size=(P, S, 3)).astype(np.float64)
    halfway_plain = rng.binomial(pool_plain.astype(np.int64)[:, None], 0.5, size=(P, S)).astype(np.float64)
    success = np.zeros((P, S), dtype=bool)
    whole = (np.broadcast_to(pool_metric[:, None, :], (P, S, 3)), np.broadcast_to(pool_plain[:, None], (P, S)).astype(np.float64))
    for metric_items, plain_items in ((halfway, halfway_plain), whole):
        new_K = _draw_rows(rng, metric_items, cells)
        columns = cells.sum(axis=2)
        new_n0 = _draw_multinomial(rng, plain_items, columns)
        future = MetricData(
            K=(data.K[:, None] + new_K).reshape(P * S, 3, 3),
            n0=(data.n0[:, None] + new_n0).reshape(P * S, 3),
            m=(data.m[:, None] - metric_items).reshape(P * S, 3),
        )
        numerator = np.repeat(log_numerator, S, axis=0)
        for direction, pi in enumerate(predictors):
            numerator[:, direction] += predictive_log_score(pi[:, None], new_K, new_n0).reshape(P * S)
        log_e = metric_log_e(future, numerator, None if mu is None else np.repeat(mu, S, axis=0), log_threshold=threshold)
        success |= (log_e >= threshold).any(axis=1).reshape(P, S)
    return np.asarray(success.mean(axis=1), dtype=np.float64)


def _posterior_cells(data: MetricData, mu: FloatArray | None, rng: np.random.Generator, draws: int) -> FloatArray:
    """(P, S, 3, 3) draws of ``pi`` from a Dirichlet over the expected complete counts at the smoothed fit."""
    pi = smoothed_fit(data, "any", mu)
    rows, columns = pi.sum(axis=2), pi.sum(axis=1)
    share_m = np.divide(data.m, rows, out=np.zeros_like(rows), where=data.m > 0)
    share_n0 = np.divide(data.n0, columns, out=np.zeros_like(columns), where=data.n0 > 0)
    complete = data.K + share_m[:, :, None] * pi + share_n0[:, None, :] * pi
    if mu is None:
        alpha = complete.reshape(len(pi), 9) + 1.0
        return _dirichlet_rows(rng, alpha, draws).reshape(len(pi), draws, 3, 3)
    p = _dirichlet_rows(rng, complete.sum(axis=1) + 1.0, draws)  # (P, S, 3)
    return mu[:, None, :, :] * p[:, :, None, :]


def _dirichlet_rows(rng: np.random.Generator, alpha: FloatArray, draws: int) -> FloatArray:
    """(P, S, K) ``draws`` Dirichlet(``alpha[p]``) draws per row: the numbers of
    ``np.stack([rng.dirichlet(row, size=draws) for row in alpha])`` in one call (NumPy's dirichlet,
    for every concentration above 0.1, draws ``standard_gamma(alpha[j])`` in the same order and scales
    them by the reciprocal of their running sum). ``alpha >= 1`` here (counts + 1)."""
    gammas = rng.standard_gamma(np.broadcast_to(alpha[:, None, :], (len(alpha), draws, alpha.shape[1])))
    total = gammas[..., 0].copy()
    for j in range(1, alpha.shape[1]):
        total += gammas[..., j]
    return np.asarray(gammas * (1.0 / total)[..., None], dtype=np.float64)


def _draw_rows(rng: np.random.Generator, items: FloatArray, cells: FloatArray) -> FloatArray:
    """(P, S, 3, 3) human outcomes of ``items[p, s, c]`` items the metric said c: multinomial over row c of ``cells``."""
    rows = cells / cells.sum(axis=3, keepdims=True)
    return np.stack([_draw_multinomial(rng, items[:, :, c], rows[:, :, c, :]) for c in range(3)], axis=2)


def _draw_multinomial(rng: np.random.Generator, trials: FloatArray, probabilities: FloatArray) -> FloatArray:
    """Multinomial draws with per-entry trials (...,) and probabilities (..., 3)."""
    return np.asarray(rng.multinomial(trials.astype(np.int64), probabilities), dtype=np.float64)
