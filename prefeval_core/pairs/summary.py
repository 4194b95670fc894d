"""What a dataset holds: systems, items, raters and per-pair coverage (``describe``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from prefeval_core.data.coverage import scalar_coverage
from prefeval_core.data.dataset import Dataset
from prefeval_core.pairs.counts import align_outcomes
from prefeval_core.pairs.preferences import pair_outcomes


@dataclass(frozen=True)
class RaterSummary:
    """One rater: ``kind`` scalar/pairwise, whether it is a human rater, how many systems,
    items, ratings (rows; pairwise: judged pairs) and system pairs with an outcome it covers."""

    name: str
    kind: str
    human: bool
    systems: int
    items: int
    ratings: int
    pairs: int


@dataclass(frozen=True)
class DatasetSummary:
    """The answer of ``describe``; :meth:`to_json` is the stable ``--json`` shape.

    ``coverage`` maps each canonical pair to ``{rater: items with an outcome}``;
    ``pairs`` (only with a human rater chosen) gives per pair ``human_items``,
    ``metric_items``, ``joint_items`` (both) and ``metric_only_items``.
    """

    name: str
    systems: tuple[str, ...]
    items: int
    raters: tuple[RaterSummary, ...]
    coverage: dict[tuple[str, str], dict[str, int]]
    pairs: tuple[dict[str, Any], ...] | None
    has_texts: bool
    warnings: tuple[str, ...]
    notes: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        result: dict[str, Any] = {
            "name": self.name,
            "systems": list(self.systems),
            "items": self.items,
            "raters": [vars(r) for r in self.raters],
            "coverage": [{"system_a": a, "system_b": b, "items": items} for (a, b), items in self.coverage.items()],
            "has_texts": self.has_texts,
            "warnings": list(self.warnings),
            "notes": list(self.notes),
        }
        if self.pairs is not None:
            result["pairs"] = list(self.pairs)
        return result


def summarise_dataset(dataset: Dataset, human: str | None = None, metric: str | None = None) -> DatasetSummary:
    """Systems, items, raters and coverage of ``dataset``; with ``human`` (and ``metric``),
    also the per-pair human/metric coverage the protocol will work with."""
    raters: list[RaterSummary] = []
    coverage: dict[tuple[str, str], dict[str, int]] = {}
    scalar = scalar_coverage(dataset.ratings)
    pairwise = {str(r): rows for r, rows in dataset.preferences.groupby("rater", sort=False)}
    for rater in dataset.raters:
        if rater in pairwise:
            rows = pairwise[rater]
            sizes = rows.groupby(["system_a", "system_b"]).size()
            per_pair = {(str(a), str(b)): int(n) for (a, b), n in sizes.items()}
            systems = len(set(rows["system_a"].unique().tolist()) | set(rows["system_b"].unique().tolist()))
            items, ratings = rows["item_id"].nunique(), len(rows)
        else:
            rater_coverage = scalar[rater]
            per_pair = rater_coverage.pairs()
            systems, items, ratings = len(rater_coverage.systems), rater_coverage.items, rater_coverage.ratings
        for pair, count in per_pair.items():
            coverage.setdefault(pair, {})[rater] = count
        kind = "pairwise" if rater in pairwise else "scalar"
        raters.append(RaterSummary(rater, kind, rater in dataset.human_raters, systems, items, ratings, len(per_pair)))
    pairs = None if human is None else _pair_coverage(dataset, human, metric)
    return DatasetSummary(
        name=dataset.name,
        systems=dataset.systems,
        items=len(dataset.items),
        raters=tuple(raters),
        coverage=dict(sorted(coverage.items())),
        pairs=pairs,
        has_texts=dataset.has_texts,
        warnings=tuple(str(p) for p in dataset.report.warnings),
        notes=dataset.notes,
    )


def _pair_coverage(dataset: Dataset, human: str, metric: str | None) -> tuple[dict[str, Any], ...]:
    table = align_outcomes(pair_outcomes(dataset, human), pair_outcomes(dataset, metric) if metric else None)
    has_human = table.human >= 0
    has_metric = table.metric >= 0

    def per_pair(mask: np.ndarray) -> np.ndarray:
        return np.bincount(table.pair_index[mask], minlength=table.n_pairs)

    human_items, metric_items = per_pair(has_human), per_pair(has_metric)
    joint, metric_only = per_pair(has_human & has_metric), per_pair(~has_human & has_metric)
    return tuple(
        {
            "system_a": a,
            "system_b": b,
            "human_items": int(human_items[i]),
            "metric_items": int(metric_items[i]),
            "joint_items": int(joint[i]),
            "metric_only_items": int(metric_only[i]),
        }
        for i, (a, b) in enumerate(table.pairs)
    )


def describe_dataset(dataset: Dataset, human: str | None = None, metric: str | None = None) -> dict[str, Any]:
    """:func:`summarise_dataset` as the JSON-ready dict of ``describe --json``."""
    return summarise_dataset(dataset, human, metric).to_json()
