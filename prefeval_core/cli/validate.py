"""``validate FILE...``: check input files and print every problem found."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from prefeval_core.cli._common import add_files_option, files_from_args, load_from_args, print_json
from prefeval_core.cli._terminal import print_safe
from prefeval_core.errors import DataError, Problem
from prefeval_core.pairs.preferences import pair_outcomes


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "validate",
        help="check data files; exit 1 if there are errors",
        description="Check data files and report every error (file, row, column, what was expected) and warning.",
    )
    parser.add_argument("--human", help="the human rater that will be used (checks that it gives preferences)")
    parser.add_argument("--metric", action="append", default=[], help="a metric that will be used (repeatable)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    add_files_option(parser)
    parser.set_defaults(run=run)


def _problem_json(problem: Problem) -> dict[str, object]:
    return {
        "severity": problem.severity,
        "kind": problem.kind,
        "file": problem.file,
        "row": problem.row,
        "line": problem.line,
        "column": problem.column,
        "message": problem.message,
    }


def run(args: argparse.Namespace) -> int:
    paths = files_from_args(args)
    try:
        dataset = load_from_args(paths, args)
        for rater in ([args.human] if args.human else []) + args.metric:
            pair_outcomes(dataset, rater)
        problems = list(dataset.report.problems)
        notes = list(dataset.notes)
    except DataError as exc:
        problems, notes = list(exc.problems), []
    # Findings about the data as a whole (a rater name that is not there) name the files too.
    files = ", ".join(Path(f).name for f in paths)
    problems = [p if p.file is not None else replace(p, file=files) for p in problems]
    errors = [p for p in problems if p.severity == "error"]
    if args.json:
        print_json({"ok": not errors, "notes": notes, "problems": [_problem_json(p) for p in problems]})
    else:
        for note in notes:
            print_safe(f"read: {note}")
        for problem in problems:
            print_safe(f"{problem.severity}: {problem}")
        print(f"{len(errors)} errors, {len(problems) - len(errors)} warnings")
    return 1 if errors else 0
