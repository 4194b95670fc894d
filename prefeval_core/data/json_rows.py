"""Reading JSON Lines (one JSON object per line) and JSON (an array of objects).

Each object is a row and its keys are columns (a key missing from a row is an empty cell).
Cells are kept as the text of their value: strings as they are, numbers as written in the
file (``0.50`` stays ``0.50``), ``true``/``false``, ``null`` as empty. A cell that holds a
list or object becomes its compact JSON text. Bounds, each refused with the line where it
is known: nesting deeper than :data:`~prefeval_core.data.limits.MAX_JSON_DEPTH`, a number
literal longer than :data:`~prefeval_core.data.limits.MAX_NUMBER_CHARS`, a key repeated in
one object, more than :data:`~prefeval_core.data.limits.MAX_COLUMNS` distinct keys.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd

from prefeval_core.data.limits import MAX_CELLS, MAX_COLUMNS, MAX_JSON_DEPTH, MAX_JSON_ROWS, MAX_NUMBER_CHARS
from prefeval_core.errors import FileTooLargeError, MalformedFileError


class _Number(str):
    """A JSON number kept as the text it was written as."""


class _LongNumber(ValueError):
    def __init__(self, literal: str):
        super().__init__(literal)
        self.literal = literal


class _RepeatedKey(ValueError):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _number(literal: str) -> _Number:
    # Python's int() refuses more than 4,300 digits and float() turns long literals into inf;
    # a table cell never needs more than a float64's 24 characters.
    if len(literal) > MAX_NUMBER_CHARS:
        raise _LongNumber(literal)
    return _Number(literal)


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    row = dict(pairs)
    if len(row) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _RepeatedKey(key)
            seen.add(key)
    return row


def _loads(text: str) -> Any:
    return json.loads(text, parse_int=_number, parse_float=_number, parse_constant=_Number, object_pairs_hook=_object)


_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')
"""A JSON string (skipped whole, brackets in it do not count) or a bracket."""


def line_too_deep(text: str, limit: int) -> int | None:
    """The 1-based line where the nesting of the JSON ``text`` first exceeds ``limit`` levels
    (``None``: it never does), found before parsing so that a deep document costs one scan,
    not a recursion. Brackets inside strings do not count; malformed text is left to the parser."""
    level = 0
    for token in _TOKENS.finditer(text):
        bracket = token.group()
        if bracket in "[{":
            level += 1
            if level > limit:
                return text.count("\n", 0, token.start()) + 1
        elif bracket in "]}":
            level -= 1
    return None


def json_depth(value: Any) -> int:
    """Nesting depth of a parsed JSON value (a scalar is 0), without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            deepest = max(deepest, level + 1)
            stack.extend((child, level + 1) for child in item)
    return deepest


def _plain(value: Any) -> Any:
    """``value`` with :class:`_Number` leaves as Python numbers, for ``json.dumps`` (depth is bounded)."""
    if isinstance(value, _Number):
        number = float(value)
        return int(value) if value.lstrip("-").isdigit() else number
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return str(value)
    return json.dumps(_plain(value), ensure_ascii=False, separators=(",", ":"), allow_nan=True)


def _line_of(text: str, needle: str) -> int | None:
    position = text.find(needle)
    return None if position < 0 else text.count("\n", 0, position) + 1


def _parse(name: str, text: str, line: int | None) -> Any:
    """One JSON document; every failure becomes a :class:`MalformedFileError` naming ``line``
    (or the line found in the document). Nesting past :data:`MAX_JSON_DEPTH` (and a margin for
    a cell's own nesting, reported by :class:`_Columns`) is refused before parsing."""
    deep = line_too_deep(text, MAX_JSON_DEPTH + 2)
    if deep is not None:
        message = f"JSON nested too deeply to read; rows must be objects nested at most {MAX_JSON_DEPTH} levels deep"
        raise MalformedFileError.single("malformed", message, file=name, line=line if line is not None else deep)
    try:
        return _loads(text)
    except json.JSONDecodeError as exc:
        if line is None:
            raise MalformedFileError.single("malformed", f"not valid JSON ({exc.msg})", file=name, line=exc.lineno) from exc
        message = f"not a JSON object ({exc.msg}); expected one JSON object per line"
        raise MalformedFileError.single("malformed", message, file=name, line=line) from exc
    except _LongNumber as exc:
        where = line if line is not None else _line_of(text, exc.literal)
        message = f"a number with {len(exc.literal):,} characters; the limit is {MAX_NUMBER_CHARS} (write it as text if it is a name)"
        raise MalformedFileError.single("malformed", message, file=name, line=where) from exc
    except _RepeatedKey as exc:
        message = f"the key '{exc.key}' appears twice in one object; which value is meant?"
        raise MalformedFileError.single("malformed", message, file=name, line=line, column=exc.key) from exc


