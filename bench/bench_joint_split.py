"""Where one several-metric call spends its time (issue 22's < 1 s per round): ``decide_joint`` on
SummEval relevance with rougeL, bleu and chrF at the first round's state (10 revealed per pair, 66
pairs), timed by stage — each mixture's exploring chains and its importance draws — and the draws
taken by the pairs whose θ ends within 0.01 of a decision threshold. Prints figures, asserts nothing.

    PYTHONPATH=. .venv/bin/python bench/bench_joint_split.py [--seeds 5]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from decision_workloads import summeval_joint_counts

import prefeval_core.decision.joint_importance as joint_importance
from prefeval_core.decision import decide_joint

METRICS = ("rougeL", "bleu", "chrF")
PAIRS = 66
NEAR = 0.01
"""How close to a decision threshold (γ/2 or 1 − γ/2, γ = 0.05) a pair's θ counts as near it."""


Stage = tuple[str, float, int, int]
"""A stage: its name (``chains`` or ``draws``), CPU seconds, draws, pairs."""


def timed(log: list[Stage], name: str, stage: Callable[..., Any], kept: list[Any]) -> Callable[..., Any]:
    """``stage`` wrapped to append what it did to ``log`` (and its output to ``kept``)."""

    def run(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        out = stage(*args, **kwargs)
        seconds = time.process_time() - start
        if name == "draws":
            log.append((name, seconds, int(out.draws.sum()), len(args[1])))
        else:
            log.append((name, seconds, 0, int(args[0].n.shape[0])))
        kept.append(out)
        return out

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    counts = summeval_joint_counts(METRICS, 10, 0).subset(np.arange(PAIRS))
    decide_joint(counts.subset(np.arange(2)), seed=99)  # imports and first-call costs out of the way
    log: list[Stage] = []
    kept: list[Any] = []
    chains, draws = joint_importance._mixture_target, joint_importance.importance_sample
    joint_importance._mixture_target = timed(log, "chains", chains, [])
    joint_importance.importance_sample = timed(log, "draws", draws, kept)
    print(f"`PYTHONPATH=. .venv/bin/python bench/bench_joint_split.py --seeds {args.seeds}`\n")
    print(f"SummEval relevance, {' + '.join(METRICS)}, {PAIRS} pairs, 10 revealed per pair; CPU seconds.\n")
    columns = (
        "seed",
        "call",
        "first mixture: chains, draws (count)",
        "larger mixtures: pairs, chains, draws (count)",
        "near a threshold: pairs, share of draws",
    )
    print("| " + " | ".join(columns) + " |")
    print("|---|---|---|---|---|")
    try:
        for seed in range(args.seeds):
            log.clear()
            kept.clear()
            start = time.process_time()
            decide_joint(counts, seed=seed)
            call = time.process_time() - start
            final = kept[0]  # the first mixture's summary, which the larger mixtures update in place
            near = np.minimum(np.abs(final.theta - 0.025), np.abs(final.theta - 0.975)) < NEAR
            first, later = log[:2], log[2:]
            pairs = "+".join(str(n) for name, _, _, n in later if name == "draws") or "0"
            print(
                f"| {seed} | {call:.2f} | {first[0][1]:.2f}, {first[1][1]:.2f} ({first[1][2]:,}) | {pairs}, "
                f"{sum(t for name, t, _, _ in later if name == 'chains'):.2f}, {sum(t for name, t, _, _ in later if name == 'draws'):.2f} "
                f"({sum(d for _, _, d, _ in later):,}) | {int(near.sum())}, {final.draws[near].sum() / final.draws.sum():.2f} |",
                flush=True,
            )
    finally:
        joint_importance._mixture_target, joint_importance.importance_sample = chains, draws


if __name__ == "__main__":
    main()
