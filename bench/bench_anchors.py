"""Anchors and the ideal-metric grid for the whole answer protected (method.md §13; issue 18).

Part ``real``: SummEval relevance, top-1, human only, buying all three experts per request, one
rating per request, or one rating per request with every rating in the pool (``one_pooled``: the
default route's rows only); on each seed's item order (the study's seeded order, the one prefeval's
runs use), prefeval's rules beside three anchors:

* prefeval's default, ``question (pool_mean)``, with the question-level stop (β = 0.05) and without it
  (``--futility none``), ``question (mean)`` and round 2's ``spending (sign)`` (per-pair control), N = 10;
* successive elimination (``prefeval_core.baselines.elimination``): looks every 10 items, one-sided
  bounds at ``γ / (K S (S - 1))`` (Bonferroni over the K = 10 looks, the leader and the tied best
  systems), Student t and Hoeffding;
* PPI++ (``ppi_py`` via ``prefeval_core.baselines.ppi_interval``), fixed sample: the first n items of
  the order for every system, n the most whose cost is within that of the prefeval run named in the
  row on the same seed; per pair the two-sided interval on the mean score difference at
  ``γ / C(S, 2)`` (Bonferroni over pairs: one look); X is excluded when some Y's interval over
  ``Y - X`` lies above 0. Human only (the classical interval) and with the three LLM judges' mean
  score difference as the predictor (the other items of the pool unlabelled). The same interval on
  every item shows what the Bonferroni-protected answer can reach with all the data.

Exact and false exclusions are scored against the full evaluation's tier by the paired t-test on all
items at γ per pair (the mean statistic's reference, ``t tier``); for ``spending (sign)`` its own (sign)
reference is given too, and for ``pool_mean`` the pool's (the systems whose mean over the pool is
highest). *Protected tier*: the answer of the Bonferroni-protected t intervals on every
item (the last row), what a rule protecting the whole answer can reach with all the data.

Part ``ideal``: the ideal metric of method.md §10 at sign accuracies 0.6 / 0.7 / 0.8 / 0.9
(``prefeval_core.protocol.simulation.ideal_mu``) on simulated Likert studies (60 items; top-1: six
systems, two tied at the top, the others 0.5 lower; all-pairs: five systems, two tied at the top,
the others 0.5, 1.0 and 1.5 lower; ``--tied 1``: a clear best instead, every other system 0.5 lower
for top-1, a ladder 0.5 apart for all-pairs), N = 10: cost and error share with the metric against
human only, under ``question (mean)`` and ``spending (sign)``.

Part ``sim-anchor``: successive elimination on the simulated top-1 studies of
``bench_question_control.py --part sim`` (2, 3, 4 tied, N = 10) and of part ``ideal``, same seeds.

Usage (from the repository root)::

    PYTHONPATH=. .venv/bin/python bench/bench_anchors.py --part real [--seeds 10]
    PYTHONPATH=. .venv/bin/python bench/bench_anchors.py --part ideal [--runs 200] [--questions top-1,all-pairs]
    PYTHONPATH=. .venv/bin/python bench/bench_anchors.py --part sim-anchor [--runs 1000]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
from question_rules import RULE_HELP, RULES

from prefeval_core.baselines import ppi_interval, successive_elimination
from prefeval_core.data.dataset import Dataset, load_dataset
from prefeval_core.diagnostics.comparison import paired_t_outcomes
from prefeval_core.protocol.question_control import full_differences
from prefeval_core.protocol.questions_top_k import reference_members
from prefeval_core.protocol.result import protocol_result
from prefeval_core.protocol.run import replay_source, run_protocol
from prefeval_core.protocol.settings import ProtocolSettings, Question
from prefeval_core.protocol.simulation import HUMAN as SIMULATED
from prefeval_core.protocol.simulation import simulate_question, tied_top_study
from prefeval_core.protocol.state import new_state
from prefeval_core.protocol.steps import item_order
from prefeval_core.protocol.table import StudyTable, build_study_table

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
GAMMA = 0.05
BATCH = 10
HUMAN = "human:relevance"
JUDGES = ("gpt-4-0314-rts:relevance", "gpt-3.5-turbo-0301-rts:relevance", "llama-2-13b-chat-hf-rts:relevance")
BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Outcome:
    """One rule on one seed: its top-1 answer, its cost share, and (prefeval) its own reference."""

    members: BoolArray
    cost: float
    own_reference: BoolArray | None = None


def prefeval_run(table: StudyTable, seed: int, control: str, statistic: str, futility: float | None = 0.05, *, own: bool = True) -> Outcome:
    """prefeval's rule on the seed's order; with ``own`` its outcome carries its own reference (the
    full evaluation under its statistic) to be scored against as well."""
    settings = ProtocolSettings(
        budget=table.cost_available(), batch=BATCH, seed=seed, question=Question("top-k", 1), unit=table.unit,
        model="human_only", error_control=control, statistic=statistic, futility=futility,  # type: ignore[arg-type]
    )  # fmt: skip
    state = run_protocol(new_state(table, settings), replay_source(table))
    result = protocol_result(state)
    assert result.top_k is not None
    reference = np.isin(np.array(table.systems), result.top_k.reference.members) if own else None
    return Outcome(state.members.copy(), result.cost_fraction, reference)


def ordered(table: StudyTable, seed: int) -> tuple[FloatArray, npt.NDArray[np.int64]]:
    """(S, T) the human scores along the seed's item order (NaN where not requestable), and their costs."""
    grid = table.grid
    assert grid is not None
    order = item_order_of(table, seed)
    scores = np.where(grid.requestable, grid.scores, np.nan)[:, order]
    return scores, np.where(grid.requestable, grid.cost, 0)[:, order]


