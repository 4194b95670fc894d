"""Reading a Parquet file: limits checked on the footer first, every damage a named error.

Cells become text like the other formats: strings as they are, numbers in their shortest
form (``3``, ``0.5``, ``1e+300``), booleans as ``true``/``false``, nulls and NaN as empty;
other types (dates, lists) as their Python text.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pa_compute
import pyarrow.parquet as pq

from prefeval_core.data.limits import MAX_CELLS, MAX_COLUMNS
from prefeval_core.errors import FileTooLargeError, UnsupportedFormatError


def read_parquet(name: str, data: bytes, max_bytes: int) -> tuple[pd.DataFrame, list[str]]:
    """All cells as strings, and the column names as stored (checked by the caller).

    Raises:
        FileTooLargeError: too many columns or cells, or more than ``max_bytes`` of
            uncompressed data, by the file's own footer (nothing else is read then).
        UnsupportedFormatError: the file is not Parquet or is damaged (a page, the footer,
            invalid UTF-8 in a text column, ...).
    """
    try:
        table = _read_checked(name, data, max_bytes)
        names = [str(n) for n in table.column_names]
        columns = {f"f{i}": _as_text(column) for i, column in enumerate(table.itercolumns())}
    except FileTooLargeError:
        raise
    except Exception as exc:  # pyarrow raises many exception types for damaged files; each one is a refusal here
        raise UnsupportedFormatError.single("unsupported", f"cannot read the Parquet data ({_short(exc)})", file=name) from exc
    return pd.DataFrame(columns, index=range(table.num_rows)), names


def _read_checked(name: str, data: bytes, max_bytes: int) -> pa.Table:
    parquet = pq.ParquetFile(pa.BufferReader(data))
    meta = parquet.metadata
    n_columns = len(parquet.schema_arrow.names)
    if max(n_columns, meta.num_columns) > MAX_COLUMNS:
        raise FileTooLargeError.single("too_large", f"the file has {n_columns:,} columns; the limit is {MAX_COLUMNS:,}", file=name)
    if meta.num_rows * n_columns > MAX_CELLS:
        message = f"the file has {meta.num_rows:,} rows of {n_columns:,} columns; the limit is {MAX_CELLS:,} cells"
        raise FileTooLargeError.single("too_large", message, file=name)
    unpacked = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    if unpacked > max_bytes:
        message = f"the data is {unpacked:,} bytes uncompressed; the limit is {max_bytes:,} bytes"
        raise FileTooLargeError.single("too_large", message, file=name + " (decompressed)")
    table = parquet.read()
    table.validate(full=True)  # e.g. invalid UTF-8 in a string column, which would fail later, far from here
    return table


def _as_text(column: pa.ChunkedArray) -> pd.Series:
    kind = column.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return column.cast(pa.large_string()).fill_null("").to_pandas().astype("str")
    if pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_boolean(kind):
        text = pa_compute.cast(column, pa.large_string())
        if pa.types.is_floating(kind):  # NaN is an empty cell, as in the other formats
            text = pa_compute.if_else(pa_compute.is_nan(column), pa.scalar("", pa.large_string()), text)
        return text.fill_null("").to_pandas().astype("str")
    values = column.to_pandas()
    return pd.Series([_cell(v) for v in values.to_numpy(dtype=object)], dtype="str")


def _cell(value: object) -> str:
    if value is None or value is pd.NaT or (isinstance(value, float) and np.isnan(value)):
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    return str(value)


def _short(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:200]}" if text else type(exc).__name__
