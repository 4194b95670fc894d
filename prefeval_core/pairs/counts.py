"""The count triple ``(n, K, m)`` of every pair for a set of revealed items (method.md §3).

For one pair and one metric, items split into R (human outcome revealed so far) and U
(metric outcome, human outcome not revealed):

* ``n[h]``: human outcomes on R, ``h`` in ``>, =, <``;
* ``K[c, h]``: items of R where the metric said ``c`` and the human ``h`` (rows = metric,
  columns = human, order ``>, =, <``); items of R the metric did not rate are in ``n`` only;
* ``m[c]``: metric outcomes on U only. A metric outcome on R is used in ``K`` and never
  also in ``m`` (Deriu et al. App. A).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from prefeval_core.errors import CoverageError, settings_error
from prefeval_core.pairs.preferences import PairOutcomes
from prefeval_core.vocabulary.outcomes import MISSING, canonical_pair


@dataclass(frozen=True)
class PairTable:
    """Human and metric outcomes of every pair, aligned by item: one row per (pair, item).

    Pairs are those with at least one human outcome, in canonical order, sorted. Rows are
    sorted by pair, then item.

    Attributes:
        human_rater, metric_rater: the raters (``metric_rater`` is ``None`` for human only).
        pairs: ``(system_a, system_b)`` for each pair index.
        pair_index: ``int32`` pair index of each row.
        item_id: item of each row.
        human: ``int8`` human outcome code of each row, ``-1`` where the human gave none.
        metric: ``int8`` metric outcome code of each row, ``-1`` where the metric gave none.
    """

    human_rater: str
    metric_rater: str | None
    pairs: tuple[tuple[str, str], ...]
    pair_index: npt.NDArray[np.int32]
    item_id: npt.NDArray[np.object_]
    human: npt.NDArray[np.int8]
    metric: npt.NDArray[np.int8]

    @property
    def n_pairs(self) -> int:
        return len(self.pairs)

    @property
    def systems(self) -> tuple[str, ...]:
        return tuple(sorted({s for pair in self.pairs for s in pair}))

    def index_of(self, system_a: str, system_b: str) -> int:
        """Index of the pair (in either order); :class:`CoverageError` if it has no human outcome."""
        pair = canonical_pair(system_a, system_b)[:2]
        try:
            return self.pairs.index(pair)
        except ValueError:
            raise CoverageError.single(
                "no_common_items", f"the human rater '{self.human_rater}' has no item on which it rated both {pair[0]} and {pair[1]}"
            ) from None

    def with_pairs(self, keep: npt.NDArray[np.bool_]) -> PairTable:
        """The table restricted to the pairs where ``keep`` (shape ``(P,)``) is true; pair
        indices are renumbered in the same order."""
        keep = np.asarray(keep, dtype=bool)
        if keep.shape != (self.n_pairs,):
            raise settings_error(f"keep has shape {keep.shape}, expected ({self.n_pairs},)")
        if keep.all():
            return self
        rows = keep[self.pair_index]
        renumber = np.cumsum(keep) - 1
        return PairTable(
            human_rater=self.human_rater,
            metric_rater=self.metric_rater,
            pairs=tuple(pair for pair, kept in zip(self.pairs, keep, strict=True) if kept),
            pair_index=renumber[self.pair_index[rows]].astype(np.int32),
            item_id=self.item_id[rows],
            human=self.human[rows],
            metric=self.metric[rows],
        )

    def human_pool(self) -> npt.NDArray[np.int64]:
        """Number of human outcomes available per pair, shape ``(P,)``."""
        return np.bincount(self.pair_index[self.human >= 0], minlength=self.n_pairs)

    def metric_items(self) -> npt.NDArray[np.int64]:
        """Number of metric outcomes per pair, shape ``(P,)``."""
        return np.bincount(self.pair_index[self.metric >= 0], minlength=self.n_pairs)


@dataclass(frozen=True)
class CountTriple:
    """Counts of one pair: ``n`` (3,), ``K`` (3, 3) rows = metric, columns = human, ``m`` (3,)."""

    n: npt.NDArray[np.int64]
    K: npt.NDArray[np.int64]
    m: npt.NDArray[np.int64]


@dataclass(frozen=True)
class CountTriples:
    """Counts of all pairs: ``n`` (P, 3), ``K`` (P, 3, 3), ``m`` (P, 3); conventions as :class:`CountTriple`."""

    n: npt.NDArray[np.int64]
    K: npt.NDArray[np.int64]
    m: npt.NDArray[np.int64]

    def pair(self, index: int) -> CountTriple:
        return CountTriple(self.n[index], self.K[index], self.m[index])


def align_outcomes(human: PairOutcomes, metric: PairOutcomes | None = None) -> PairTable:
    """Align a human rater's and a metric's outcomes item by item, for every pair the human covers.

    Metric outcomes of pairs the human never rated are dropped: no human outcome can ever
    correct them.
    """
    frame = human.frame.rename(columns={"outcome": "human"})
    if metric is not None:
        other = metric.frame.rename(columns={"outcome": "metric"})
        frame = frame.merge(other, on=["system_a", "system_b", "item_id"], how="outer")
        covered = frame.groupby(["system_a", "system_b"])["human"].transform(lambda h: h.notna().any())
        frame = frame[covered.astype(bool)]
    else:
        frame = frame.assign(metric=MISSING)
    frame = frame.sort_values(["system_a", "system_b", "item_id"], kind="stable")
    keys = pd.MultiIndex.from_frame(frame[["system_a", "system_b"]])
    codes, uniques = pd.factorize(keys, sort=True)
    return PairTable(
        human_rater=human.rater,
        metric_rater=None if metric is None else metric.rater,
        pairs=tuple((str(a), str(b)) for a, b in uniques),
        pair_index=codes.astype(np.int32),
        item_id=frame["item_id"].to_numpy(dtype=object),
        human=frame["human"].fillna(MISSING).to_numpy().astype(np.int8),
        metric=frame["metric"].fillna(MISSING).to_numpy().astype(np.int8),
    )


def count_triples(table: PairTable, revealed: npt.NDArray[np.bool_]) -> CountTriples:
    """``(n, K, m)`` of every pair given which rows' human outcomes are revealed.

    Args:
        table: the aligned outcomes.
        revealed: boolean per row of ``table``; ``True`` where the human outcome is in R. Rows
            without a human outcome cannot be revealed.
    """
    revealed = np.asarray(revealed, dtype=bool)
    if revealed.shape != table.human.shape:
        raise settings_error(f"revealed has shape {revealed.shape}, expected {table.human.shape}")
    if np.any(revealed & (table.human < 0)):
        raise settings_error("a row without a human outcome cannot be revealed")
    P = table.n_pairs
    has_metric = table.metric >= 0
    n = _bincount(table.pair_index[revealed] * 3 + table.human[revealed], P * 3).reshape(P, 3)
    joint = revealed & has_metric
    K = _bincount(table.pair_index[joint] * 9 + table.metric[joint] * 3 + table.human[joint], P * 9).reshape(P, 3, 3)
    unrevealed = ~revealed & has_metric
    m = _bincount(table.pair_index[unrevealed] * 3 + table.metric[unrevealed], P * 3).reshape(P, 3)
    return CountTriples(n, K, m)


def _bincount(codes: npt.NDArray[np.integer], size: int) -> npt.NDArray[np.int64]:
    return np.bincount(codes.astype(np.int64), minlength=size).astype(np.int64)


def count_triple(table: PairTable, system_a: str, system_b: str, revealed_items: set[str] | frozenset[str]) -> CountTriple:
    """``(n, K, m)`` of one pair, seen from ``(system_a, system_b)`` in the order given, with
    the human outcomes of ``revealed_items`` revealed (items the human did not rate are ignored)."""
    index = table.index_of(system_a, system_b)
    rows = table.pair_index == index
    revealed = rows & (table.human >= 0) & np.isin(table.item_id, list(revealed_items))
    counts = count_triples(table, revealed).pair(index)
    if canonical_pair(system_a, system_b)[2]:  # flipping the pair reverses the outcome order on both axes
        return CountTriple(counts.n[::-1].copy(), counts.K[::-1, ::-1].copy(), counts.m[::-1].copy())
    return counts


NO_METRIC_OUTCOME = 3
"""Code of "this metric gave no outcome" inside a joint metric pattern (see :class:`JointCounts`)."""


def pattern_index(metric_codes: npt.NDArray[np.integer]) -> npt.NDArray[np.int64]:
    """Joint pattern of k metrics' outcomes: ``sum_j code_j * 4**j`` over the last axis (length k),
    with ``code_j`` in 0, 1, 2 (``>``, ``=``, ``<``) and -1 (missing) mapped to 3."""
    codes = np.asarray(metric_codes, dtype=np.int64)
    codes = np.where(codes < 0, NO_METRIC_OUTCOME, codes)
    weights = 4 ** np.arange(codes.shape[-1], dtype=np.int64)
    return codes @ weights


def pattern_codes(k: int) -> npt.NDArray[np.int64]:
    """Inverse of :func:`pattern_index`: (4**k, k) metric codes of every pattern (3 = missing)."""
    patterns = np.arange(4**k, dtype=np.int64)
    return (patterns[:, None] // 4 ** np.arange(k, dtype=np.int64)[None, :]) % 4


@dataclass(frozen=True)
class JointCounts:
    """Counts of P pairs with k metrics at once (method.md §3 extended to several metrics).

    Each item's metric outcomes form a *pattern* ``sum_j code_j * 4**j`` (:func:`pattern_index`;
    code 3: metric j gave none), so ``J = 4**k`` patterns; pattern ``J - 1`` means no metric rated
    the item.

    Attributes:
        metrics: the k metric names, in pattern order (metric j is digit j).
        revealed: (P, J, 3) items with a revealed human outcome, by metric pattern (axis 1) and
            human outcome (axis 2, order ``>, =, <``).
        unrevealed: (P, J) items without a revealed human outcome, by metric pattern. The
            last pattern (no metric outcome) carries no information and every model ignores it.

    With k = 1 this is the count triple: ``n = revealed.sum(1)``, ``K = revealed[:, :3]`` (rows =
    metric, columns = human), ``m = unrevealed[:, :3]`` (see :meth:`triples`).
    """

    metrics: tuple[str, ...]
    revealed: npt.NDArray[np.int64]
    unrevealed: npt.NDArray[np.int64]

    def __post_init__(self) -> None:
        J = 4 ** len(self.metrics)
        P = self.revealed.shape[0]
        if self.revealed.shape != (P, J, 3) or self.unrevealed.shape != (P, J):
            raise settings_error(f"JointCounts of {len(self.metrics)} metrics need revealed (P, {J}, 3) and unrevealed (P, {J})")

    @property
    def k(self) -> int:
        return len(self.metrics)

    @property
    def n_pairs(self) -> int:
        return int(self.revealed.shape[0])

    @property
    def n(self) -> npt.NDArray[np.int64]:
        """(P, 3) all revealed human outcomes."""
        return self.revealed.sum(axis=1)

    def triples(self, metric: int = 0) -> CountTriples:
        """The count triple of metric ``metric`` alone (the other metrics summed out)."""
        codes = pattern_codes(self.k)[:, metric]
        K = np.stack([self.revealed[:, codes == c].sum(axis=1) for c in range(3)], axis=1)
        m = np.stack([self.unrevealed[:, codes == c].sum(axis=1) for c in range(3)], axis=1)
        return CountTriples(self.n, K, m)

    def without(self, metric: int) -> JointCounts:
        """The counts of the other k - 1 metrics (metric ``metric`` summed out of every pattern)."""
        if not 0 <= metric < self.k:
            raise settings_error(f"metric index {metric} out of range for {self.k} metrics")
        patterns = np.arange(4**self.k, dtype=np.int64)
        low, high = 4**metric, 4 ** (metric + 1)
        target = patterns % low + patterns // high * low  # pattern index with digit `metric` removed
        merge = np.zeros((4**self.k, 4 ** (self.k - 1)), dtype=np.int64)
        merge[patterns, target] = 1
        metrics = self.metrics[:metric] + self.metrics[metric + 1 :]
        return JointCounts(metrics, np.einsum("pjh,jq->pqh", self.revealed, merge), self.unrevealed @ merge)

    def subset(self, pairs: npt.NDArray[np.bool_] | npt.NDArray[np.integer]) -> JointCounts:
        """The counts of the pairs with these indices (or boolean mask)."""
        return JointCounts(self.metrics, self.revealed[pairs], self.unrevealed[pairs])

    @classmethod
    def from_triples(cls, counts: CountTriples, metric: str = "metric") -> JointCounts:
        """One metric's count triple as joint counts; human outcomes without a metric outcome
        (``n - K.sum(axis=1)``) go to the no-metric pattern."""
        P = counts.n.shape[0]
        revealed = np.zeros((P, 4, 3), dtype=np.int64)
        revealed[:, :3] = counts.K
        revealed[:, 3] = counts.n - counts.K.sum(axis=1)
        unrevealed = np.zeros((P, 4), dtype=np.int64)
        unrevealed[:, :3] = counts.m
        return cls((metric,), revealed, unrevealed)


def joint_counts(
    metrics: tuple[str, ...],
    pair_index: npt.NDArray[np.integer],
    human: npt.NDArray[np.integer],
    metric_codes: npt.NDArray[np.integer],
    revealed: npt.NDArray[np.bool_],
    n_pairs: int,
) -> JointCounts:
    """:class:`JointCounts` from item rows: ``pair_index`` (R,), human outcome codes (R,) (-1 none),
    metric codes (R, k) (-1 none) and which rows' human outcomes are revealed (R,). Rows without
    a revealed human outcome count in ``unrevealed`` by their metric pattern."""
    revealed = np.asarray(revealed, dtype=bool)
    if np.any(revealed & (np.asarray(human) < 0)):
        raise settings_error("a row without a human outcome cannot be revealed")
    J = 4 ** len(metrics)
    pattern = pattern_index(np.asarray(metric_codes).reshape(len(pair_index), len(metrics)))
    index = np.asarray(pair_index, dtype=np.int64)
    joint = _bincount((index[revealed] * J + pattern[revealed]) * 3 + np.asarray(human)[revealed], n_pairs * J * 3)
    rest = ~revealed
    unrevealed = _bincount(index[rest] * J + pattern[rest], n_pairs * J)
    return JointCounts(metrics, joint.reshape(n_pairs, J, 3), unrevealed.reshape(n_pairs, J))
