"""What a study asks its annotators and how the lead files it: criterion, guidelines, kind
(live or replay), archive mark; and its name, which the lead may change.

A study written before schema version 2 has no row here: :func:`details` then says so
(``None``) and the caller derives a criterion from the setup.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import select, update

from prefeval_core.errors import settings_error
from prefeval_core.store.engine import Database
from prefeval_core.store.records import utc_now
from prefeval_core.store.schema import studies, study_details

StudyKind = Literal["live", "replay"]
"""A live study asks people; a replay replays judgments the data already hold."""


@dataclass(frozen=True)
class StudyDetails:
    """A study's details.

    Attributes:
        study_id: the study.
        criterion: what annotators judge (e.g. ``relevance``), shown on every screen, stored with every judgment.
        guidelines: Markdown shown with the criterion (may be empty).
        kind: ``live`` or ``replay``.
        archived_at: when the lead archived it (UTC, ISO 8601), or ``None``.
    """

    study_id: int
    criterion: str
    guidelines: str
    kind: StudyKind
    archived_at: str | None


def _checked(criterion: str) -> str:
    criterion = criterion.strip()
    if not criterion or "\x00" in criterion:
        raise settings_error("a study needs a criterion: what the annotators judge (e.g. relevance)", field="criterion")
    return criterion


def _exists(db: Database, conn: Any, study_id: int) -> None:
    if conn.execute(select(studies.c.id).where(studies.c.id == study_id)).first() is None:
        raise settings_error(f"there is no study with id {study_id} in the store {db.where}", field="study_id")


def set_details(db: Database, study_id: int, criterion: str, guidelines: str, kind: StudyKind) -> StudyDetails:
    """Write (or replace) the study's criterion, guidelines and kind; keeps its archive mark.

    Raises:
        SettingsError: an empty criterion, or no such study.
    """
    values = {"criterion": _checked(criterion), "guidelines": guidelines.replace("\x00", ""), "kind": kind}
    with db.writing() as conn:
        _exists(db, conn, study_id)
        row = conn.execute(select(study_details).where(study_details.c.study_id == study_id)).mappings().first()
        if row is None:
            conn.execute(study_details.insert().values(study_id=study_id, archived_at=None, **values))
            archived = None
        else:
            conn.execute(update(study_details).where(study_details.c.study_id == study_id).values(values))
            archived = row["archived_at"]
    return StudyDetails(study_id, values["criterion"], values["guidelines"], kind, archived)


def details(db: Database, study_id: int) -> StudyDetails | None:
    """The study's details, or ``None`` for a study written before they were kept."""
    with db.reading() as conn:
        row = conn.execute(select(study_details).where(study_details.c.study_id == study_id)).mappings().first()
    return None if row is None else StudyDetails(**dict(row))


def all_details(db: Database) -> dict[int, StudyDetails]:
    """Every study's details, by study id (studies without any are absent)."""
    with db.reading() as conn:
        return {row["study_id"]: StudyDetails(**dict(row)) for row in conn.execute(select(study_details)).mappings()}


def set_archived(db: Database, study_id: int, archived: bool) -> None:
    """Archive the study (hidden from the lists unless asked for) or bring it back.

    Raises:
        SettingsError: no such study, or one without details (written before they were kept: set them first).
    """
    with db.writing() as conn:
        _exists(db, conn, study_id)
        query = update(study_details).where(study_details.c.study_id == study_id).values(archived_at=utc_now() if archived else None)
        if conn.execute(query).rowcount == 0:
            raise settings_error(f"study {study_id} has no details yet: set its criterion first", field="study_id")


def rename(db: Database, study_id: int, name: str) -> None:
    """Give the study another name.

    Raises:
        SettingsError: an empty name, or no such study.
    """
    name = name.strip()
    if not name or "\x00" in name:
        raise settings_error("a study's name cannot be empty", field="name")
    with db.writing() as conn:
        _exists(db, conn, study_id)
        conn.execute(update(studies).where(studies.c.id == study_id).values(name=name))
