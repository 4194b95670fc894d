"""CSV that a spreadsheet opens as data, never as formulas: the one writer for every export.

A spreadsheet runs a cell as a formula when its text starts with ``= + - @`` (also after
leading white space or control characters, which some programs drop first, and in their
full-width forms), and may treat a leading tab, carriage return or line feed the same way
(OWASP "CSV injection"). Such a cell is written with a leading ``'``, which spreadsheets show
as text; :func:`restore_cell` removes it again, so re-importing a file we wrote (a request
file filled in by annotators) gives back the exact text. So that this is an exact inverse, a
cell that already starts with ``'`` before such a start gets one more ``'``.

Every cell that holds a line break (LF, CR or both) is quoted, so a bare CR cannot end a row
early and smuggle the rest of the cell into a row of its own; lines end in CRLF (RFC 4180).
Column names are cells too.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Final

import numpy as np
import pandas as pd

_SKIPPED: Final = "\x00-\x20\x7f-\xa0\xad\u061c\u1680\u180e\u2000-\u200f\u2028-\u202f\u205f-\u206f\u3000\ufeff\ufff9-\ufffb"
"""Leading characters a spreadsheet may skip before it sees a formula: ASCII and C1 control
characters, Unicode spaces, and invisible format characters (zero-width, bidirectional)."""
_FORMULA_START: Final = re.compile(f"[\t\r\n]|[{_SKIPPED}]*[=+\\-@\uff1d\uff0b\uff0d\uff20]")


def starts_formula(text: str) -> bool:
    """Whether a spreadsheet could run ``text``, opened as a cell, as a formula."""
    return _FORMULA_START.match(text) is not None


def _needs_quote(text: str) -> bool:
    return starts_formula(text.lstrip("'"))


def neutralise_cell(value: object) -> object:
    """``'`` + ``value`` for a text cell that :func:`starts_formula` (after any leading
    ``'``); any other value unchanged."""
    if isinstance(value, str) and _needs_quote(value):
        return "'" + value
    return value


def restore_cell(value: str) -> str:
    """Undo :func:`neutralise_cell` on a cell read back from a file we wrote (its exact inverse)."""
    if value.startswith("'") and _needs_quote(value[1:]):
        return value[1:]
    return value


def to_safe_csv(frame: pd.DataFrame) -> bytes:
    """CSV bytes (UTF-8, CRLF) of ``frame`` without its index: every text cell and column
    name passed through :func:`neutralise_cell`, every cell with a line break quoted.
    Numbers, booleans and dates are written as they are (a negative number is not a formula)."""
    safe = frame.copy()
    safe.columns = [neutralise_cell(str(c)) for c in safe.columns]
    for index in range(safe.shape[1]):
        column = safe.iloc[:, index]
        if pd.api.types.is_float_dtype(column) and np.isneginf(column.to_numpy(dtype=np.float64)).any():
            safe.isetitem(index, column.astype(object).map(_number_text))  # "-inf" is not a number to a spreadsheet
        elif not (pd.api.types.is_numeric_dtype(column) or pd.api.types.is_datetime64_any_dtype(column)):
            safe.isetitem(index, column.astype(object).map(neutralise_cell))
    buffer = io.StringIO()
    # The csv module quotes a field holding a character of the line terminator: with CRLF,
    # a field with a lone CR is quoted too (with the default LF it is not).
    safe.to_csv(buffer, index=False, lineterminator="\r\n")
    return buffer.getvalue().encode("utf-8")


def _number_text(value: object) -> object:
    return neutralise_cell("-inf") if isinstance(value, float) and value == float("-inf") else value


def write_safe_csv(frame: pd.DataFrame, path: str | Path) -> None:
    """Write :func:`to_safe_csv` of ``frame`` to ``path``."""
    Path(path).write_bytes(to_safe_csv(frame))
