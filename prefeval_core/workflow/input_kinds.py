"""What a file may be declared to hold, in words, for a list of choices (the Data page's column
mapping): the plain tables of :data:`~prefeval_core.data.formats.TableKind`, then every format of
the registry :data:`~prefeval_core.data.field_formats.FIELD_FORMATS` (its label and columns, read
each time, so a registered format is offered without another edit)."""

from __future__ import annotations

from typing import Final

from prefeval_core.data.field_formats import FIELD_FORMATS

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
