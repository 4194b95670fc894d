"""One rating per request where annotators are nested in outputs (a crowd), method.md §13.

SummEval relevance's three expert ratings of each abstractive output (1,200 outputs, 12 systems)
are relabelled to workers drawn without replacement from a pool of 15, other workers for each
output (seed 5): the crowd design. ``--drop`` also removes one rating from 30 % of the outputs
(outputs rated two or three times). For each variant: the design the defaults choose, the units a
pair's pool holds and on how many pairs the sign of the pool's mean difference differs from the full
evaluation's (the mean over outputs of their workers' mean), then ``--seeds`` default replays of
top-1 and all-pairs (question-level control, ``pool_mean``): cost, false exclusions, inversions.
Public API only, so the same script measures another source tree (``PYTHONPATH=<tree>``).

Usage (from the repository root)::

    PYTHONPATH=. .venv/bin/python bench/bench_crowd_units.py [--seeds 10]
"""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import numpy as np
import pandas as pd

from prefeval_core.data.dataset import load_dataset
from prefeval_core.protocol.question_control import full_differences
from prefeval_core.protocol.settings import Question
from prefeval_core.workflow.setup import StudySetup
from prefeval_core.workflow.study import replay_json, run_replay, study_table

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
HUMAN = "human:relevance"
WORKERS = 15


def crowd_ratings(drop: bool) -> bytes:
    """The crowd variant as a ratings CSV (the experts' ratings relabelled; the mean recomputed)."""
    ratings = pd.read_csv(SHARED / "summeval" / "ratings.csv")
    rng = np.random.default_rng(5)
    experts = ratings[ratings["rater"].str.startswith(HUMAN + ":")]
    outputs = []
    for _, output in experts.groupby(["item_id", "system"], sort=True):
        workers = rng.choice(WORKERS, size=len(output), replace=False)
        output = output.assign(rater=[f"{HUMAN}:w{w:02d}" for w in workers])
        outputs.append(output.iloc[:2] if drop and rng.random() < 0.3 else output)
    crowd = pd.concat(outputs)
    means = crowd.groupby(["item_id", "system"], as_index=False)["score"].mean().assign(rater=HUMAN)
    buffer = io.StringIO()
    pd.concat([crowd, means[crowd.columns]]).to_csv(buffer, index=False)
    return buffer.getvalue().encode()


def describe(name: str, drop: bool, seeds: int) -> None:
    dataset = load_dataset([(f"{name}.csv", crowd_ratings(drop))])
    setup = StudySetup(human=HUMAN)
    table = study_table(dataset, setup)
    whole = study_table(dataset, setup.with_(ratings_per_request="all"))
    pool = full_differences(table)
    flips = int(np.sum(np.sign(np.nanmean(pool, axis=1)) != np.sign(np.nanmean(full_differences(whole), axis=1))))
    per_pair = (~np.isnan(pool)).sum(axis=1)
    print(
        f"{name}: the defaults buy '{table.ratings_per_request}'; a pair's pool holds {per_pair.mean():.1f} of "
        f"{pool.shape[1]} units (min {per_pair.min()}); the pool mean's sign differs from the full evaluation's on "
        f"{flips} of {len(per_pair)} pairs"
    )
    for question in (Question("top-k", k=1), Question()):
        costs, false_exclusions, inversions = [], 0, 0.0
        for seed in range(seeds):
            run = setup.with_(question=question, seed=seed)
            summary = replay_json(run_replay(study_table(dataset, run), run))["summary"]
            costs.append(summary["cost_fraction"])
            false_exclusions += summary.get("false_exclusions") or 0
            inversions += summary["inversion"] * summary["pairs"]
        label = "top-1" if question.kind == "top-k" else "all-pairs"
        print(
            f"  {label}: cost {np.mean(costs):.3f} ({min(costs):.3f}-{max(costs):.3f}) of the ratings paid, "
            f"false exclusions {false_exclusions}, inversions {inversions:.0f} ({seeds} seeds)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args()
    print(f"PYTHONPATH=. .venv/bin/python bench/bench_crowd_units.py --seeds {args.seeds}")
    describe("crowd, 3 ratings per output", False, args.seeds)
    describe("crowd, 2 or 3 ratings per output", True, args.seeds)


if __name__ == "__main__":
    main()
