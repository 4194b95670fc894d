"""What a scalar metric's magnitudes add inside ``pool_mean_clt`` (method.md §13): the control
variate on the metric's score differences against the same metric reduced to its signs.

SummEval relevance (all three experts per request, human only otherwise) with a synthetic judge
whose scores are the experts' mean plus seeded normal noise of standard deviation ``σ`` (the less
noise, the higher its item-level correlation ``r`` with the human differences, printed beside), and
the three LLM judges as they are. For each: cost (share of the 4,800 ratings the study paid), false
exclusions / inversions against the pool means, on the same seeds and item orders, for the metric's
score differences (the default) and for its outcomes only (``metric_scores`` removed from the table).

Usage (from the repository root)::

    PYTHONPATH=. .venv/bin/python bench/bench_metric_scores.py [--seeds 10] [--sigmas 0.25,0.5,1]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from prefeval_core.data.dataset import Dataset, load_dataset
from prefeval_core.protocol.question_control import full_differences, metric_differences
from prefeval_core.protocol.result import protocol_result
from prefeval_core.protocol.run import replay_source, run_protocol
from prefeval_core.protocol.settings import ProtocolSettings, Question
from prefeval_core.protocol.state import new_state
from prefeval_core.protocol.table import StudyTable, build_study_table

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
HUMAN = "human:relevance"
JUDGES = ("gpt-4-0314-rts:relevance", "gpt-3.5-turbo-0301-rts:relevance", "llama-2-13b-chat-hf-rts:relevance")


def with_noisy_judge(data: Dataset, sigma: float, seed: int) -> Dataset:
    """``data`` with a rater ``noisy`` = the experts' mean + N(0, σ²) per output."""
    human = data.ratings[data.ratings["rater"] == HUMAN]
    noise = np.random.default_rng([seed, 0x5C0]).normal(0.0, sigma, len(human))
    noisy = human.assign(rater="noisy", score=human["score"].to_numpy(dtype=np.float64) + noise)
    return dataclasses.replace(data, ratings=pd.concat([data.ratings, noisy], ignore_index=True))


def correlation(table: StudyTable) -> float:
    """Mean over pairs of the item-level correlation of the human and the (first) metric difference."""
    d = full_differences(table)
    f = np.zeros_like(d)
    f[table.row_pair, table.row_item] = metric_differences(table)[0]
    rs = [np.corrcoef(d[p][ok], f[p][ok])[0, 1] for p in range(len(d)) if (ok := np.isfinite(d[p])).sum() > 2 and f[p][ok].std() > 0]
    return float(np.mean(rs))


def run(table: StudyTable, question: Question, delta: float | None, seed: int, metrics: tuple[str, ...]) -> tuple[float, int]:
    settings = ProtocolSettings(
        budget=table.cost_available(), batch=10, seed=seed, question=question, unit="ratings",
        model="full" if metrics else "human_only", metrics=metrics, error_control="question", statistic="pool_mean_clt",  # type: ignore[arg-type]
        futility=0.05, delta=delta,
    )  # fmt: skip
    state = run_protocol(new_state(table, settings), replay_source(table))
    result = protocol_result(state)
    errors = result.top_k.false_exclusions if result.top_k is not None else int(np.sum(result.comparison.error_types == "inversion"))
    return result.cost_fraction, errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--sigmas", default="0.25,0.5,1")
    args = parser.parse_args()
    print(f"command: PYTHONPATH=. .venv/bin/python bench/bench_metric_scores.py --seeds {args.seeds} --sigmas {args.sigmas}")
    data = load_dataset(SHARED / "summeval")
    questions = (("top-1", Question("top-k", 1), None), ("all-pairs δ=0.5", Question(), 0.5))
    judges = [(f"noisy σ={s}", float(s)) for s in args.sigmas.split(",")] + [("the 3 LLM judges", None)]
    print("| question | metric | r (scores) | r (signs) | human only | signs | scores | errors (h / signs / scores) | s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label, question, delta in questions:
        for name, sigma in judges:
            start = time.perf_counter()
            costs, errors, rs = np.zeros((3, args.seeds)), np.zeros(3, dtype=int), np.zeros((2, args.seeds))
            for seed in range(args.seeds):
                source = data if sigma is None else with_noisy_judge(data, sigma, seed)
                metrics = JUDGES if sigma is None else ("noisy",)
                scored = build_study_table(source, HUMAN, metrics, seed=seed)
                signs = dataclasses.replace(scored, metric_scores=None)
                rs[:, seed] = correlation(scored), correlation(signs)
                for column, (table, used) in enumerate(((scored, ()), (signs, metrics), (scored, metrics))):
                    costs[column, seed], wrong = run(table, question, delta, seed, used)
                    errors[column] += wrong
            cells = " | ".join(f"{c.mean():.3f}" for c in costs)
            print(
                f"| {label} | {name} | {rs[0].mean():.2f} | {rs[1].mean():.2f} | {cells} | {' / '.join(map(str, errors))} | "
                f"{time.perf_counter() - start:.0f} |"
            )
            sys.stdout.flush()


if __name__ == "__main__":
    main()
