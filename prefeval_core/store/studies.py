"""Studies as records: a study's setup once, then its trail of states, append-only.

Every state the protocol reaches (the start, each round, each feed of judgments) is appended
as it happens, so a reload, a new browser or a restarted server resumes from
:func:`latest_state`. An undo is a new record that brings back an earlier state (its
``restores`` names it): the trail keeps everything. The states behave as a stack: every record
but an undo pushes its state; an undo pops back to the state it restores, so undoing twice
goes back two states. State, request and setup are JSON text written by the protocol, opaque here.
"""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy import Connection, func, select

from prefeval_core.errors import settings_error
from prefeval_core.store.engine import Database
from prefeval_core.store.records import StateKind, StudyRecord, StudyState, StudySummary, utc_now
from prefeval_core.store.schema import studies, study_states


def _study(row: Any) -> StudyRecord:
    return StudyRecord(**dict(row))


def _state(row: Any) -> StudyState:
    return StudyState(**dict(row))


def create_study(
    db: Database, dataset: str, dataset_fingerprint: str, name: str, setup_json: str, *, judgments_per_item: int = 1
) -> StudyRecord:
    """Write a new study; returns it with its id.

    Raises:
        SettingsError: ``judgments_per_item`` below 1.
    """
    if isinstance(judgments_per_item, bool) or not isinstance(judgments_per_item, int) or judgments_per_item < 1:
        raise settings_error(f"judgments per item must be a whole number >= 1, got {judgments_per_item!r}", field="judgments_per_item")
    values: dict[str, Any] = {
        "dataset": dataset,
        "dataset_fingerprint": dataset_fingerprint,
        "name": name,
        "setup_json": setup_json,
        "judgments_per_item": judgments_per_item,
        "created_at": utc_now(),
    }
    with db.writing() as conn:
        study_id = conn.execute(studies.insert().values(values).returning(studies.c.id)).scalar_one()
    return StudyRecord(id=study_id, **values)


def _locked_study(db: Database, conn: Connection, study_id: int) -> None:
    """Lock the study's row for this transaction (PostgreSQL; SQLite's write lock covers it),
    so that concurrent appends and undos of one study are serialised."""
    found = conn.execute(select(studies.c.id).where(studies.c.id == study_id).with_for_update()).first()
    if found is None:
        raise settings_error(f"there is no study with id {study_id} in the store {db.where}", field="study_id")


def get_study(db: Database, study_id: int) -> StudyRecord:
    """The study with this id.

    Raises:
        SettingsError: no such study.
    """
    with db.reading() as conn:
        row = conn.execute(select(studies).where(studies.c.id == study_id)).mappings().first()
    if row is None:
        raise settings_error(f"there is no study with id {study_id} in the store {db.where}", field="study_id")
    return _study(row)


def append_state(
    db: Database,
    study_id: int,
    round: int,
    state_json: str,
    request_json: str | None = None,
    kind: StateKind = "round",
    *,
    cost: float | None = None,
) -> StudyState:
    """Append a state to the study's trail (committed before returning); returns the record.

    Raises:
        SettingsError: no such study, or ``kind="undo"`` (use :func:`undo_state`).
    """
    if kind == "undo":
        raise settings_error("an undo record is written by undo_state, which names the state it restores", field="kind")
    values: dict[str, Any] = {
        "study_id": study_id,
        "round": round,
        "kind": kind,
        "state_json": state_json,
        "request_json": request_json,
        "cost": cost,
        "restores": None,
        "created_at": utc_now(),
    }
    with db.writing() as conn:
        _locked_study(db, conn, study_id)
        record_id = conn.execute(study_states.insert().values(values).returning(study_states.c.id)).scalar_one()
    return StudyState(id=record_id, **values)


def latest_state(db: Database, study_id: int) -> StudyState | None:
    """The study's current state (its newest record), or ``None`` before the first."""
    query = select(study_states).where(study_states.c.study_id == study_id).order_by(study_states.c.id.desc()).limit(1)
    with db.reading() as conn:
        row = conn.execute(query).mappings().first()
    return None if row is None else _state(row)


def state_trail(db: Database, study_id: int) -> list[StudyState]:
    """Every record of the study, oldest first (undo records included)."""
    query = select(study_states).where(study_states.c.study_id == study_id).order_by(study_states.c.id)
    with db.reading() as conn:
        return [_state(row) for row in conn.execute(query).mappings()]


def live_stack(trail: list[StudyState]) -> list[StudyState]:
    """The states still in force, oldest first: each non-undo record pushes its state, each
    undo pops back to the record it restores."""
    stack: list[StudyState] = []
    for record in trail:
        if record.kind != "undo":
            stack.append(record)
            continue
        while stack and stack[-1].id != record.restores:
            stack.pop()
    return stack


def undo_state(db: Database, study_id: int) -> StudyState | None:
    """Go back one state: append an ``undo`` record carrying the state before the current one
    (its round, state, request and cost). Returns that record, or ``None`` when only the
    first state is left (nothing to undo).

    Raises:
        SettingsError: no such study.
    """
    with db.writing() as conn:
        _locked_study(db, conn, study_id)
        rows = conn.execute(select(study_states).where(study_states.c.study_id == study_id).order_by(study_states.c.id)).mappings()
        stack = live_stack([_state(row) for row in rows])
        if len(stack) < 2:
            return None
        back = stack[-2]
        values: dict[str, Any] = {
            "study_id": study_id,
            "round": back.round,
            "kind": "undo",
            "state_json": back.state_json,
            "request_json": back.request_json,
            "cost": back.cost,
            "restores": back.id,
            "created_at": utc_now(),
        }
        record_id = conn.execute(study_states.insert().values(values).returning(study_states.c.id)).scalar_one()
    return StudyState(id=record_id, **values)


def list_studies(db: Database, dataset: str | None = None) -> list[StudySummary]:
    """The studies (of ``dataset`` where given), newest first, each with its current round and
    cost (from its newest record), its number of records and when it last changed."""
    newest = (
        select(study_states.c.study_id, func.max(study_states.c.id).label("newest"), func.count().label("records"))
        .group_by(study_states.c.study_id)
        .subquery()
    )
    query = (
        select(studies, study_states.c.round, study_states.c.cost, study_states.c.created_at.label("updated_at"), newest.c.records)
        .outerjoin(newest, newest.c.study_id == studies.c.id)
        .outerjoin(study_states, study_states.c.id == newest.c.newest)
        .order_by(studies.c.id.desc())
    )
    if dataset is not None:
        query = query.where(studies.c.dataset == dataset)
    with db.reading() as conn:
        rows = conn.execute(query).mappings().all()
    summaries = []
    for row in rows:
        study = _study({c.name: row[c.name] for c in studies.columns})
        updated = cast(str | None, row["updated_at"])
        summaries.append(StudySummary(study, row["round"] or 0, row["cost"], row["records"] or 0, updated or study.created_at))
    return summaries
