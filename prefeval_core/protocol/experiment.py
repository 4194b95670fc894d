"""Replays of a finished human evaluation and the papers' tables (Deriu et al. Tables 2-5).

Shared by the ``replay`` and ``reproduce`` commands and the benchmark: build the pair table
for (human, metric), run the protocol to the end with the replay source, and turn the result
into the stable JSON shapes the commands print (documented in :func:`replay_json`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from prefeval_core.comparison import Comparison, naive_metric_comparison
from prefeval_core.counts import PairTable, align_outcomes, count_triples
from prefeval_core.data.dataset import Dataset
from prefeval_core.decision import SamplerSettings
from prefeval_core.ideal_metric import IDEAL_METRIC_NAME, ideal_metric_table
from prefeval_core.outcomes import SYMBOLS
from prefeval_core.preferences import pair_outcomes
from prefeval_core.protocol.run import Progress, replay_source, run_protocol
from prefeval_core.protocol.settings import ProtocolSettings
from prefeval_core.protocol.state import ProtocolState, new_state
from prefeval_core.protocol.summary import ProtocolResult, protocol_result

SUMMARY_FIELDS = ("correct", "inversion", "omission", "insertion", "kld", "annotation_fraction")
"""The numbers of a table row (Corr., Inv., Omi., Ins., KLD, Ann.)."""


def replay_table(
    dataset: Dataset,
    human: str,
    metric: str | None,
    *,
    eps_human: float = 0.0,
    eps_metric: float = 0.0,
    ideal_seed: int = 0,
    ideal_items: int = 0,
) -> PairTable:
    """Human and metric outcomes aligned per pair. ``metric=None``: human only; ``"ideal"`` (when
    no rater has that name): the simulated metric of method.md §10, seeded by ``ideal_seed``.
    With a real metric, only the pairs the metric covers are kept **(choice)**: a pair the
    metric never rated says nothing about the metric (LLM judges cover 12 of SummEval's 16 systems)."""
    human_outcomes = pair_outcomes(dataset, human, eps=eps_human)
    if metric == IDEAL_METRIC_NAME and metric not in dataset.raters:
        return ideal_metric_table(align_outcomes(human_outcomes), seed=ideal_seed, extra_items=ideal_items)
    if metric is None:
        return align_outcomes(human_outcomes)
    return metric_pairs_only(align_outcomes(human_outcomes, pair_outcomes(dataset, metric, eps=eps_metric)))


def metric_pairs_only(table: PairTable) -> PairTable:
    """The table restricted to pairs with at least one metric outcome (pair indices renumbered)."""
    return table.with_pairs(table.metric_items() > 0)


@dataclass(frozen=True)
class Replay:
    """A finished replay: the final ``state``, its ``result`` against the full human evaluation,
    and the wall time in seconds of the protocol loop (state creation to the last round)."""

    state: ProtocolState
    result: ProtocolResult
    wall_s: float


def run_replay(
    table: PairTable, settings: ProtocolSettings, *, progress: Progress | None = None, sampler_settings: SamplerSettings | None = None
) -> Replay:
    """Run the protocol to its end on ``table`` with the replay source."""
    start = time.perf_counter()
    state = run_protocol(new_state(table, settings), replay_source(table), progress=progress, sampler_settings=sampler_settings)
    wall = time.perf_counter() - start
    return Replay(state, protocol_result(state, table), wall)


def budget_for(table: PairTable, fraction: float | None = None, budget: int | None = None) -> int:
    """An explicit budget, or ``fraction`` of all human outcomes (default: all of them)."""
    if budget is not None:
        return budget
    available = int(table.human_pool().sum())
    return available if fraction is None else int(np.floor(fraction * available))


def comparison_summary(comparison: Comparison) -> dict[str, float | int]:
    """Error-type fractions (``correct`` counts both correct kinds) and the mean KLD."""
    f = comparison.frequencies
    return {
        "correct": f.correct,
        "correct_significant": f.correct_significant,
        "correct_undecided": f.correct_undecided,
        "inversion": f.inversion,
        "omission": f.omission,
        "insertion": f.insertion,
        "kld": comparison.mean_kld,
        "pairs": f.pairs,
    }


def replay_json(replay: Replay) -> dict[str, Any]:
    """The stable ``replay --json`` shape::

        {"pairs": [{"system_a", "system_b", "outcome": ">"|"<"|"=", "theta" (null if never decided),
                    "human_used", "human_reference": ">"|"<"|"=", "error_type"}, ...],
         "summary": {"correct", "inversion", "omission", "insertion", "kld", "annotation_fraction",
                     "human_used", "human_available", "rounds", "wall_s", "settings": {...}, ...}}

    Fractions are in [0, 1]; ``"="`` means undecided / not significant.
    """
    result = replay.result
    pairs = [
        {
            "system_a": a,
            "system_b": b,
            "outcome": SYMBOLS[int(result.outcomes[k])],
            "theta": None if np.isnan(result.theta[k]) else float(result.theta[k]),
            "human_used": int(result.human_used[k]),
            "human_reference": SYMBOLS[int(result.comparison.reference[k])],
            "error_type": str(result.comparison.error_types[k]),
        }
        for k, (a, b) in enumerate(result.pairs)
    ]
    summary = comparison_summary(result.comparison) | {
        "annotation_fraction": result.annotation_fraction,
        "human_used": int(result.human_used.sum()),
        "human_available": int(result.human_available.sum()),
        "rounds": result.rounds,
        "wall_s": replay.wall_s,
        "settings": asdict(replay.state.settings),
    }
    return {"pairs": pairs, "summary": summary}


def naive_summary(table: PairTable, gamma: float) -> dict[str, float | int]:
    """The naive metric row (Table 2/4): sign test on all metric items of each pair."""
    n_all = count_triples(table, table.human >= 0).n
    m_all = count_triples(table, np.zeros(len(table.item_id), dtype=bool)).m
    return comparison_summary(naive_metric_comparison(m_all, n_all, gamma))


def average_rows(rows: Sequence[dict[str, Any]], fields: Sequence[str] = SUMMARY_FIELDS) -> dict[str, dict[str, float]]:
    """Mean and (sample) standard deviation of each field over rows (seeds); sd 0 for one row."""
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
