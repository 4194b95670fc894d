"""Column names, as every reader compares them, and the one header a reader must recognise
before it parses the rest: Google's MQM files.

Google writes its WMT MQM error files (google/wmt-mqm-human-evaluation) tab-separated and
**unquoted**: a ``"`` in a text is a character, and a text may start with one ("We are here,"
he said.). Parsed with CSV quoting, such a line runs into the next fields or the next lines, so
the delimited reader looks at the header first (:func:`unquoted_header`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Final

SCORE_NAMES: Final = ("score", "value", "rating")
"""The names a score column goes by (the data layer's aliases of ``score``)."""


def normal_name(column: str) -> str:
    """A column name as compared: stripped, lower case, spaces and hyphens read as ``_``."""
    return column.strip().lower().replace(" ", "_").replace("-", "_")


def mqm_columns(names: Collection[str]) -> bool:
    """Whether normalised column ``names`` are an MQM error file's: ``system, rater``, a
    ``category`` or ``severity``, a ``source`` or ``target``, and no score (a ratings file has one)."""
    present = set(names)
    return (
        {"system", "rater"} <= present
        and bool(present & {"category", "severity"})
        and bool(present & {"source", "target"})
        and not present & set(SCORE_NAMES)
    )


def unquoted_header(header: Iterable[str], delimiter: str) -> bool:
    """Whether a delimited file with this ``header`` is read without quoting: a tab-separated MQM file."""
    return delimiter == "\t" and mqm_columns({normal_name(c) for c in header})
