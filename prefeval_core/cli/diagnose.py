"""``diagnose --data DIR --human RATER --metric RATER [--eps E] [--json] [--html OUT.html]``.

Confusion matrices, Favi-Scores with credible intervals, per-system Favi-Scores, sign
accuracies and Kendall tau-b of one metric against one human rater (method.md §7-§9).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from prefeval_core.cli._common import (
    add_data_option,
    check_output_folder,
    int_in,
    load_from_args,
    non_negative_float,
    open_probability,
    print_json,
    progress,
    seed_int,
    write_output_file,
)
from prefeval_core.cli._terminal import print_safe
from prefeval_core.vocabulary.levels import DEFAULT_FAVI_DRAWS, DEFAULT_GAMMA

MAX_SAMPLES = 1_000_000
"""Posterior draws per pair at most (each pair holds them in memory)."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "diagnose",
        help="confusion matrices, Favi-Scores, sign accuracies and Kendall tau of a metric",
        description="Diagnose a metric against a human rater: per pair the confusion matrix (rows = metric, columns = human, "
        "order > = <), the Favi-Score (positive favours system_a; null without an error) with a posterior credible interval, "
        "per system its oriented Favi-Scores, and per metric the sign accuracies, mean |Favi-Score| and Kendall tau-b.",
    )
    add_data_option(parser)
    parser.add_argument("--human", required=True, help="the human rater, e.g. human:relevance")
    parser.add_argument("--metric", required=True, help="the metric rater, e.g. rougeL")
    parser.add_argument(
        "--eps", type=non_negative_float, default=0.0, help="tie threshold on the metric's score differences (default %(default)s)"
    )
    parser.add_argument(
        "--gamma", type=open_probability, default=DEFAULT_GAMMA, help="significance level of the DAGs (default %(default)s)"
    )
    parser.add_argument("--seed", type=seed_int, default=0, help="seed of the Favi-Score posterior (default %(default)s)")
    parser.add_argument(
        "--samples", type=int_in(1, MAX_SAMPLES), default=DEFAULT_FAVI_DRAWS, help="posterior draws per pair (default %(default)s)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON (a stable interface)")
    parser.add_argument("--html", metavar="OUT.html", help="write every figure into one self-contained offline HTML report")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from prefeval_core.workflow.metric_check import MetricCheck, check_json, check_metric

    if args.html:
        check_output_folder(args.html)
    dataset = load_from_args(args.data, args)
    report = check_metric(
        dataset, MetricCheck(args.human, args.metric, eps=args.eps, gamma=args.gamma, seed=args.seed), samples=args.samples
    )
    if args.html:
        from prefeval_core.figures.report import diagnostics_html  # plotly only when a report is asked for

        write_output_file(Path(args.html), diagnostics_html(report, seed=args.seed).encode("utf-8"))
        progress(f"wrote {args.html}")
    summary = check_json(report)
    if args.json:
        print_json(summary)
        return 0
    _print_text(summary, args.metric, args.human)
    return 0


def _fmt(value: float | None, spec: str = ".3f") -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else format(value, spec)


def _print_text(summary: dict, metric: str, human: str) -> None:
    numbers = summary["metric"]
    print_safe(f"{metric} vs {human}: {len(summary['pairs'])} pairs")
    sign = f"sample-level sign accuracy {_fmt(numbers['sample_sign_accuracy'])}, system-level {_fmt(numbers['system_sign_accuracy'])}"
    print_safe(f"  {sign}")
    print_safe(f"  mean |Favi-Score| {_fmt(numbers['mean_abs_favi'])}")
    if numbers["kendall_tau"] is not None or numbers["segments"] is not None:
        tau, grouped = _fmt(numbers["kendall_tau"]), _fmt(numbers["kendall_tau_grouped"])
        print_safe(f"  Kendall tau-b {tau} overall, {grouped} grouped by item, {numbers['segments']} segments")
    width = max((len(p["system_a"]) + len(p["system_b"]) + 6 for p in summary["pairs"]), default=10)
    print_safe(f"  {'pair':<{width}}{'items':>5}{'errors':>7} {'Favi':>6}   95% interval")
    for pair in summary["pairs"]:
        low, high = pair["favi_interval"]
        name = f"{pair['system_a']} vs {pair['system_b']}"
        print_safe(f"  {name:<{width}}{pair['items']:>5}{pair['errors']:>7} {_fmt(pair['favi'], '+.2f'):>6}   [{low:+.2f}, {high:+.2f}]")
