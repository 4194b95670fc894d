"""PPI++ per pair: prediction-powered inference on the mean human preference (Angelopoulos,
Duchi & Zrnic 2023, "PPI++: Efficient prediction-powered inference"), via ``ppi_py``.

Estimand of a pair ``(A, B)``: the mean human preference ``E[v(h)]`` over the pair's items, with
``v(>) = +1, v(=) = 0, v(<) = -1``; positive means A better. It is ``p> - p<`` in the decision
model's terms (method.md §4), so its sign asks the same question as ``theta``.

Per pair:

* **predictor** ``f(row)``: the metric's ``v(c)``; with several metrics, the mean of ``v`` over
  the metrics that rated the row (``ppi_py``'s mean estimator takes one prediction per row: its
  multi-column form estimates a vector mean, not one mean from several predictors), so several
  metrics enter as one averaged predictor **(choice)**. A row no metric rated gets ``f = 0``
  **(choice)**: a fixed rule applied alike to labelled and unlabelled rows keeps PPI valid, and
  it lets revealed human outcomes without a metric outcome count (PPI's rectifier then uses
  them at full weight) instead of being thrown away.
* **labelled** rows: every row whose human outcome is revealed; **unlabelled** rows: every other
  row of the pair (metric-only rows, and rows whose human outcome is withheld; those without a
  metric outcome add ``f = 0``). Labelled and unlabelled rows must come from one population,
  which holds when the protocol reveals rows at random.
* interval: ``ppi_py.ppi_mean_ci`` at level ``1 - gamma``, two-sided, power-tuned ``lambda``
  (``lam=None``: ``ppi_py`` estimates the variance-optimal ``lambda`` clipped to ``[0, 1]``;
  ``lambda = 0`` is the classical interval on the labelled rows, ``lambda = 1`` plain PPI).
  The point estimate is the interval's midpoint (the z-interval is symmetric about the PPI++
  estimate).
* edge cases **(choice)**: fewer than ``min_labelled`` labelled rows: no interval (NaN),
  undecided (a CLT interval from 0 or 1 observations has no width estimate); no unlabelled
  row: ``ppi_py.classical_mean_ci`` on the labelled rows; a predictor that is constant over the
  pair's rows carries no information and makes ``ppi_py``'s ``lambda`` 0/0, so ``lambda = 0``
  is passed (every ``lambda`` gives the classical interval then).

Both intervals are normal (CLT) approximations: on few labelled items they are too narrow
(``numpy``'s ``std`` with ``ddof=0``), which a user of ``ppi_py`` inherits.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from prefeval_core.baselines.inputs import revealed_rows, rows_by_pair
from prefeval_core.baselines.intervals import IntervalDecisions, check_gamma, decision_from_interval
from prefeval_core.errors import settings_error
from prefeval_core.pairs.counts import PairTable
from prefeval_core.vocabulary.levels import DEFAULT_GAMMA
from prefeval_core.vocabulary.outcomes import VALUES

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class PPIDecisions(IntervalDecisions):
    """PPI++ decisions per pair (see the module docstring); ``estimate``, ``low`` and ``high``
    are on the scale of the mean human preference ``E[v(h)]`` in ``[-1, 1]``.

    Attributes:
        labelled: (P,) int64 labelled rows (revealed human outcomes) per pair.
        unlabelled: (P,) int64 unlabelled rows per pair.
        predictor: what predicted ``v(h)``: the metric name, or ``"mean(a, b, ...)"``.
    """

    labelled: npt.NDArray[np.int64]
    unlabelled: npt.NDArray[np.int64]
    predictor: str


def metric_predictions(metric_codes: npt.ArrayLike) -> FloatArray:
    """Per-row predictor of ``v(h)`` from metric outcome codes (R,) or (R, k) (-1 = no outcome):
    the mean of ``v(c)`` over the metrics that rated the row, 0 where none did."""
    codes = np.asarray(metric_codes, dtype=np.int64)
    codes = codes.reshape(codes.shape[0], -1)
    rated = codes >= 0
    values = np.where(rated, VALUES[np.where(rated, codes, 0)], 0).astype(np.float64)
    counts = rated.sum(axis=1)
    return np.divide(values.sum(axis=1), counts, out=np.zeros(codes.shape[0]), where=counts > 0)


def ppi_decisions(
    table: PairTable,
    revealed: npt.ArrayLike,
    *,
    metric_codes: npt.ArrayLike | None = None,
    metric_names: tuple[str, ...] | None = None,
    gamma: float = DEFAULT_GAMMA,
    min_labelled: int = 2,
) -> PPIDecisions:
    """PPI++ decision for every pair of ``table`` (conventions in the module docstring).

    Args:
        table: aligned human and metric outcomes, one row per (pair, item).
        revealed: (R,) bool per row of ``table``: the human outcome is revealed (as for
            :func:`~prefeval_core.pairs.counts.count_triples`).
        metric_codes: (R,) or (R, k) metric outcome codes per row (-1 = none); default
            ``table.metric``.
        metric_names: names of the k metrics, for ``predictor``; default ``table.metric_rater``.
        gamma: level: the interval has coverage ``1 - gamma``.
        min_labelled: pairs with fewer labelled rows stay undecided without an interval.

    Raises:
        SettingsError: ``gamma`` outside (0, 1), ``min_labelled`` < 2, or arrays of the wrong shape.
    """
    gamma = check_gamma(gamma)
    if min_labelled < 2:
        raise settings_error(f"min_labelled must be at least 2, got {min_labelled}", field="min_labelled")
    is_revealed = revealed_rows(table, revealed)
    codes = table.metric if metric_codes is None else np.asarray(metric_codes)
    if codes.shape[0] != table.human.shape[0]:
        raise settings_error(f"metric_codes has {codes.shape[0]} rows, the table {table.human.shape[0]}", field="metric_codes")
    prediction = metric_predictions(codes)
    names = metric_names or (table.metric_rater or "metric",)
    predictor = names[0] if len(names) == 1 else f"mean({', '.join(names)})"

    P = table.n_pairs
    estimate, low, high = np.full(P, np.nan), np.full(P, np.nan), np.full(P, np.nan)
    labelled = np.bincount(table.pair_index[is_revealed], minlength=P).astype(np.int64)
    unlabelled = np.bincount(table.pair_index[~is_revealed], minlength=P).astype(np.int64)
    truth = VALUES[np.where(is_revealed, table.human, 0)].astype(np.float64)
    for pair, rows in enumerate(rows_by_pair(table)):
        is_labelled = is_revealed[rows]
        if is_labelled.sum() < min_labelled:
            continue
        y, y_hat = truth[rows][is_labelled], prediction[rows][is_labelled]
        low[pair], high[pair] = ppi_interval(y, y_hat, prediction[rows][~is_labelled], gamma)
        estimate[pair] = (low[pair] + high[pair]) / 2.0
    return PPIDecisions(
        decision=decision_from_interval(low, high),
        estimate=estimate,
        low=low,
        high=high,
        gamma=gamma,
        labelled=labelled,
        unlabelled=unlabelled,
        predictor=predictor,
    )


def ppi_interval(y: FloatArray, y_hat: FloatArray, y_hat_unlabelled: FloatArray, gamma: float) -> tuple[float, float]:
    """``(low, high)``: the two-sided ``1 - gamma`` PPI++ interval of the mean of ``y`` (one pair:
    labelled values ``y``, their predictions ``y_hat``, the unlabelled rows' predictions), with the
    edge cases of the module docstring (no unlabelled row, or a constant predictor: the classical
    interval)."""
    # ppi_py imports numba, statsmodels and scikit-learn (seconds): only when PPI++ runs
    from ppi_py import classical_mean_ci, ppi_mean_ci

    if y_hat_unlabelled.size == 0:
        low, high = classical_mean_ci(y, alpha=gamma)
        return float(low), float(high)
    constant = np.ptp(np.concatenate([y_hat, y_hat_unlabelled])) == 0.0
    low, high = ppi_mean_ci(y, y_hat, y_hat_unlabelled, alpha=gamma, lam=0.0 if constant else None)
    return float(np.squeeze(low)), float(np.squeeze(high))
