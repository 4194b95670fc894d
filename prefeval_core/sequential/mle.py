"""Maximum likelihood of the metric model on one side of ``p> = p<``, with a certificate.

The model of method.md §4 for one pair and one metric: an item's true (human) outcome ``h ~ p``,
the metric's outcome ``c | h ~ mu[:, h]``. Written with the joint cell probabilities
``pi[c, h] = mu[c, h] p_h`` (rows = metric, columns = human, order ``>, =, <``; ``p`` = column
sums of ``pi``), the likelihood of the counts of :mod:`prefeval_core.pairs.counts` is

    L(pi) = prod_{c,h} pi[c,h]^K[c,h] * prod_h p_h^n0[h] * prod_c (mu p)_c^m[c],

``K`` the revealed items with a metric outcome, ``n0`` the revealed items without one, ``m``
the unrevealed items with one (``(mu p)_c`` = row sums of ``pi``). With ``mu`` free (the full
model) ``pi`` is any distribution on the 9 cells; with ``mu`` known, ``pi = mu diag(p)``.

``log L`` is a sum of logarithms of linear functions of ``pi`` (or ``p``), hence **concave**, and
the sides ``p> <= p<`` and ``p> >= p<`` are convex polytopes: every local maximum is global.
:func:`max_log_likelihood` climbs by EM (the missing halves of the cells: the true outcomes
of the unrevealed items, the metric's outcomes of the items it did not rate; the M-step under
the side's constraint has a closed form) and returns an **upper bound** on the maximum, ``log L(pi) + gap``, where ``gap`` is the
Frank-Wolfe duality gap ``max_{s in side} grad log L(pi) . (s - pi)`` (for a concave function
over a polytope the maximum lies below every tangent plane; Jaggi 2013, Sec. 2). The e-process
divides by this bound, so a maximiser that has not fully converged only makes the evidence
smaller, never larger.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy.special import xlogy

from prefeval_core.errors import settings_error
from prefeval_core.vocabulary.outcomes import BETTER, TIE, WORSE

FloatArray = npt.NDArray[np.float64]

Side = Literal["any", "at_most", "at_least"]
"""Which ``p`` are allowed: all (``any``), ``p> <= p<`` (``at_most``: the null of ``>``), or
``p> >= p<`` (``at_least``: the null of ``<``)."""

GAP_TOLERANCE = 1e-3
"""EM stops once the certificate is this tight (nats: the e-value is then within 0.1% of exact);
the bound stays valid either way."""
MAX_ITERATIONS = 3000
"""At most this many EM steps per pair (SQUAREM counts three per extrapolation)."""


@dataclass(frozen=True)
class MetricData:
    """The counts of P pairs for one metric (method.md §3, with ``n`` split by metric coverage).

    Attributes:
        K: (P, 3, 3) revealed items with a metric outcome, rows = metric, columns = human.
        n0: (P, 3) revealed items without a metric outcome, by human outcome.
        m: (P, 3) unrevealed items with a metric outcome, by metric outcome.
    """

    K: FloatArray
    n0: FloatArray
    m: FloatArray

    @property
    def n_pairs(self) -> int:
        return int(self.K.shape[0])

    @property
    def metric_totals(self) -> FloatArray:
        """(P, 3) every metric outcome of each pair, revealed or not: ``K.sum(2) + m``."""
        return self.K.sum(axis=2) + self.m

    def take(self, index: npt.NDArray[np.intp] | npt.NDArray[np.bool_]) -> MetricData:
        return MetricData(self.K[index], self.n0[index], self.m[index])


@dataclass(frozen=True)
class Fit:
    """A fitted ``pi`` per pair and the certified bound on the maximum of ``log L``.

    Attributes:
        pi: (P, 3, 3) cell probabilities, rows = metric, columns = human; on the requested side.
        log_likelihood: (P,) ``log L(pi)``.
        gap: (P,) Frank-Wolfe gap: ``max log L <= log_likelihood + gap`` (0 for smoothed fits,
            which do not maximise ``L``).
        iterations: EM iterations run (the largest over pairs).
    """

    pi: FloatArray
    log_likelihood: FloatArray
    gap: FloatArray
    iterations: int

    @property
    def upper_bound(self) -> FloatArray:
        """(P,) an upper bound on ``max log L`` over the side."""
        return self.log_likelihood + self.gap


def max_log_likelihood(data: MetricData, side: Side, mu: FloatArray | None = None, *, stop_at: FloatArray | None = None) -> Fit:
    """The maximum of ``log L`` over ``side`` by accelerated EM, with its certificate (module docstring).

    Args:
        data: counts of P pairs.
        side: which ``p`` are allowed.
        mu: ``None`` for the full model (``mu`` free), or the known mixture matrix, (3, 3) or
            (P, 3, 3), rows = metric, columns = human, columns summing to 1.
        stop_at: (P,) optional: a pair stops climbing once ``log L(pi) >= stop_at`` (its maximum is
            then known to be at least that, which is all a caller testing a threshold needs);
            its ``gap`` is still a valid certificate, only looser.

    Raises:
        ValueError: with a known ``mu`` under which an observed outcome is impossible.
    """
    mu_arr = _check_mu(mu, data)
    pi = _initial_pi(data.n_pairs, mu_arr)
    gap = _gap(data, pi, side, mu_arr)
    active = np.flatnonzero(gap > GAP_TOLERANCE)
    iterations = 0
    while active.size and iterations < MAX_ITERATIONS:
        sub = data.take(active)
        sub_mu = None if mu_arr is None else mu_arr[active]
        step = pi[active]
        for _ in range(4):  # the gap costs about as much as an EM step: check it every 12 steps
            step = _squarem_step(sub, step, side, sub_mu, pseudo=0.0)
        iterations += 12
        pi[active] = step
        gap[active] = _gap(sub, step, side, sub_mu)
        unfinished = gap[active] > GAP_TOLERANCE
        if stop_at is not None:
            unfinished &= log_likelihood(sub, step) < stop_at[active]
        active = active[unfinished]
    return Fit(pi=pi, log_likelihood=log_likelihood(data, pi), gap=gap, iterations=iterations)


def _squarem_step(data: MetricData, pi: FloatArray, side: Side, mu: FloatArray | None, pseudo: float) -> FloatArray:
    """Three EM steps' worth of SQUAREM (Varadhan & Roland 2008, scheme S3): two EM steps, a
    squared extrapolation along them, one EM step from there; where the extrapolated point is
    not a distribution or does not beat the plain second step, the plain step is kept, so the
    likelihood never decreases and every result lies on the side (it is an M-step's output)."""
    first = _em_step(data, pi, side, mu, pseudo)
    second = _em_step(data, first, side, mu, pseudo)
    r = first - pi
    v = second - first - r
    r_norm = np.sqrt((r**2).sum(axis=(1, 2)))
    v_norm = np.sqrt((v**2).sum(axis=(1, 2)))
    alpha = np.minimum(-np.divide(r_norm, v_norm, out=np.ones_like(r_norm), where=v_norm > 0), -1.0)[:, None, None]
    jump = pi - 2.0 * alpha * r + alpha**2 * v
    usable = ((jump >= 0) & ((jump > 0) | (second == 0))).all(axis=(1, 2))
    jump = np.where(usable[:, None, None], jump, second)
    jumped = _em_step(data, jump / jump.sum(axis=(1, 2), keepdims=True), side, mu, pseudo)
    better = _log_posterior(data, jumped, mu, pseudo) >= _log_posterior(data, second, mu, pseudo)
    return np.where(better[:, None, None], jumped, second)


def smoothed_fit(data: MetricData, side: Side, mu: FloatArray | None = None, pseudo: float = 0.5, steps: int = 20) -> FloatArray:
    """A smoothed estimate of ``pi`` on ``side`` (P, 3, 3): EM with ``pseudo`` added to every
    complete-data count (the posterior mode under a Dirichlet(1 + pseudo) prior on the cells of
    ``pi``, or on ``p`` when ``mu`` is known), so that no cell is 0; ``steps`` accelerated steps
    (three EM steps each). Used as a predictor: its accuracy matters for power only, never for
    validity."""
    mu_arr = _check_mu(mu, data)
    pi = _initial_pi(data.n_pairs, mu_arr)
    for _ in range(steps):
        pi = _squarem_step(data, pi, side, mu_arr, pseudo)
    return pi


def log_likelihood(data: MetricData, pi: FloatArray) -> FloatArray:
    """(P,) ``log L(pi)`` of the module docstring (``0 log 0 = 0``)."""
    rows, columns = pi.sum(axis=2), pi.sum(axis=1)
    total = xlogy(data.K, pi).sum(axis=(1, 2)) + xlogy(data.n0, columns).sum(axis=1) + xlogy(data.m, rows).sum(axis=1)
    return np.asarray(total, dtype=np.float64)


def _log_posterior(data: MetricData, pi: FloatArray, mu: FloatArray | None, pseudo: float) -> FloatArray:
    """The objective of the (smoothed) fit: ``log L(pi)`` plus ``pseudo`` times the sum of the logs
    of the cells of ``pi`` (full model) or of ``p`` (``mu`` known), matching the M-step's prior."""
    if pseudo == 0.0:
        return log_likelihood(data, pi)
    free = pi if mu is None else pi.sum(axis=1)
    return log_likelihood(data, pi) + pseudo * np.log(free).reshape(len(pi), -1).sum(axis=1)


def _check_mu(mu: FloatArray | None, data: MetricData) -> FloatArray | None:
    if mu is None:
        return None
    mu_arr = np.broadcast_to(np.asarray(mu, dtype=np.float64), (data.n_pairs, 3, 3))
    if np.any(mu_arr < 0) or not np.allclose(mu_arr.sum(axis=1), 1.0):
        raise settings_error("mu must be non-negative with columns summing to 1")
    impossible = ((mu_arr == 0) & (data.K > 0)).any(axis=(1, 2)) | ((mu_arr.sum(axis=2) == 0) & (data.m > 0)).any(axis=1)
    if np.any(impossible):
        raise settings_error("the known mixture matrix gives probability 0 to an observed metric outcome")
    return np.array(mu_arr)


def _initial_pi(P: int, mu: FloatArray | None) -> FloatArray:
    """``p`` uniform (it lies on both sides); ``mu`` uniform too for the full model."""
    if mu is None:
        return np.full((P, 3, 3), 1.0 / 9.0)
    return mu / 3.0


def _em_step(data: MetricData, pi: FloatArray, side: Side, mu: FloatArray | None, pseudo: float) -> FloatArray:
    """One EM step: expected complete counts of the 9 cells, then the constrained M-step."""
    rows, columns = pi.sum(axis=2), pi.sum(axis=1)
    complete = data.K + _share(data.m, rows)[:, :, None] * pi + _share(data.n0, columns)[:, None, :] * pi
    if mu is None:
        return _m_step_cells(complete + pseudo, side)
    p = _m_step_columns(complete.sum(axis=1) + pseudo, side)
    return mu * p[:, None, :]


def _share(counts: FloatArray, totals: FloatArray) -> FloatArray:
    """``counts / totals`` where ``counts > 0`` (an empty margin gets nothing, whatever its total)."""
    return np.divide(counts, totals, out=np.zeros_like(counts), where=counts > 0)


def _m_step_columns(columns: FloatArray, side: Side) -> FloatArray:
    """(P, 3) ``argmax sum_h C_h log p_h`` over ``side``: ``C / sum(C)``, or, where that breaks the
    side's constraint, ``p> = p< = (C> + C<) / 2T`` and ``p= = C= / T``."""
    total = columns.sum(axis=1, keepdims=True)
    p = columns / total
    if side == "any":
        return p
    violated = p[:, BETTER] > p[:, WORSE] if side == "at_most" else p[:, BETTER] < p[:, WORSE]
    pooled = (p[violated, BETTER] + p[violated, WORSE]) / 2.0
    p[violated, BETTER] = pooled
    p[violated, WORSE] = pooled
    return p


def _m_step_cells(complete: FloatArray, side: Side) -> FloatArray:
    """(P, 3, 3) ``argmax sum C log pi`` over ``side``: column weights by :func:`_m_step_columns`,
    each column split over rows in proportion to its counts (evenly where it has none)."""
    columns = complete.sum(axis=1)
    p = _m_step_columns(columns, side)
    within = np.divide(complete, columns[:, None, :], out=np.full_like(complete, 1.0 / 3.0), where=columns[:, None, :] > 0)
    return within * p[:, None, :]


def _gap(data: MetricData, pi: FloatArray, side: Side, mu: FloatArray | None) -> FloatArray:
    """(P,) Frank-Wolfe gap ``max_{s in side} g.s - g.pi`` with ``g = grad log L(pi)``; ``g.pi`` is the
    number of counted items (``log L`` is a sum of logs of degree-1 homogeneous functions)."""
    rows, columns = pi.sum(axis=2), pi.sum(axis=1)
    cell_grad = np.divide(data.K, pi, out=np.zeros_like(pi), where=data.K > 0)
    grad = cell_grad + _share(data.m, rows)[:, :, None] + _share(data.n0, columns)[:, None, :]
    if mu is not None:
        # d log L / d p_h = sum_c mu[c, h] * (d log L / d pi[c, h])
        grad_p = (mu * grad).sum(axis=1)
        vertex = _best_vertex(grad_p[:, None, :], side)
    else:
        vertex = _best_vertex(grad, side)
    items = data.K.sum(axis=(1, 2)) + data.n0.sum(axis=1) + data.m.sum(axis=1)
    return np.maximum(vertex - items, 0.0)


def _best_vertex(grad: FloatArray, side: Side) -> FloatArray:
    """(P,) ``max g.s`` over the vertices of the side: single cells whose column the side allows,
    and, for a constrained side, halves of a ``>`` cell and a ``<`` cell (where ``p> = p<``)."""
    if side == "any":
        return np.asarray(grad.max(axis=(1, 2)), dtype=np.float64)
    allowed = [TIE, WORSE] if side == "at_most" else [BETTER, TIE]
    single = grad[:, :, allowed].max(axis=(1, 2))
    balanced = (grad[:, :, BETTER].max(axis=1) + grad[:, :, WORSE].max(axis=1)) / 2.0
    return np.asarray(np.maximum(single, balanced), dtype=np.float64)
