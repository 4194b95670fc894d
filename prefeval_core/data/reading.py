"""Reading a table from bytes: file type, compression, encoding, limits, column names.

Supported: CSV, TSV (any of ``, \\t ; |`` as delimiter, detected from the header line;
:mod:`~prefeval_core.data.delimited`), JSONL (one JSON object per line) and JSON (an array of
objects; :mod:`~prefeval_core.data.json_rows`) and Parquet
(:mod:`~prefeval_core.data.parquet_file`), each optionally gzip-compressed (detected from the
content, not only the ``.gz`` suffix). Text must be UTF-8 (a byte-order mark is allowed) or
UTF-16 with a byte-order mark. The limits are in :mod:`~prefeval_core.data.limits`.

Every failure is a :class:`~prefeval_core.errors.DataError` naming the file (and the line,
row and column where they are known). Column names are stripped of surrounding white space;
an empty one becomes ``Unnamed: <position>``; a name that occurs twice is an error.

Every cell is read as text; interpreting values is :mod:`prefeval_core.data.formats`' job,
so that a bad value can be reported with its row and column.
"""

from __future__ import annotations

import gzip
import io
import re
import zlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

import numpy as np
import pandas as pd

from prefeval_core.data.delimited import read_delimited
from prefeval_core.data.json_rows import read_json, read_jsonl
from prefeval_core.data.limits import MAX_BYTES, MAX_COLUMNS
from prefeval_core.data.parquet_file import read_parquet
from prefeval_core.errors import (
    EmptyFileError,
    FileTooLargeError,
    MalformedFileError,
    Problem,
    UnsupportedFormatError,
)

__all__ = ["MAX_BYTES", "FileType", "RawTable", "read_table", "read_table_bytes"]

