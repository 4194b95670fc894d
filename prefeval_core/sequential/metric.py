"""The metric-assisted e-process: universal inference on the model of method.md §4.

**Data and filtration.** A pair's data are the metric outcomes of all its items, ``X_0``,
known before any human judgment (time 0), then the human outcomes, revealed batch after batch.
Under a parameter ``theta = (p, mu)`` the likelihood after round t is the ``L_t(theta)`` of
:mod:`prefeval_core.sequential.mle` (revealed items ``p_h mu[c, h]``, revealed items without a
metric outcome ``p_h``, unrevealed items ``(mu p)_c``), which factorises as

    L_t(theta) = P_theta(X_0) * prod_{revealed s} P_theta(h_s | c_s).

**The e-process** for the null ``H0^>: p> <= p<`` (and symmetrically for ``<``) is

    E_>(t) = DM(X_0) * prod_s Phat_s(h_s | c_s)  /  sup_{theta in H0^>} L_t(theta),

* ``DM(X_0)``: the Dirichlet(1, 1, 1)-multinomial probability of the *sequence* of the pair's
  metric outcomes, ``2 prod_c M_c! / (M + 2)!`` with ``M_c`` the items the metric said ``c``
  (a fixed distribution, so ``DM(X_0) / P_theta0(X_0)`` has mean 1 under any ``theta0``);
* ``Phat_s(h | c)``: a *predictable* estimate, computed from the counts before item s's batch
  (:func:`update_log_numerator`), here the smoothed fit of the model on the alternative's
  side ``p> >= p<`` (:func:`prefeval_core.sequential.mle.smoothed_fit`); items without a
  metric outcome are scored with its ``phat_h``. Its running sum of logs over the revealed
  items is the only state the protocol keeps per pair (``log_numerator``, one per direction);
* the denominator: the constrained maximum likelihood, bounded from above with a certificate
  (:func:`prefeval_core.sequential.mle.max_log_likelihood`).

For every ``theta0`` in ``H0^>`` the numerator over ``L_t(theta0)`` is a nonnegative
martingale with mean 1 (each batch multiplies it by a factor with conditional mean 1, given
``X_0`` and the past, whatever items the protocol picks, as long as it picks them without
looking at their human outcomes); the supremum in the denominator only makes ``E_>``
smaller. By Ville's inequality ``P(sup_t E_> >= 1/a) <= a`` (universal inference: Wasserman,
Ramdas & Balakrishnan 2020, PNAS, Sec. 7 for the sequential form; Ramdas et al. 2023).

**What it costs.** ``log DM(X_0) - max log P(X_0)`` is about ``-log M`` nats (M metric items):
the price of not knowing the metric's outcome rates, paid once. With ``mu`` free the null can
always fit ``X_0`` (any ``q = mu p`` is reachable), so the metric helps only through the
revealed items that show how its outcomes relate to the humans'. With ``mu`` known (the ideal
metric of method.md §10) ``X_0`` alone carries evidence.

**Several metrics** (:class:`~prefeval_core.pairs.counts.JointCounts` with k > 1): the k outcomes of an
item are reduced to one derived outcome, the sign of the sum of their values ``v`` (``>``, ``=``,
``<``; none where no metric rated the item) (:func:`vote_counts`), and the single-metric
e-process runs on it. The derived outcome is a fixed function of the metrics' outcomes, so it
is a metric like any other and the guarantee is unchanged; the ``X_0`` price stays that of one
metric instead of growing with ``4^k`` patterns.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy.special import gammaln, xlogy

from prefeval_core.errors import settings_error
from prefeval_core.pairs.counts import JointCounts, pattern_codes
from prefeval_core.sequential.mle import Fit, MetricData, Side, max_log_likelihood, smoothed_fit
from prefeval_core.vocabulary.outcomes import BETTER, TIE, VALUES, WORSE

FloatArray = npt.NDArray[np.float64]

NULL_SIDES: tuple[Side, Side] = ("at_most", "at_least")
"""The null of each direction: ``>`` tests ``p> <= p<``, ``<`` tests ``p> >= p<`` (axis -1 of every (P, 2) array)."""
ALTERNATIVE_SIDES: tuple[Side, Side] = ("at_least", "at_most")
"""The side each direction's predictor is restricted to."""

