"""``requests export STUDY [FILE | --out FILE] [--seed N]`` and ``requests import STUDY FILE [--annotator NAME]``:
a study's open request as a blind file for annotators (CSV or JSONL by the name's suffix), and the
file, filled in, back into the store as the study's judgments.

``import`` stores each judgment once however often the file is imported and says how many were
new; ``studies step STUDY`` then feeds the complete ones to the protocol. The same route as the
Annotate page's request files (:mod:`prefeval_core.workflow.request_files`); the store is the
dashboard's (``$PREFEVAL_DATABASE_URL``, else SQLite in ``$PREFEVAL_DATA_DIR``).
"""

from __future__ import annotations

import argparse
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prefeval_core.cli._common import (
    add_request_exchange_arguments,
    export_target,
    open_study,
    print_json,
    read_input_file,
    usage_error,
    write_output_file,
)
from prefeval_core.cli._terminal import print_safe
from prefeval_core.errors import UnsupportedFormatError

if TYPE_CHECKING:
    from prefeval_core.workflow.datasets import Dataset
    from prefeval_core.workflow.request_files import RequestFileFormat
    from prefeval_core.workflow.studies import Study


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "requests",
        help="a study's request as a blind file for annotators, and the filled-in file back as judgments",
        description="export: the open request of a study as a blind request file (no system names; CSV or JSONL by the "
        "suffix of --out); import: that file, filled in by annotators, into the store as the study's judgments.",
    )
    add_request_exchange_arguments(
        parser, file_help="the filled-in request file", out_default="prefeval-requests.csv",
        out_help="the file to write, .csv or .jsonl",
    )  # fmt: skip
    parser.add_argument("--annotator", default="", help="import: the annotator of rows whose annotator column is empty")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    target = export_target(args) if args.action == "export" else None
    if args.action == "export" and target is None:
        return usage_error("requests export: give the file to write once, as FILE or as --out")
    if args.action == "import" and args.out is not None:
        return usage_error("requests import: --out is for export; the filled-in file is FILE")
    if args.action == "import" and args.file is None:
        return usage_error("requests import: give the filled-in request file")
    study, dataset = open_study(args.study)
    if target is not None:
        output = _export(study, dataset, target, args.seed)
    else:
        output = _import(study, dataset, args.file, args.annotator, latest_wins=args.latest_wins)
    if args.json:
        print_json(output)
    elif args.action == "export":
        print_safe(f"study #{study.id}: {output['tasks']} {output['unit']} to judge, written to {output['file']}")
        print_safe(output["instructions"])
    else:
        counts = f"{output['added']} new, {output['already_there']} already stored"
        print_safe(f"study #{study.id}: {output['judgments']} judgments in {Path(args.file).name}; {counts}")
    return 0


def _file_format(path: Path) -> RequestFileFormat:
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".jsonl"):
        raise UnsupportedFormatError.single("unsupported", f"write the requests as .csv or .jsonl, not '{suffix}'", file=path.name)
    return "csv" if suffix == ".csv" else "jsonl"


def _export(study: Study, dataset: Dataset, path: Path, seed: int) -> dict[str, Any]:
    from prefeval_core.workflow.request_files import study_request_file

    request = study_request_file(study, dataset, _file_format(path), seed=seed)
    write_output_file(path, request.content)
    return {"study": study.id, "tasks": request.tasks, "unit": request.unit, "file": str(path), "instructions": request.instructions}


def _import(study: Study, dataset: Dataset, file: str, annotator: str, *, latest_wins: bool) -> dict[str, Any]:
    from prefeval_core.workflow.request_files import import_request_file
    from prefeval_core.workflow.studies import study_store

    name, data = read_input_file(file)
    return asdict(import_request_file(study_store(), study, dataset, name, data, annotator=annotator, latest_wins=latest_wins))