FileType = Literal["delimited", "jsonl", "json", "parquet"]
_GZIP_MAGIC: Final = b"\x1f\x8b"
_PARQUET_MAGIC: Final = b"PAR1"
_ZIP_MAGIC: Final = b"PK\x03\x04"
_UTF8_BOM: Final = b"\xef\xbb\xbf"
_UTF16_BOMS: Final = (b"\xff\xfe", b"\xfe\xff")
_UTF32_BOMS: Final = (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")


@dataclass(frozen=True)
class RawTable:
    """A table as read, before interpretation.

    Attributes:
        name: the file name used in messages.
        frame: all cells as ``str`` (empty string where a cell is empty or null); column
            names stripped of surrounding white space, unique.
        lines: 1-based file line where each data row starts (header = line 1 for
            delimited files), or ``None`` for Parquet and JSON arrays, which have no lines.
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
    try:
        if not path.exists():
            raise UnsupportedFormatError.single("unsupported", "cannot read the file (there is no such file)", file=path.name)
        if not path.is_file():  # a folder, a pipe or a device (/dev/zero would never end)
            raise UnsupportedFormatError.single("unsupported", "cannot read the file (not a regular file)", file=path.name)
        size = path.stat().st_size
        if size > max_bytes:
            raise _too_large(path.name, size, max_bytes)
        with path.open("rb") as stream:
            data = stream.read(max_bytes + 1)  # the file may have grown since
    except OSError as exc:
        raise UnsupportedFormatError.single("unsupported", f"cannot read the file ({exc.strerror or exc})", file=path.name) from exc
    return read_table_bytes(path.name, data, max_bytes=max_bytes)


def read_table_bytes(name: str, data: bytes, *, max_bytes: int = MAX_BYTES) -> RawTable:
    """Read a table from the bytes of a file called ``name`` (an upload, say)."""
    if len(data) > max_bytes:
        raise _too_large(name, len(data), max_bytes)
    if data.startswith(_GZIP_MAGIC):
        data = _gunzip(name, data, max_bytes)
    if not data or data.isspace():  # (no strip(): it would copy the whole file)
        raise EmptyFileError.single("empty_file", "the file is empty; expected a header row and data rows", file=name)
    file_type = _file_type(name, data)
    lines: np.ndarray | None = None
    if file_type == "parquet":
        frame, names = read_parquet(name, data, max_bytes)
    else:
        text, utf8 = _decode(name, data)
        if file_type == "delimited":
            table = read_delimited(name, text, utf8)
            frame, names, lines = table.frame, list(table.header), table.lines
        elif file_type == "jsonl":
            frame, lines = read_jsonl(name, text)
            names = list(frame.columns)
        else:
            frame = read_json(name, text)
            names = list(frame.columns)
    frame.columns = _column_names(name, names)
    if frame.empty:
        message = "the file has a header but no data rows" if file_type == "delimited" else "the file has no data rows"
        raise EmptyFileError.single("empty_file", message, file=name)
    return RawTable(name=name, frame=frame.reset_index(drop=True), lines=lines)


def _too_large(name: str, size: int, max_bytes: int) -> FileTooLargeError:
    return FileTooLargeError.single(
        "too_large",
        f"the file is {_mib(size)}; the limit is {_size(max_bytes)} (split the file, or drop raters and columns you do not need)",
        file=name,
    )


def _mib(n_bytes: int) -> str:
    mib = n_bytes / 1024**2
    return f"{mib:,.1f} MiB" if n_bytes >= 1024**2 else f"{mib:.3g} MiB"


def _size(n_bytes: int) -> str:
    return _mib(n_bytes) if n_bytes >= 1024**2 else f"{_mib(n_bytes)} ({n_bytes:,} bytes)"


_GUNZIP_CHUNK: Final = 1 << 20
"""Bytes decompressed at a time while a gzip file's size is measured."""


def _gunzip(name: str, data: bytes, max_bytes: int) -> bytes:
    # Two passes: the first decompresses a chunk at a time and keeps none of it, so a small
    # archive that would expand past the limit is refused in constant memory; only a file
    # within the limit is decompressed again and kept.
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
            size = 0
            while size <= max_bytes and (chunk := stream.read(_GUNZIP_CHUNK)):
                size += len(chunk)
        if size > max_bytes:
            message = f"the file decompresses to more than {_size(max_bytes)}, the limit (split the file before compressing it)"
            raise FileTooLargeError.single("too_large", message, file=name + " (decompressed)")
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
            out = stream.read(size)
    except (OSError, EOFError, zlib.error) as exc:
        raise UnsupportedFormatError.single("unsupported", f"the gzip data is damaged ({exc})", file=name) from exc
    if out.startswith(_GZIP_MAGIC):
        raise UnsupportedFormatError.single("unsupported", "the file is compressed twice; decompress it once", file=name)
    return out


def _file_type(name: str, data: bytes) -> FileType:
    if data.startswith(_ZIP_MAGIC):
        message = "a ZIP archive (an Excel workbook?); export the sheet as CSV, or unzip the file"
        raise UnsupportedFormatError.single("unsupported", message, file=name)
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
    first = re.compile(rb"\s*").match(data)
    head = data[first.end() : first.end() + 1] if first else b""
    if head == b"{":
        return "jsonl"
    if head == b"[":
        return "json"
    return "delimited"


def _decode(name: str, data: bytes) -> tuple[str, bytes]:
    """The text, and the same as UTF-8 bytes without a byte-order mark (for the CSV parser)."""
    if data.startswith(_UTF32_BOMS):
        raise UnsupportedFormatError.single("encoding", "the file is UTF-32; save it as UTF-8", file=name, line=1)
    head = data[:256]
    if head.count(0) * 4 >= len(head) and not data.startswith(_UTF16_BOMS):
        message = "the file is full of NUL bytes, like UTF-16 or UTF-32 without a byte-order mark; save it as UTF-8"
        raise UnsupportedFormatError.single("encoding", message, file=name, line=1)
    if data.startswith(_UTF16_BOMS):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].decode("utf-16", errors="replace").count("\n") + 1
            message = f"the file is not valid UTF-16 ({exc.reason} at byte {exc.start:,}, line {line}); save it as UTF-8"
            raise UnsupportedFormatError.single("encoding", message, file=name, line=line) from exc
        return text, text.encode("utf-8")
    body = data[len(_UTF8_BOM) :] if data.startswith(_UTF8_BOM) else data
    try:
        return body.decode("utf-8"), body
    except UnicodeDecodeError as exc:
        line = body[: exc.start].count(b"\n") + 1
        raise UnsupportedFormatError.single(
            "encoding",
            f"the file is not UTF-8 (byte 0x{body[exc.start]:02x} at line {line}); save it as UTF-8",
            file=name,
            line=line,
        ) from exc


def _column_names(name: str, names: Sequence[str]) -> list[str]:
    """Names stripped (and a stray byte-order mark dropped); empty ones ``Unnamed: <i>``;
    more than the column limit, or a name twice, is an error naming the columns."""
    if len(names) > MAX_COLUMNS:
        message = f"the file has {len(names):,} columns; the limit is {MAX_COLUMNS:,}"
        raise FileTooLargeError.single("too_large", message, file=name)
    cleaned = [str(n).strip().strip("\ufeff").strip() or f"Unnamed: {i}" for i, n in enumerate(names)]
    repeated = [n for n, count in Counter(cleaned).items() if count > 1]
    if repeated:
        problems = [
            Problem(
                "error",
                "malformed",
                f"the column name '{n}' occurs {cleaned.count(n)} times (columns "
                f"{', '.join(str(i + 1) for i, c in enumerate(cleaned) if c == n)}); rename or drop the copies",
                name,
                column=n,
            )
            for n in repeated
        ]
        raise MalformedFileError(problems)
    return cleaned
