"""The command-line interface: ``python -m prefeval_core <command> ...``.

Each module in this package that defines ``register(subparsers)`` adds one command; the
command's function takes the parsed arguments and returns the exit code (0 success, 1 the
data or settings have errors, 2 wrong usage). Data errors are printed as one line each,
naming file, row, line and column; no traceback. Installed, the same interface is the ``prefeval``
command (``pyproject.toml``'s entry point is :func:`main`). A command that hands arguments on to
another program (``app`` to Streamlit) sets ``passes_on=True`` and gets the ones it does not know
in ``args.passed_on``; any other command refuses them.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence

from prefeval_core import __version__
from prefeval_core.cli._common import OneLineParser
from prefeval_core.cli._terminal import terminal_safe
from prefeval_core.errors import PrefevalError


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="prefeval",
        description="prefeval: which text-generation system is really better, with as few human annotations as possible. "
        "Also run as python -m prefeval_core.",
    )
    parser.add_argument("--version", action="version", version=f"prefeval {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if module.name.startswith("_"):
            continue
        command = importlib.import_module(f"{__name__}.{module.name}")
        command.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
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
