"""The parser class of the command line (kept apart from ``_common`` so that ``--version`` and
``--help`` import nothing heavy)."""

from __future__ import annotations

import argparse
from typing import NoReturn

from prefeval_core.cli._terminal import terminal_safe


class OneLineParser(argparse.ArgumentParser):
    """A usage error is one line on stderr and exit code 2 (not the whole usage text): the
    parser class of every command (``add_subparsers`` passes it on)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {terminal_safe(message)} (see {self.prog} --help)\n")
