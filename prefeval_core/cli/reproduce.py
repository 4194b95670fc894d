"""``reproduce --data DIR --human R [--metrics ...] [--seeds 10] [--json]``: the papers' two tables for a dataset.

Deriu et al. 2023 Tables 2/4 (naive metric: Corr./Inv./Omi./Ins./KLD) and 3/5 (protocol:
Corr./Inv./Omi./Ins./KLD/Ann.), one row per metric plus a "human only" protocol row and the
ideal-metric row, protocol rows averaged over seeds with their spread.

By default it runs the papers' protocol (``--cost-unit comparisons --error-control none``);
every ``replay`` option changes it (e.g. ``--cost-unit ratings --question top-k --k 1``).

``--json`` prints::

    {"dataset", "human", "seeds", "settings": {...},
     "runs": [{"metric", "seed", "summary": <replay --json summary>}, ...],
     "naive": [{"metric", "seeds", "correct", "inversion", "omission", "insertion", "kld", "pairs", ...}, ...],
     "protocol": [{"metric", "seeds", "pairs", "correct": {"mean", "sd", "min", "max"}, ..., "annotation_fraction": {...}}, ...]}

The metric named ``human only`` is the protocol without a metric; ``ideal`` the simulated
metric (its naive row is averaged over the seeds too, since the simulation depends on the seed).
"""

from __future__ import annotations

import argparse
from functools import partial

from prefeval_core.cli._common import int_in, load_from_args, print_json, progress
from prefeval_core.cli._terminal import print_safe
from prefeval_core.cli.replay import add_study_options, setup_from_args


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "reproduce",
        help="the papers' tables: naive metric vs protocol, per metric, averaged over seeds",
        description="Reproduce Deriu et al. 2023 Tables 2-5 on a dataset: for each metric the naive sign-test outcome and the "
        "protocol replayed with several seeds, plus the human-only protocol and the ideal metric, each compared with the "
        "full human evaluation.",
    )
    parser.add_argument("--metrics", help="comma-separated metric raters (default: dimension-free ones and those of the human's dimension)")
    parser.add_argument("--seeds", type=int_in(1, 10_000), default=10, help="seeds 0..S-1 per metric (default %(default)s)")
    parser.add_argument("--no-ideal", action="store_true", help="leave out the ideal-metric row")
    add_study_options(parser, paper_defaults=True)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from prefeval_core.workflow.papers import ROW_FIELDS, paper_tables

    dataset = load_from_args(args.data, args)
    # an empty --metrics gives only the human-only and ideal rows
    metrics = None if args.metrics is None else [m.strip() for m in args.metrics.split(",") if m.strip()]
    output = paper_tables(
        dataset, args.human, metrics, partial(setup_from_args, args), seeds=args.seeds, ideal=not args.no_ideal, progress=progress
    )
    naive, protocol = output["naive"], output["protocol"]
    if args.json:
        print_json(output)
        return 0
    print_safe(f"{dataset.name}, {args.human}: naive metric (Table 2/4)")
    print_safe(f"  {'metric':<32} {'Corr.':>6} {'Inv.':>6} {'Omi.':>6} {'Ins.':>6} {'KLD':>6}")
    for row in naive:
        values = " ".join(f"{row[f]:>6.2f}" for f in ("correct", "inversion", "omission", "insertion", "kld"))
        print_safe(f"  {row['metric']:<32} {values}")
    print_safe(f"protocol (Table 3/5), mean ± sd over {args.seeds} seeds")
    print_safe(f"  {'metric':<32} " + " ".join(f"{h:>11}" for h in ("Corr.", "Inv.", "Omi.", "Ins.", "KLD", "Ann.", "Cost")))
    for row in protocol:
        print_safe(f"  {row['metric']:<32} " + " ".join(f"{row[f]['mean']:>5.2f}±{row[f]['sd']:<5.2f}" for f in ROW_FIELDS))
    return 0
