"""The field's own file formats, each read into the data layer's plain tables, and their registry.

* ``mqm`` (:mod:`~prefeval_core.data.field_formats.mqm`): WMT MQM error annotations, scored per
  segment and rater into ratings (``human:mqm``, ``human:mqm:<rater>``), texts and sources.
* ``arena`` (:mod:`~prefeval_core.data.field_formats.arena`): Chatbot-Arena battles, a pairwise
  human rater (``human:arena``), with texts and sources where the conversations are given.

**The registry.** :data:`FIELD_FORMATS` maps a format's name to its :class:`FieldFormat`; it is
the one place detection (:func:`detect_field_kind`; with the plain tables,
:func:`~prefeval_core.data.dataset.detect_kind`), reading (:func:`parse_field_table`), the choices
of ``--kind FILE=KIND`` (:func:`input_kinds`, :func:`field_format_help`) and the validation of a
declared kind consult. Formats are tried in the registry's order, before the plain tables
(:func:`~prefeval_core.data.formats.detect_table_kind`), so a format's ``detect`` must refuse a
plain table's columns. **A new format is one module and one line**: a module in this package
with ``detect(raw) -> bool`` and ``read(raw) -> tuple[ParsedTable, ...]`` (the first table carries
the file's problems and notes), and its line in :data:`FIELD_FORMATS` below (its name, label and
columns; docs/architecture.md, "Add a file format"). The module is imported when a file is first
detected or read, so that listing the formats (a command's ``--help``) loads no reader.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, get_args

from prefeval_core.data.kinds import FieldKind, TableKind
from prefeval_core.lazy import imported_on_call

if TYPE_CHECKING:
    from prefeval_core.data.formats import ParsedTable
    from prefeval_core.data.reading import RawTable

__all__ = ["FIELD_FORMATS", "FieldFormat", "detect_field_kind", "field_format_help", "input_kinds", "parse_field_table"]


@dataclass(frozen=True)
class FieldFormat:
    """One field format.

    Attributes:
        name: what ``--kind FILE=<name>`` and session files call it.
        label: what it is, in words ("WMT MQM error annotations").
        columns: the columns that make a file this format, for lists of choices.
        detect: whether a raw table is this format (from its columns; must refuse plain tables).
        read: the tables the file holds (the first carries its problems and notes).
    """

    name: str
    label: str
    columns: str
    detect: Callable[[RawTable], bool]
    read: Callable[[RawTable], tuple[ParsedTable, ...]]

    @classmethod
    def of_module(cls, name: str, label: str, columns: str) -> FieldFormat:
        """The format the module ``name`` of this package reads (its ``detect`` and ``read``,
        imported on first use)."""
        return cls(name, label, columns, imported_on_call(f"{__name__}.{name}:detect"), imported_on_call(f"{__name__}.{name}:read"))


FIELD_FORMATS: dict[str, FieldFormat] = {
    entry.name: entry
    for entry in (
        FieldFormat.of_module("mqm", "WMT MQM error annotations", "system, seg_id, rater, category, severity"),
        FieldFormat.of_module("arena", "Chatbot-Arena battles", "model_a, model_b, winner"),
    )
}
"""Every field format by name, in detection order (an MQM file is recognised before battles).
Tests add a format with ``monkeypatch.setitem``."""


def detect_field_kind(raw: RawTable) -> FieldKind | None:
    """The first registered field format whose ``detect`` accepts ``raw``, else ``None``."""
    return next((entry.name for entry in FIELD_FORMATS.values() if entry.detect(raw)), None)


def parse_field_table(raw: RawTable, kind: FieldKind) -> tuple[ParsedTable, ...]:
    """The tables a file in the registered field format ``kind`` holds (the first carries its problems and notes)."""
    return FIELD_FORMATS[kind].read(raw)


def input_kinds() -> tuple[str, ...]:
    """What a file may be declared to hold: the plain tables, then the registered field formats."""
    return (*get_args(TableKind), *FIELD_FORMATS)


def field_format_help() -> str:
    """The field formats in words, for a list of choices: ``mqm: WMT MQM error annotations, ...``."""
    return ", ".join(f"{entry.name}: {entry.label}" for entry in FIELD_FORMATS.values())
