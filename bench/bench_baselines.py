"""prefeval beside PPI++ and Bradley–Terry at equal cost (issue 11, part 4): prints tables.

For each study (a human rater, a set of systems, one or more metrics) and each human fraction F,
over seeds: human outcomes are kept on a share F of each pair's items (one seeded item order
shared by all pairs, ``withhold_human``) and withheld on the rest, which stay metric-only. Every
method then decides every pair from those same revealed judgments (``compare_methods``): prefeval's
engine human only and with each metric (full model), PPI++ with each metric and with their mean,
Bradley–Terry with an item bootstrap. Each is scored against the full human evaluation
(method.md §6). Counts are pairs (mean ± sample s.d. over seeds).

Studies on SummEval relevance:

* ``abstractive``: the 12 systems the LLM judges rated (66 pairs), metrics rougeL, GPT-4 and
  GPT-3.5 reason-then-score judges;
* ``all``: all 16 systems (120 pairs), rougeL.

Usage (from the repository root)::

    PYTHONPATH=. .venv/bin/python bench/bench_baselines.py [--data ../shared/data/summeval] [--seeds 10] \
        [--fractions 0.1,0.3] [--studies abstractive,all] [--resamples 1000] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from prefeval_core.runtime import configure_jax

STUDIES: dict[str, tuple[str, ...]] = {
    "abstractive": ("rougeL", "gpt-4-0314-rts:relevance", "gpt-3.5-turbo-0301-rts:relevance"),
    "all": ("rougeL",),
}
COLUMNS = ("correct", "correct_significant", "correct_undecided", "inversion", "omission", "insertion")


def study_table(dataset: Any, human: str, metrics: Sequence[str]) -> tuple[Any, npt.NDArray[np.int8]]:
    """The human rater's pair table (every human-rated (pair, item) row) with the metrics' codes
    (R, k) aligned to its rows, restricted to pairs every metric rated. Metric-only items are
    dropped (SummEval has none: every metric rated the human-rated items)."""
    from dataclasses import replace

    from prefeval_core.counts import align_outcomes
    from prefeval_core.preferences import pair_outcomes

    table = align_outcomes(pair_outcomes(dataset, human))
    rows = pd.DataFrame(
        {
            "system_a": [table.pairs[p][0] for p in table.pair_index],
            "system_b": [table.pairs[p][1] for p in table.pair_index],
            "item_id": table.item_id,
        }
    )
    codes = np.full((len(rows), len(metrics)), -1, dtype=np.int8)
    for j, metric in enumerate(metrics):
        frame = pair_outcomes(dataset, metric).frame
        merged = rows.merge(frame, on=["system_a", "system_b", "item_id"], how="left")
        codes[:, j] = merged["outcome"].fillna(-1).to_numpy().astype(np.int8)
    covered = np.ones(table.n_pairs, dtype=bool)
    for j in range(len(metrics)):
        covered &= np.bincount(table.pair_index[codes[:, j] >= 0], minlength=table.n_pairs) > 0
    keep_rows = covered[table.pair_index]
    table = replace(table.with_pairs(covered), metric=codes[keep_rows, 0], metric_rater=metrics[0])
    return table, codes[keep_rows]


def run_study(
    table: Any, codes: npt.NDArray[np.int8], metrics: Sequence[str], fraction: float, seeds: int, resamples: int
) -> dict[str, Any]:
    """Counts per method and seed, the cost, and the wall time of the study at one fraction."""
    from prefeval_core.baselines import compare_methods, withhold_human

    per_method: dict[str, list[dict[str, int]]] = {}
    cost: list[dict[str, int]] = []
    start = time.perf_counter()
    for seed in range(seeds):
        revealed = withhold_human(table, fraction, seed)
        comparison = compare_methods(table, revealed, 0.05, seed, metric_codes=codes, metric_names=tuple(metrics), n_resamples=resamples)
        cost.append(
            {
                "pair_outcomes_used": comparison.pair_outcomes_used,
                "pair_outcomes_available": comparison.pair_outcomes_available,
                "ratings_used": comparison.ratings_used,
                "ratings_available": comparison.ratings_available,
                "reference_significant": int(np.sum(comparison.reference != 1)),
            }
        )
        for method in comparison.methods:
            per_method.setdefault(method.name, []).append({"correct": method.correct, **method.counts})
    return {"fraction": fraction, "pairs": table.n_pairs, "per_method": per_method, "cost": cost, "wall_s": time.perf_counter() - start}


def mean_sd(values: Sequence[float]) -> str:
    array = np.asarray(values, dtype=np.float64)
    sd = float(array.std(ddof=1)) if array.size > 1 else 0.0
    return f"{array.mean():.1f} ± {sd:.1f}"


def markdown(study: str, result: dict[str, Any]) -> str:
    cost = result["cost"][0]
    lines = [
        f"**{study}, F = {result['fraction']}** ({result['pairs']} pairs; human reference: "
        f"{cost['reference_significant']} significant; cost for every method: {cost['pair_outcomes_used']} of "
        f"{cost['pair_outcomes_available']} pair outcomes, {cost['ratings_used']} of {cost['ratings_available']} ratings; "
        f"{result['wall_s']:.0f} s for {len(result['cost'])} seeds)",
        "",
        "| method | correct | correct (significant) | correct (not significant) | inversions | omissions | insertions |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, rows in result["per_method"].items():
        cells = [mean_sd([row[column] for row in rows]) for column in COLUMNS]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data" / "summeval"))
    parser.add_argument("--human", default="human:relevance")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--fractions", default="0.1,0.3")
    parser.add_argument("--studies", default="abstractive,all")
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--json", help="also write every count per seed to this file")
    args = parser.parse_args()
    configure_jax(x64=True)
    from prefeval_core.data.dataset import load_dataset

    print("command: PYTHONPATH=. .venv/bin/python " + " ".join(sys.argv))
    dataset = load_dataset(args.data)
    results: dict[str, list[dict[str, Any]]] = {}
    for study in args.studies.split(","):
        metrics = STUDIES[study]
        table, codes = study_table(dataset, args.human, metrics)
        for fraction in (float(f) for f in args.fractions.split(",")):
            result = run_study(table, codes, metrics, fraction, args.seeds, args.resamples)
            results.setdefault(study, []).append(result)
            print()
            print(markdown(study, result), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
