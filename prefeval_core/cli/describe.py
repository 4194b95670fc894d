"""``describe FILE... [--json]``: systems, items, raters and per-pair coverage."""

from __future__ import annotations

import argparse

from prefeval_core.cli._common import add_files_option, files_from_args, load_from_args, print_json
from prefeval_core.cli._terminal import print_safe


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "describe",
        help="summarise systems, items, raters and coverage",
        description="Summarise a dataset: systems, items, raters, and how many items each rater covers per system pair.",
    )
    parser.add_argument("--human", help="human rater for the per-pair human/metric coverage")
    parser.add_argument("--metric", help="metric rater for the per-pair human/metric coverage")
    parser.add_argument("--json", action="store_true", help="print JSON")
    add_files_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from prefeval_core.workflow.datasets import describe_data

    dataset = load_from_args(files_from_args(args), args, warn=False)  # it lists them itself
    summary = describe_data(dataset, args.human, args.metric).to_json()
    if args.json:
        print_json(summary)
        return 0
    print_safe(f"dataset {summary['name']}: {len(summary['systems'])} systems, {summary['items']} items, {len(summary['raters'])} raters")
    print_safe("systems: " + ", ".join(summary["systems"]))
    width = max((len(rater["name"]) for rater in summary["raters"]), default=0)
    for rater in summary["raters"]:
        print_safe(
            f"  {rater['name']:<{width}} {rater['kind']:<8} {rater['systems']:>3} systems "
            f"{rater['items']:>6} items {rater['pairs']:>5} pairs"
        )
    if "pairs" in summary:
        print_safe(f"coverage of {args.human} / {args.metric}:")
        for pair in summary["pairs"]:
            print_safe(
                f"  {pair['system_a']} vs {pair['system_b']}: {pair['human_items']} human, "
                f"{pair['metric_items']} metric, {pair['joint_items']} both"
            )
    for warning in summary["warnings"]:
        print_safe(f"warning: {warning}")
    return 0
