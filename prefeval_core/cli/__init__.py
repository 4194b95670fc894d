"""The command-line interface: ``python -m prefeval_core <command> ...``.

Each module in this package that defines ``register(subparsers)`` adds one command; the
command's function takes the parsed arguments and returns the exit code (0 success, 1 the
data or settings have errors, 2 wrong usage). Data errors are printed as one line each,
naming file, row, line and column; no traceback. Installed, the same interface is the ``prefeval``
command (``pyproject.toml``'s entry point is :func:`main`). A command that hands arguments on to
another program (``app`` to Streamlit) sets ``passes_on=True`` and gets the ones it does not know
in ``args.passed_on``; any other command refuses them.

Only the command named on the line is imported (:data:`COMMANDS` holds every command's one-line help for
the top-level ``--help``), so ``prefeval --version`` and ``prefeval --help`` start in a fraction of a second
without NumPy, pandas or JAX; a test checks that the table matches the commands' own help. A command
module imports at its top only what its options need (the declared setup, the vocabulary's names,
the file kinds: none of them loads pandas, SciPy or the engine); its run imports the workflow functions
it calls, so that ``prefeval <command> --help`` and a usage error are instant too.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Collection, Sequence
from typing import Final

from prefeval_core import __version__
from prefeval_core.cli._parser import OneLineParser
from prefeval_core.cli._terminal import terminal_safe
from prefeval_core.errors import PrefevalError

COMMANDS: Final[dict[str, str]] = {
    "app": "start the dashboard (options it does not know go to streamlit run)",
    "decide": "is A better than B? the Bayesian decision function on count triples",
    "describe": "summarise systems, items, raters and coverage",
    "diagnose": "confusion matrices, Favi-Scores, sign accuracies and Kendall tau of a metric",
    "labelstudio": "a study's request in Label Studio (push to a server, or export as files) and the answers back (pull, or import)",
    "metrics": "compute metric ratings (BLEU, chrF, TER, embedding similarity, SEScore2) from texts",
    "replay": "run the annotation-budget protocol on a finished human evaluation",
    "reproduce": "the papers' tables: naive metric vs protocol, per metric, averaged over seeds",
    "requests": "a study's request as a blind file for annotators, and the filled-in file back as judgments",
    "studies": "list, show and step the studies recorded in the store; their annotators' agreement",
    "train-sescore2": "train an SEScore2-style metric on a plain sentence corpus (no human scores)",
    "validate": "check data files; exit 1 if there are errors",
}
"""Every command (its module in this package: the name with ``-`` as ``_``) and its one-line help."""


def build_parser(commands: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The parser with the full sub-parser (its module imported) of each command in ``commands``
    (``None``: all) and, for the others, a sub-parser that only names the command and its help."""
    parser = OneLineParser(
        prog="prefeval",
        description="prefeval: which text-generation system is really better, with as few human annotations as possible. "
        "Also run as python -m prefeval_core.",
    )
    parser.add_argument("--version", action="version", version=f"prefeval {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, help_text in COMMANDS.items():
        if commands is None or name in commands:
            importlib.import_module(f"{__name__}.{name.replace('-', '_')}").register(subparsers)
        else:
            subparsers.add_parser(name, help=help_text)
    return parser


def _command(argv: Sequence[str]) -> str | None:
    """The command named on the line: its first argument that is not an option (the top level has
    only ``--version`` and ``--help``, neither takes a value)."""
    return next((arg for arg in argv if not arg.startswith("-")), None)


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    command = _command(argv)
    parser = build_parser([] if command is None else [command])
    args, unknown = parser.parse_known_args(argv)
    if unknown and not getattr(args, "passes_on", False):
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    args.passed_on = unknown
    try:
        return int(args.run(args))
    except PrefevalError as exc:
        for problem in exc.problems:
            print(f"error: {terminal_safe(str(problem))}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # output piped into `head` and closed early
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
