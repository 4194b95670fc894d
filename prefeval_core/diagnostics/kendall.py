"""Segment-level Kendall tau between a scalar metric and a scalar human rater (method.md §9).

SEScore2's meta-evaluation (Xu et al., Sec. 4): a *segment* is one (item, system) output.
Kendall's tau-b (``scipy.stats.kendalltau(variant="b")``, which corrects for ties — human
Likert means have many) is computed

* **overall**: over all segments that both raters scored, pooled across items;
* **grouped by item**: over the systems of each item separately, then averaged over the
  items where it is defined (at least two common segments and neither rater constant on the
  item; a constant rater leaves tau-b undefined, 0/0).

Both values lie in [-1, 1]; +1 means the metric orders the segments exactly as the human.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from prefeval_core.data.dataset import Dataset
from prefeval_core.errors import CoverageError, UnknownNameError, settings_error


@dataclass(frozen=True)
class KendallResult:
    """Segment-level Kendall tau-b of one metric against one human rater.

    Attributes:
        human: the human rater's name (e.g. ``"human:relevance"``).
        metric: the metric rater's name.
        tau: tau-b over all common segments pooled (NaN if undefined: fewer than two
            segments or a constant rater).
        tau_grouped: mean over items of the per-item tau-b (NaN if no item defines one).
        segments: number of (item, system) segments both raters scored.
        items: number of items whose per-item tau-b entered ``tau_grouped``.
        items_skipped: items with common segments whose per-item tau-b is undefined (fewer
            than two segments, or one rater gives every system the same score).
    """

    human: str
    metric: str
    tau: float
    tau_grouped: float
    segments: int
    items: int
    items_skipped: int


def tau_b(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's tau-b of two equally long score vectors; NaN when undefined.

    Undefined means fewer than two values or a constant vector (tau-b divides by zero); it
    is checked here so that no warning is raised.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise settings_error(f"tau_b needs two 1-d vectors of one length, got shapes {x.shape} and {y.shape}")
    if x.size < 2 or np.all(x == x[0]) or np.all(y == y[0]):
        return math.nan
    from scipy.stats import kendalltau  # SciPy's stats take a second to import: only when asked

    return float(kendalltau(x, y, variant="b").statistic)


def kendall_tau_segments(
    item_id: np.ndarray, human: np.ndarray, metric: np.ndarray, human_name: str = "human", metric_name: str = "metric"
) -> KendallResult:
    """Kendall tau-b overall and grouped by item from aligned segment arrays.

    Args:
        item_id: shape (S,), the item of each segment.
        human: shape (S,), the human score of each segment (higher is better).
        metric: shape (S,), the metric score of each segment (higher is better).
    """
    item_id = np.asarray(item_id)
    human = np.asarray(human, dtype=float)
    metric = np.asarray(metric, dtype=float)
    if not (item_id.shape == human.shape == metric.shape) or item_id.ndim != 1:
        raise settings_error(f"item_id, human and metric must be 1-d of one length, got {item_id.shape}, {human.shape}, {metric.shape}")
    per_item: list[float] = []
    skipped = 0
    if item_id.size:
        codes, _ = pd.factorize(item_id)
        order = np.argsort(codes, kind="stable")
        bounds = np.flatnonzero(np.diff(codes[order])) + 1
        for rows in np.split(order, bounds):
            value = tau_b(human[rows], metric[rows])
            if math.isnan(value):
                skipped += 1
            else:
                per_item.append(value)
    return KendallResult(
        human=human_name,
        metric=metric_name,
        tau=tau_b(human, metric),
        tau_grouped=float(np.mean(per_item)) if per_item else math.nan,
        segments=int(item_id.size),
        items=len(per_item),
        items_skipped=skipped,
    )


def kendall_tau(ratings: pd.DataFrame | Dataset, human: str, metric: str) -> KendallResult:
    """Segment-level Kendall tau-b of ``metric`` against ``human`` (method.md §9).

    Args:
        ratings: a long ratings frame ``item_id, system, rater, score`` (one row per item,
            system and rater, as ``Dataset.ratings``), or a :class:`Dataset` (its ``ratings``
            are used; natively pairwise raters have no scalar scores and are not accepted).
        human: name of the human rater (any scalar rater works; the name is only a label).
        metric: name of the metric rater.

    Only segments (item, system) scored by both raters count.

    Raises:
        UnknownNameError: a rater has no scalar ratings in the frame.
        CoverageError: the two raters share no segment.
    """
    frame = ratings.ratings if isinstance(ratings, Dataset) else ratings
    keys = ["item_id", "system"]
    sides = []
    for name in (human, metric):
        rows = frame.loc[frame["rater"] == name, [*keys, "score"]]
        if rows.empty:
            raise UnknownNameError.single("unknown_name", f"no scalar ratings for rater '{name}'", column="rater")
        sides.append(rows)
    joined = sides[0].merge(sides[1], on=keys, suffixes=("_human", "_metric"), validate="one_to_one")
    if joined.empty:
        raise CoverageError.single("no_common_segments", f"raters '{human}' and '{metric}' scored no (item, system) segment in common")
    return kendall_tau_segments(
        joined["item_id"].to_numpy(),
        joined["score_human"].to_numpy(),
        joined["score_metric"].to_numpy(),
        human_name=human,
        metric_name=metric,
    )
