"""Confusion matrices of a metric against a human rater, one per system pair (method.md §7).

For a pair ``(A, B)`` (canonical order) and the items both raters judged, ``K[c, h]`` counts
the items where the metric said ``c`` and the human said ``h``: rows = metric, columns =
human, both in the order ``>`` (A better), ``=``, ``<`` (B better). This is the ``K`` of
method.md §3 with every human outcome revealed (von Däniken et al. 2024, Def. 4).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from prefeval_core.errors import settings_error
from prefeval_core.pairs.counts import PairTable, count_triples


@dataclass(frozen=True)
class PairConfusions:
    """The confusion matrix of every pair.

    Attributes:
        human_rater, metric_rater: the raters compared.
        pairs: ``(system_a, system_b)`` per pair, canonical order (as ``PairTable.pairs``).
        K: ``int64`` (P, 3, 3); ``K[p, c, h]`` = items of pair ``p`` where the metric said ``c``
            and the human ``h`` (codes 0 ``>``, 1 ``=``, 2 ``<``).
        human_all: ``int64`` (P, 3), the human outcome counts over *all* human items of the
            pair (also items the metric did not rate): the input of the human reference.
        metric_all: ``int64`` (P, 3), the metric outcome counts over all its items of the pair
            (also items without a human outcome): the input of the naive sign test.
    """

    human_rater: str
    metric_rater: str
    pairs: tuple[tuple[str, str], ...]
    K: npt.NDArray[np.int64]
    human_all: npt.NDArray[np.int64]
    metric_all: npt.NDArray[np.int64]

    @property
    def items(self) -> npt.NDArray[np.int64]:
        """Items both raters judged per pair, shape (P,)."""
        return np.asarray(self.K.sum(axis=(1, 2)), dtype=np.int64)


def confusion_matrices(table: PairTable, *, joint_only: bool = False) -> PairConfusions:
    """Confusion matrix of every pair of ``table`` over all its jointly rated items.

    Args:
        table: aligned human and metric outcomes.
        joint_only: keep only the pairs with at least one item rated by both. A pair the
            metric never rated on a human-rated item says nothing checkable about the metric
            (e.g. an LLM judge that covers only some systems), so the diagnostics leave it
            out **(choice)**.

    Raises:
        ValueError: ``table`` has no metric (built with ``align_outcomes(human, None)``).
    """
    if table.metric_rater is None:
        raise settings_error("the pair table has no metric rater; align a metric's outcomes first")
    human_rows = table.human >= 0
    with_human = count_triples(table, human_rows)
    metric_only = count_triples(table, np.zeros_like(human_rows))
    keep = with_human.K.sum(axis=(1, 2)) > 0 if joint_only else np.ones(table.n_pairs, dtype=bool)
    return PairConfusions(
        human_rater=table.human_rater,
        metric_rater=table.metric_rater,
        pairs=tuple(pair for pair, kept in zip(table.pairs, keep, strict=True) if kept),
        K=with_human.K[keep],
        human_all=with_human.n[keep],
        metric_all=metric_only.m[keep],
    )


def flip_confusion(K: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """``K`` seen from the swapped pair ``(B, A)``: ``>`` and ``<`` swap on both axes; (..., 3, 3)."""
    return np.asarray(K)[..., ::-1, ::-1].copy()


def mixture_matrix(K: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Column-normalised ``K``: the empirical ``mu[c, h] = P(metric says c | human says h)``.

    Each column with at least one item sums to 1; a column without items is NaN (the
    human never gave that outcome, so nothing is known about it). Shape as ``K``, (..., 3, 3).
    """
    K = np.asarray(K, dtype=np.float64)
    totals = K.sum(axis=-2, keepdims=True)
    safe = np.where(totals > 0, totals, 1.0)
    return np.where(totals > 0, K / safe, np.nan)
