"""prefeval beside PPI++ and Bradley–Terry at equal cost (issue 11, part 4): prints tables.

For each study (a human rater, a set of systems, one or more metrics) and each human fraction F,
over seeds: human outcomes are kept on a share F of each pair's items (one seeded item order
shared by all pairs, ``withhold_human``) and withheld on the rest, which stay metric-only. Every
method then decides every pair from those same revealed judgments (``compare_methods``): prefeval's
engine human only and with each metric (full model), PPI++ with each metric and with their mean,
the classical normal (CLT) interval on the revealed human outcomes, Bradley–Terry with an item
bootstrap. Each is scored against the full human evaluation
(method.md §6). Counts are pairs (mean ± sample s.d. over seeds).

Studies on SummEval relevance:

* ``abstractive``: the 12 systems the LLM judges rated (66 pairs), metrics rougeL, GPT-4 and
  GPT-3.5 reason-then-score judges;
* ``judges``: the same 12 systems, three LLM judges (GPT-4, GPT-3.5, Llama-2-70B, reason-then-score),
  fixed before any run: the combination of judges the engine takes in one posterior;
* ``all``: all 16 systems (120 pairs), rougeL.

``null`` mode: the error rate of each rule on true ties, simulated. Each run is a pair whose
items have i.i.d. human outcomes with ``p> = p<`` (``p=`` in {0, 0.3, 0.6}) and a metric drawn
from the ideal metric's mixture matrix (method.md §10); ``n`` of ``pool`` items are revealed.
The share of runs that end decided should be at most gamma = 0.05 (± 2 Monte-Carlo s.e.).
Bradley–Terry is run on 4 equally good systems (6 pairs, i.i.d. as above), fewer runs (each
needs a bootstrap).

Usage (from the repository root)::

    PYTHONPATH=. .venv/bin/python bench/bench_baselines.py [--data ../shared/data/summeval] [--seeds 10] \
        [--fractions 0.1,0.3] [--studies abstractive,all] [--resamples 1000] [--json out.json]
    PYTHONPATH=. .venv/bin/python bench/bench_baselines.py null [--runs 4000] [--bt-runs 300] [--resamples 300]
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
    "judges": ("gpt-4-0314-rts:relevance", "gpt-3.5-turbo-0301-rts:relevance", "llama-2-70b-chat-hf-rts:relevance"),
    "all": ("rougeL",),
}
COLUMNS = ("correct", "correct_significant", "correct_undecided", "inversion", "omission", "insertion")


def study_table(dataset: Any, human: str, metrics: Sequence[str]) -> tuple[Any, npt.NDArray[np.int8]]:
    """The human rater's pair table (every human-rated (pair, item) row) with the metrics' codes
    (R, k) aligned to its rows, restricted to pairs every metric rated. Metric-only items are
    dropped (SummEval has none: every metric rated the human-rated items)."""
    from dataclasses import replace

    from prefeval_core.pairs.counts import align_outcomes
    from prefeval_core.pairs.preferences import pair_outcomes

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


NULL_SETTINGS = ((100, 10), (100, 30))
"""(pool, revealed) items per pair in the null simulation."""


def tie_table(runs: int, systems: int, pool: int, p_tie: float, rng: np.random.Generator) -> Any:
    """``runs`` independent groups of ``systems`` equally good systems; every pair of a group has
    ``pool`` items with i.i.d. human outcomes ``(p>, p=, p<) = ((1 - p_tie)/2, p_tie, (1 - p_tie)/2)``
    and metric outcomes from the ideal metric's mixture matrix."""
    from prefeval_core.pairs.counts import PairTable
    from prefeval_core.protocol.ideal_metric import IDEAL_MU

    names = [[f"r{r:05d}s{s}" for s in range(systems)] for r in range(runs)]
    pairs = [(group[a], group[b]) for group in names for a in range(systems) for b in range(a + 1, systems)]
    P = len(pairs)
    human = rng.choice(3, size=(P, pool), p=[(1 - p_tie) / 2, p_tie, (1 - p_tie) / 2])
    cumulative = np.cumsum(IDEAL_MU, axis=0)[:, human]  # (3, P, pool): P(metric <= c | human)
    metric = (rng.random((P, pool))[None] > cumulative).sum(axis=0)
    return PairTable(
        human_rater="human",
        metric_rater="ideal",
        pairs=tuple(pairs),
        pair_index=np.repeat(np.arange(P, dtype=np.int32), pool),
        item_id=np.tile(np.array([f"i{k:04d}" for k in range(pool)], dtype=object), P),
        human=human.reshape(-1).astype(np.int8),
        metric=metric.reshape(-1).astype(np.int8),
    )


