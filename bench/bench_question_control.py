"""The whole answer protected (method.md §13): error rates on simulated studies with truly tied top
systems, and cost and exactness on the shared data, question-level control against the per-pair
rules of round 2 on the same seeds (the same item orders).

Part 1 (simulation): six systems (eight for top-3), 2, 3 or 4 exactly tied at the top (ties exact
in the item pool: module ``prefeval_core.protocol.simulation``), and the all-tied null; N in {1, 10};
``--runs`` runs per cell: the share of runs excluding a tied top member (top-1, top-3) or with any
false directional decision (all-pairs, all tied), with 2 Monte-Carlo s.e. With ``--rules`` naming
``fdr``: all-pairs and baseline studies with true ties *and* real differences (the top systems tie,
the others tie ``gap`` lower) and the all-tied null, e-BH (``fdr``) against Holm (``question``) on
the same seeds: the false discovery rate with 2 s.e., the share of runs with any false decision,
power (share of the truly different pairs decided the right way) and cost (``--cells`` picks cells).

Part ``equivalence``: all-pairs with a margin δ just under and just over the top systems' true
lead (five systems, two tied at the top, 200 items by default, N in ``--batches``): the share of
runs with a false equivalence or direction, question-level control with the mean, pool-mean and
asymptotic pool-mean statistics.

Part 2 (real data): SummEval relevance top-1 (human only, and with the three LLM judges in the
model), WMT21 TED all-pairs with equivalence margins, PandaLM (a comparisons study) top-1 and
all-pairs: cost, exact match and false exclusions or inversions against the statistic's own
reference (``mean``: paired t-tests; ``pool_mean``: the pool's mean differences), false exclusions
against the t tests' top-1 tier; ``--seeds`` seeds.
``--designs`` picks what a request buys (``all``, ``one``, ``one_pooled``: the pool statistics only,
the t tier then from the items' means).

With ``fdr`` in ``--rules``: SummEval relevance and WMT21 TED all-pairs (human only), ``fdr`` against
``question`` on the same seeds: cost, pairs decided, and the decisions against the full data's
paired t-tests (correct, inversions, insertions: decided where the full data do not decide).

Usage (from the repository root)::

    PYTHONPATH=. .venv/bin/python bench/bench_question_control.py [--runs 1000] [--seeds 10] [--part sim,real]
        [--rules question,pool,spending|fdr] [--designs all,one,one_pooled]
    PYTHONPATH=. .venv/bin/python bench/bench_question_control.py --part equivalence --runs 1000 --batches 1,10
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt
from question_rules import RULE_HELP, RULES

from prefeval_core.data.dataset import load_dataset
from prefeval_core.diagnostics.comparison import paired_t_outcomes
from prefeval_core.protocol.question_control import full_differences
from prefeval_core.protocol.questions_top_k import reference_members
from prefeval_core.protocol.result import protocol_result
from prefeval_core.protocol.run import replay_source, run_protocol
from prefeval_core.protocol.settings import POOL_STATISTICS, ProtocolSettings, Question
from prefeval_core.protocol.simulation import expected_scores, simulate_discoveries, simulate_question, true_means
from prefeval_core.protocol.state import new_state
from prefeval_core.protocol.table import StudyTable, build_study_table
from prefeval_core.vocabulary.outcomes import UNDECIDED

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
PAIR_RULES = (("question", "mean"), ("fdr", "mean"))
DISCOVERY_CELLS = (  # question, systems, tied at the top, gap, items, statistic
    (Question(), 5, 5, 0.5, 60, "mean"),  # the global null: FDR = the share of runs with a false decision
    (Question(), 6, 2, 0.5, 60, "mean"),
    (Question(), 6, 2, 0.5, 60, "sign"),
    (Question(), 8, 4, 0.5, 60, "mean"),
    (Question("baseline", baselines=("s00",)), 6, 2, 0.5, 60, "mean"),
)


def _two_standard_errors(share: float, runs: int) -> float:
    """2 Monte-Carlo s.e. of an error share, computed at γ = 0.05 where the share is below it."""
    return 2 * math.sqrt(max(share * (1 - share), 0.05 * 0.95) / runs)


def _label(kind: str, k: int) -> str:
    return f"top-{k}" if kind == "top-k" else "all-pairs"


def simulation(
    runs: int, batches: tuple[int, ...], rules: tuple[tuple[str, str], ...], questions: tuple[str, ...], unit: str = "ratings"
) -> None:
    print("| question | unit | systems | tied | N | rule | runs | error share | 2 s.e. | cost |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    cells = [("top-k", 1, 6, tied) for tied in (2, 3, 4)] + [("top-k", 3, 8, tied) for tied in (3, 4)] + [("all-pairs", 1, 5, 5)]
    for kind, k, systems, tied in (cell for cell in cells if _label(cell[0], cell[1]) in questions):
        for batch in batches:
            for control, statistic in rules:
                question = Question(kind, k) if kind == "top-k" else Question()  # type: ignore[arg-type]
                result = simulate_question(
                    n_systems=systems, n_tied=tied, n_items=60, question=question, error_control=control,
                    statistic=statistic, batch=batch, runs=runs, seed=10_000 * tied + batch, unit=unit,  # type: ignore[arg-type]
                )  # fmt: skip
                label = _label(kind, k)
                rule = f"{control} ({statistic})"
                se2 = _two_standard_errors(result.errors, result.runs)
                cells = (label, unit, systems, tied, batch, rule, result.runs, f"{result.errors:.3f}", f"{se2:.3f}", f"{result.cost:.3f}")
                print("| " + " | ".join(map(str, cells)) + " |")
                sys.stdout.flush()


EQUIVALENCE_STATISTICS = ("mean", "pool_mean", "pool_mean_clt")
EQUIVALENCE_CELLS = ((2, 0.45), (2, 0.5), (5, 0.15))
"""(systems tied at the top, δ): the top pairs' lead just outside and just inside δ; and all five tied
with a margin the pool differences of tied pairs straddle (every direction false, Δ = 0 the true piece)."""
"""Around the top systems' true lead over the others (0.452 in expected scores, 0.5 in the design's
means before rounding and clipping): every top-vs-other equivalence is false at δ = 0.45 under the
mean statistic; under the pool statistics the pool's own differences scatter around it."""


