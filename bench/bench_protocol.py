"""Speed of the annotation-budget protocol (issue 4): prints figures, asserts nothing.

1. One full replay of SummEval relevance with one metric (rougeL, full model, fast sampler,
   N = 10, all human outcomes as budget): the first run (includes compilation) and the mean
   of the following runs, with time per round; the human-only replay (exact, no sampling)
   in the same process as the reference for the protocol's own overhead.
2. One ``reproduce``-style sweep over 10 seeds for that metric: total wall time and time per round.

Usage (from the repository root)::

    PYTHONPATH=. .venv/bin/python bench/bench_protocol.py [--data ../shared/data/summeval] [--metric rougeL] [--repeats 3] [--seeds 10]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from prefeval_core.runtime import configure_jax


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data" / "summeval"))
    parser.add_argument("--human", default="human:relevance")
    parser.add_argument("--metric", default="rougeL")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args()
    configure_jax(x64=True)

    from prefeval_core.data.dataset import load_dataset
    from prefeval_core.workflow import StudySetup, run_replay, study_table

    dataset = load_dataset(args.data)
    # the paper's pair-by-pair protocol without error control: the protocol's own overhead and the engine's cost
    human_setup = StudySetup(args.human, unit="comparisons")
    metric_setup = human_setup.with_(metrics=(args.metric,))
    human_table, metric_table = study_table(dataset, human_setup), study_table(dataset, metric_setup)

    def settings(table, model: str, seed: int) -> StudySetup:  # type: ignore[no-untyped-def]
        return (human_setup if model == "human_only" else metric_setup).with_(seed=seed)

    human = [run_replay(human_table, settings(human_table, "human_only", 0)) for _ in range(args.repeats)]
    human_s = statistics.mean(r.wall_s for r in human)
    print(
        f"human-only replay ({human_table.n_pairs} pairs, exact): {human_s:.3f} s, {human[0].result.rounds} rounds, "
        f"{human_s / human[0].result.rounds * 1000:.1f} ms per round (the protocol's own overhead)"
    )

    first = run_replay(metric_table, settings(metric_table, "full", 0))
    print(f"{args.metric} replay, first run (with compilation): {first.wall_s:.2f} s, {first.result.rounds} rounds")
    warm = [run_replay(metric_table, settings(metric_table, "full", 0)) for _ in range(args.repeats)]
    warm_s = statistics.mean(r.wall_s for r in warm)
    rounds = warm[0].result.rounds
    print(
        f"{args.metric} replay after compilation: {warm_s:.2f} s (mean of {args.repeats}), {rounds} rounds, "
        f"{warm_s / rounds:.2f} s per round; {warm_s / human_s:.0f}x the human-only replay; target < 5 s"
    )

    start = time.perf_counter()
    total_rounds = 0
    for seed in range(args.seeds):
        total_rounds += run_replay(metric_table, settings(metric_table, "full", seed)).result.rounds
    sweep = time.perf_counter() - start
    print(f"{args.seeds} seeds of {args.metric}: {sweep:.1f} s, {total_rounds} rounds, {sweep / total_rounds:.2f} s per round")


if __name__ == "__main__":
    main()