def elimination(table: StudyTable, seed: int, bound: str) -> Outcome:
    scores, cost = ordered(table, seed)
    finite = scores[np.isfinite(scores)]
    run = successive_elimination(scores, cost, batch=BATCH, gamma=GAMMA, score_range=float(np.ptp(finite)), bound=bound)  # type: ignore[arg-type]
    return Outcome(run.members, run.cost / table.cost_available())


def judge_scores(data: Dataset, table: StudyTable) -> FloatArray:
    """(S, I) the mean of the LLM judges' scores per output (NaN where none rated it)."""
    ratings = data.ratings[data.ratings.rater.isin(JUDGES)]
    grid = ratings.pivot_table(index="system", columns="item_id", values="score", aggfunc="mean")
    return grid.reindex(index=list(table.systems), columns=list(table.items)).to_numpy(dtype=np.float64)


def ppi_run(table: StudyTable, seed: int, share: float, metric: FloatArray | None) -> Outcome:
    """PPI++ at a fixed sample costing at most ``share`` of what the study paid (module docstring)."""
    scores, cost = ordered(table, seed)
    cumulative = np.cumsum(cost.sum(axis=0))
    n = max(int(np.searchsorted(cumulative, share * table.cost_available(), side="right")), 2)
    S = len(table.systems)
    level = GAMMA / (S * (S - 1) / 2)
    if metric is not None:
        grid = table.grid
        assert grid is not None
        metric = np.where(grid.requestable, metric, np.nan)[:, item_order_of(table, seed)]
    better = np.zeros((S, S), dtype=bool)  # [y, x]: Y shown better than X
    for y in range(S):
        for x in range(y + 1, S):
            low, high = pair_interval(scores[y] - scores[x], None if metric is None else metric[y] - metric[x], n, level)
            better[y, x], better[x, y] = low > 0, high < 0
    return Outcome(np.asarray(~better.any(axis=0)), float(cumulative[n - 1]) / table.cost_available())


def item_order_of(table: StudyTable, seed: int) -> npt.NDArray[np.int64]:
    """The seed's item order, the one prefeval's run on ``table`` with ``seed`` reveals."""
    settings = ProtocolSettings(budget=1, seed=seed, unit="ratings", model="human_only", error_control="none", futility=None)
    return item_order(new_state(table, settings))


def pair_interval(d: FloatArray, f: FloatArray | None, n: int, level: float) -> tuple[float, float]:
    """PPI++ interval of the mean of ``d`` from its first ``n`` values, the predictor ``f`` (0 where
    the judges rated neither output) on the rest unlabelled; classical without ``f``."""
    labelled = np.isfinite(d[:n])
    y = d[:n][labelled]
    if f is None:
        return ppi_interval(y, y, np.empty(0), level)
    f = np.nan_to_num(f, nan=0.0)
    rest = np.isfinite(d[n:])
    return ppi_interval(y, f[:n][labelled], f[n:][rest], level)


