"""The store's tables, their version, and the way from older versions to this one.

Version history (``schema_version`` holds one row per version applied, with its time):

* 0: the first layout, one table ``annotations`` (comparisons only; or nothing at all).
* 1: ``comparisons`` and ``ratings`` (judgments with study, request, origin, identity; a unique
  index over the identities of the judgments not undone), ``studies`` and ``study_states``.
  Migrating from 0 copies every ``annotations`` row into ``comparisons`` (same id, identity
  ``legacy:<id>``, undo marks kept), checks the count, and drops the old table, all in one
  transaction.
* 2: ``criterion`` on every judgment (what it judged, e.g. ``relevance``); ``study_details`` (a
  study's criterion, guidelines, kind and archive mark) and ``invitations`` (annotator links: a
  hash of each token, never the token), ``session_data`` (a session's uploaded data, by digest, so a
  reload finds it), and ``secrets``: one random key per scope (a study, or a data key outside
  studies) that makes the opaque tokens and row digests of blind files
  (:mod:`prefeval_core.store.secrets`). Migrating from 1 adds the column and the tables; every
  stored judgment and study keeps its rows (criterion empty: not recorded then).

A database that is not a store is refused, never written to: a file of 0 bytes, or one whose
tables are another program's (:func:`check_is_store`).

Schema work runs under a lock (SQLite's write lock, a PostgreSQL advisory lock), so processes
opening a new store at the same time create it once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from sqlalchemy import (
    CheckConstraint,
    Column,
    Connection,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    SmallInteger,
    Table,
    Text,
    func,
    inspect,
    select,
    text,
)

from prefeval_core.store.engine import Database, StoreError
from prefeval_core.store.records import request_id_for, utc_now

SCHEMA_VERSION: Final = 2
"""The version this prefeval writes."""
_ADVISORY_LOCK: Final = 7_042_013_001
"""PostgreSQL advisory lock key held while the schema is created or migrated."""

metadata = MetaData()

schema_version = Table(
    "schema_version",
    metadata,
    Column("version", Integer, primary_key=True, autoincrement=False),
    Column("applied_at", Text, nullable=False),
)

studies = Table(
    "studies",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("dataset", Text, nullable=False),
    Column("dataset_fingerprint", Text, nullable=False),
    Column("name", Text, nullable=False),
    Column("setup_json", Text, nullable=False),
    Column("judgments_per_item", Integer, nullable=False),
    Column("created_at", Text, nullable=False),
    CheckConstraint("judgments_per_item >= 1", name="studies_per_item"),
    Index("studies_dataset", "dataset", "id"),
    sqlite_autoincrement=True,
)

study_states = Table(
    "study_states",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("study_id", Integer, ForeignKey("studies.id"), nullable=False),
    Column("round", Integer, nullable=False),
    Column("kind", Text, nullable=False),
    Column("state_json", Text, nullable=False),
    Column("request_json", Text),
    Column("cost", Float(53)),
    Column("restores", Integer, ForeignKey("study_states.id")),
    Column("created_at", Text, nullable=False),
    CheckConstraint("round >= 0", name="study_states_round"),
    Index("study_states_study", "study_id", "id"),
    sqlite_autoincrement=True,
)


def _judgment_columns() -> list[Column]:
    """Columns every judgment has (each table needs its own Column objects)."""
    return [
        Column("id", Integer, primary_key=True),
        Column("identity", Text, nullable=False),
        Column("dataset", Text, nullable=False),
        Column("study_id", Integer, ForeignKey("studies.id")),
        Column("request_id", Text, nullable=False),
        Column("item_id", Text, nullable=False),
        Column("annotator", Text, nullable=False),
        Column("origin", Text, nullable=False),
        Column("created_at", Text, nullable=False),
        Column("undone_at", Text),
        Column("criterion", Text),
    ]


def _judgment_indexes(name: str) -> list[Index | CheckConstraint]:
    live = text("undone_at IS NULL")
    return [
        # One live judgment per identity; an undone one no longer blocks a new one.
        Index(f"{name}_identity", "identity", unique=True, sqlite_where=live, postgresql_where=live),
        Index(f"{name}_dataset", "dataset", "study_id", "id"),
        CheckConstraint("origin IN ('app', 'import', 'legacy')", name=f"{name}_origin"),
    ]


comparisons = Table(
    "comparisons",
    metadata,
    *_judgment_columns(),
    Column("system_a", Text, nullable=False),
    Column("system_b", Text, nullable=False),
    Column("outcome", SmallInteger, nullable=False),
    Column("label", Text),
    Column("left_system", Text, nullable=False),
    *_judgment_indexes("comparisons"),
    CheckConstraint("outcome IN (0, 1, 2)", name="comparisons_outcome"),
    CheckConstraint("label IS NULL OR (label = 'both_bad' AND outcome = 1)", name="comparisons_label"),
    CheckConstraint("left_system IN (system_a, system_b)", name="comparisons_left"),
    # Canonical pairs in Python's (code point) order: SQLite compares bytes; PostgreSQL needs the C collation.
    CheckConstraint("system_a < system_b", name="comparisons_canonical").ddl_if(dialect="sqlite"),
    CheckConstraint('system_a < system_b COLLATE "C"', name="comparisons_canonical").ddl_if(dialect="postgresql"),
    sqlite_autoincrement=True,
)

ratings = Table(
    "ratings",
    metadata,
    *_judgment_columns(),
    Column("system", Text, nullable=False),
    Column("score", Float(53), nullable=False),
    *_judgment_indexes("ratings"),
    sqlite_autoincrement=True,
)

study_details = Table(
    "study_details",
    metadata,
    Column("study_id", Integer, ForeignKey("studies.id"), primary_key=True, autoincrement=False),
    Column("criterion", Text, nullable=False),
    Column("guidelines", Text, nullable=False),
    Column("kind", Text, nullable=False),
    Column("archived_at", Text),
    CheckConstraint("kind IN ('live', 'replay')", name="study_details_kind"),
)

invitations = Table(
    "invitations",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("study_id", Integer, ForeignKey("studies.id"), nullable=False),
    Column("annotator", Text, nullable=False),
    Column("token_hash", Text, nullable=False, unique=True),
    Column("created_at", Text, nullable=False),
    Column("revoked_at", Text),
    Index("invitations_study", "study_id", "id"),
    sqlite_autoincrement=True,
)

session_data = Table(
    "session_data",
    metadata,
    Column("digest", Text, primary_key=True),
    Column("data_json", Text, nullable=False),
    Column("created_at", Text, nullable=False),
)

secrets = Table(
    "secrets",
    metadata,
    Column("scope", Text, primary_key=True),
    Column("secret", Text, nullable=False),
    Column("created_at", Text, nullable=False),
)

_LEGACY_TABLE: Final = "annotations"


def current_version(conn: Connection) -> int:
    """The schema version of the store on ``conn`` (0 for an empty store or one in the first layout)."""
    if not inspect(conn).has_table(schema_version.name):
        return 0
    return int(conn.execute(select(func.max(schema_version.c.version))).scalar_one() or 0)


def check_is_store(conn: Connection, where: str) -> None:
    """Refuse a database that holds tables but none of a store's (another program's database).

    Raises:
        StoreError: naming the database and a few of its tables.
    """
    # The table list first, then the version: another process's migration commits its tables and its
    # version row together, so a list taken before the version query cannot show its tables without it.
    tables = sorted(inspect(conn).get_table_names())
    if schema_version.name in tables and current_version(conn):
        return
    if tables and _LEGACY_TABLE not in tables:
        shown = ", ".join(tables[:5]) + (", ..." if len(tables) > 5 else "")
        message = f"{where} is not a prefeval store: it holds other tables ({shown}); point the store at its own file or database"
        raise StoreError.single("not_a_store", message)


def ensure_schema(db: Database) -> int:
    """Create or migrate the store's tables up to :data:`SCHEMA_VERSION`; returns the version.

    Raises:
        StoreError: the store was written by a newer prefeval (a higher schema version), or
            the database is another program's (:func:`check_is_store`).
    """
    with db.reading() as conn:
        check_is_store(conn, db.where)
        version = current_version(conn)
    if version == SCHEMA_VERSION:
        return version
    with db.writing() as conn:
        if db.dialect == "postgresql":
            conn.execute(select(func.pg_advisory_xact_lock(_ADVISORY_LOCK)))
        check_is_store(conn, db.where)
        version = current_version(conn)  # another process may have migrated meanwhile
        if version > SCHEMA_VERSION:
            message = f"the store {db.where} has schema version {version}; this prefeval reads versions up to {SCHEMA_VERSION}"
            raise StoreError.single("store_too_new", message)
        for step in _MIGRATIONS[version:]:
            step(conn)
            version += 1
            conn.execute(schema_version.insert().values(version=version, applied_at=utc_now()))
    return version


def _to_v1(conn: Connection) -> None:
    """Version 0 -> 1: the new tables; the version-0 ``annotations`` rows become comparisons."""
    metadata.create_all(conn, tables=[schema_version, studies, study_states, comparisons, ratings])
    if not inspect(conn).has_table(_LEGACY_TABLE):
        return
    legacy = conn.execute(text(f"SELECT * FROM {_LEGACY_TABLE} ORDER BY id")).mappings().all()
    kept = ("id", "dataset", "item_id", "system_a", "system_b", "outcome", "annotator", "left_system", "created_at", "undone_at")
    rows = [
        {
            **{k: row[k] for k in kept},
            "identity": f"legacy:{row['id']}",
            "study_id": None,
            "request_id": request_id_for(row["dataset"], None, row["item_id"], (row["system_a"], row["system_b"])),
            "label": None,
            "origin": "legacy",
        }
        for row in legacy
    ]
    if rows:
        conn.execute(comparisons.insert(), rows)
    copied = conn.execute(select(func.count()).select_from(comparisons).where(comparisons.c.origin == "legacy")).scalar_one()
    if copied != len(legacy):  # never drop the old table unless every row arrived
        raise StoreError.single("migration_failed", f"migrating the version-0 annotations table copied {copied} of {len(legacy)} rows")
    conn.execute(text(f"DROP TABLE {_LEGACY_TABLE}"))


def _to_v2(conn: Connection) -> None:
    """Version 1 -> 2: ``criterion`` on both judgment tables (unless a store created at version 2
    tables already has it), the tables ``study_details``, ``invitations``, ``session_data`` and
    ``secrets`` (filled on first use, one key per scope)."""
    for table in (comparisons, ratings):
        if "criterion" not in {c["name"] for c in inspect(conn).get_columns(table.name)}:
            conn.execute(text(f"ALTER TABLE {table.name} ADD COLUMN criterion TEXT"))
    metadata.create_all(conn, tables=[study_details, invitations, session_data, secrets])


_MIGRATIONS: Final[tuple[Callable[[Connection], None], ...]] = (_to_v1, _to_v2)
"""``_MIGRATIONS[v]`` takes a store from version ``v`` to ``v + 1``."""
