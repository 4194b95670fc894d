"""``metrics --texts FILE --metrics bleu,chrf,ter,embed,sescore2 --out ratings.csv``: raters from texts."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import cast

import pandas as pd

from prefeval_core.cli._common import positive_int, progress
from prefeval_core.cli._terminal import print_safe
from prefeval_core.data.formats import TableKind, parse_table
from prefeval_core.data.reading import read_table
from prefeval_core.data.safe_csv import write_safe_csv
from prefeval_core.errors import raise_if_errors
from prefeval_core.textmetrics.rate import LEARNED_METRICS, METRICS, MetricName, align_segments, metric_ratings


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
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
    unknown = [m for m in metrics if m not in METRICS]
    if unknown or not metrics:
        print_safe(f"error: unknown metric(s) {', '.join(unknown) or '(none)'}; choose from {', '.join(METRICS)}", file=sys.stderr)
        return 2
    files: list[tuple[str | None, TableKind]] = [(args.texts, "texts"), (args.references, "references"), (args.sources, "sources")]
    texts, references, sources = (read_texts(path, kind) for path, kind in files)
    if sources is not None and "reference" in sources.columns:  # e.g. WMT: source and reference side by side
        extra = sources[["item_id", "reference"]].assign(ref_index=0)
        references = extra if references is None else pd.concat([references, extra], ignore_index=True)
    if references is None:
        references = pd.DataFrame({"item_id": [], "ref_index": [], "reference": []})
    segments = align_segments(texts, references, sources, args.against, args.max_references)
    if segments.missing:
        progress(f"warning: {segments.missing} outputs have nothing to compare with and get no rating")
    encoder = model = None
    if LEARNED_METRICS.intersection(metrics):
        from prefeval_core.textmetrics.embedding import load_encoder

        progress("loading the sentence encoder ...")
        encoder = load_encoder()
    if "sescore2" in metrics:
        from prefeval_core.textmetrics.sescore2.score import DEFAULT_MODEL, load_model

        model = load_model(args.model or DEFAULT_MODEL)
    started = time.perf_counter()
    ratings = metric_ratings(
        segments,
        cast(list[MetricName], metrics),
        args.against,
        encoder,
        model,
        lowercase=not args.cased,
        reduce=args.reduce,
        show_progress=True,
    )
    write_ratings(ratings, args.out)
    seconds = time.perf_counter() - started
    progress(f"{len(segments.hypotheses)} outputs x {len(metrics)} metrics scored in {seconds:.1f} s; wrote {args.out}")
    return 0


def write_ratings(ratings: pd.DataFrame, path: str) -> None:
    """``ratings`` as JSON Lines or Parquet (by the suffix), else as formula-safe CSV
    (:mod:`prefeval_core.data.safe_csv`)."""
    suffix = Path(path).suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        ratings.to_json(path, orient="records", lines=True, force_ascii=False)
    elif suffix in (".parquet", ".pq"):
        ratings.to_parquet(path, index=False)
    else:
        write_safe_csv(ratings, path)


def read_texts(path: str | None, kind: TableKind) -> pd.DataFrame | None:
    """A texts, references or sources file as its canonical frame (None without a path).

    Raises:
        DataError: the file cannot be read or lacks the columns of ``kind``.
    """
    if path is None:
        return None
    table = parse_table(read_table(path), kind)
    raise_if_errors(table.problems)
    return table.frame