def real(seeds: int) -> None:
    data = load_dataset(SHARED / "summeval")
    print(
        "| ratings per request | rule | seeds | cost (mean, range) | answer size (t tier's) | exact (t tier) "
        "| false exclusions (t tier) | exact (protected tier) | own reference: exact, false excl. |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for per_request in ("all", "one", "one_pooled"):
        rows: dict[str, list[Scored]] = {}
        start = time.perf_counter()
        for seed in range(seeds):
            for label, one in seed_outcomes(data, per_request, seed).items():
                rows.setdefault(label, []).append(one)
        for label, runs in rows.items():
            print(f"| {per_request} | {label} | {seeds} | " + " | ".join(summary(runs)) + " |")
        print(f"({per_request}: {(time.perf_counter() - start) / seeds:.1f} s per seed)")
        sys.stdout.flush()


@dataclass(frozen=True)
class Scored:
    """One rule's outcome on one seed with the two references (t tier, protected tier)."""

    outcome: Outcome
    tier: BoolArray
    protected: BoolArray


def seed_outcomes(data: Dataset, per_request: str, seed: int) -> dict[str, Scored]:
    """Every rule of part ``real`` on one seed's table and item order (``one_pooled``: prefeval's
    default statistic only — its units are (item, annotator) ratings, which the anchors do not take)."""
    table = build_study_table(data, HUMAN, ratings_per_request=per_request, seed=seed)  # type: ignore[arg-type]
    tier = reference_members(paired_t_outcomes(full_differences(table), GAMMA), table.pair_systems, len(table.systems), 1)
    default = prefeval_run(table, seed, "question", "pool_mean")
    defaults = {
        "prefeval question (pool_mean, the default)": default,
        "prefeval question (pool_mean), the stop off": prefeval_run(table, seed, "question", "pool_mean", None),
    }
    if per_request == "one_pooled":
        protected = protected_tier(data, seed)
        return {label: Scored(outcome, tier, protected) for label, outcome in defaults.items()}
    judges = judge_scores(data, table)
    question = prefeval_run(table, seed, "question", "mean", own=False)
    spending = prefeval_run(table, seed, "spending", "sign")
    every_item = ppi_run(table, seed, 1.0, None)
    outcomes = {
        "prefeval question (mean)": question,
        "prefeval spending (sign), per pair": spending,
        "successive elimination, t": elimination(table, seed, "t"),
        "successive elimination, Hoeffding": elimination(table, seed, "hoeffding"),
        "PPI++ human only, at question (mean)'s cost": ppi_run(table, seed, question.cost, None),
        "PPI++ with the 3 LLM judges, at question (mean)'s cost": ppi_run(table, seed, question.cost, judges),
        "PPI++ human only, at spending (sign)'s cost": ppi_run(table, seed, spending.cost, None),
        "PPI++ with the 3 LLM judges, at spending (sign)'s cost": ppi_run(table, seed, spending.cost, judges),
        "classical t (PPI++ human only), every item": every_item,
        **defaults,
        "PPI++ human only, at the default's cost": ppi_run(table, seed, default.cost, None),
        "PPI++ with the 3 LLM judges, at the default's cost": ppi_run(table, seed, default.cost, judges),
    }
    return {label: Scored(outcome, tier, every_item.members) for label, outcome in outcomes.items()}


def protected_tier(data: Dataset, seed: int) -> BoolArray:
    """The protected tier of the full evaluation (the means of every expert): Bonferroni-protected t
    intervals on every item of the ``all`` table."""
    return ppi_run(build_study_table(data, HUMAN, ratings_per_request="all", seed=seed), seed, 1.0, None).members


def summary(scored: list[Scored]) -> list[str]:
    """Cost, answer size, exact and false exclusions (t tier), exact (protected tier), and the same
    against the rule's own reference where it has one."""
    seeds = len(scored)
    costs = [s.outcome.cost for s in scored]
    size = np.mean([s.outcome.members.sum() for s in scored])
    tier_size = np.mean([s.tier.sum() for s in scored])
    cells = [
        f"{np.mean(costs):.3f} ({min(costs):.3f}–{max(costs):.3f})",
        f"{size:.1f} ({tier_size:.1f})",
        f"{sum(bool(np.array_equal(s.outcome.members, s.tier)) for s in scored)}/{seeds}",
        str(sum(int((s.tier & ~s.outcome.members).sum()) for s in scored)),
        f"{sum(bool(np.array_equal(s.outcome.members, s.protected)) for s in scored)}/{seeds}",
    ]
    references = [(s.outcome.members, s.outcome.own_reference) for s in scored if s.outcome.own_reference is not None]
    if len(references) < seeds:
        return [*cells, "–"]
    exact = sum(bool(np.array_equal(members, reference)) for members, reference in references)
    false = sum(int((reference & ~members).sum()) for members, reference in references)
    return [*cells, f"{exact}/{seeds}, {false}"]


def ideal(
    runs: int,
    questions: tuple[str, ...],
    rules: tuple[str, ...],
    items: int = 60,
    batch: int = BATCH,
    delta: float | None = None,
    tied: int = 2,
) -> None:
    print(f"items per study: {items}, batch N = {batch}, equivalence margin: {delta}, systems tied at the top: {tied}")
    print("| question | rule | metric | runs | cost | error share | 2 s.e. | cost vs human only |")
    print("|---|---|---|---|---|---|---|---|")
    cells = {"top-1": (Question("top-k", 1), 6, False), "all-pairs": (Question(), 5, True)}
    for name in questions:
        question, systems, ladder = cells[name]
        for control, statistic in (RULES[rule] for rule in rules):
            human_cost = math.nan
            for accuracy in (None, 0.6, 0.7, 0.8, 0.9):
                result = simulate_question(
                    n_systems=systems, n_tied=tied, n_items=items, question=question, error_control=control, statistic=statistic,
                    batch=batch, runs=runs, seed=20_000 + systems, ladder=ladder, metric_accuracy=accuracy, delta=delta,
                )  # fmt: skip
                human_cost = result.cost if accuracy is None else human_cost
                se2 = 2 * math.sqrt(max(result.errors * (1 - result.errors), GAMMA * (1 - GAMMA)) / result.runs)
                metric = "human only" if accuracy is None else f"ideal, sign accuracy {accuracy}"
                ratio = "1" if accuracy is None else f"{result.cost / human_cost:.3f}"
                print(
                    f"| {name} | {control} ({statistic}) | {metric} | {result.runs} | {result.cost:.3f} | "
                    f"{result.errors:.3f} | {se2:.3f} | {ratio} |"
                )
                sys.stdout.flush()


def sim_elimination(runs: int) -> None:
    """Successive elimination on the simulated top-1 studies of ``bench_question_control.py --part sim``
    (N = 10: the same studies and item orders) and of part ``ideal``."""
    print("| study | tied | rule | runs | cost | error share | 2 s.e. |")
    print("|---|---|---|---|---|---|---|")
    cells = [(f"question-control sim, {tied} tied", tied, 10_000 * tied + BATCH) for tied in (2, 3, 4)]
    for label, tied, seed in [*cells, ("ideal-metric sim (top-1)", 2, 20_006)]:
        for bound in ("t", "hoeffding"):
            failures, costs = 0, []
            for run in range(runs):
                table = build_study_table(tied_top_study(6, tied, 60, seed=seed + run), SIMULATED)
                outcome = elimination(table, seed + run, bound)
                failures += int(not outcome.members[:tied].all())
                costs.append(outcome.cost)
            share = failures / runs
            se2 = 2 * math.sqrt(max(share * (1 - share), GAMMA * (1 - GAMMA)) / runs)
            print(f"| {label} | {tied} | successive elimination, {bound} | {runs} | {np.mean(costs):.3f} | {share:.3f} | {se2:.3f} |")
            sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", default="real,ideal,sim-anchor")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--runs", type=int, default=200, help="ideal, sim-anchor: runs per cell")
    parser.add_argument("--questions", default="top-1,all-pairs", help="ideal: top-1 and/or all-pairs")
    parser.add_argument(
        "--rules",
        default="question,spending",
        help=f"ideal: {RULE_HELP}",
    )
    parser.add_argument("--items", type=int, default=60, help="ideal: items per simulated study")
    parser.add_argument("--batch", type=int, default=BATCH, help="ideal: the batch size N")
    parser.add_argument("--delta", type=float, default=None, help="ideal: an equivalence margin (the rules decided by betting)")
    parser.add_argument("--tied", type=int, default=2, help="ideal: systems tied at the top (1: a clear best)")
    args = parser.parse_args()
    print(f"command: PYTHONPATH=. .venv/bin/python bench/bench_anchors.py {' '.join(sys.argv[1:])}")
    if "real" in args.part:
        real(args.seeds)
    if "ideal" in args.part:
        ideal(args.runs, tuple(args.questions.split(",")), tuple(args.rules.split(",")), args.items, args.batch, args.delta, args.tied)
    if "sim-anchor" in args.part:
        sim_elimination(args.runs)


if __name__ == "__main__":
    main()
