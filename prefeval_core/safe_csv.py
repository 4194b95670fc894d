"""CSV that a spreadsheet opens as text: cells that would run as formulas are neutralised.

CSV cells starting with ``= + - @`` (or a tab / carriage return) get a leading ``'`` so that
spreadsheets do not run them as formulas (OWASP "CSV injection"); :func:`restore_cell` takes
that quote off again when such a file is read back.
"""

from __future__ import annotations

import io
from typing import Final

import pandas as pd

FORMULA_PREFIXES: Final = ("=", "+", "-", "@", "\t", "\r")
"""Leading characters that make a spreadsheet treat a cell as a formula."""


def neutralise_cell(value: object) -> object:
    """Prefix ``'`` to a text cell that a spreadsheet would run as a formula."""
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


def restore_cell(value: str) -> str:
    """Undo :func:`neutralise_cell` on a cell read back from a request file."""
    if value.startswith("'") and value[1:].startswith(FORMULA_PREFIXES):
        return value[1:]
    return value


def to_safe_csv(frame: pd.DataFrame) -> bytes:
    """CSV bytes (UTF-8) of ``frame`` with every text cell passed through :func:`neutralise_cell`."""
    safe = frame.copy()
    safe.columns = [neutralise_cell(str(c)) for c in safe.columns]
    for column in safe.columns:
        if safe[column].dtype == object or pd.api.types.is_string_dtype(safe[column]):
            safe[column] = safe[column].map(neutralise_cell)
    buffer = io.StringIO()
    safe.to_csv(buffer, index=False)
    return buffer.getvalue().encode("utf-8")
