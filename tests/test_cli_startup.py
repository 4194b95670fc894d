"""The command line starts light (issue 22 item 5): ``--version`` and ``--help`` import neither the
numeric stack nor the dashboard, a command's own ``--help`` neither pandas, SciPy, JAX nor the
store, and the top-level help table matches the commands' own help.

Not a timing test: the import set is what makes the start fast (``bench/bench_startup.py`` times it).
"""

from __future__ import annotations

import argparse
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

from prefeval_core import cli
from prefeval_core.cli import COMMANDS, build_parser

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("jax", "numpyro", "numpy", "pandas", "scipy", "streamlit", "sqlalchemy")
COMMAND_HEAVY = tuple(name for name in (*HEAVY, "pyarrow", "plotly", "torch") if name != "numpy")
"""What a command's own ``--help`` does not import (NumPy, 0.1 s, it may: ``decide`` parses counts with it)."""

PROBE = """
import runpy, sys
sys.argv = ["prefeval", *sys.argv[1:]]
try:
    runpy.run_module("prefeval_core", run_name="__main__")
except SystemExit as exit_:
    assert exit_.code in (0, None), exit_.code
print(" ".join(m for m in {heavy!r} if m in sys.modules))
"""


@pytest.mark.parametrize("argv", [["--version"], ["--help"]])
def test_version_and_help_import_nothing_heavy(argv: list[str]) -> None:
    done = subprocess.run([sys.executable, "-c", PROBE.format(heavy=HEAVY), *argv], capture_output=True, text=True, cwd=ROOT, check=True)
    *_, imported = done.stdout.splitlines()
    assert imported == ""
    if argv == ["--version"]:
        assert done.stdout.startswith("prefeval ")


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_commands_own_help_imports_neither_pandas_nor_the_engine(command: str) -> None:
    probe = PROBE.format(heavy=COMMAND_HEAVY)
    done = subprocess.run([sys.executable, "-c", probe, command, "--help"], capture_output=True, text=True, cwd=ROOT, check=True)
    *_, imported = done.stdout.splitlines()
    assert imported == ""
    assert "usage: prefeval " + command in done.stdout


def test_command_table_matches_the_command_modules() -> None:
    modules = {m.name for m in pkgutil.iter_modules(cli.__path__) if not m.name.startswith("_")}
    assert {name.replace("-", "_") for name in COMMANDS} == modules
    subparsers = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert {action.dest: action.help for action in subparsers._choices_actions} == COMMANDS


def test_only_the_named_command_is_built() -> None:
    subparsers = next(a for a in build_parser({"describe"})._actions if isinstance(a, argparse._SubParsersAction))
    assert set(subparsers.choices) == set(COMMANDS)
    assert any(a.option_strings == ["--human"] for a in subparsers.choices["describe"]._actions)
    assert [a.dest for a in subparsers.choices["decide"]._actions] == ["help"]
