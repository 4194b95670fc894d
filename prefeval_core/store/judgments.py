"""Judgments in the store: write one (committed before returning) or many (one transaction),
undo (a mark, never a delete), read back oldest first.

Storing many may **supersede** (answers read again from a tool where annotators can edit them,
such as Label Studio): an annotator's newer answer to a request replaces the earlier ones that
count, which are marked undone (kept as history, as an undo keeps them), so the request has one
judgment per annotator; an answer older than the one that counts is not stored.

Writes are idempotent: a judgment whose identity is already among the judgments that count
is not stored again (``INSERT ... ON CONFLICT DO NOTHING`` on the partial unique index, the
same statement on SQLite and PostgreSQL), whether it comes twice from one process or at the
same time from two.

A judgment made through an annotator's link is written with the link's token: the same
transaction checks that the link still works and names that annotator and study
(:func:`~prefeval_core.store.invitations.check_link`), so a tab left open after the lead revoked
the link stores nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any, Final, overload

from sqlalchemy import Connection, Insert, Table, func, select, update
from sqlalchemy.dialects import postgresql, sqlite

from prefeval_core.store.engine import Database
from prefeval_core.store.invitations import AccessError, check_link
from prefeval_core.store.records import Comparison, ImportResult, Judgment, JudgmentKind, Rating, judgment_values, utc_now
from prefeval_core.store.schema import comparisons, ratings

_TABLES: dict[JudgmentKind, Table] = {"comparison": comparisons, "rating": ratings}
_BATCH_LOCK: Final = 7_042_013_002
"""PostgreSQL advisory lock key held by a transaction storing a batch of judgments."""


def _table(judgment: Judgment) -> Table:
    return _TABLES[judgment.kind]


def _row(judgment: Judgment) -> dict[str, Any]:
    row = judgment_values(judgment)
    row.pop("id")
    return row


def _judgment(kind: JudgmentKind, row: Any) -> Judgment:
    values = dict(row)
    return Comparison(**values) if kind == "comparison" else Rating(**values)


def _insert_new(db: Database, table: Table) -> Insert:
    """``INSERT`` that skips a row whose identity is already live (the partial unique index)."""
    live = table.c.undone_at.is_(None)
    dialect_insert = postgresql.insert if db.dialect == "postgresql" else sqlite.insert
    return dialect_insert(table).on_conflict_do_nothing(index_elements=[table.c.identity], index_where=live)


def _live_with_identity(conn: Connection, table: Table, identity: str) -> Any:
    return conn.execute(select(table).where(table.c.identity == identity, table.c.undone_at.is_(None))).mappings().one()


def _through_link(conn: Connection, link: str, study_id: int | None, annotator: str | None) -> None:
    """Refuse a write through the link ``link`` unless it still works, for ``study_id`` and ``annotator``.

    Raises:
        AccessError: the link does not work (:func:`~prefeval_core.store.invitations.check_link`), or
            opens another study or names another annotator.
    """
    found = check_link(conn, link, lock=True)
    if found.study_id != study_id:
        raise AccessError.single("other_study", "This link is for another study: open it exactly as the lead sent it.")
    if annotator is not None and found.annotator != annotator:
        raise AccessError.single("other_annotator", "This link names another annotator: open it exactly as the lead sent it.")


@overload
def add_judgment(db: Database, judgment: Comparison, *, link: str | None = None) -> Comparison: ...
@overload
def add_judgment(db: Database, judgment: Rating, *, link: str | None = None) -> Rating: ...
def add_judgment(db: Database, judgment: Judgment, *, link: str | None = None) -> Judgment:
    """Store one judgment now (committed before returning). Returns it as stored, with its id;
    if one with the same identity already counts, that one (nothing is written). ``link``: the
    token of the annotator link it is made through, checked in the same transaction.

    Raises:
        AccessError: ``link`` is given and no longer works, or is not the judgment's annotator's in its study; nothing is stored.
    """
    table = _table(judgment)
    with db.writing() as conn:
        if link is not None:
            _through_link(conn, link, judgment.study_id, judgment.annotator)
        new_id = conn.execute(_insert_new(db, table).returning(table.c.id), _row(judgment)).scalar_one_or_none()
        if new_id is None:
            return _judgment(judgment.kind, _live_with_identity(conn, table, judgment.identity))
    return replace(judgment, id=new_id)


def add_judgments(db: Database, judgments: Sequence[Judgment], *, supersede: bool = False) -> ImportResult:
    """Store several judgments in one transaction (all or none), each identity once, in the
    order given (the first of repeated identities). With ``supersede``, one judgment per request
    and annotator: the newest (by ``created_at``; the later given of equal times) of the batch and
    the store counts, the others it replaces are marked undone (module docstring).

    Batches are serialised: SQLite's write lock does it; on PostgreSQL an advisory lock, since
    two batches holding some of each other's new identities would otherwise deadlock.
    """
    added = replaced = 0
    with db.writing() as conn:
        if db.dialect == "postgresql":
            conn.execute(select(func.pg_advisory_xact_lock(_BATCH_LOCK)))
        for kind, table in _TABLES.items():
            batch = [j for j in judgments if j.kind == kind]
            if supersede and batch:
                batch, earlier = _newest(conn, table, batch)
                if earlier:
                    conn.execute(update(table).where(table.c.id.in_(earlier)).values(undone_at=utc_now()))
                    replaced += len(earlier)
            rows: dict[str, dict[str, Any]] = {}
            for judgment in batch:
                rows.setdefault(judgment.identity, _row(judgment))
            if rows:
                stored = conn.execute(_insert_new(db, table).returning(table.c.identity), list(rows.values()))
                added += len(stored.all())
    return ImportResult(added=added, already_there=len(judgments) - added, replaced=replaced)


def _newest(conn: Connection, table: Table, batch: list[Judgment]) -> tuple[list[Judgment], list[int]]:
    """Of ``batch``, the newest answer per request and annotator that is newer than the one
    counting in the store and differs from it; and the ids of the judgments those replace."""
    newest: dict[tuple[str, str], Judgment] = {}
    for judgment in batch:
        key = (judgment.request_id, judgment.annotator)
        if key not in newest or judgment.created_at >= newest[key].created_at:
            newest[key] = judgment
    live: dict[tuple[str, str], list[Any]] = {}
    for requests in _chunks(sorted({request for request, _ in newest})):
        query = select(table.c.id, table.c.identity, table.c.request_id, table.c.annotator, table.c.created_at).where(
            table.c.request_id.in_(requests), table.c.undone_at.is_(None)
        )
        for row in conn.execute(query):
            live.setdefault((row.request_id, row.annotator), []).append(row)
    taken: list[Judgment] = []
    earlier: list[int] = []
    for key, judgment in newest.items():
        counting = live.get(key, [])
        if any(row.identity == judgment.identity or row.created_at > judgment.created_at for row in counting):
            continue
        taken.append(judgment)
        earlier += [row.id for row in counting]
    return taken, earlier


def _chunks(values: list[str], size: int = 500) -> Iterator[list[str]]:
    """``values`` in lists of at most ``size`` (bound parameters per statement stay few on either engine)."""
    for start in range(0, len(values), size):
        yield values[start : start + size]


def undo_last(
    db: Database, kind: JudgmentKind, dataset: str, annotator: str | None = None, *, study_id: int | None = None, link: str | None = None
) -> Judgment | None:
    """Mark the newest judgment of ``kind`` on ``dataset`` that counts (by ``annotator``, in
    ``study_id``, where given) as undone; returns it, or ``None`` if there is none. ``link``: as
    for :func:`add_judgment`.

    Raises:
        AccessError: as :func:`add_judgment`; nothing is undone.
    """
    table = _TABLES[kind]
    query = select(table).where(table.c.dataset == dataset, table.c.undone_at.is_(None))
    if annotator is not None:
        query = query.where(table.c.annotator == annotator)
    if study_id is not None:
        query = query.where(table.c.study_id == study_id)
    with db.writing() as conn:
        if link is not None:
            _through_link(conn, link, study_id, annotator)
        row = conn.execute(query.order_by(table.c.id.desc()).limit(1).with_for_update()).mappings().first()
        if row is None:
            return None
        now = utc_now()
        conn.execute(update(table).where(table.c.id == row["id"]).values(undone_at=now))
    return replace(_judgment(kind, row), undone_at=now)


def read_judgments(
    db: Database, kind: JudgmentKind, dataset: str | None = None, *, study_id: int | None = None, include_undone: bool = False
) -> list[Judgment]:
    """Stored judgments of ``kind``, oldest first; only those that count unless ``include_undone``;
    of ``dataset`` and ``study_id`` where given."""
    table = _TABLES[kind]
    query = select(table)
    if dataset is not None:
        query = query.where(table.c.dataset == dataset)
    if study_id is not None:
        query = query.where(table.c.study_id == study_id)
    if not include_undone:
        query = query.where(table.c.undone_at.is_(None))
    with db.reading() as conn:
        rows = conn.execute(query.order_by(table.c.id)).mappings().all()
    return [_judgment(kind, row) for row in rows]
