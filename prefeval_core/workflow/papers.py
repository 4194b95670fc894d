"""The papers' tables (Deriu et al. 2023 Tables 2-5) as rows: the naive metric, averages over seeds.

Shared by the ``reproduce`` command and the benchmarks; the protocol rows themselves are
replays (:func:`prefeval_core.workflow.study.run_replay`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from prefeval_core.data.dataset import Dataset
from prefeval_core.diagnostics.comparison import naive_metric_comparison
from prefeval_core.pairs.counts import count_triples
from prefeval_core.protocol.table import StudyTable
from prefeval_core.workflow.study import comparison_summary

SUMMARY_FIELDS: Final = ("correct", "inversion", "omission", "insertion", "kld", "annotation_fraction")
"""The numbers of a table row (Corr., Inv., Omi., Ins., KLD, Ann.)."""


def naive_summary(table: StudyTable, gamma: float, metric: int = 0) -> dict[str, float | int]:
    """The naive metric row (Table 2/4): a sign test on all items of each pair that metric
    ``metric`` rated, against the human reference on all human judgments."""
    pairs = table.pair_table(metric)
    n_all = count_triples(pairs, pairs.human >= 0).n
    m_all = count_triples(pairs, np.zeros(len(pairs.item_id), dtype=bool)).m
    return comparison_summary(naive_metric_comparison(m_all, n_all, gamma))


def average_rows(rows: Sequence[dict[str, Any]], fields: Sequence[str] = SUMMARY_FIELDS) -> dict[str, dict[str, float]]:
    """Mean and (sample) standard deviation, min and max of each field over rows (seeds); sd 0 for one row."""
    averaged = {}
    for field in fields:
        values = np.array([row[field] for row in rows], dtype=np.float64)
        averaged[field] = {
            "mean": float(values.mean()),
            "sd": float(values.std(ddof=1)) if len(values) > 1 else 0.0,
            "min": float(values.min()),
            "max": float(values.max()),
        }
    return averaged


def default_metrics(dataset: Dataset, human: str) -> tuple[str, ...]:
    """Metrics of the papers' tables for ``human``: dimension-free metrics (``rougeL``, ``chrF``)
    and the raters of the same dimension (``<judge>:relevance`` for ``human:relevance``),
    excluding crowd ratings."""
    dimension = human.split(":", 1)[1] if ":" in human else None
    chosen = []
    for rater in dataset.metric_raters:
        if rater.startswith("crowd"):
            continue
        if ":" not in rater or (dimension is not None and rater.endswith(":" + dimension)):
            chosen.append(rater)
    return tuple(chosen)
