"""A leaderboard: each system's score, its interval and its chance of being among the best k.

The input is a per-(system, item) table of *points* and *weights*: in a ratings study the
point is the human score of the output (weight 1 where it is revealed, 0 elsewhere); in a
comparisons study the point sums the system's comparisons on that item (1 a win, 1/2 a tie,
0 a loss) and the weight counts them, so the score is the win rate (ties count half).

* **score** of system s: ``sum_i points[s, i] / sum_i weights[s, i]`` (a mean human score, or a
  win rate in [0, 1]);
* **interval**: the 2.5 % and 97.5 % percentiles of the score over a bootstrap **over items**
  (items resampled with replacement, the same resample for every system, so scores stay paired);
* **p_top**: the share of the same bootstrap resamples in which the system's score is among the
  k highest (a system with no weight in a resample is not ranked in it; ties broken by order of
  the systems). Monte-Carlo error at most ``0.5 / sqrt(draws)``.
* **too few judgments** (:data:`MIN_JUDGMENTS`): a system whose score rests on fewer than two
  judged items (ratings: revealed outputs; comparisons: items it was compared on) has no interval (NaN), since
  one item resampled has no spread and would show its score as certain; and while any system has
  that few, ``p_top`` is unknown (NaN) for every system, since a system judged once or not at all
  could be anywhere, so no chance of being among the best k can be read from the resamples (a
  system judged once would be ranked as certain, an unjudged one as never best).
* **a finite pool** (optional ``pool``: the weight each score would have with all of the study's
  items revealed): where the estimand is the mean over the study's own items (the pool
  statistics), each resample's deviation from the score is scaled by ``sqrt(1 - revealed / pool)``,
  the finite-population correction of sampling without replacement, so the interval and ``p_top``
  shrink to the score itself once its pool is revealed: a system a pool test ruled out on its whole
  pool is not shown a chance of being among the best.

The bootstrap is seeded (``numpy.random.default_rng(seed)``): the same inputs give the same
table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

ScoreKind = Literal["mean score", "win rate"]
"""What a leaderboard's score is: a mean human score (ratings) or a win rate (comparisons; ties count half)."""
LEVEL = 0.95
"""Coverage of the leaderboard's bootstrap percentile interval."""
MIN_JUDGMENTS = 2
"""The fewest judged items (ratings: outputs; comparisons: items compared on) behind a score for its
interval, and behind every score for P(top k) (module docstring)."""


@dataclass(frozen=True)
class Leaderboard:
    """Systems in descending order of score.

    Attributes:
        systems: (S,) names, best score first (systems without any judgment last).
        score: (S,) mean human score or win rate (NaN: no judgment).
        low, high: (S,) the bootstrap percentile interval of the score (``LEVEL`` coverage).
        p_top: (S,) share of bootstrap resamples with the system among the k best; NaN (unknown)
            for every system while any has fewer than :data:`MIN_JUDGMENTS` judged items.
        spent: (S,) judgments behind the score (ratings of its outputs, or comparisons it took part in).
        judged: (S,) judged items behind the score (the bootstrap's units: items with a revealed rating or comparison).
        status: (S,) the system's status for the question (see the workflow that fills it; "" if none).
        kind: what the score is.
        k: the k of ``p_top``.
        draws, seed: bootstrap resamples and their seed.
        finite_pool: whether the resamples were corrected for a finite pool (module docstring).
    """

    systems: tuple[str, ...]
    score: npt.NDArray[np.float64]
    low: npt.NDArray[np.float64]
    high: npt.NDArray[np.float64]
    p_top: npt.NDArray[np.float64]
    spent: npt.NDArray[np.int64]
    status: tuple[str, ...]
    judged: npt.NDArray[np.int64]
    kind: ScoreKind
    k: int
    draws: int
    seed: int
    finite_pool: bool = False

    @property
    def too_few(self) -> npt.NDArray[np.bool_]:
        """(S,) systems with fewer than :data:`MIN_JUDGMENTS` judged items: no interval, and no P(top k) for anyone."""
        return np.asarray(self.judged < MIN_JUDGMENTS)

    def method(self) -> str:
        """How the columns were computed, in one sentence for a caption."""
        what = "mean human score" if self.kind == "mean score" else "win rate (ties count half)"
        pool = (
            ", corrected for the finite pool of the study's items (the estimand: it narrows to the score once a "
            "system's items are all revealed)"
            if self.finite_pool
            else ""
        )
        few = int(self.too_few.sum())
        unknown = (
            " Unknown (None on the page, – in the report) — "
            f"{few} {'system has' if few == 1 else 'systems have'} fewer than {MIN_JUDGMENTS} items judged, "
            f"so {'its' if few == 1 else 'their'} interval is unknown, and so is every system's P(top {self.k}) "
            "(a system judged once or never could be anywhere)."
            if few
            else ""
        )
        return (
            f"Score: {what} on the judgments revealed; interval: {LEVEL:.0%} percentile bootstrap over items{pool}; "
            f"P(top {self.k}): share of the same {self.draws:,} bootstrap resamples (seed {self.seed}) with the system among "
            f"the best {self.k} (Monte-Carlo error at most ±{0.5 / np.sqrt(self.draws):.3f}).{unknown}"
        )


