"""The store as one object per process: :func:`open_store` (cached per URL) or :meth:`Store.open`.

A :class:`Store` holds the SQLAlchemy Engine (thread-safe, pooled) and the schema version it
checked when it opened; it keeps no other state, so one instance serves every session of the
dashboard (``st.cache_resource``) and every thread of a process.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, overload

import pandas as pd
from sqlalchemy.engine import URL

from prefeval_core.store import judgments, secrets, studies
from prefeval_core.store.engine import Database, Dialect, connect, database_url, store_url
from prefeval_core.store.export import ExportFormat, export_judgments
from prefeval_core.store.frames import combined_outcomes, combined_scores
from prefeval_core.store.records import (
    Comparison,
    ImportResult,
    Judgment,
    JudgmentKind,
    Rating,
    StateKind,
    StudyRecord,
    StudyState,
    StudySummary,
)
from prefeval_core.store.schema import ensure_schema


@dataclass(frozen=True)
class Store:
    """The annotation store: judgments of both kinds and studies, on SQLite or PostgreSQL.

    Every write is committed before the method returns. See :mod:`prefeval_core.store.records`
    for what is stored and :mod:`prefeval_core.store.schema` for how.
    """

    db: Database
    schema_version: int

    @classmethod
    def at(cls, url: URL | str) -> Store:
        """A new Store on ``url`` (see :func:`~prefeval_core.store.engine.database_url`); creates
        or migrates its schema. Prefer :func:`open_store`, which opens each store once per process."""
        db = connect(url if isinstance(url, URL) else database_url(url))
        return cls(db, ensure_schema(db))

    @property
    def where(self) -> str:
        """The store's URL without password (a SQLite URL names the file)."""
        return self.db.where

    @property
    def dialect(self) -> Dialect:
        return self.db.dialect

    def dispose(self) -> None:
        """Close pooled connections (tests and benchmarks; the app keeps its Store open)."""
        self.db.dispose()

    # --- judgments ---------------------------------------------------------------------

    @overload
    def add(self, judgment: Comparison, *, link: str | None = None) -> Comparison: ...
    @overload
    def add(self, judgment: Rating, *, link: str | None = None) -> Rating: ...
    def add(self, judgment: Judgment, *, link: str | None = None) -> Judgment:
        """Store one judgment now; returns it as stored (or the identical one already there).
        ``link``: the token of the annotator link it is made through, checked as it is stored
        (``AccessError`` when the link no longer works: nothing is stored)."""
        return judgments.add_judgment(self.db, judgment, link=link)

    def add_many(self, items: Sequence[Judgment], *, supersede: bool = False) -> ImportResult:
        """Store several judgments in one transaction; says how many were new and how many already
        there. ``supersede``: one judgment per request and annotator, the newest (earlier ones
        marked undone); see :func:`~prefeval_core.store.judgments.add_judgments`."""
        return judgments.add_judgments(self.db, items, supersede=supersede)

    def undo_last(
        self,
        dataset: str,
        annotator: str | None = None,
        *,
        study_id: int | None = None,
        kind: JudgmentKind = "comparison",
        link: str | None = None,
    ) -> Judgment | None:
        """Mark the newest judgment of ``kind`` that counts (of ``annotator``, in ``study_id``
        where given) as undone; returns it, or ``None``. ``link``: as for :meth:`add`."""
        return judgments.undo_last(self.db, kind, dataset, annotator, study_id=study_id, link=link)

    def comparisons(self, dataset: str | None = None, *, study_id: int | None = None, include_undone: bool = False) -> list[Comparison]:
        """Stored comparisons, oldest first (only those that count unless ``include_undone``)."""
        found = judgments.read_judgments(self.db, "comparison", dataset, study_id=study_id, include_undone=include_undone)
        return [j for j in found if isinstance(j, Comparison)]

    def ratings(self, dataset: str | None = None, *, study_id: int | None = None, include_undone: bool = False) -> list[Rating]:
        """Stored ratings, oldest first (only those that count unless ``include_undone``)."""
        found = judgments.read_judgments(self.db, "rating", dataset, study_id=study_id, include_undone=include_undone)
        return [j for j in found if isinstance(j, Rating)]

    def _per_item(self, study_id: int | None, per_item: int | None) -> int:
        if per_item is not None:
            return per_item
        return 1 if study_id is None else self.study(study_id).judgments_per_item

    def complete_comparisons(self, dataset: str, *, study_id: int | None = None, per_item: int | None = None) -> pd.DataFrame:
        """One combined outcome per (item, pair) judged by at least ``per_item`` annotators
        (default: the study's judgments per item, or 1); see :func:`~prefeval_core.store.frames.combined_outcomes`."""
        return combined_outcomes(self.comparisons(dataset, study_id=study_id), self._per_item(study_id, per_item))

    def complete_ratings(self, dataset: str, *, study_id: int | None = None, per_item: int | None = None) -> pd.DataFrame:
        """One mean score per (item, system) rated by at least ``per_item`` annotators; see
        :func:`~prefeval_core.store.frames.combined_scores`."""
        return combined_scores(self.ratings(dataset, study_id=study_id), self._per_item(study_id, per_item))

    def export(self, fmt: ExportFormat, dataset: str | None = None, *, study_id: int | None = None) -> bytes:
        """Every judgment of both kinds (undone ones too, marked) with attribution, as a file."""
        found: list[Judgment] = [
            *self.comparisons(dataset, study_id=study_id, include_undone=True),
            *self.ratings(dataset, study_id=study_id, include_undone=True),
        ]
        return export_judgments(found, fmt)

    def secret(self, dataset: str, study_id: int | None) -> bytes:
        """The random key of a study's blind files (of ``dataset``'s outside studies); see
        :mod:`~prefeval_core.store.secrets`. Made on first use, the same ever after."""
        return secrets.scope_secret(self.db, secrets.scope_of(dataset, study_id))

    # --- studies -----------------------------------------------------------------------

    def create_study(
        self, dataset_key: str, dataset_fingerprint: str, name: str, setup_json: str, *, judgments_per_item: int = 1
    ) -> StudyRecord:
        """Write a new study; see :func:`~prefeval_core.store.studies.create_study`."""
        return studies.create_study(self.db, dataset_key, dataset_fingerprint, name, setup_json, judgments_per_item=judgments_per_item)

    def study(self, study_id: int) -> StudyRecord:
        """The study with this id (``SettingsError`` if there is none)."""
        return studies.get_study(self.db, study_id)

    def append_state(
        self,
        study_id: int,
        round: int,
        state_json: str,
        request_json: str | None = None,
        kind: StateKind = "round",
        *,
        cost: float | None = None,
    ) -> StudyState:
        """Append a state to the study's trail; see :func:`~prefeval_core.store.studies.append_state`."""
        return studies.append_state(self.db, study_id, round, state_json, request_json, kind, cost=cost)

    def latest_state(self, study_id: int) -> StudyState | None:
        """The study's current state, or ``None`` before its first."""
        return studies.latest_state(self.db, study_id)

    def undo_state(self, study_id: int) -> StudyState | None:
        """Go back one state (a new ``undo`` record); ``None`` when nothing is left to undo."""
        return studies.undo_state(self.db, study_id)

    def state_trail(self, study_id: int) -> list[StudyState]:
        """Every record of the study, oldest first."""
        return studies.state_trail(self.db, study_id)

    def list_studies(self, dataset_key: str | None = None) -> list[StudySummary]:
        """The studies (of ``dataset_key`` where given), newest first, with where each stands."""
        return studies.list_studies(self.db, dataset_key)


_OPEN: Final[dict[str, Store]] = {}
_OPEN_LOCK: Final = threading.Lock()


def open_store(data_dir: Path | str | None = None) -> Store:
    """The process's Store for :func:`~prefeval_core.store.engine.store_url` of ``data_dir``
    (SQLite in ``data_dir`` if given, else ``$PREFEVAL_DATABASE_URL``, else SQLite in
    ``$PREFEVAL_DATA_DIR``): opened, and its schema created or migrated, once per URL.

    Raises:
        SettingsError: a database URL that is not PostgreSQL or SQLite.
        StoreError: the database cannot be reached, or its schema is newer than this prefeval.
    """
    url = store_url(data_dir)
    key = url.render_as_string(hide_password=False)
    with _OPEN_LOCK:
        if key not in _OPEN:
            _OPEN[key] = Store.at(url)
        return _OPEN[key]
