"""The data a user chose, read and described: an uploaded file's columns (for the column
mapping), the data's summary (raters, coverage per pair), its warnings grouped by kind.
Loading itself is :meth:`~prefeval_core.workflow.session.DataChoice.load`."""

from __future__ import annotations

from prefeval_core.data.dataset import Dataset
from prefeval_core.data.rater_roles import ProblemGroup, group_problems
from prefeval_core.data.reading import read_table_bytes
from prefeval_core.pairs.summary import DatasetSummary, summarise_dataset

__all__ = ["Dataset", "DatasetSummary", "ProblemGroup", "describe_data", "file_columns", "grouped_warnings"]


def file_columns(name: str, data: bytes, *, max_bytes: int) -> tuple[str, ...]:
    """The column names of an uploaded file ``name`` (its bytes ``data``).

    Raises:
        DataError: the file cannot be read (too large, not a table, ...).
    """
    return tuple(read_table_bytes(name, data, max_bytes=max_bytes).frame.columns)


def describe_data(dataset: Dataset, human: str | None = None, metric: str | None = None) -> DatasetSummary:
    """Systems, items, raters and, given ``human`` and ``metric``, each pair's coverage by both."""
    return summarise_dataset(dataset, human, metric)


def grouped_warnings(dataset: Dataset) -> tuple[ProblemGroup, ...]:
    """The data's warnings grouped by (severity, kind, file), in the order each group first appears."""
    return group_problems(dataset.report.warnings)
