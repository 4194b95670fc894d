"""The documented limits of the readers, each checked before the expensive step it protects.

A file past a limit is refused with a :class:`~prefeval_core.errors.DataError` naming the file
(and the line or column where one is known), in well under a second; none of them refuses a
legitimate evaluation file (a 1,000,000-row ratings file, a 131,072-character system output,
a wide file with one column per rater).
"""

from __future__ import annotations

from typing import Final

MAX_BYTES: Final = 200 * 1024 * 1024
"""Default size limit (200 MiB), for the file as given and for its decompressed content.
There is no limit on a single field or line below this: a long document is read, not refused."""

MAX_COLUMNS: Final = 1_000
"""Columns per table (the header's fields; JSON keys over all rows; Parquet schema fields).
Checked on the header line (or the Parquet footer) before the rest of the file is parsed."""

MAX_CELLS: Final = 20_000_000
"""Rows x columns per table (a 1,000,000-row long ratings file has 4,000,000). For delimited
files the rows are bounded by the count of line breaks before parsing (a quoted field may span
lines, so this over-counts, never under-counts); for Parquet they are in the footer."""

MAX_JSON_ROWS: Final = 1_000_000
"""Rows of a JSON or JSONL file, which Python's json module holds as objects (CSV and Parquet
are read column-wise and need far less memory). Bounded before parsing by the count of
non-empty lines (JSONL) or of ``{`` (JSON; nested objects make it over-count)."""

MAX_JSON_DEPTH: Final = 8
"""Nesting depth of a JSON value (the array of rows counts as one level, each row object as
one more); a cell holding a nested list or object is read as its JSON text."""

MAX_NUMBER_CHARS: Final = 100
"""Characters in one JSON number literal (a float64 needs at most 24)."""

MAX_SYSTEMS: Final = 1_000
"""Distinct systems in one dataset (about 500,000 system pairs)."""

MAX_SCORE: Final = 1e15
"""Largest magnitude of a score. Means, variances and sums of squares of larger numbers lose their
precision or overflow (1e308 squared), and no metric or human scale comes near it: a score past it
is a typing or export error, refused with the file, row and column."""