PREDICTOR_PSEUDO_COUNT = 0.5
"""Added to every complete-data count of the predictor's fit, so that no outcome gets probability 0."""
_NO_METRIC = 3


def vote_counts(counts: JointCounts) -> JointCounts:
    """One derived metric from k metrics (module docstring): an item's patterns map to the sign of
    the sum of its metrics' outcome values (missing ones count 0), pattern 3 where none rated it.
    With k = 1 the counts are returned as they are."""
    if counts.k == 1:
        return counts
    codes = pattern_codes(counts.k)
    present = codes < _NO_METRIC
    total = np.where(present, VALUES[np.minimum(codes, WORSE)], 0).sum(axis=1)
    derived = np.where(total > 0, BETTER, np.where(total < 0, WORSE, TIE))
    derived = np.where(present.any(axis=1), derived, _NO_METRIC)
    revealed = np.zeros((counts.n_pairs, 4, 3), dtype=np.int64)
    unrevealed = np.zeros((counts.n_pairs, 4), dtype=np.int64)
    for code in range(4):
        revealed[:, code] = counts.revealed[:, derived == code].sum(axis=1)
        unrevealed[:, code] = counts.unrevealed[:, derived == code].sum(axis=1)
    return JointCounts(("vote(" + ",".join(counts.metrics) + ")",), revealed, unrevealed)


def metric_data(counts: JointCounts, mu: npt.ArrayLike | None = None) -> MetricData:
    """The one-metric counts ``(K, n0, m)`` of :class:`MetricData` (k > 1 reduced by :func:`vote_counts`).

    Raises:
        ValueError: for a known ``mu`` with k > 1 (a mixture matrix describes one metric, not a vote).
    """
    if mu is not None and counts.k > 1:
        raise settings_error(f"a known mixture matrix describes one metric; these counts have {counts.k}")
    single = vote_counts(counts)
    revealed = single.revealed.astype(np.float64)
    return MetricData(K=revealed[:, :3, :], n0=revealed[:, _NO_METRIC, :], m=single.unrevealed[:, :3].astype(np.float64))


def log_x0_factor(data: MetricData) -> FloatArray:
    """(P,) ``log DM(X_0) = log 2 + sum_c log M_c! - log (M + 2)!``, the Dirichlet(1, 1, 1)-multinomial
    probability of the sequence of all metric outcomes of each pair."""
    totals = data.metric_totals
    return np.asarray(np.log(2.0) + gammaln(totals + 1.0).sum(axis=1) - gammaln(totals.sum(axis=1) + 3.0), dtype=np.float64)


def initial_log_numerator(n_pairs: int) -> FloatArray:
    """(P, 2) zeros: the running sum before any human outcome is revealed."""
    return np.zeros((n_pairs, 2))


