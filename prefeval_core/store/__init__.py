"""The annotation store: human judgments (ratings and comparisons) and studies, on SQLite by
default or PostgreSQL for a team (SQLAlchemy Core).

* :mod:`~prefeval_core.store.records`: what is stored (frozen values, identities).
* :mod:`~prefeval_core.store.engine`: where (URL, Engine, transactions).
* :mod:`~prefeval_core.store.schema`: the tables, their version and migrations.
* :mod:`~prefeval_core.store.judgments`, :mod:`~prefeval_core.store.studies`: reading and writing.
* :mod:`~prefeval_core.store.frames`: one answer per task from several annotators.
* :mod:`~prefeval_core.store.assignment`: the next task for an annotator.
* :mod:`~prefeval_core.store.export`: all judgments with attribution as CSV, JSONL, Parquet.
* :mod:`~prefeval_core.store.api`: the :class:`Store` object the shells use.
"""

from prefeval_core.store.api import Store, open_store
from prefeval_core.store.assignment import next_task
from prefeval_core.store.engine import DATA_DIR_ENV, DATABASE_URL_ENV, STORE_FILE, StoreError, default_data_dir
from prefeval_core.store.export import ExportFormat, export_frame, export_judgments
from prefeval_core.store.frames import combined_outcomes, combined_scores, judgments_frame
from prefeval_core.store.records import (
    Comparison,
    ComparisonTask,
    ImportResult,
    Judgment,
    JudgmentKind,
    Rating,
    RatingTask,
    StateKind,
    StudyRecord,
    StudyState,
    StudySummary,
    Task,
    request_id_for,
    utc_now,
)
from prefeval_core.store.schema import SCHEMA_VERSION

__all__ = [
    "DATABASE_URL_ENV",
    "DATA_DIR_ENV",
    "SCHEMA_VERSION",
    "STORE_FILE",
    "Comparison",
    "ComparisonTask",
    "ExportFormat",
    "ImportResult",
    "Judgment",
    "JudgmentKind",
    "Rating",
    "RatingTask",
    "StateKind",
    "Store",
    "StoreError",
    "StudyRecord",
    "StudyState",
    "StudySummary",
    "Task",
    "combined_outcomes",
    "combined_scores",
    "default_data_dir",
    "export_frame",
    "export_judgments",
    "judgments_frame",
    "next_task",
    "open_store",
    "request_id_for",
    "utc_now",
]
