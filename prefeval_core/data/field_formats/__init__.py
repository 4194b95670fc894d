"""The field's own file formats, each read into the data layer's plain tables.

* ``mqm`` (:mod:`~prefeval_core.data.field_formats.mqm`): WMT MQM error annotations, scored per
  segment and rater into ratings (``human:mqm``, ``human:mqm:<rater>``), texts and sources.
* ``arena`` (:mod:`~prefeval_core.data.field_formats.arena`): Chatbot-Arena battles, a pairwise
  human rater (``human:arena``), with texts and sources where the conversations are given.

A file is recognised by its columns (:func:`~prefeval_core.data.formats.detect_field_kind`) or
declared with ``--kind FILE=mqm`` / ``FILE=arena``.
"""

from __future__ import annotations

from prefeval_core.data.field_formats.arena import ARENA_RATER, parse_arena
from prefeval_core.data.field_formats.mqm import MQM_RATER, parse_mqm
from prefeval_core.data.formats import FieldKind, ParsedTable
from prefeval_core.data.reading import RawTable

__all__ = ["ARENA_RATER", "MQM_RATER", "parse_field_table"]


def parse_field_table(raw: RawTable, kind: FieldKind) -> tuple[ParsedTable, ...]:
    """The tables a file in the field format ``kind`` holds (the first carries its problems and notes)."""
    return parse_mqm(raw) if kind == "mqm" else parse_arena(raw)
