"""Reading delimited text (CSV, TSV, ``;`` or ``|``) with pyarrow's CSV parser.

Fields may be quoted (``"..."``, with ``""`` for a quote inside) and may then hold the
delimiter and line breaks; lines end in LF, CRLF or a bare CR; empty lines are skipped.
Every data row must have as many fields as the header (a "ragged" row is an error naming its
line), a quoted field must be closed, and the header may have at most
:data:`~prefeval_core.data.limits.MAX_COLUMNS` fields (checked before the rest is parsed).
There is no limit on the length of one field. A tab-separated MQM file is read without quoting,
as Google writes it (:func:`~prefeval_core.data.headers.unquoted_header`): there a ``"`` is a
character and every line break ends a record.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv

from prefeval_core.data.headers import unquoted_header
from prefeval_core.data.limits import MAX_CELLS, MAX_COLUMNS
from prefeval_core.errors import MAX_PROBLEMS_PER_KIND, EmptyFileError, FileTooLargeError, MalformedFileError, Problem

DELIMITERS: Final = (",", "\t", ";", "|")
_DELIMITER_NAMES: Final = {",": "comma", "\t": "tab", ";": "semicolon", "|": "bar"}
_QUOTE: Final = ord('"')
_LF: Final = ord("\n")
_CR: Final = ord("\r")
_MIN_BLOCK: Final = 4 << 20
"""Bytes per parser block (a record must fit in one; longer records get larger blocks)."""
_LINE: Final = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


@dataclass(frozen=True)
class DelimitedTable:
    """A delimited file as read: ``header`` as written, ``frame`` (every cell a string,
    columns in header order, named by position until the caller names them) and ``lines``,
    the 1-based file line where each data row starts (``None`` where it cannot be told)."""

    header: tuple[str, ...]
    frame: pd.DataFrame
    lines: np.ndarray | None


def detect_delimiter(name: str, text: str) -> str:
    """The delimiter: a tab for ``.tsv``/``.tab`` files or a header with a tab, else the most
    frequent of ``, ; |`` in the header line (a comma if none occurs)."""
    header = text.lstrip("\r\n").split("\n", 1)[0]
    if Path(name.removesuffix(".gz")).suffix.lower() in (".tsv", ".tab") or "\t" in header:
        return "\t"
    counts = {d: header.count(d) for d in DELIMITERS}
    best = max(counts, key=lambda d: counts[d])
    return best if counts[best] > 0 else ","


def read_delimited(name: str, text: str, data: bytes) -> DelimitedTable:
    """Parse ``data`` (UTF-8, no byte-order mark; ``text`` is the same decoded) as a table.

    Raises:
        EmptyFileError: no header row.
        FileTooLargeError: more columns or cells than the limits.
        MalformedFileError: a ragged row (naming its line), an unclosed quote, or data the
            parser cannot read.
    """
    sep = detect_delimiter(name, text)
    shown = _DELIMITER_NAMES[sep]
    first_record = _header(text, sep, quoted=True)
    quoted = not unquoted_header(first_record, sep)
    n_columns = len(first_record if quoted else _header(text, sep, quoted=False))
    if n_columns == 0:
        raise EmptyFileError.single("empty_file", "the file has no header row", file=name)
    if not data.endswith((b"\n", b"\r")):
        data += b"\n"  # pyarrow reads nothing from a file that is one line without a line end
    breaks = _line_breaks(data)
    _check_size(name, n_columns, len(breaks), shown)
    starts, longest = _records(data, breaks, quoted)
    ragged: list[pa_csv.InvalidRow] = []
    n_ragged = 0

    def on_ragged(row: pa_csv.InvalidRow) -> str:
        nonlocal n_ragged
        n_ragged += 1
        if len(ragged) < MAX_PROBLEMS_PER_KIND:
            ragged.append(row)
        return "skip"

    try:
        table = _parse(data, sep, quoted, n_columns, on_ragged, block_size=max(_MIN_BLOCK, 2 * longest + 2))
    except pa.ArrowInvalid:  # a record longer than the quote count said (stray quotes): one block for the whole file
        ragged.clear()
        n_ragged = 0
        table = _parse_or_refuse(name, shown, data, (sep, quoted), n_columns, on_ragged, block_size=len(data) + 1)
    except (pa.ArrowException, ValueError) as exc:
        raise _unparsable(name, shown, exc) from exc
    lines = _record_lines(text, (sep, quoted), breaks, starts, expected_records=table.num_rows + n_ragged)
    if n_ragged:
        raise MalformedFileError(_ragged_problems(name, shown, ragged, n_ragged, lines))
    header = tuple(str(cell[0]) for cell in table.slice(0, 1).to_pydict().values())
    frame = table.slice(1).to_pandas()
    if quoted:
        _check_closed_quotes(name, data, frame, None if lines is None else int(lines[-1]))
    return DelimitedTable(header, frame, None if lines is None else lines[1 : len(frame) + 1])


def _unparsable(name: str, shown: str, exc: Exception) -> MalformedFileError:
    return MalformedFileError.single("malformed", f"cannot parse the file as {shown}-separated values: {exc}", file=name)


def _parse_or_refuse(
    name: str, shown: str, data: bytes, dialect: tuple[str, bool], n_columns: int, on_ragged: object, block_size: int
) -> pa.Table:
    try:
        return _parse(data, *dialect, n_columns, on_ragged, block_size)
    except (pa.ArrowException, ValueError) as exc:
        raise _unparsable(name, shown, exc) from exc


def _lines(text: str) -> Iterator[str]:
    """The lines of ``text`` with their endings (LF, CRLF or CR), lazily and without a copy
    of the whole text (``io.StringIO`` would hold four bytes per character)."""
    return (match.group(0) for match in _LINE.finditer(text))


def _csv_records(text: str, sep: str, quoted: bool = True) -> Iterator[tuple[int, list[str]]]:
    """``(line where it starts, fields)`` of each non-empty record, by the ``csv`` module
    (``quoted``: ``"`` quotes fields; else it is a character)."""
    # Raise csv's global per-field limit (131,072 by default) so that a long field is read;
    # the file-size limit bounds it. Only ever raised, so threads cannot clash.
    if csv.field_size_limit() < len(text) + 1:
        csv.field_size_limit(len(text) + 1)
    reader = csv.reader(_lines(text), delimiter=sep, quoting=csv.QUOTE_MINIMAL if quoted else csv.QUOTE_NONE)
    previous_end = 0
    for record in reader:
        if record:
            yield previous_end + 1, record
        previous_end = reader.line_num


def _header(text: str, sep: str, quoted: bool) -> list[str]:
    """The fields of the first non-empty record, read alone (so a too-wide file costs nothing)."""
    return next((record for _, record in _csv_records(text, sep, quoted)), [])


def _positions(array: np.ndarray, byte: int) -> np.ndarray:
    """Offsets where ``array`` holds ``byte``, found in chunks (a comparison of the whole
    array at once would take one byte of memory per byte of the file)."""
    chunk = 1 << 22
    found = [np.flatnonzero(array[i : i + chunk] == byte) + i for i in range(0, len(array), chunk)]
    return np.concatenate(found) if found else np.zeros(0, dtype=np.int64)


def _line_breaks(data: bytes) -> np.ndarray:
    """Byte offsets of line breaks: each LF, and each CR not followed by LF."""
    array = np.frombuffer(data, dtype=np.uint8)
    cr = _positions(array, _CR)
    lone_cr = cr[(cr + 1 >= len(array)) | (array[np.minimum(cr + 1, len(array) - 1)] != _LF)]
    lf = _positions(array, _LF)
    return lf if len(lone_cr) == 0 else np.sort(np.concatenate([lf, lone_cr]))


def _check_size(name: str, n_columns: int, max_rows: int, shown: str) -> None:
    if n_columns > MAX_COLUMNS:
        message = f"the header has {n_columns:,} {shown}-separated fields; the limit is {MAX_COLUMNS:,} columns"
        raise FileTooLargeError.single("too_large", message + " (use a long file: item_id, system, rater, score)", file=name)
    if n_columns * max_rows > MAX_CELLS:
        message = f"the file has {max_rows:,} lines of {n_columns:,} columns; the limit is {MAX_CELLS:,} cells"
        raise FileTooLargeError.single("too_large", message + " (split the file)", file=name)


def _parse(data: bytes, sep: str, quoted: bool, n_columns: int, on_ragged: object, block_size: int) -> pa.Table:
    """All records as strings; the header is the first row (so that its quoting is read by
    the same parser, and no column's type is ever guessed). A record must fit in one block."""
    quoting = {} if quoted else {"quote_char": False}
    names = [f"f{i}" for i in range(n_columns)]
    return pa_csv.read_csv(
        pa.BufferReader(data),
        read_options=pa_csv.ReadOptions(use_threads=False, block_size=block_size, autogenerate_column_names=True),
        parse_options=pa_csv.ParseOptions(delimiter=sep, newlines_in_values=quoted, invalid_row_handler=on_ragged, **quoting),
        convert_options=pa_csv.ConvertOptions(
            # large_string is what pandas' "str" dtype holds: the frame then shares the buffers
            column_types=dict.fromkeys(names, pa.large_string()),
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
        ),
    )


def _records(data: bytes, breaks: np.ndarray, quoted: bool) -> tuple[np.ndarray, int]:
    """Byte offsets where the non-empty records start, and the longest record in bytes.

    A line break ends a record unless (``quoted``) an odd number of quotes precedes it: exact
    for well-formed quoting (a stray quote inside an unquoted field throws it off, which
    :func:`_record_lines` notices).
    """
    array = np.frombuffer(data, dtype=np.uint8)
    ends = breaks[np.searchsorted(_positions(array, _QUOTE), breaks) % 2 == 0] if quoted else breaks
    starts = np.concatenate([[0], ends + 1])
    stops = np.concatenate([ends, [len(data)]])
    body = stops - starts - (stops > starts) * (array[np.maximum(stops - 1, 0)] == _CR)
    return starts[body > 0], int(body.max(initial=0))


def _record_lines(text: str, dialect: tuple[str, bool], breaks: np.ndarray, starts: np.ndarray, expected_records: int) -> np.ndarray | None:
    """1-based start line of every non-empty record (the header first), or ``None`` when
    neither the quote count (``starts``) nor the ``csv`` module (``dialect``: delimiter,
    quoted) finds the parser's count of records."""
    if len(starts) == expected_records:
        return np.searchsorted(breaks, starts) + 1
    lines = [line for line, _ in _csv_records(text, *dialect)]
    return np.asarray(lines, dtype=np.int64) if len(lines) == expected_records else None


def _ragged_problems(name: str, shown: str, rows: list[pa_csv.InvalidRow], total: int, lines: np.ndarray | None) -> list[Problem]:
    problems: list[Problem] = []
    for row in rows:
        record = None if row.number is None else row.number - 1  # the parser counts records from 1, header included
        where = f"line {lines[record]}" if lines is not None and record is not None else "a row"
        data_row = f" (row {record})" if record is not None else ""
        problems.append(
            Problem(
                "error",
                "malformed",
                f"cannot parse the file as {shown}-separated values: {where}{data_row} has {row.actual_columns} fields, "
                f"the header has {row.expected_columns} (quote fields that contain a {shown} or a line break)",
                name,
            )
        )
    if total > len(rows):
        problems.append(Problem("error", "malformed", f"... and {total - len(rows):,} more rows with the wrong number of fields", name))
    return problems


def _check_closed_quotes(name: str, data: bytes, frame: pd.DataFrame, last_line: int | None) -> None:
    """An unclosed quote makes the parser read the rest of the file into one field of the last
    row: an odd count of quotes with a line break in the last row is that case."""
    if frame.empty or data.count(b'"') % 2 == 0:
        return
    last = frame.iloc[-1]
    if any("\n" in cell or "\r" in cell for cell in last):
        where = f" in the row that starts on line {last_line}" if last_line is not None else " in the last row"
        message = f'a quoted field{where} is never closed, so it runs to the end of the file (a missing ")'
        raise MalformedFileError.single("malformed", message, file=name, row=len(frame), line=last_line)
