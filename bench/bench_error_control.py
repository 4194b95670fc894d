"""Error control over repeated looks (method.md §12; issue 10 part 4): simulation tables and speed.

Prints every table and writes them as markdown (``--out``). Seeded: the same command gives the same
tables. Sections:

1. **Ties** (the guarantee): pools of 100, 500 and 2,000 items, N in {1, 10, 50}, ``p>= p<`` with
   ``p=`` in {0, 0.3, 0.6}: the share of runs ending significant, the spending rule (the studies'
   default) and the anytime-valid rule vs the paper's per-look rule, with the Monte-Carlo s.e. and
   the bound ``gamma + 2 s.e.``.
2. **Power**: true differences ``p> - p<`` = 0.1 and 0.2 (several ``p=``), N = 10: the share decided
   (in the right direction) and the cost (human outcomes used until a decision, a futility stop or
   the end of the pool), paper's rule vs spending vs anytime (also with the engine's Beta(1, 1)
   mixture) without futility, with exact and with predictive futility; and the cost at ties.
3. **With a metric**: the ideal metric of method.md §10 (``mu`` known and the full model) with
   metric-only items, and a biased metric that favours A (full model): guarantee and gain.
4. **Speed**: one round over 4,950 pairs with 500 items each (human only; full model).

Usage (from the repository root)::

    PYTHONPATH=. .venv/bin/python bench/bench_error_control.py [--runs 2000] [--metric-runs 1000] [--out docs/results_error_control.md]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from prefeval_core.decision import MuRows
from prefeval_core.pairs.counts import JointCounts
from prefeval_core.protocol.ideal_metric import IDEAL_MU_ROWS
from prefeval_core.sequential import (
    Scenario,
    anytime_decisions,
    futility,
    initial_log_numerator,
    simulate_runs,
    update_log_numerator,
)
from prefeval_core.sequential.spending import spending_futility

GAMMA = 0.05
BIASED_MU: MuRows = ((0.7, 0.45, 0.2), (0.1, 0.3, 0.1), (0.2, 0.25, 0.7))
"""A metric that favours A: it says ``>`` for 45% of true ties and for 20% of true ``<`` (columns = human)."""


def rates(difference: float, tie: float) -> tuple[float, float, float]:
    """``(p>, p=, p<)`` with ``p> - p< = difference`` and ``p= = tie``."""
    return ((1 - tie + difference) / 2, tie, (1 - tie - difference) / 2)


def cell_seed(*parts: object) -> int:
    """A seed per cell from its description (stable across runs and machines)."""
    return int(np.random.SeedSequence([ord(ch) for ch in repr(parts)]).generate_state(1)[0])


class Report:
    """Collects markdown lines and prints them as they come."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, *lines: str) -> None:
        for line in lines:
            print(line, flush=True)
            self.lines.append(line)

    def table(self, header: list[str], rows: list[list[str]]) -> None:
        self.add("| " + " | ".join(header) + " |", "|" + "|".join("---:" if i else "---" for i in range(len(header))) + "|")
        for row in rows:
            self.add("| " + " | ".join(row) + " |")
        self.add("")


def ties(report: Report, runs: int) -> None:
    report.add(f"### 1. True ties: share of runs ending significant ({runs} runs per cell, gamma = {GAMMA})", "")
    bound = GAMMA + 2 * math.sqrt(GAMMA * (1 - GAMMA) / runs)
    report.add(f"Bound: gamma + 2 MC s.e. (at a true share of gamma) = {bound:.4f}.", "")
    rows, worst = [], 0.0
    for pool in (100, 500, 2000):
        for batch in (1, 10, 50):
            for tie in (0.0, 0.3, 0.6):
                scenario = Scenario(pool, batch, rates(0.0, tie))
                seed = cell_seed("tie", pool, batch, tie)
                start = time.perf_counter()
                spending = simulate_runs(scenario, runs, gamma=GAMMA, control="spending", seed=seed)
                anytime = simulate_runs(scenario, runs, gamma=GAMMA, seed=seed)
                paper = simulate_runs(scenario, runs, gamma=GAMMA, control="none", seed=seed)
                worst = max(worst, anytime.share_significant, spending.share_significant)
                rows.append(
                    [
                        str(pool),
                        str(batch),
                        f"{tie:.1f}",
                        f"{spending.share_significant:.4f} ± {spending.share_significant_se:.4f}",
                        "yes" if spending.share_significant <= bound else "**NO**",
                        f"{anytime.share_significant:.4f} ± {anytime.share_significant_se:.4f}",
                        "yes" if anytime.share_significant <= bound else "**NO**",
                        f"{paper.share_significant:.4f} ± {paper.share_significant_se:.4f}",
                        f"{time.perf_counter() - start:.1f}",
                    ]
                )
    header = ["pool", "N", "p=", "spending: share significant ± s.e.", "<= bound", "anytime: share ± s.e.", "<= bound"]
    report.table([*header, "paper's rule (none)", "s"], rows)
    report.add(f"Largest share with control on: {worst:.4f} (bound {bound:.4f}).", "")


