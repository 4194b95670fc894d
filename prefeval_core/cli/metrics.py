"""``metrics --texts FILE --metrics bleu,chrf,ter,embed,sescore2 --out ratings.csv``: raters from texts."""

from __future__ import annotations

import argparse
import sys
from typing import cast

from prefeval_core.cli._common import check_output_folder, positive_int, progress
from prefeval_core.cli._terminal import print_safe
from prefeval_core.vocabulary.text_metrics import METRICS, MetricName


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "metrics",
        help="compute metric ratings (BLEU, chrF, TER, embedding similarity, SEScore2) from texts",
        description="Score every system output against its item's references (or source) and write a long ratings file "
        "(item_id, system, rater, score; higher is better; raters named <metric>-ref or <metric>-src).",
    )
    parser.add_argument("--texts", required=True, metavar="FILE", help="system outputs: item_id, system, output")
    parser.add_argument("--references", metavar="FILE", help="references: item_id, [ref_index,] reference")
    parser.add_argument("--sources", metavar="FILE", help="sources: item_id, source (needed with --against sources)")
    parser.add_argument("--metrics", default="bleu,chrf,ter", help=f"comma-separated, from {','.join(METRICS)} (default %(default)s)")
    parser.add_argument("--against", choices=["references", "sources"], default="references", help="compare with (default %(default)s)")
    parser.add_argument("--max-references", type=positive_int, metavar="N", help="use only the first N references of an item (TER is slow)")
    parser.add_argument("--model", metavar="FILE", help="SEScore2 model file (default: the shipped English model)")
    parser.add_argument("--reduce", choices=["max", "mean"], default="max", help="combine several references (embed, sescore2)")
    parser.add_argument("--cased", action="store_true", help="case-sensitive BLEU/chrF/TER (default: lower-cased)")
    parser.add_argument(
        "--out",
        required=True,
        metavar="FILE",
        help="ratings file to write: CSV (formula-safe: a name starting with = + - @ gets a leading ') or, "
        "with the suffix .jsonl or .parquet, names exactly as they are",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from prefeval_core.workflow.text_metrics import score_text_files

    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
    unknown = [m for m in metrics if m not in METRICS]
    if unknown or not metrics:
        print_safe(f"error: unknown metric(s) {', '.join(unknown) or '(none)'}; choose from {', '.join(METRICS)}", file=sys.stderr)
        return 2
    check_output_folder(args.out)
    scored = score_text_files(
        args.texts,
        args.references,
        args.sources,
        cast(list[MetricName], metrics),
        args.out,
        against=args.against,
        max_references=args.max_references,
        model=args.model,
        reduce=args.reduce,
        lowercase=not args.cased,
        progress=progress,
    )
    progress(f"{scored.outputs} outputs x {len(metrics)} metrics scored in {scored.seconds:.1f} s; wrote {args.out}")
    return 0
