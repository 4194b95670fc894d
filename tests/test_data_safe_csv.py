"""The one CSV writer for exports (prefeval_core.data.safe_csv): no cell a spreadsheet would run as
a formula, no row split by a line break inside a cell, and an exact way back."""

from __future__ import annotations

import csv
import io

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefeval_core.data.safe_csv import neutralise_cell, restore_cell, starts_formula, to_safe_csv, write_safe_csv

# Text that is likely to hit the edges: formula characters, quotes, white space, control and format characters.
EDGES = list("=+-@'\"a1 ,;\t\r\n\x00\x1b\x85\xa0\u200b\u202e\u3000\uff1d\uff0b")
EDGY = st.text(alphabet=st.sampled_from(EDGES) | st.characters(codec="utf-8"), max_size=12)


def _read_back(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))


@pytest.mark.parametrize(
    "value",
    ["=1+1", "+1", "-2+3", "@SUM(1)", "\t=1+1", "\r=1+1", "\n=1", " =1+1", "\u200b=1", "\u3000+1", "\uff1d1+1", "\x00=1", "\ttext", "'=1"],
)
def test_formula_starts_are_neutralised(value: str) -> None:
    safe = neutralise_cell(value)
    assert isinstance(safe, str) and safe == "'" + value and not starts_formula(safe)
    assert restore_cell(safe) == value


@pytest.mark.parametrize("value", ["text", "a=1", " plain", "'quoted", "", "1.5", "\u00e9=1"])
def test_other_cells_are_left_alone(value: str) -> None:
    assert neutralise_cell(value) == value and restore_cell(value) == value
    assert neutralise_cell(3.5) == 3.5 and neutralise_cell(None) is None


@pytest.mark.property
@given(EDGY)
@settings(max_examples=500)
def test_restore_is_the_exact_inverse_and_the_result_is_safe(value: str) -> None:
    safe = neutralise_cell(value)
    assert isinstance(safe, str) and not starts_formula(safe)
    assert restore_cell(safe) == value


@pytest.mark.property
@given(st.lists(st.tuples(EDGY, EDGY), min_size=1, max_size=8), EDGY)
@settings(max_examples=200)
def test_a_frame_reads_back_cell_for_cell(rows: list[tuple[str, str]], name: str) -> None:
    frame = pd.DataFrame(rows, columns=[name or "a", (name or "a") + "2"]).assign(score=np.arange(len(rows)) - 1.5)
    back = _read_back(to_safe_csv(frame))
    assert len(back) == len(frame) + 1 and all(len(row) == 3 for row in back)
    assert not any(starts_formula(cell) and not cell.lstrip("-").replace(".", "").isdigit() for row in back for cell in row)
    assert [restore_cell(c) for c in back[0][:2]] == list(frame.columns[:2])
    assert [[restore_cell(c) for c in row[:2]] for row in back[1:]] == [list(r) for r in rows]
    assert [float(row[2]) for row in back[1:]] == frame["score"].tolist()


def test_a_bare_carriage_return_cannot_split_a_row() -> None:
    frame = pd.DataFrame({"output": ["safe\r=1+1", "two\nlines", "ok"]})
    data = to_safe_csv(frame)
    assert data.startswith(b"output\r\n") and b'"safe\r=1+1"' in data
    assert [row[0] for row in _read_back(data)] == ["output", "safe\r=1+1", "two\nlines", "ok"]


def test_headers_numbers_and_negative_infinity() -> None:
    frame = pd.DataFrame({"=cmd": ["x"], "n": [-1], "f": [-np.inf], "b": [True], "when": pd.to_datetime(["2026-01-01"])})
    header, row = _read_back(to_safe_csv(frame))
    assert header == ["'=cmd", "n", "f", "b", "when"]
    assert row == ["x", "-1", "'-inf", "True", "2026-01-01"]  # a negative number stays a number; "-inf" is text
    categories = pd.DataFrame({"c": pd.Categorical(["=1", "ok"])})
    assert [r[0] for r in _read_back(to_safe_csv(categories))] == ["c", "'=1", "ok"]


def test_write_safe_csv(tmp_path) -> None:
    path = tmp_path / "out.csv"
    write_safe_csv(pd.DataFrame({"system": ["@SUM(1)"]}), path)
    assert path.read_bytes() == b"system\r\n'@SUM(1)\r\n"