def null_rates(runs: int, bt_runs: int, resamples: int) -> list[dict[str, Any]]:
    """Share of true-tie pairs decided by each rule, per (pool, revealed, p=)."""
    from prefeval_core.baselines import bradley_terry_decisions, ppi_decisions
    from prefeval_core.decision import decide_counts
    from prefeval_core.pairs.counts import count_triples

    rows = []
    for pool, revealed_items in NULL_SETTINGS:
        for p_tie in (0.0, 0.3, 0.6):
            rng = np.random.default_rng([pool, revealed_items, int(p_tie * 10)])
            table = tie_table(runs, 2, pool, p_tie, rng)
            revealed = np.tile(np.arange(pool) < revealed_items, table.n_pairs)
            start = time.perf_counter()
            rates = {
                "prefeval human only": decide_counts(count_triples(table, revealed), model="human_only").decision,
                "prefeval full (ideal metric)": decide_counts(count_triples(table, revealed), model="full", seed=0).decision,
                "PPI++ (ideal metric)": ppi_decisions(table, revealed).decision,
                "CLT (human only)": ppi_decisions(table, revealed, metric_codes=np.full(table.human.shape, -1)).decision,
            }
            bt_table = tie_table(bt_runs, 4, pool, p_tie, rng)
            bt_revealed = np.tile(np.arange(pool) < revealed_items, bt_table.n_pairs)
            bt = [
                bradley_terry_decisions(
                    bt_table.with_pairs(np.arange(bt_table.n_pairs) // 6 == r), bt_revealed[: 6 * pool], seed=r, n_resamples=resamples
                )
                for r in range(bt_runs)
            ]
            rates["Bradley–Terry"] = np.concatenate([result.decision for result in bt])
            row = {"pool": pool, "revealed": revealed_items, "p_tie": p_tie, "wall_s": time.perf_counter() - start}
            row |= {name: (float(np.mean(decision != 1)), int(decision.size)) for name, decision in rates.items()}
            rows.append(row)
            print(
                f"| {pool} | {revealed_items} | {p_tie} | "
                + " | ".join(f"{share:.3f} ({np.sqrt(share * (1 - share) / size):.3f})" for share, size in (row[n] for n in rates))
                + " |",
                flush=True,
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("mode", nargs="?", choices=("compare", "null"), default="compare")
    parser.add_argument("--runs", type=int, default=4000, help="null mode: runs (pairs) per setting")
    parser.add_argument("--bt-runs", type=int, default=300, help="null mode: Bradley–Terry runs (4 systems each) per setting")
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
    if args.mode == "null":
        print("\nshare of true-tie pairs decided (Monte-Carlo s.e.); gamma = 0.05\n")
        methods = ("prefeval human only", "prefeval full (ideal metric)", "PPI++ (ideal metric)", "CLT (human only)", "Bradley–Terry")
        print("| pool | revealed | p= | " + " | ".join(methods) + " |")
        print("|---:|---:|---:|---|---|---|---|---|")
        rows = null_rates(args.runs, args.bt_runs, args.resamples)
        if args.json:
            Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
        return
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