def _power_row(label: str, result, truth: int) -> list[str]:  # type: ignore[no-untyped-def]
    correct = float(np.mean(result.decision == truth))
    wrong = float(np.mean((result.decision != truth) & (result.decision != 1)))
    cost = result.cost
    return [label, f"{correct:.3f}", f"{wrong:.3f}", f"{cost.mean():.0f}", f"{np.median(cost):.0f}", f"{result.futile.mean():.3f}"]


def power(report: Report, runs: int) -> None:
    report.add(f"### 2. Power and cost, N = 10 ({runs} runs per cell; cost = human outcomes used per run)", "")
    header = ["rule", "decided right", "decided wrong", "mean cost", "median cost", "stopped for futility"]
    for pool in (500, 2000):
        for difference in (0.0, 0.1, 0.2):
            for tie in (0.0, 0.3, 0.6):
                if difference == 0.0 and tie != 0.3:
                    continue
                scenario = Scenario(pool, 10, rates(difference, tie))
                seed = cell_seed("power", pool, difference, tie)
                truth = 0 if difference > 0 else 1
                shown = tuple(round(x, 3) for x in scenario.rates)
                report.add(f"**pool {pool}, p> - p< = {difference:.1f}, p= = {tie:.1f}** (p = {shown})", "")
                start = time.perf_counter()
                results = {
                    "paper's rule (none)": simulate_runs(scenario, runs, gamma=GAMMA, control="none", seed=seed),
                    "spending": simulate_runs(scenario, runs, gamma=GAMMA, control="spending", seed=seed),
                    "spending + predictive futility (beta = gamma)": simulate_runs(
                        scenario, runs, gamma=GAMMA, control="spending", futility_rule="predictive", seed=seed
                    ),
                    "anytime": simulate_runs(scenario, runs, gamma=GAMMA, seed=seed),
                    "anytime, Beta(1, 1) mixture (the engine's prior)": simulate_runs(
                        scenario, runs, gamma=GAMMA, concentration=1.0, seed=seed
                    ),
                    "anytime + exact futility": simulate_runs(scenario, runs, gamma=GAMMA, futility_rule="exact", seed=seed),
                    "anytime + predictive futility (beta = gamma)": simulate_runs(
                        scenario, runs, gamma=GAMMA, futility_rule="predictive", seed=seed
                    ),
                }
                report.table(header, [_power_row(label, result, truth) for label, result in results.items()])
                if difference > 0:
                    kept, stopped = results["anytime"].decision, results["anytime + predictive futility (beta = gamma)"].decision
                    lost = float(np.mean((kept == truth) & (stopped != truth)))
                    seconds = time.perf_counter() - start
                    report.add(f"Decisions lost to predictive futility: {lost:.3f} (beta = {GAMMA}); {seconds:.0f} s", "")


def with_metric(report: Report, runs: int) -> None:
    report.add(f"### 3. With a metric ({runs} runs per cell, N = 10, pool 500 human outcomes)", "")
    header = ["metric, model", "metric-only items", "p> - p<", "decided right", "decided wrong", "mean cost", "stopped for futility", "s"]
    rows = []
    cells: list[tuple[str, MuRows | None, str, int]] = [
        ("none (human only)", None, "human_only", 0),
        ("ideal, mu known", IDEAL_MU_ROWS, "known_mu", 0),
        ("ideal, mu known", IDEAL_MU_ROWS, "known_mu", 2000),
        ("ideal, full model", IDEAL_MU_ROWS, "full", 0),
        ("ideal, full model", IDEAL_MU_ROWS, "full", 2000),
        ("biased to A, full model", BIASED_MU, "full", 2000),
    ]
    for difference in (0.0, 0.1, 0.2):
        for label, mu, model, extra in cells:
            scenario = Scenario(500, 10, rates(difference, 0.3), metric_mu=mu, metric_only=extra, model=model)  # type: ignore[arg-type]
            seed = cell_seed("metric", label, extra, difference)
            truth = 0 if difference > 0 else 1
            for control, rule, suffix in (
                ("anytime", "off", ""),
                ("anytime", "predictive", " + predictive futility"),
                ("spending", "predictive", ", spending + predictive futility"),
            ):
                start = time.perf_counter()
                result = simulate_runs(scenario, runs, gamma=GAMMA, control=control, futility_rule=rule, seed=seed)  # type: ignore[arg-type]
                row = _power_row(label + suffix, result, truth)
                rows.append([row[0], str(extra), f"{difference:.1f}", *row[1:4], row[5], f"{time.perf_counter() - start:.0f}"])
    report.table(header, rows)
    report.add("At p> - p< = 0 'decided right' is the share undecided and 'decided wrong' the false decisions (bound as in section 1).", "")