class _Columns:
    """Rows gathered column by column, checking the column and cell limits as they grow."""

    def __init__(self, name: str):
        self.name = name
        self.columns: dict[str, list[str]] = {}
        self.lines: list[int | None] = []  # the line of each row, where the format has lines
        self.rows = 0

    def add(self, row: dict[str, Any], line: int | None, base_depth: int) -> None:
        for key, value in row.items():
            if not isinstance(value, (str, bool)) and value is not None and base_depth + json_depth(value) > MAX_JSON_DEPTH:
                message = f"a value nested deeper than {MAX_JSON_DEPTH} levels; expected text, a number, true/false or null"
                raise MalformedFileError.single("malformed", message, file=self.name, row=self.rows + 1, line=line, column=key)
            column = self.columns.get(key)
            if column is None:
                if not _encodable(key):
                    raise _surrogate_error(self.name, line, key)
                if len(self.columns) == MAX_COLUMNS:
                    message = f"the rows have more than {MAX_COLUMNS:,} distinct keys; the limit is {MAX_COLUMNS:,} columns"
                    raise FileTooLargeError.single("too_large", message, file=self.name, line=line)
                column = self.columns[key] = [""] * self.rows
            column.append(_cell(value))
        self.rows += 1
        self.lines.append(line)
        for column in self.columns.values():
            if len(column) < self.rows:
                column.append("")
        if self.rows * len(self.columns) > MAX_CELLS:
            message = f"more than {MAX_CELLS:,} cells (rows x columns); split the file"
            raise FileTooLargeError.single("too_large", message, file=self.name, line=line)

    def frame(self) -> pd.DataFrame:
        series: dict[str, pd.Series] = {}
        for key, values in self.columns.items():
            try:
                series[key] = pd.Series(values, dtype="str")
            except UnicodeEncodeError as exc:  # a \ud800-style escape that is half of a character
                row = next(k for k, value in enumerate(values) if not _encodable(value))
                raise _surrogate_error(self.name, self.lines[row], key, row + 1) from exc
        return pd.DataFrame(series, index=range(self.rows))


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _surrogate_error(name: str, line: int | None, column: str, row: int | None = None) -> MalformedFileError:
    message = "a \\u escape that is half of a character (a lone surrogate); expected text"
    return MalformedFileError.single("malformed", message, file=name, row=row, line=line, column=column if _encodable(column) else None)


def _check_rows(name: str, upper_bound: int, what: str) -> None:
    if upper_bound > MAX_JSON_ROWS:
        message = f"the file has {upper_bound:,} {what}; JSON is limited to {MAX_JSON_ROWS:,} rows (use CSV or Parquet for more)"
        raise FileTooLargeError.single("too_large", message, file=name)


def read_jsonl(name: str, text: str) -> tuple[pd.DataFrame, np.ndarray]:
    """JSON Lines: one object per non-empty line; returns the frame and each row's line."""
    _check_rows(name, text.count("\n") + (0 if text.endswith("\n") else 1), "lines")
    columns = _Columns(name)
    for number, line in enumerate(_lines(text), start=1):
        if not line.strip():
            continue
        record = _parse(name, line, number)
        if not isinstance(record, dict):
            raise MalformedFileError.single("malformed", "expected a JSON object on this line", file=name, line=number)
        columns.add(record, number, base_depth=1)
    return columns.frame(), np.asarray(columns.lines, dtype=np.int64)


def _lines(text: str) -> Iterator[str]:
    """The lines of ``text`` split at line feeds only (JSON strings may hold U+2028 and other
    characters that ``str.splitlines`` would split at), one at a time."""
    start = 0
    while start <= len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        yield text[start:end]
        start = end + 1


def read_json(name: str, text: str) -> pd.DataFrame:
    """JSON: an array of objects, one per row."""
    _check_rows(name, text.count("{"), "objects")
    records = _parse(name, text, None)
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise MalformedFileError.single("malformed", "expected a JSON array of objects, one per row", file=name)
    columns = _Columns(name)
    for record in records:
        columns.add(record, None, base_depth=2)
    return columns.frame()
