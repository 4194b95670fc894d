"""Do the views contradict the method? (method.md §13, "What the views show beside the answer".)

On the shared data, with the default settings (question-level control, ``pool_mean``), over seeds:

* **leaderboard against a tier**: a system the run ruled out of a top-k answer shown a bootstrap
  P(top k) above 0.05, or ranked above a system still in the answer;
* **leaderboard against decided pairs**: a pair decided ``A > B`` with B's leaderboard score above A's;
* **θ against decisions**: a decided pair whose θ (the pairs table's ``θ ≈ P(Δ > 0)``) is not beyond
  the two-sided 95 % (0.975 / 0.025) on its side; and, for reading, undecided pairs with θ beyond
  0.999 / 0.001 (what the exact test did not decide while the normal approximation is sure).

It reads only the public API, so the same script measures an older tree
(``PYTHONPATH=<tree> .venv/bin/python bench/bench_view_consistency.py``).

Usage (from the repository root)::

    PYTHONPATH=. .venv/bin/python bench/bench_view_consistency.py [--seeds 10]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import prefeval_core
import prefeval_core.api as pe
from prefeval_core.data.dataset import load_dataset
from prefeval_core.vocabulary.outcomes import BETTER, TIE, WORSE

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
TIERS = (("summeval", "human:relevance", 1), ("summeval", "human:coherence", 3), ("wmt21_ted_ende_mqm", "human", 3))
ALL_PAIRS = (("summeval", "human:relevance"), ("wmt21_ted_ende_mqm", "human"))


def tier_contradictions(seeds: int) -> None:
    print("| study | question | runs | runs with a contradiction | largest P(top k) of a system ruled out |")
    print("|---|---|---|---|---|")
    for name, human, k in TIERS:
        data = load_dataset(SHARED / name)
        bad, worst = 0, 0.0
        for seed in range(seeds):
            board = pe.replay(data, human, question="top-k", k=k, seed=seed).leaderboard()
            status = list(board["status"])
            last_in = max(i for i, s in enumerate(status) if s in ("in", "sure"))
            out = board["status"] == "out"
            p_out = float(board.loc[out, f"P(top {k})"].max()) if out.any() else 0.0
            worst = max(worst, p_out)
            bad += int(p_out > 0.05 or any(s == "out" for s in status[:last_in]))
        print(f"| {name} {human} | top-{k} | {seeds} | {bad} | {worst:.3f} |")


def pair_contradictions(seeds: int) -> None:
    print(
        "\n| study | decided pairs | ordered against the leaderboard | decided with θ not beyond 0.975 / 0.025 | undecided pairs "
        "| undecided with θ beyond 0.999 / 0.001 |"
    )
    print("|---|---|---|---|---|---|")
    for name, human in ALL_PAIRS:
        data = load_dataset(SHARED / name)
        decided = against = soft = undecided = sure = 0
        for seed in range(seeds):
            run = pe.replay(data, human, seed=seed)
            state, board = run.run.state, run.leaderboard()
            score = dict(zip(board["system"], board.iloc[:, 1], strict=True))
            theta = state.status.theta
            for k, ((a, b), code) in enumerate(zip(state.table.pairs, state.decisions.tolist(), strict=True)):
                if code in (BETTER, WORSE):
                    winner, loser = (a, b) if code == BETTER else (b, a)
                    decided += 1
                    against += int(score[winner] < score[loser])
                    soft += int((code == BETTER and theta[k] < 0.975) or (code == WORSE and theta[k] > 0.025))
                elif code == TIE and not state.status.equivalent[k]:
                    undecided += 1
                    sure += int(theta[k] > 0.999 or theta[k] < 0.001)
        print(f"| {name} {human} | {decided} | {against} | {soft} | {undecided} | {sure} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args()
    start = time.perf_counter()
    print(f"prefeval_core from {Path(prefeval_core.__file__).parent.parent}; seeds 0-{args.seeds - 1}; defaults\n")
    tier_contradictions(args.seeds)
    pair_contradictions(args.seeds)
    command = f"PYTHONPATH=<tree> .venv/bin/python bench/bench_view_consistency.py --seeds {args.seeds}"
    print(f"\n({time.perf_counter() - start:.0f} s; command: {command})")


if __name__ == "__main__":
    main()