def _timed(function: Callable[[], object], repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def speed(report: Report) -> None:
    report.add("### 4. Speed: one round over 4,950 pairs of 500 items (best of 3)", "")
    rng = np.random.default_rng(0)
    P, items = 4950, 500
    mu = np.array(IDEAL_MU_ROWS)
    p = rng.dirichlet([5, 3, 5], size=P)
    truth = np.minimum((rng.random((P, items))[..., None] > np.cumsum(p, axis=1)[:, None, :]).sum(-1), 2)
    metric = np.minimum((rng.random((P, items))[None] > np.cumsum(mu, axis=0)[:, truth]).sum(0), 2)

    def counts(revealed: int) -> JointCounts:
        rev = np.zeros((P, 4, 3), dtype=np.int64)
        unrev = np.zeros((P, 4), dtype=np.int64)
        np.add.at(rev, (np.repeat(np.arange(P), revealed), metric[:, :revealed].ravel(), truth[:, :revealed].ravel()), 1)
        np.add.at(unrev, (np.repeat(np.arange(P), items - revealed), metric[:, revealed:].ravel()), 1)
        return JointCounts(("m",), rev, unrev)

    rows = []
    for revealed in (20, 200, 420):  # 420: 80 items left, the exact route of the spending futility
        rows += _round_timings(revealed, counts(0), counts(revealed - 10), counts(revealed))
    report.table(["human outcomes revealed per pair", "step", "seconds"], rows)
    report.add(f"Load average at the end: {os.getloadavg()[0]:.1f} (2 cores shared with other engineers' jobs).", "")


def _round_timings(revealed: int, empty: JointCounts, previous: JointCounts, current: JointCounts) -> list[list[str]]:
    """Seconds of each step of one protocol round, with ``revealed`` human outcomes per pair after it."""
    P = current.n_pairs
    remaining = current.unrevealed.sum(axis=1)  # every unrevealed item is in the pool here
    numerator = update_log_numerator(empty, previous, initial_log_numerator(P))
    now = update_log_numerator(previous, current, numerator)
    steps: list[tuple[str, Callable[[], object]]] = [
        ("human only: decisions", lambda: anytime_decisions(current.n, GAMMA)),
        ("human only: predictive futility", lambda: futility(current.n, remaining, GAMMA)),
        ("full model: update_log_numerator", lambda: update_log_numerator(previous, current, numerator)),
        ("full model: decisions", lambda: anytime_decisions(current, GAMMA, log_numerator=now)),
        (
            "full model: predictive futility",
            lambda: futility(current, remaining, GAMMA, log_numerator=now, remaining_patterns=current.unrevealed),
        ),
        ("spending: predictive futility, human only", lambda: spending_futility(current.n, remaining, GAMMA, GAMMA)),
        (
            "spending: predictive futility with the metric",
            lambda: spending_futility(
                current.n, remaining, GAMMA, GAMMA, revealed_patterns=current.revealed, remaining_patterns=current.unrevealed
            ),
        ),
    ]
    return [[str(revealed), name, f"{_timed(step):.3f}"] for name, step in steps]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=2000, help="runs per cell of sections 1 and 2")
    parser.add_argument("--metric-runs", type=int, default=1000, help="runs per cell of section 3")
    parser.add_argument("--sections", default="ties,power,metric,speed")
    parser.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "docs" / "results_error_control.md"))
    args = parser.parse_args()
    report = Report()
    report.add(
        "## Error control over repeated looks: simulation tables",
        "",
        f"Made by `PYTHONPATH=. .venv/bin/python {' '.join(['bench/bench_error_control.py', *sys.argv[1:]])}` "
        f"({time.strftime('%Y-%m-%d')}); seeded, gamma = {GAMMA}, predictive futility with beta = gamma.",
        "",
    )
    started = time.perf_counter()
    sections = {"ties": lambda: ties(report, args.runs), "power": lambda: power(report, args.runs)}
    sections |= {"metric": lambda: with_metric(report, args.metric_runs), "speed": lambda: speed(report)}
    for name in args.sections.split(","):
        sections[name]()
    report.add(f"Total {time.perf_counter() - started:.0f} s.")
    Path(args.out).write_text("\n".join(report.lines) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
