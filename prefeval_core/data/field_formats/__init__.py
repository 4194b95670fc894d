"""The field's own file formats, each read into the data layer's plain tables, and their registry.

* ``mqm`` (:mod:`~prefeval_core.data.field_formats.mqm`): WMT MQM error annotations, scored per
  segment and rater into ratings (``human:mqm``, ``human:mqm:<rater>``), texts and sources.
* ``arena`` (:mod:`~prefeval_core.data.field_formats.arena`): Chatbot-Arena battles, a pairwise
  human rater (``human:arena``), with texts and sources where the conversations are given.

**The registry.** :data:`FIELD_FORMATS` maps a format's name to its :class:`FieldFormat`; it is
the one place detection (:func:`detect_kind`), reading (:func:`parse_field_table`), the choices
of ``--kind FILE=KIND`` (:func:`input_kinds`, :func:`field_format_help`) and the validation of a
declared kind consult. Formats are tried in the registry's order, before the plain tables
(:func:`~prefeval_core.data.formats.detect_table_kind`), so a format's ``detect`` must refuse a
plain table's columns. **A new format is one module and one line**: a module in this package
with ``NAME``, ``LABEL``, ``COLUMNS``, ``detect(raw) -> bool`` and
``read(raw) -> tuple[ParsedTable, ...]`` (the first table carries the file's problems and notes),
and its name in :data:`_MODULES` below (docs/architecture.md, "Add a file format").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import get_args

from prefeval_core.data.field_formats import arena, mqm
from prefeval_core.data.field_formats.arena import ARENA_RATER, parse_arena
from prefeval_core.data.field_formats.mqm import MQM_RATER, parse_mqm
from prefeval_core.data.formats import FieldKind, InputKind, ParsedTable, TableKind, detect_table_kind
from prefeval_core.data.reading import RawTable

__all__ = [
    "ARENA_RATER",
    "FIELD_FORMATS",
    "MQM_RATER",
    "FieldFormat",
    "detect_field_kind",
    "detect_kind",
    "field_format_help",
    "input_kinds",
    "parse_arena",
    "parse_field_table",
    "parse_mqm",
]


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
    def from_module(cls, module: ModuleType) -> FieldFormat:
        """The entry of a format module (``NAME``, ``LABEL``, ``COLUMNS``, ``detect``, ``read``)."""
        return cls(module.NAME, module.LABEL, module.COLUMNS, module.detect, module.read)


_MODULES: tuple[ModuleType, ...] = (mqm, arena)
"""The format modules, in the order they are tried (an MQM file is recognised before battles)."""

FIELD_FORMATS: dict[str, FieldFormat] = {entry.name: entry for entry in map(FieldFormat.from_module, _MODULES)}
"""Every field format by name, in detection order. Tests add a format with ``monkeypatch.setitem``."""


def detect_field_kind(raw: RawTable) -> FieldKind | None:
    """The first registered field format whose ``detect`` accepts ``raw``, else ``None``."""
    return next((entry.name for entry in FIELD_FORMATS.values() if entry.detect(raw)), None)


def detect_kind(raw: RawTable) -> InputKind:
    """Guess what a file holds from its columns (a field's own format first) and its name."""
    return detect_field_kind(raw) or detect_table_kind(raw)


def parse_field_table(raw: RawTable, kind: FieldKind) -> tuple[ParsedTable, ...]:
    """The tables a file in the registered field format ``kind`` holds (the first carries its problems and notes)."""
    return FIELD_FORMATS[kind].read(raw)


def input_kinds() -> tuple[str, ...]:
    """What a file may be declared to hold: the plain tables, then the registered field formats."""
    return (*get_args(TableKind), *FIELD_FORMATS)


def field_format_help() -> str:
    """The field formats in words, for a list of choices: ``mqm: WMT MQM error annotations, ...``."""
    return ", ".join(f"{entry.name}: {entry.label}" for entry in FIELD_FORMATS.values())
