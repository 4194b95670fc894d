"""What a file may be declared to hold, in words, for a list of choices (the Data page's column
mapping): the plain tables of :data:`~prefeval_core.data.formats.TableKind`, then every format of
the registry :data:`~prefeval_core.data.field_formats.FIELD_FORMATS` (its label and columns, read
each time, so a registered format is offered without another edit); the same for a command's
``--kind`` help, with the largest file read (:data:`MAX_BYTES`). Nothing here loads a reader."""

from __future__ import annotations

from typing import Final

from prefeval_core.data.field_formats import FIELD_FORMATS, field_format_help
from prefeval_core.data.field_formats import input_kinds as input_kinds
from prefeval_core.data.limits import MAX_BYTES as MAX_BYTES

DETECT: Final = ""
"""The choice that leaves a file's kind to detection."""
TABLE_WORDS: Final = {
    "ratings": "ratings (long: item, system, rater, score)",
    "wide_ratings": "wide ratings (item, system, one column per rater)",
    "preferences": "preferences (item, system_a, system_b, rater, label)",
    "texts": "texts (item, system, output)",
    "sources": "sources (item, source)",
    "references": "references (item, reference)",
    "ignored": "ignore this file",
}
"""Every :data:`~prefeval_core.data.formats.TableKind` in words (a test keeps the two equal)."""


def input_kind_words() -> dict[str, str]:
    """Every choice in words: detection first, the plain tables, the registered field formats, ignoring last."""
    tables = {kind: words for kind, words in TABLE_WORDS.items() if kind != "ignored"}
    formats = {name: f"{entry.label} ({entry.columns})" for name, entry in FIELD_FORMATS.items()}
    return {DETECT: "detect automatically", **tables, **formats, "ignored": TABLE_WORDS["ignored"]}


def file_kinds_help() -> str:
    """What a file may be declared to hold, in words for a help text: the kinds, then what each
    field format is (``ratings, ..., mqm, arena (mqm: WMT MQM error annotations, ...)``)."""
    return f"{', '.join(input_kinds())} ({field_format_help()})"
