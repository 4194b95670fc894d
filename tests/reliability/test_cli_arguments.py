"""The CLI argument campaign: every option of every command, enumerated from the argparse
parsers themselves (a new option is covered without touching this file), gets each bad value
its type must refuse (negative, zero where >= 1, nan, inf, integers past 2^63 such as
1180591620717411303424, text, empty, ...) and must end in exit code 2 with one line on stderr
naming the option, never a traceback. Run in-process (fast); a few through a real process."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from prefeval_core.cli import build_parser, main
from prefeval_core.cli._common import (
    fraction,
    megabytes,
    name_list,
    non_negative_float,
    non_negative_int,
    open_probability,
    positive_float,
    positive_int,
    seed_int,
)
from prefeval_core.cli.replay import futility_level

ROOT = Path(__file__).resolve().parents[2]
SUMMEVAL = str(ROOT / "sample_data" / "summeval")
HUGE = "1180591620717411303424"  # 2^70
PAST_SEEDS = str(2**63)
NOT_NUMBERS = ["nan", "NaN", "inf", "-inf", "1e999", "text", "", " "]
NEGATIVE = ["-5", "-1"]

BAD_VALUES: dict[Callable[[str], object], list[str]] = {
    non_negative_int: [*NEGATIVE, "2.5", HUGE, PAST_SEEDS, *NOT_NUMBERS],
    positive_int: ["0", *NEGATIVE, "2.5", HUGE, PAST_SEEDS, *NOT_NUMBERS],
    seed_int: ["-1", "2.5", HUGE, PAST_SEEDS, *NOT_NUMBERS],
    open_probability: ["0", "1", "-0.5", "1.5", HUGE, *NOT_NUMBERS],
    futility_level: ["0", "1", "-0.5", "1.5", *NOT_NUMBERS],
    fraction: ["0", "-0.5", "1.5", HUGE, *NOT_NUMBERS],
    non_negative_float: ["-1", "-0.001", *NOT_NUMBERS],
    positive_float: ["0", "-1", "-0.001", *NOT_NUMBERS],
    megabytes: ["0", "-1", HUGE, *NOT_NUMBERS],
}
FREE_TEXT: set[Callable[[str], object]] = {name_list}
"""Types whose every value is meaningful at parse time (names, checked against the data later)."""


def _bad_values(kind: Callable[[str], object]) -> list[str]:
    """The values an option's type must refuse (the bounded integers of ``int_in`` from their bounds)."""
    if kind in BAD_VALUES:
        return BAD_VALUES[kind]
    if hasattr(kind, "low"):  # _common.int_in(low, high)
        low, high = kind.low, kind.high  # type: ignore[attr-defined]
        return [str(low - 1), str(high + 1), "2.5", HUGE, *NOT_NUMBERS]
    if getattr(kind, "__name__", "") in ("counts", "probabilities"):  # decide's --n, --m, --confusion, --mu
        rows = kind.__name__ == "counts"
        return ["1,2", "1,nan,3", "1,inf,3", "x", "", *(["1.5,0,0", f"{HUGE},0,0"] if rows else []), "1,0,0;0,1,0"]
    raise AssertionError(f"an option type the campaign does not know: {kind!r}; add its bad values")


def _commands() -> dict[str, argparse.ArgumentParser]:
    subparsers = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(subparsers.choices)


def _cases() -> Iterator[tuple[str, list[str], str]]:
    """``(command, argv, option)`` for every typed or choice option and each of its bad values."""
    for command, parser in _commands().items():
        positionals = [a for a in parser._actions if not a.option_strings]
        for action in parser._actions:
            if (action.type is None and not action.choices) or isinstance(action, argparse._HelpAction):
                continue
            if action.type in FREE_TEXT:
                continue
            values = _bad_values(action.type) if action.type is not None else ["no-such-choice", ""]
            for value in values:
                if action.option_strings:
                    option = action.option_strings[-1]
                    yield command, [command, f"{option}={value}"], option
                else:
                    before = [str(next(iter(p.choices))) for p in positionals[: positionals.index(action)] if p.choices]
                    yield command, [command, *before, "--", value] if not action.choices else [command, *before, value], action.dest


CASES = list(_cases())


def _run(argv: list[str]) -> tuple[int | str | None, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code: int | str | None = main(argv)
        except SystemExit as exit_:
            code = exit_.code
    return code, err.getvalue()


def test_the_campaign_covers_every_option_of_every_command() -> None:
    commands = _commands()
    covered = {(command, option) for command, _, option in CASES}
    for command, parser in commands.items():
        for action in parser._actions:
            if (action.type is not None and action.type not in FREE_TEXT) or action.choices:
                key = action.option_strings[-1] if action.option_strings else action.dest
                assert (command, key) in covered
    assert len(CASES) >= 400 and {"replay", "decide", "diagnose", "reproduce", "train-sescore2", "validate"} <= set(commands)


@pytest.mark.parametrize(("command", "argv", "option"), CASES, ids=[" ".join(argv) for _, argv, _ in CASES])
def test_a_bad_value_is_one_line_and_exit_2(command: str, argv: list[str], option: str) -> None:
    code, err = _run(argv)
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith(f"prefeval {command}: error: argument "), err
    assert option.lstrip("-") in err and "Traceback" not in err


def test_the_check_can_fail() -> None:
    """A bare ``type=float`` option (what diagnose had) takes nan: the campaign would catch it."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--eps", type=float)
    assert parser.parse_args(["--eps", "nan"]).eps != parser.parse_args(["--eps", "nan"]).eps  # NaN accepted
    with pytest.raises(AssertionError, match="does not know"):
        _bad_values(float)


@pytest.mark.parametrize(
    "argv",
    [
        ["replay", "--data", SUMMEVAL, "--human", "human:relevance", "--budget", "-5"],
        ["decide", "--n", "1,2,3", "--seed", HUGE],
        ["diagnose", "--data", SUMMEVAL, "--human", "human:relevance", "--metric", "rougeL", "--max-mb", "nan"],
    ],
)
def test_a_real_process_exits_2_with_one_line(argv: list[str]) -> None:
    done = subprocess.run([sys.executable, "-m", "prefeval_core", *argv], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr


@pytest.mark.parametrize("unit", ["ratings", "comparisons"])
def test_replay_with_budget_0_reports_no_nan(unit: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["replay", "--data", SUMMEVAL, "--human", "human:relevance", "--metric", "rougeL", "--budget", "0", "--cost-unit", unit]
    assert main([*argv, "--json"]) == 0
    text = capsys.readouterr().out
    out = json.loads(text)  # NaN would not be valid JSON here (allow_nan=False), and is not in the text
    assert "NaN" not in text and out["summary"]["cost_used"] == 0
    assert all(p["theta"] is None and p["human_used"] == 0 for p in out["pairs"])
    assert main(argv) == 0
    assert "nan" not in capsys.readouterr().out.lower()