def leaderboard(
    systems: Sequence[str],
    points: npt.NDArray[np.float64],
    weights: npt.NDArray[np.float64],
    spent: npt.NDArray[np.int64],
    *,
    kind: ScoreKind,
    k: int = 1,
    status: Sequence[str] | None = None,
    draws: int = 2000,
    seed: int = 0,
    pool: npt.NDArray[np.float64] | None = None,
) -> Leaderboard:
    """The :class:`Leaderboard` of ``(S, I)`` ``points`` and ``weights`` (module docstring).

    Args:
        systems: (S,) names.
        points, weights: (S, I) summed points and their weights per system and item (0 where none).
        spent: (S,) judgments behind each system's score.
        kind: what the score is.
        k: ``p_top`` is the chance of being among the best k.
        status: (S,) a word per system for the question, or ``None``.
        draws, seed: the bootstrap.
        pool: (S,) the weight of each score with every item of the study revealed: corrects the
            resamples for a finite pool (module docstring); ``None``: items as a sample of many.
    """
    points = np.asarray(points, dtype=np.float64)
    weights = np.asarray(weights, dtype=np.float64)
    n_systems, n_items = points.shape
    total = weights.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        score = np.where(total > 0, points.sum(axis=1) / np.where(total > 0, total, 1.0), np.nan)
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(n_items, np.full(n_items, 1.0 / n_items), size=draws).astype(np.float64) if n_items else np.zeros((draws, 0))
    boot_weight = counts @ weights.T  # (B, S)
    boot = np.where(boot_weight > 0, (counts @ points.T) / np.where(boot_weight > 0, boot_weight, 1.0), np.nan)
    if pool is not None:  # sampling without replacement: the deviation's spread times sqrt(1 - f)
        left = np.sqrt(np.clip(1.0 - total / np.maximum(np.asarray(pool, dtype=np.float64), 1e-12), 0.0, 1.0))
        boot = score + left * (boot - score)
    tail = (1 - LEVEL) / 2
    low, high = np.full(n_systems, np.nan), np.full(n_systems, np.nan)
    rated = total > 0
    judged = (weights > 0).sum(axis=1).astype(np.int64)  # the bootstrap's units: items
    spread = judged >= MIN_JUDGMENTS  # one judged item resampled has no spread: no interval from it
    if spread.any():
        low[spread] = np.nanquantile(boot[:, spread], tail, axis=0)
        high[spread] = np.nanquantile(boot[:, spread], 1 - tail, axis=0)
    ranked = np.where(np.isnan(boot), -np.inf, boot)
    order = np.argsort(-ranked, axis=1, kind="stable")[:, : min(k, n_systems)]
    in_top = np.zeros((draws, n_systems), dtype=bool)
    np.put_along_axis(in_top, order, True, axis=1)
    in_top &= ~np.isnan(boot)
    p_top = in_top.mean(axis=0) if spread.all() else np.full(n_systems, np.nan)  # one system unknown: every chance unknown
    show = np.argsort(-np.where(rated, score, -np.inf), kind="stable")
    words = tuple(status) if status is not None else ("",) * n_systems
    return Leaderboard(
        systems=tuple(str(systems[i]) for i in show),
        score=score[show],
        low=low[show],
        high=high[show],
        p_top=p_top[show],
        spent=np.asarray(spent, dtype=np.int64)[show],
        judged=judged[show],
        status=tuple(words[i] for i in show),
        kind=kind,
        k=k,
        draws=draws,
        seed=seed,
        finite_pool=pool is not None,
    )


def comparison_points(
    n_systems: int, n_items: int, pair_systems: npt.NDArray[np.int64], item: npt.NDArray[np.int64], outcome: npt.NDArray[np.int8]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """(S, I) points and weights of comparisons: each comparison of pair ``(a, b)`` on an item with
    outcome 0 ``>`` / 1 ``=`` / 2 ``<`` gives a 1, 1/2 or 0 point to a and the rest to b, weight 1 each.

    Args:
        pair_systems: (R, 2) the system indices of each comparison's pair (canonical order).
        item: (R,) item index; outcome: (R,) outcome codes (rows with other codes are ignored).
    """
    valid = (outcome >= 0) & (outcome <= 2)
    a, b, i = pair_systems[valid, 0], pair_systems[valid, 1], item[valid]
    share_a = 1.0 - outcome[valid] / 2.0
    points = np.zeros((n_systems, n_items))
    weights = np.zeros((n_systems, n_items))
    np.add.at(points, (a, i), share_a)
    np.add.at(points, (b, i), 1.0 - share_a)
    np.add.at(weights, (a, i), 1.0)
    np.add.at(weights, (b, i), 1.0)
    return points, weights
