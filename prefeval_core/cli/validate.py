"""``validate FILE...``: check input files and print every problem found."""

from __future__ import annotations

import argparse

from prefeval_core.cli._common import add_files_option, files_from_args, loading_from_args, print_json
from prefeval_core.cli._terminal import print_safe
from prefeval_core.errors import Problem


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "validate",
        help="check data files; exit 1 if there are errors",
        description="Check data files and report every error (file, row, column, what was expected) and warning.",
    )
    parser.add_argument("--human", help="the human rater that will be used (checks that it gives preferences)")
    parser.add_argument(
        "--metric", action="append", default=[], help="a metric that will be used (repeatable, or several separated by commas)"
    )
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
    from prefeval_core.workflow.datasets import check_paths

    raters = ([args.human] if args.human else []) + [name.strip() for given in args.metric for name in given.split(",") if name.strip()]
    check = check_paths(files_from_args(args), raters, **loading_from_args(args))
    if args.json:
        print_json({"ok": not check.errors, "notes": list(check.notes), "problems": [_problem_json(p) for p in check.problems]})
    else:
        for note in check.notes:
            print_safe(f"read: {note}")
        for problem in check.problems:
            print_safe(f"{problem.severity}: {problem}")
        print(f"{len(check.errors)} errors, {len(check.problems) - len(check.errors)} warnings")
    return 1 if check.errors else 0