def update_log_numerator(
    previous: JointCounts, current: JointCounts, log_numerator: npt.ArrayLike, mu: npt.ArrayLike | None = None
) -> FloatArray:
    """The running sums after a round: ``log_numerator + sum over newly revealed items of log Phat(h | c)``.

    Args:
        previous: the counts before the round (they fit the predictor: predictable).
        current: the counts after the round; only the revealed items may differ, and only upwards.
        log_numerator: (P, 2) the running sums before the round (``[:, 0]`` for ``>``, ``[:, 1]``
            for ``<``); :func:`initial_log_numerator` before the first round.
        mu: the known mixture matrix (3, 3) or (P, 3, 3) (rows = metric, columns = human), or
            ``None`` for the full model; the same in every call of a run.

    Returns:
        (P, 2) the new running sums.

    Raises:
        ValueError: if ``current`` does not extend ``previous`` (a revealed count went down, or an
            item's metric outcomes changed), or on shapes.
    """
    log_numerator = np.asarray(log_numerator, dtype=np.float64)
    if log_numerator.shape != (previous.n_pairs, 2) or current.n_pairs != previous.n_pairs or current.metrics != previous.metrics:
        raise settings_error("previous, current and log_numerator must describe the same pairs and metrics, log_numerator (P, 2)")
    if np.any(current.revealed < previous.revealed) or not np.array_equal(
        current.revealed.sum(axis=2) + current.unrevealed, previous.revealed.sum(axis=2) + previous.unrevealed
    ):
        raise settings_error("current counts must extend previous ones: revealed counts may only grow, and the items stay the same")
    before, after = metric_data(previous, mu), metric_data(current, mu)
    new_K, new_n0 = after.K - before.K, after.n0 - before.n0
    mu_arr = None if mu is None else np.broadcast_to(np.asarray(mu, dtype=np.float64), (previous.n_pairs, 3, 3))
    out = log_numerator.copy()
    changed = np.flatnonzero((new_K.sum(axis=(1, 2)) + new_n0.sum(axis=1)) > 0)
    if changed.size == 0:
        return out
    sub = before.take(changed)
    sub_mu = None if mu_arr is None else mu_arr[changed]
    for direction, side in enumerate(ALTERNATIVE_SIDES):
        pi = smoothed_fit(sub, side, sub_mu, pseudo=PREDICTOR_PSEUDO_COUNT)
        out[changed, direction] += predictive_log_score(pi, new_K[changed], new_n0[changed])
    return out


def predictive_log_score(pi: FloatArray, new_K: FloatArray, new_n0: FloatArray) -> FloatArray:
    """``sum log Phat(h | c)`` over new items with a metric outcome (``new_K`` (..., 3, 3), rows = metric)
    plus ``sum log phat_h`` over new items without one (``new_n0`` (..., 3)), for the predictor ``pi``
    (..., 3, 3) (broadcast). ``0 log 0 = 0``: a cell a known ``mu`` rules out only matters if it occurs."""
    given_metric = pi / pi.sum(axis=-1, keepdims=True)
    scores = xlogy(new_K, given_metric).sum(axis=(-2, -1)) + xlogy(new_n0, pi.sum(axis=-2)).sum(axis=-1)
    return np.asarray(scores, dtype=np.float64)


def metric_log_e(
    counts: JointCounts | MetricData, log_numerator: npt.ArrayLike, mu: npt.ArrayLike | None = None, *, log_threshold: float | None = None
) -> FloatArray:
    """``log E_>`` and ``log E_<`` of the metric e-process (module docstring), shape (P, 2).

    Args:
        counts: the pairs' counts now (or their one-metric form).
        log_numerator: (P, 2) the running sums of :func:`update_log_numerator` up to now.
        mu: as in :func:`update_log_numerator`.
        log_threshold: if given, the null fit of a pair stops as soon as it shows that the
            e-value is below ``exp(log_threshold)`` (faster; the value returned there is then a
            looser lower bound). Without it every value is within ``GAP_TOLERANCE`` nats of exact.

    Returns:
        Certified lower bounds of the log e-values (the denominator is an upper bound on the
        constrained maximum likelihood).
    """
    data = counts if isinstance(counts, MetricData) else metric_data(counts, mu)
    log_numerator = np.asarray(log_numerator, dtype=np.float64)
    known = log_x0_factor(data)[:, None] + log_numerator
    out = np.empty((data.n_pairs, 2))
    for direction, side in enumerate(NULL_SIDES):
        stop_at = None if log_threshold is None else known[:, direction] - log_threshold + 1e-6
        fit: Fit = max_log_likelihood(data, side, None if mu is None else np.asarray(mu, dtype=np.float64), stop_at=stop_at)
        out[:, direction] = known[:, direction] - fit.upper_bound
    return out
