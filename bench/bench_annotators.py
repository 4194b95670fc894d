"""Finding a crowd's annotators and checking their agreement (method.md §2, §12): time against the
number of annotators.

A synthetic crowd (seed 0): ``--systems`` systems x ``--items`` items, each output rated by 3 workers
drawn from ``--workers``, as named sub-raters ``human:q:<worker>`` beside their mean ``human:q`` (the
form every version of prefeval reads the same way, so ``PYTHONPATH=<tree>`` measures another tree).
Times, best of ``--repeats``: loading the file, :func:`annotator_scores` (who the annotators are:
the sub-raters whose mean is the score) and :func:`profile_raters` (the Data page's roles, with
the annotators' mean pairwise correlation); with ``--replay``, one default replay of top-1 and of
all-pairs (every system tied: the worst case, a run to the end of the pool), CPU seconds and rounds.

Usage (from the repository root)::

    PYTHONPATH=. .venv/bin/python bench/bench_annotators.py [--workers 30 300] [--systems 20] [--items 2000] [--replay]
"""

from __future__ import annotations

import argparse
import importlib
import time
from collections.abc import Callable

import numpy as np

from prefeval_core.data.dataset import Dataset, load_dataset
from prefeval_core.data.rater_roles import profile_raters
from prefeval_core.protocol.settings import Question
from prefeval_core.workflow.setup import StudySetup
from prefeval_core.workflow.study import run_replay, study_table


def _annotator_scores() -> Callable[..., object]:
    """The function wherever the tree keeps it (``data.annotators`` since 2026-11-28, ``data.dataset`` before)."""
    for module in ("prefeval_core.data.annotators", "prefeval_core.data.dataset"):
        try:
            return getattr(importlib.import_module(module), "annotator_scores")  # noqa: B009
        except (ImportError, AttributeError):
            continue
    raise ImportError("annotator_scores")


def crowd_file(systems: int, items: int, workers: int) -> bytes:
    rng = np.random.default_rng(0)
    rows = ["item_id,system,rater,score"]
    for item in range(items):
        for system in range(systems):
            scores = rng.integers(1, 6, size=3)
            rows += [f"i{item},s{system},human:q:w{w},{v}" for w, v in zip(rng.choice(workers, 3, replace=False), scores, strict=True)]
            rows.append(f"i{item},s{system},human:q,{float(scores.mean())!r}")
    return ("\n".join(rows) + "\n").encode()


def best(repeats: int, run: Callable[[], object]) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[30, 300])
    parser.add_argument("--systems", type=int, default=20)
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--replay", action="store_true", help="also time one default replay of top-1 and of all-pairs")
    args = parser.parse_args()
    annotator_scores = _annotator_scores()
    print(f"{args.systems} systems x {args.items} items x 3 ratings; best of {args.repeats}")
    print("| workers | load s | annotator_scores s | profile_raters s |")
    print("|---:|---:|---:|---:|")
    for workers in args.workers:
        data = crowd_file(args.systems, args.items, workers)
        load = best(args.repeats, lambda data=data: load_dataset([("crowd.csv", data)]))
        dataset = load_dataset([("crowd.csv", data)])
        find = best(args.repeats, lambda dataset=dataset: annotator_scores(dataset.ratings, "human:q"))
        roles = best(1, lambda dataset=dataset: profile_raters(dataset))
        print(f"| {workers} | {load:.2f} | {find:.2f} | {roles:.2f} |")
        if args.replay:
            for question in (Question("top-k", k=1), Question()):
                print(f"    default replay, {question.kind}: {replay_time(dataset, question)}")


def replay_time(dataset: Dataset, question: Question) -> str:
    """One default replay (seed 0) of ``question``: its design, CPU seconds of the protocol and rounds."""
    setup = StudySetup(human="human:q", question=question, seed=0)
    table = study_table(dataset, setup)
    start = time.process_time()
    replay = run_replay(table, setup)
    seconds = time.process_time() - start
    return f"'{table.ratings_per_request}', {seconds:.1f} CPU s, {replay.state.round} rounds, cost {replay.result.cost_fraction:.3f}"


if __name__ == "__main__":
    main()
