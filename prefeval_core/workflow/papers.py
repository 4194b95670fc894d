"""The papers' tables (Deriu et al. 2023 Tables 2-5) as rows: the naive metric, averages over seeds.

Shared by the ``reproduce`` command and the benchmarks; the protocol rows themselves are
replays (:func:`prefeval_core.workflow.study.run_replay`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np

from prefeval_core.data.dataset import Dataset
from prefeval_core.diagnostics.comparison import naive_metric_comparison
from prefeval_core.pairs.counts import count_triples
from prefeval_core.pairs.preferences import pair_outcomes
from prefeval_core.protocol.ideal_metric import IDEAL_METRIC_NAME
from prefeval_core.protocol.table import StudyTable
from prefeval_core.workflow.setup import StudySetup
from prefeval_core.workflow.study import comparison_summary, replay_json, run_replay, study_table

SUMMARY_FIELDS: Final = ("correct", "inversion", "omission", "insertion", "kld", "annotation_fraction")
"""The numbers of a table row (Corr., Inv., Omi., Ins., KLD, Ann.)."""
ROW_FIELDS: Final = (*SUMMARY_FIELDS, "cost_fraction")
"""Averaged per protocol row: the papers' fields and the cost in the study's unit."""
HUMAN_ONLY: Final = "human only"
"""The name of the protocol row without a metric."""
SETTINGS_SHOWN: Final = ("batch", "gamma", "sampler", "policy", "eps_human", "eps_metric", "unit", "error_control", "futility", "question")
"""The protocol settings :func:`paper_tables` reports (those of its first run)."""


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


def paper_tables(
    dataset: Dataset,
    human: str,
    metrics: Sequence[str] | None,
    setup: Callable[[tuple[str, ...], int], StudySetup],
    *,
    seeds: int,
    ideal: bool = True,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """The papers' two tables on ``dataset`` for ``human``: per metric the naive sign-test row
    (Table 2/4) and the protocol replayed with seeds ``0..seeds-1`` (Table 3/5, mean, sd, min,
    max over the seeds), plus the human-only protocol row and, with ``ideal``, the ideal
    metric's rows (its naive row averaged over the seeds too: the simulation depends on the seed).

    Args:
        metrics: the metric raters (``None``: :func:`default_metrics`; empty: only the human-only
            and ideal rows).
        setup: the study setup of one run from its metrics and seed.
        progress: hears one line per run.

    Returns:
        ``reproduce --json``'s shape: ``{"dataset", "human", "seeds", "settings", "runs": [{"metric",
        "seed", "summary"}], "naive": [{"metric", "seeds", "pairs", "correct", ...}], "protocol":
        [{"metric", "seeds", "pairs", "correct": {"mean", "sd", "min", "max"}, ...}]}``.
    """
    chosen = default_metrics(dataset, human) if metrics is None else tuple(metrics)
    for name in chosen:  # before any run: an unknown name is said at once, not after the human-only seeds
        if name != IDEAL_METRIC_NAME:
            pair_outcomes(dataset, name)
    rows: list[str | None] = [None, *chosen] + ([IDEAL_METRIC_NAME] if ideal else [])
    runs: list[dict[str, Any]] = []
    naive: list[dict[str, Any]] = []
    protocol: list[dict[str, Any]] = []
    for index, metric in enumerate(rows):
        name = HUMAN_ONLY if metric is None else metric
        summaries, naive_rows = [], []
        for seed in range(seeds):
            run_setup = setup(() if metric is None else (metric,), seed)
            table = study_table(dataset, run_setup)
            if metric is not None and (seed == 0 or metric == IDEAL_METRIC_NAME):
                naive_rows.append(naive_summary(table, run_setup.gamma))
            summary = replay_json(run_replay(table, run_setup))["summary"]
            summaries.append(summary)
            runs.append({"metric": name, "seed": seed, "summary": summary})
            if progress is not None:
                progress(
                    f"[{index + 1}/{len(rows)}] {name} seed {seed}: correct {summary['correct']:.2f}, "
                    f"pair outcomes {summary['annotation_fraction']:.2f}, cost {summary['cost_fraction']:.2f} {summary['cost_unit']}, "
                    f"{summary['rounds']} rounds, {summary['wall_s']:.1f} s"
                )
        protocol.append({"metric": name, "seeds": len(summaries), "pairs": summaries[0]["pairs"], **average_rows(summaries, ROW_FIELDS)})
        if naive_rows:
            naive_fields = [f for f in SUMMARY_FIELDS if f != "annotation_fraction"]
            means = {field: value["mean"] for field, value in average_rows(naive_rows, naive_fields).items()}
            naive.append({"metric": name, "seeds": len(naive_rows), "pairs": naive_rows[0]["pairs"], **means})
    first = setup((), 0)
    budget = "all" if first.budget is None else first.budget
    return {
        "dataset": dataset.name,
        "human": human,
        "seeds": seeds,
        "settings": {k: runs[0]["summary"]["settings"][k] for k in SETTINGS_SHOWN} | {"budget": budget, "ideal_items": first.ideal_items},
        "runs": runs,
        "naive": naive,
        "protocol": protocol,
    }