def equivalence(runs: int, batches: tuple[int, ...], items: int, cells: tuple[tuple[int, float], ...] = EQUIVALENCE_CELLS) -> None:
    """All-pairs with an equivalence margin at the top systems' lead: five systems, two tied at the
    top, three tied 0.5 lower (design means), and all five tied with a small margin; the share of
    runs with any false equivalence or false direction (the whole answer's guarantee: the
    partitioning principle), and the pairs shown equivalent."""
    lead = expected_scores(true_means(5, 2))
    print(f"true lead of the top systems in expected scores: {lead[0] - lead[2]:.4f} (design: 0.5)")
    print("| question | systems | tied | items | N | statistic | δ | runs | error share | 2 s.e. | equivalent pairs | cost |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for tied, delta in cells:
        for batch in batches:
            for statistic in EQUIVALENCE_STATISTICS:
                result = simulate_question(
                    n_systems=5, n_tied=tied, n_items=items, question=Question(), statistic=statistic, batch=batch,
                    runs=runs, seed=30_000 + batch, delta=delta,
                )  # fmt: skip
                se2 = _two_standard_errors(result.errors, result.runs)
                cells = ("all-pairs", 5, tied, items, batch, statistic, delta, result.runs, f"{result.errors:.3f}", f"{se2:.3f}",
                         f"{result.equivalent:.2f}", f"{result.cost:.3f}")  # fmt: skip
                print("| " + " | ".join(map(str, cells)) + " |")
                sys.stdout.flush()


def discoveries(runs: int, batches: tuple[int, ...], cells: tuple[int, ...]) -> None:
    print("| question | systems | tied at the top | gap | items | N | rule | runs | FDR | 2 s.e. | any false | power | cost |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for question, systems, tied, gap, items, statistic in (DISCOVERY_CELLS[cell] for cell in cells):
        for batch in batches:
            for control, _ in PAIR_RULES:
                result = simulate_discoveries(
                    n_systems=systems, n_tied=tied, n_items=items, gap=gap, question=question, error_control=control,
                    statistic=statistic, batch=batch, runs=runs, seed=20_000 + 100 * tied + batch,
                )  # fmt: skip
                label = f"baseline {', '.join(question.baselines)}" if question.baselines else question.kind
                se2 = 2 * max(result.fdr_standard_error, math.sqrt(0.05 * 0.95 / result.runs))
                power = f"{result.power:.3f}" if tied < systems else "–"
                cells = (
                    label, systems, tied, gap, items, batch, f"{control} ({statistic})", result.runs, f"{result.fdr:.3f}",
                    f"{se2:.3f}", f"{result.any_false:.3f}", power, f"{result.cost:.3f}",
                )  # fmt: skip
                print("| " + " | ".join(map(str, cells)) + " |")
                sys.stdout.flush()


def _run(table, settings: ProtocolSettings):  # type: ignore[no-untyped-def]
    state = run_protocol(new_state(table, settings), replay_source(table))
    return state, protocol_result(state)


def real(seeds: int, rules: list[tuple[str, str]], designs: tuple[str, ...], batches: tuple[int, ...] = (10,), only: str = "") -> None:
    summeval = load_dataset(SHARED / "summeval")
    ted = load_dataset(SHARED / "wmt21_ted_ende_mqm")
    pandalm = load_dataset(SHARED / "pandalm")
    judges = ("gpt-4-0314-rts:relevance", "gpt-3.5-turbo-0301-rts:relevance", "llama-2-13b-chat-hf-rts:relevance")
    top1, pairs = Question("top-k", 1), Question()
    protected = [rule for rule in rules if rule[0] != "spending"]
    rows = [  # label, data, human, metrics, question, delta, ratings per request, rules
        ("SummEval relevance top-1", summeval, "human:relevance", (), top1, None, "all", rules),
        ("SummEval relevance top-1", summeval, "human:relevance", (), top1, None, "one", rules),
        ("SummEval relevance top-1", summeval, "human:relevance", judges, top1, None, "all", protected),
        ("SummEval relevance top-1", summeval, "human:relevance", judges, top1, None, "one", protected),
        ("SummEval relevance top-1", summeval, "human:relevance", (), top1, None, "one_pooled", protected),
        ("SummEval relevance top-1", summeval, "human:relevance", judges, top1, None, "one_pooled", protected),
        ("SummEval relevance all-pairs δ=0.25", summeval, "human:relevance", (), pairs, 0.25, "one", protected),
        ("SummEval relevance all-pairs δ=0.25", summeval, "human:relevance", (), pairs, 0.25, "one_pooled", protected),
        ("SummEval relevance all-pairs δ=0.5", summeval, "human:relevance", (), pairs, 0.5, "one", protected),
        ("SummEval relevance all-pairs δ=0.5", summeval, "human:relevance", (), pairs, 0.5, "all", protected),
        ("SummEval relevance all-pairs δ=0.5", summeval, "human:relevance", (), pairs, 0.5, "one_pooled", protected),
        ("WMT21 TED all-pairs", ted, "human", (), pairs, None, "all", rules),
        ("WMT21 TED all-pairs δ=0.5", ted, "human", (), pairs, 0.5, "all", protected),
        ("WMT21 TED all-pairs δ=1", ted, "human", (), pairs, 1.0, "all", protected),
        ("PandaLM (comparisons) top-1", pandalm, "human", (), top1, None, "all", rules),
        ("PandaLM (comparisons) all-pairs", pandalm, "human", (), pairs, None, "all", rules),
    ]
    header = (
        "study",
        "N",
        "ratings per request",
        "rule",
        "metrics",
        "seeds",
        "cost (mean, range)",
        "exact",
        "false exclusions / inversions",
    )
    print("| " + " | ".join(header) + " | false exclusions (t tier) | answer size | equivalent pairs (false, all seeds) | s / run |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for label, data, human, metrics, question, delta, per_request, rules in rows:
        if per_request not in designs or only not in label:
            continue
        # units of one item are dependent: only the pool statistics are valid on them (annotator_units)
        for batch, (control, statistic) in [
            (n, r) for n in batches for r in rules if per_request != "one_pooled" or r[1] in POOL_STATISTICS
        ]:
            costs, exact, errors, equivalent, false_equivalent, t_errors, sizes = [], 0, 0, 0, 0, 0, []
            start = time.perf_counter()
            for seed in range(seeds):
                table = build_study_table(data, human, metrics, ratings_per_request=per_request, seed=seed)
                settings = ProtocolSettings(
                    budget=table.cost_available(), batch=batch, seed=seed, question=question, unit=table.unit,
                    model="full" if metrics else "human_only", metrics=metrics, error_control=control,  # type: ignore[arg-type]
                    statistic=statistic, futility=0.05, delta=delta,  # type: ignore[arg-type]
                )  # fmt: skip
                state, result = _run(table, settings)
                costs.append(result.cost_fraction)
                equivalent += int(state.status.equivalent.sum())
                false_equivalent += int(result.false_equivalent.sum())
                if result.top_k is not None:
                    exact += int(result.top_k.exact_match)
                    errors += result.top_k.false_exclusions
                    items = table if per_request != "one_pooled" else build_study_table(data, human, seed=seed)
                    t_errors += int((t_tier(items) & ~state.members).sum())
                    sizes.append(int(state.members.sum()))
                else:
                    inversions = int(np.sum(result.comparison.error_types == "inversion"))
                    errors += inversions
                    exact += int(inversions == 0)
            elapsed = (time.perf_counter() - start) / seeds
            names = "+".join(m.split(":")[0] for m in metrics) or "human only"
            print(
                f"| {label} | {batch} | {per_request} | {control} ({statistic}) | {names} | {seeds} | {np.mean(costs):.3f} "
                f"({min(costs):.3f}–{max(costs):.3f}) | {exact}/{seeds} | {errors} | {t_errors if sizes else '–'} | "
                f"{f'{np.mean(sizes):.1f}' if sizes else '–'} | {equivalent / seeds:.1f} ({false_equivalent} false) | {elapsed:.1f} |"
            )
            sys.stdout.flush()


def t_tier(table: StudyTable) -> npt.NDArray[np.bool_]:
    """(S,) the top-1 tier of the full evaluation by paired t-tests at γ per pair: the yardstick of
    the issue's exactness target."""
    return reference_members(paired_t_outcomes(full_differences(table), 0.05), table.pair_systems, len(table.systems), 1)


def real_pairs(seeds: int) -> None:
    header = "| study | rule | seeds | cost (mean, range) | pairs decided | of the full data's | correct | inversions | insertions |"
    print(header + " s / run |\n|---|---|---|---|---|---|---|---|---|---|")
    studies = (("SummEval relevance all-pairs", "summeval", "human:relevance"), ("WMT21 TED all-pairs", "wmt21_ted_ende_mqm", "human"))
    for label, name, human in studies:
        data = load_dataset(SHARED / name)
        for control, statistic in PAIR_RULES:
            costs, counts = [], np.zeros(5)
            start = time.perf_counter()
            for seed in range(seeds):
                table = build_study_table(data, human, seed=seed)
                settings = ProtocolSettings(
                    budget=table.cost_available(), batch=10, seed=seed, unit=table.unit, model="human_only",
                    error_control=control, statistic=statistic, futility=0.05,  # type: ignore[arg-type]
                )  # fmt: skip
                _, result = _run(table, settings)
                costs.append(result.cost_fraction)
                types = result.comparison.error_types
                reference = result.comparison.reference != UNDECIDED
                counts += [
                    np.sum(result.comparison.outcomes != UNDECIDED), reference.sum(), np.sum(types == "correct_significant"),
                    np.sum(types == "inversion"), np.sum(types == "insertion"),
                ]  # fmt: skip
            elapsed = (time.perf_counter() - start) / seeds
            decided, full, correct, inversions, insertions = counts / seeds
            print(
                f"| {label} | {control} ({statistic}) | {seeds} | {np.mean(costs):.3f} ({min(costs):.3f}–{max(costs):.3f}) | "
                f"{decided:.1f} | {full:.0f} | {correct:.1f} | {inversions:.1f} | {insertions:.1f} | {elapsed:.1f} |"
            )
            sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--part", default="sim,real")
    parser.add_argument("--batches", default="1,10", help="simulation: the batch sizes N")
    parser.add_argument("--questions", default="top-1,top-3,all-pairs", help="simulation: the questions' cells to run")
    parser.add_argument("--designs", default="all,one,one_pooled", help="real: the ratings per request to run")
    parser.add_argument("--real-batches", default="10", help="real: the batch sizes N (items per system and round)")
    parser.add_argument("--rows", default="", help="real: only the rows whose study label contains this")
    parser.add_argument("--items", type=int, default=200, help="equivalence: items per simulated study")
    parser.add_argument("--equivalence-cells", default="", help="equivalence: only the EQUIVALENCE_CELLS 'tied:δ' named (comma-separated)")
    parser.add_argument(
        "--unit", choices=("ratings", "comparisons"), default="ratings",
        help="simulation: judge the studies as ratings or as comparisons (the sign of each pair's score difference)",
    )  # fmt: skip
    parser.add_argument("--cells", default=",".join(map(str, range(len(DISCOVERY_CELLS)))), help="fdr: the DISCOVERY_CELLS to run")
    parser.add_argument(
        "--rules",
        default="question,pool,spending",
        help=f"{RULE_HELP} and/or fdr (mean; all-pairs and baseline only)",
    )
    args = parser.parse_args()
    options = f"--runs {args.runs} --seeds {args.seeds} --part {args.part} --batches {args.batches} --rules {args.rules}"
    options += f" --questions {args.questions} --designs {args.designs} --real-batches {args.real_batches}"
    options += f" --rows '{args.rows}'" if args.rows else ""
    options += f" --cells {args.cells}" if "fdr" in args.rules else ""
    options += f" --items {args.items}" if "equivalence" in args.part else ""
    options += f" --unit {args.unit}" if args.unit != "ratings" else ""
    print(f"command: PYTHONPATH=. .venv/bin/python bench/bench_question_control.py {options}")
    controls = tuple(args.rules.split(","))
    chosen = [RULES[name] for name in controls if name in RULES]
    batches = tuple(int(n) for n in args.batches.split(","))
    if "real" in args.part:
        if "fdr" in controls:
            real_pairs(args.seeds)
        else:
            real_batches = tuple(int(n) for n in args.real_batches.split(","))
            real(args.seeds, chosen, tuple(args.designs.split(",")), real_batches, args.rows)
    if "equivalence" in args.part:
        named = set(args.equivalence_cells.split(",")) if args.equivalence_cells else {f"{t}:{d:g}" for t, d in EQUIVALENCE_CELLS}
        equivalence(args.runs, batches, args.items, tuple(c for c in EQUIVALENCE_CELLS if f"{c[0]}:{c[1]:g}" in named))
    if "sim" in args.part:
        if chosen:
            simulation(args.runs, batches, tuple(chosen), tuple(args.questions.split(",")), args.unit)
        if "fdr" in controls:
            discoveries(args.runs, batches, tuple(int(cell) for cell in args.cells.split(",")))


if __name__ == "__main__":
    main()
