"""Is the question-level stop's β a probability that the answer would still change? (method.md §13,
"Stopping the question"; issue 18 item 5.)

Each study is run twice per seed on the same item order: with the stop (β = 0.05, the default) and
without it (β off: the run goes on until nothing is undecided or the pool runs out, which at the
pool's end decides every pair whose pool differs, by the exact refutation). The two runs are the
same until the stop fires, so the run without it shows what the stopped run gave up: whether its
answer changes afterwards (another system excluded from a top-k tier; another pair decided or shown
equivalent), how much later the first change comes, and what it costs to get there.

A calibrated stop would see the answer change in at most about β of the runs. The predictive it
uses (a normal predictive of each e-process's growth, method.md §13) leaves out the exact refutation
as a pool runs out and the thresholds that fall as other pairs are decided, so it is not calibrated
in that sense; this bench measures by how much.

Usage (from the repository root)::

    PYTHONPATH=. .venv/bin/python bench/bench_futility_calibration.py [--seeds 10]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from prefeval_core.data.dataset import load_dataset
from prefeval_core.protocol.result import protocol_result
from prefeval_core.protocol.run import replay_source, run_protocol
from prefeval_core.protocol.settings import ProtocolSettings, Question
from prefeval_core.protocol.state import ProtocolState, new_state
from prefeval_core.protocol.table import build_study_table
from prefeval_core.vocabulary.outcomes import TIE

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
BETA = 0.05
STUDIES = (  # label, data folder, human rater, question, margin δ, ratings per request, statistic
    ("SummEval relevance top-1", "summeval", "human:relevance", Question("top-k", 1), None, "one_pooled", "pool_mean"),
    ("SummEval relevance top-1 (`one`)", "summeval", "human:relevance", Question("top-k", 1), None, "one", "pool_mean"),
    ("SummEval relevance all-pairs", "summeval", "human:relevance", Question(), None, "one_pooled", "pool_mean"),
    ("SummEval relevance all-pairs δ=0.5", "summeval", "human:relevance", Question(), 0.5, "one_pooled", "pool_mean"),
    ("WMT21 TED all-pairs", "wmt21_ted_ende_mqm", "human", Question(), None, "all", "pool_mean"),
    ("WMT21 TED all-pairs δ=1", "wmt21_ted_ende_mqm", "human", Question(), 1.0, "all", "pool_mean_clt"),
)


@dataclass(frozen=True)
class Answer:
    """What a run has answered after a round: top-k members, pair decisions, equivalent pairs."""

    members: npt.NDArray[np.bool_]
    decided: npt.NDArray[np.bool_]
    equivalent: npt.NDArray[np.bool_]

    def within(self, other: Answer) -> bool:
        """Whether ``other`` says nothing this answer does not (same members, decisions, equivalences)."""
        return bool(
            np.array_equal(self.members, other.members)
            and np.array_equal(self.decided, other.decided)
            and np.array_equal(self.equivalent, other.equivalent)
        )


def answers_by_round(state: ProtocolState) -> list[tuple[int, Answer]]:
    """(cumulative cost, answer) after every completed round of ``state``."""
    P = state.table.n_pairs
    decided, equivalent = np.zeros(P, dtype=bool), np.zeros(P, dtype=bool)
    cost, out = 0, []
    for record in state.records:
        cost += record.cost
        decided[record.pairs] |= record.decision != TIE
        if record.equivalent is not None:
            equivalent[record.pairs] |= record.equivalent
        out.append((cost, Answer(record.members.copy(), decided.copy(), equivalent.copy())))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args()
    print(f"command: PYTHONPATH=. .venv/bin/python bench/bench_futility_calibration.py --seeds {args.seeds}")
    print(f"β = {BETA}; each run again without the stop, the same item order\n")
    print(
        "| study | statistic | runs whose answer changes after the stop | cost at the stop | first change at | "
        "cost without the stop | more decisions / exclusions without it | s |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for label, folder, human, question, delta, per_request, statistic in STUDIES:
        data = load_dataset(SHARED / folder)
        changed, stops, firsts, ends, more = 0, [], [], [], []
        start = time.perf_counter()
        for seed in range(args.seeds):
            table = build_study_table(data, human, ratings_per_request=per_request, seed=seed)  # type: ignore[arg-type]
            total = table.cost_available()

            def run(beta: float | None) -> ProtocolState:
                settings = ProtocolSettings(
                    budget=total, batch=10, seed=seed, question=question, unit=table.unit, model="human_only",  # noqa: B023
                    error_control="question", statistic=statistic, futility=beta, delta=delta,  # type: ignore[arg-type]  # noqa: B023
                )  # fmt: skip
                return run_protocol(new_state(table, settings), replay_source(table))  # noqa: B023

            stopped, going = run(BETA), run(None)
            final = answers_by_round(stopped)[-1][1]
            stops.append(protocol_result(stopped).cost_fraction)
            ends.append(protocol_result(going).cost_fraction)
            rounds = answers_by_round(going)
            later = [
                (cost, answer) for cost, answer in rounds[len(stopped.records) :] if not final.within(answer)
            ]  # the rounds the stop did not buy
            last = rounds[-1][1]
            if later:
                changed += 1
                firsts.append(later[0][0] / total)
            gained = int((last.decided & ~final.decided).sum() + (last.equivalent & ~final.equivalent).sum())
            gained += int((final.members & ~last.members).sum()) if question.kind == "top-k" else 0
            more.append(gained)
        first = f"{np.mean(firsts):.3f}" if firsts else "–"
        print(
            f"| {label} | {statistic} | {changed}/{args.seeds} | {np.mean(stops):.3f} | {first} | {np.mean(ends):.3f} | "
            f"{np.mean(more):.1f} | {time.perf_counter() - start:.0f} |"
        )


if __name__ == "__main__":
    main()
