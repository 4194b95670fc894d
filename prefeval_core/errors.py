"""The core's typed errors, and the problems they carry.

Every error the core raises at its public surface is a :class:`PrefevalError` carrying one or
more :class:`Problem` s; the shells (CLI, dashboard) print those and never a traceback.

* :class:`DataError`: the input files (and its subclasses: empty, too large, malformed,
  bad value, duplicate, coverage, unknown name). Every problem names the file, the data row
  (1-based, header not counted), the line of the file where it is known, and the column,
  and says what was expected. Loading collects all problems of a file before raising.
* :class:`SettingsError`: an option out of range or inconsistent (also a ``ValueError``).
* :class:`EngineError`: the statistics could not produce an answer (also a ``RuntimeError``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Self

Severity = Literal["error", "warning"]

MAX_PROBLEMS_PER_KIND = 20
"""How many problems of one kind in one file a report lists before summarising the rest."""


@dataclass(frozen=True)
class Problem:
    """One finding about the input.

    Attributes:
        severity: ``"error"`` stops loading; ``"warning"`` is something a user may intend.
        kind: short machine-readable tag, e.g. ``"bad_number"``, ``"missing_column"``.
        message: what is wrong and what was expected, in plain words.
        file: file name as the user gave it (``None`` for dataset-wide findings).
        row: 1-based data row (the header is not a row), or ``None``.
        line: 1-based line of the file (the header is line 1), where the format has lines.
        column: the column concerned, or ``None``; for a ``bad_setting`` problem, the setting
            (an option of the CLI or the API), shown as such.
        path: where in a JSON document (a session file, a protocol state) the offending value
            is, e.g. ``protocol.records[3].theta[7]``, or ``None``.
    """

    severity: Severity
    kind: str
    message: str
    file: str | None = None
    row: int | None = None
    line: int | None = None
    column: str | None = None
    path: str | None = None

    def location(self) -> str:
        """``file, row R (line L), column 'C'`` with the parts that are known (``setting 'C'`` for a
        ``bad_setting`` problem: an option, not a column of a file)."""
        parts: list[str] = []
        if self.file is not None:
            parts.append(self.file)
        if self.row is not None:
            row = f"row {self.row}"
            if self.line is not None:
                row += f" (line {self.line})"
            parts.append(row)
        elif self.line is not None:
            parts.append(f"line {self.line}")
        if self.column is not None:
            parts.append(f"{'setting' if self.kind == 'bad_setting' else 'column'} '{self.column}'")
        if self.path is not None:
            parts.append(f"at {self.path}")
        return ", ".join(parts)

    def __str__(self) -> str:
        where = self.location()
        return f"{where}: {self.message}" if where else self.message


@dataclass(frozen=True)
class ValidationReport:
    """All problems found while loading; errors first."""

    problems: tuple[Problem, ...] = field(default_factory=tuple)

    @property
    def errors(self) -> tuple[Problem, ...]:
        return tuple(p for p in self.problems if p.severity == "error")

    @property
    def warnings(self) -> tuple[Problem, ...]:
        return tuple(p for p in self.problems if p.severity == "warning")

    @property
    def ok(self) -> bool:
        return not self.errors

    def merged(self, other: ValidationReport) -> ValidationReport:
        return ValidationReport(self.problems + other.problems)

    def to_text(self) -> str:
        lines = [f"error: {p}" for p in self.errors] + [f"warning: {p}" for p in self.warnings]
        return "\n".join(lines) if lines else "no problems found"


class PrefevalError(Exception):
    """Base of every error the core raises on purpose; ``problems`` lists what is wrong."""

    def __init__(self, problems: Sequence[Problem]):
        self.problems = tuple(problems)
        super().__init__("\n".join(str(p) for p in self.problems))

    @classmethod
    def single(
        cls,
        kind: str,
        message: str,
        *,
        file: str | None = None,
        row: int | None = None,
        line: int | None = None,
        column: str | None = None,
        path: str | None = None,
    ) -> Self:
        return cls([Problem("error", kind, message, file, row, line, column, path)])


class DataError(PrefevalError):
    """Something in the input files; each problem names file, row, line and column."""


class SettingsError(PrefevalError, ValueError):
    """An option or setting that is out of range or contradicts another one."""


class EngineError(PrefevalError, RuntimeError):
    """The decision engine or the protocol cannot produce an answer for these inputs."""


def settings_error(message: str, *, field: str | None = None) -> SettingsError:
    """A :class:`SettingsError` about one setting (``field`` names it, as the column of the problem)."""
    return SettingsError.single("bad_setting", message, column=field)


class EmptyFileError(DataError):
    """The file has no bytes, or a header but no data rows."""


class FileTooLargeError(DataError):
    """The file (or its decompressed content) exceeds the size limit."""


class UnsupportedFormatError(DataError):
    """The file type, encoding or layout cannot be read."""


class MalformedFileError(DataError):
    """The file could not be parsed, e.g. a CSV row with the wrong number of fields."""


class MissingColumnError(DataError):
    """A column the format needs is absent."""


class BadValueError(DataError):
    """A cell holds a value of the wrong kind: a score that is not a number, an unknown label."""


class DuplicateRatingError(DataError):
    """The same (item, system, rater) or (item, pair, rater) appears with different values."""


class CoverageError(DataError):
    """A rater cannot produce preferences: it rated only one system, or two systems share no item."""


class UnknownNameError(DataError):
    """A rater or system name that the data does not contain."""


def raise_if_errors(problems: Iterable[Problem]) -> None:
    """Raise the most specific :class:`DataError` for the errors among ``problems``."""
    errors = [p for p in problems if p.severity == "error"]
    if not errors:
        return
    by_kind: dict[str, type[DataError]] = {
        "empty_file": EmptyFileError,
        "too_large": FileTooLargeError,
        "unsupported": UnsupportedFormatError,
        "encoding": UnsupportedFormatError,
        "malformed": MalformedFileError,
        "missing_column": MissingColumnError,
        "bad_number": BadValueError,
        "bad_label": BadValueError,
        "empty_name": BadValueError,
        "same_system": BadValueError,
        "duplicate": DuplicateRatingError,
        "single_system": CoverageError,
        "no_common_items": CoverageError,
        "unknown_name": UnknownNameError,
    }
    kinds = {p.kind for p in errors}
    error_type = by_kind[kinds.pop()] if len(kinds) == 1 and errors[0].kind in by_kind else DataError
    raise error_type(errors)
