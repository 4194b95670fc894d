"""Reading a table from bytes: file type, compression, delimiter, encoding and size limit.

Supported: CSV, TSV (any of ``, \\t ; |`` as delimiter, detected from the header line),
JSONL (one JSON object per line), JSON (an array of objects) and Parquet, each optionally
gzip-compressed (detected from the content, not only the ``.gz`` suffix). Text must be
UTF-8 (a byte-order mark is allowed) or UTF-16 with a byte-order mark.

Every cell is read as text; interpreting values is :mod:`prefeval_core.data.formats`' job,
so that a bad value can be reported with its row and column.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

import numpy as np
import pandas as pd

from prefeval_core.errors import (
    EmptyFileError,
    FileTooLargeError,
    MalformedFileError,
    UnsupportedFormatError,
)

MAX_BYTES: Final = 200 * 1024 * 1024
"""Default size limit (200 MiB), for the file as given and for its decompressed content."""

FileType = Literal["delimited", "jsonl", "json", "parquet"]
_DELIMITERS: Final = (",", "\t", ";", "|")
_GZIP_MAGIC: Final = b"\x1f\x8b"
_PARQUET_MAGIC: Final = b"PAR1"


@dataclass(frozen=True)
class RawTable:
    """A table as read, before interpretation.

    Attributes:
        name: the file name used in messages.
        frame: all cells as ``str`` (empty string where a cell is empty or null); column
            names stripped of surrounding white space.
        lines: 1-based file line where each data row starts (header = line 1 for
            delimited files), or ``None`` for Parquet, which has no lines.
    """

    name: str
    frame: pd.DataFrame
    lines: np.ndarray | None

    def line_of(self, row_index: int) -> int | None:
        """File line of the 0-based data row ``row_index``, where the format has lines."""
        return None if self.lines is None else int(self.lines[row_index])


def read_table(path: str | Path, *, max_bytes: int = MAX_BYTES) -> RawTable:
    """Read a table file from disk; see the module docstring for the formats."""
    path = Path(path)
    size = path.stat().st_size
    if size > max_bytes:
        raise _too_large(path.name, size, max_bytes)
    return read_table_bytes(path.name, path.read_bytes(), max_bytes=max_bytes)


def read_table_bytes(name: str, data: bytes, *, max_bytes: int = MAX_BYTES) -> RawTable:
    """Read a table from the bytes of a file called ``name`` (an upload, say)."""
    if len(data) > max_bytes:
        raise _too_large(name, len(data), max_bytes)
    if data.startswith(_GZIP_MAGIC):
        data = _gunzip(name, data, max_bytes)
    if not data.strip():
        raise EmptyFileError.single("empty_file", "the file is empty; expected a header row and data rows", file=name)
    file_type = _file_type(name, data)
    lines: np.ndarray | None = None
    if file_type == "parquet":
        frame = _read_parquet(name, data)
    else:
        text = _decode(name, data)
        if file_type == "delimited":
            frame, lines = _read_delimited(name, text)
        elif file_type == "jsonl":
            frame, lines = _read_jsonl(name, text)
        else:
            frame, lines = _read_json(name, text)
    frame.columns = [str(c).strip() for c in frame.columns]
    if frame.empty:
        raise EmptyFileError.single("empty_file", "the file has a header but no data rows", file=name)
    return RawTable(name=name, frame=frame.reset_index(drop=True), lines=lines)


def _too_large(name: str, size: int, max_bytes: int) -> FileTooLargeError:
    return FileTooLargeError.single(
        "too_large",
        f"the file is {size / 1024**2:,.1f} MiB; the limit is {max_bytes / 1024**2:,.0f} MiB "
        "(split the file, or drop raters and columns you do not need)",
        file=name,
    )


def _gunzip(name: str, data: bytes, max_bytes: int) -> bytes:
    # Read at most one byte past the limit, so a small archive cannot expand without bound.
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
            out = stream.read(max_bytes + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise UnsupportedFormatError.single("unsupported", f"the gzip data is damaged ({exc})", file=name) from exc
    if len(out) > max_bytes:
        raise _too_large(name + " (decompressed)", len(out), max_bytes)
    return out


def _file_type(name: str, data: bytes) -> FileType:
    suffixes = [s.lower() for s in Path(name).suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    suffix = suffixes[-1] if suffixes else ""
    if data.startswith(_PARQUET_MAGIC) or suffix in (".parquet", ".pq"):
        return "parquet"
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix == ".json":
        return "json"
    if suffix in (".csv", ".tsv", ".txt", ".tab", ""):
        return "delimited"
    head = data.lstrip()[:1]
    if head == b"{":
        return "jsonl"
    if head == b"[":
        return "json"
    return "delimited"


def _decode(name: str, data: bytes) -> str:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise UnsupportedFormatError.single(
            "encoding",
            f"the file is not UTF-8 (byte 0x{data[exc.start]:02x} at line {line}); save it as UTF-8",
            file=name,
            line=line,
        ) from exc


def _detect_delimiter(name: str, text: str) -> str:
    header = text.lstrip("\n").split("\n", 1)[0]
    if Path(name.removesuffix(".gz")).suffix.lower() in (".tsv", ".tab") or "\t" in header:
        return "\t"
    counts = {d: header.count(d) for d in _DELIMITERS}
    best = max(counts, key=lambda d: counts[d])
    return best if counts[best] > 0 else ","


def _read_delimited(name: str, text: str) -> tuple[pd.DataFrame, np.ndarray]:
    sep = _detect_delimiter(name, text)
    try:
        frame = pd.read_csv(io.StringIO(text), sep=sep, dtype=str, keep_default_na=False, na_filter=False, skip_blank_lines=True)
    except pd.errors.EmptyDataError as exc:
        raise EmptyFileError.single("empty_file", "the file has no header row", file=name) from exc
    except pd.errors.ParserError as exc:
        raise MalformedFileError.single("malformed", _parser_message(str(exc), sep), file=name) from exc
    return frame, _record_lines(text, sep, len(frame))


def _parser_message(message: str, sep: str) -> str:
    shown = {"\t": "tab", ",": "comma", ";": "semicolon", "|": "bar"}[sep]
    return f"cannot parse the file as {shown}-separated values: {message.strip()}"


def _record_lines(text: str, sep: str, n_rows: int) -> np.ndarray:
    """1-based start line of each data record (quoted fields may span several lines)."""
    reader = csv.reader(io.StringIO(text), delimiter=sep)
    starts: list[int] = []
    previous_end = 0
    for record in reader:
        if record:
            starts.append(previous_end + 1)
        previous_end = reader.line_num
    lines = np.asarray(starts[1 : n_rows + 1], dtype=np.int64)
    if len(lines) != n_rows:  # csv and pandas disagree on an odd file: fall back to row + 1
        lines = np.arange(2, n_rows + 2, dtype=np.int64)
    return lines


def _records_frame(records: list[dict[str, object]]) -> pd.DataFrame:
    frame = pd.DataFrame.from_records(records)
    return frame.apply(lambda col: col.map(_cell_text)) if not frame.empty else frame


def _cell_text(value: object) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def _read_jsonl(name: str, text: str) -> tuple[pd.DataFrame, np.ndarray]:
    records: list[dict[str, object]] = []
    lines: list[int] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise MalformedFileError.single(
                "malformed", f"not a JSON object ({exc.msg}); expected one JSON object per line", file=name, line=number
            ) from exc
        if not isinstance(record, dict):
            raise MalformedFileError.single("malformed", "expected a JSON object on this line", file=name, line=number)
        records.append(record)
        lines.append(number)
    return _records_frame(records), np.asarray(lines, dtype=np.int64)


def _read_json(name: str, text: str) -> tuple[pd.DataFrame, None]:
    try:
        records = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MalformedFileError.single("malformed", f"not valid JSON ({exc.msg})", file=name, line=exc.lineno) from exc
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise MalformedFileError.single("malformed", "expected a JSON array of objects, one per row", file=name)
    return _records_frame(records), None


def _read_parquet(name: str, data: bytes) -> pd.DataFrame:
    try:
        frame = pd.read_parquet(io.BytesIO(data))
    except Exception as exc:  # pyarrow raises many types for damaged files
        raise UnsupportedFormatError.single("unsupported", f"cannot read the Parquet data ({exc})", file=name) from exc
    return frame.apply(lambda col: col.map(_cell_text)) if not frame.empty else frame
