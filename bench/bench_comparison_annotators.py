"""One annotator's comparison per request (method.md §13, ``--ratings-per-request one``) on a study
whose annotators compared each pair of outputs: cost as a share of what the study paid, and the
answer against the full evaluation's (the annotators' majority).

PandaLM (shared/data/pandalm: 5 systems, 999 comparisons, 3 annotators each, so the study paid
2,997): for each question and seed, a default replay (question-level control, pool_mean) buying
every annotator's comparison at once (``all``) and one annotator's, rotated over the items by the
seed (``one``). *exact*: the answer is the reference of the ``all`` run (the full evaluation's:
top-k, the tier; all-pairs, every pair's direction or tie); *wrong*: top-k, members of that tier
left out; all-pairs, pairs decided against the full evaluation's direction.

Usage (from the repository root)::

    PYTHONPATH=. .venv/bin/python bench/bench_comparison_annotators.py [--seeds 10] [--data ../shared/data/pandalm]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np

from prefeval_core.protocol.settings import Question
from prefeval_core.workflow.datasets import load_paths
from prefeval_core.workflow.setup import StudySetup
from prefeval_core.workflow.study import replay_json, run_replay, study_table

ROOT = Path(__file__).resolve().parents[1]


def run(dataset: Any, question: Question, design: str, seed: int) -> dict[str, Any]:
    setup = StudySetup(human="human", question=question, seed=seed, ratings_per_request=design)  # type: ignore[arg-type]
    return replay_json(run_replay(study_table(dataset, setup), setup))


def outcomes(output: dict[str, Any], key: str) -> dict[tuple[str, str], str]:
    """Each pair's ``outcome`` (the run's decision) or ``human_reference`` (the full data's): ``>``, ``<`` or ``=``."""
    return {(p["system_a"], p["system_b"]): p[key] for p in output["pairs"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "pandalm"))
    args = parser.parse_args()
    dataset = load_paths([args.data])
    print(f"PYTHONPATH=. .venv/bin/python bench/bench_comparison_annotators.py --seeds {args.seeds}")
    print("| question | a request buys | seeds | cost (mean, range) | exact | wrong | answer size or pairs decided | s / run |")
    print("|---|---|---|---|---|---|---|---|")
    for question in (Question("top-k", 1), Question("all-pairs")):
        for design in ("all", "one"):
            costs, exact, wrong, size, seconds = [], 0, 0, [], []
            for seed in range(args.seeds):
                start = time.process_time()
                reference = run(dataset, question, "all", seed)
                output = reference if design == "all" else run(dataset, question, design, seed)
                seconds.append(time.process_time() - start)
                summary = output["summary"]
                costs.append(summary["cost_fraction"])
                if question.kind == "top-k":
                    tier, answer = set(reference["summary"]["reference_answer"]), set(summary["answer"])
                    exact += answer == tier
                    wrong += len(tier - answer)
                    size.append(len(answer))
                else:
                    full = outcomes(reference, "human_reference")
                    decided = {pair: d for pair, d in outcomes(output, "outcome").items() if d in (">", "<")}
                    exact += all(decided.get(pair) == full[pair] for pair in full if full[pair] in (">", "<"))
                    wrong += sum(decision != full[pair] for pair, decision in decided.items())
                    size.append(len(decided))
            c = np.array(costs)
            print(
                f"| {question.describe()} | {design} | {args.seeds} | {c.mean():.3f} ({c.min():.3f}–{c.max():.3f}) | "
                f"{exact}/{args.seeds} | {wrong} | {np.mean(size):.1f} | {np.mean(seconds):.2f} |"
            )


if __name__ == "__main__":
    main()
