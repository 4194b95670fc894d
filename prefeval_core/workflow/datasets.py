"""Data in: load files, folders and bundled samples, describe them, check them.

The door to the data layer (:mod:`prefeval_core.data`) for the CLI's ``--data``/``FILE...``
(``describe``, ``validate``, ``diagnose``, ``replay``, ...), the notebook API's ``load`` and the
dashboard's Data page (an upload's columns, the summary, the warnings grouped; the dashboard
loads through :meth:`~prefeval_core.workflow.session.DataChoice.load`): each problem names its
file, row, line and column (:class:`~prefeval_core.errors.DataError`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from prefeval_core.data.bundled import data_path
from prefeval_core.data.dataset import Dataset, Source, load_dataset
from prefeval_core.data.formats import InputKind
from prefeval_core.data.formats import TableKind as TableKind  # what a frame of the notebook API holds
from prefeval_core.data.rater_roles import ProblemGroup, group_problems
from prefeval_core.data.reading import MAX_BYTES, read_table_bytes
from prefeval_core.errors import DataError, Problem
from prefeval_core.pairs.preferences import pair_outcomes
from prefeval_core.pairs.summary import DatasetSummary, summarise_dataset


def load_data(
    sources: Sequence[Source],
    *,
    kinds: Mapping[str, InputKind] | None = None,
    rater_columns: Mapping[str, Sequence[str]] | None = None,
    name: str | None = None,
    max_bytes: int = MAX_BYTES,
) -> Dataset:
    """Load and check ``sources``: paths, folders (every table file inside) or ``(name, bytes)``.

    Args:
        kinds: per file name, what it holds, overriding detection.
        rater_columns: per file name, the rater columns of a wide ratings file.
        name: the dataset's label (default: the folder or first file name).
        max_bytes: size limit per file in bytes, compressed and decompressed.

    Raises:
        DataError: every problem found, each naming file, row, line and column.
    """
    return load_dataset(sources, kinds=kinds, rater_columns=rater_columns, max_bytes=max_bytes, name=name)


def load_paths(
    paths: Sequence[str],
    *,
    kinds: Mapping[str, InputKind] | None = None,
    rater_columns: Sequence[str] | None = None,
    max_bytes: int = MAX_BYTES,
) -> Dataset:
    """Load files and folders as a command line names them: ``sample:NAME`` is a bundled sample,
    ``rater_columns`` (if given) are the rater columns of every wide ratings file among them.

    Raises:
        SettingsError: ``sample:NAME`` naming no bundled sample.
        DataError: as :func:`load_data`.
    """
    columns = {p.rsplit("/", 1)[-1]: rater_columns for p in paths} if rater_columns else None
    return load_data([data_path(p) for p in paths], kinds=kinds, rater_columns=columns, max_bytes=max_bytes)


def describe_data(dataset: Dataset, human: str | None = None, metric: str | None = None) -> DatasetSummary:
    """Systems, items, raters and, given ``human`` and ``metric``, each pair's coverage by both."""
    return summarise_dataset(dataset, human, metric)


def file_columns(name: str, data: bytes, *, max_bytes: int = MAX_BYTES) -> tuple[str, ...]:
    """The column names of an uploaded file ``name`` (its bytes ``data``), for a column mapping.

    Raises:
        DataError: the file cannot be read (too large, not a table, ...).
    """
    return tuple(read_table_bytes(name, data, max_bytes=max_bytes).frame.columns)


def grouped_warnings(dataset: Dataset) -> tuple[ProblemGroup, ...]:
    """The data's warnings grouped by (severity, kind, file), in the order each group first appears."""
    return group_problems(dataset.report.warnings)


@dataclass(frozen=True)
class DataCheck:
    """What checking data files found (:func:`check_paths`).

    Attributes:
        problems: errors and warnings, each naming its file (the files given, for a finding
            about the data as a whole), row, line and column.
        notes: how the files were read (one line each); empty when they could not be loaded.
    """

    problems: tuple[Problem, ...]
    notes: tuple[str, ...]

    @property
    def errors(self) -> tuple[Problem, ...]:
        return tuple(p for p in self.problems if p.severity == "error")


def check_paths(
    paths: Sequence[str],
    raters: Sequence[str] = (),
    *,
    kinds: Mapping[str, InputKind] | None = None,
    rater_columns: Sequence[str] | None = None,
    max_bytes: int = MAX_BYTES,
) -> DataCheck:
    """Load ``paths`` (as :func:`load_paths`) and check that each of ``raters`` gives preferences;
    every problem is reported, none raised."""
    notes: tuple[str, ...] = ()
    try:
        dataset = load_paths(paths, kinds=kinds, rater_columns=rater_columns, max_bytes=max_bytes)
    except DataError as exc:
        problems = list(exc.problems)
    else:
        problems, notes = list(dataset.report.problems), tuple(dataset.notes)
        for rater in raters:
            try:  # every rater checked: one unknown name does not hide the next
                pair_outcomes(dataset, rater)
            except DataError as exc:
                problems += exc.problems
    files = ", ".join(Path(f).name for f in paths)
    return DataCheck(tuple(p if p.file is not None else replace(p, file=files) for p in problems), notes)
