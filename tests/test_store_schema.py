"""The store's schema: created on first use, versioned, the round-1 SQLite file migrated without
losing a row; where the store lives (data folder, database URL); opened once per process."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest
from sqlalchemy import inspect, text

from prefeval_core.annotation.left_right import make_comparison
from prefeval_core.errors import SettingsError
from prefeval_core.store import DATABASE_URL_ENV, SCHEMA_VERSION, Rating, Store, StoreError, open_store, utc_now
from prefeval_core.store.engine import store_url

ROUND_1_SCHEMA = """
CREATE TABLE annotations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    dataset TEXT NOT NULL, item_id TEXT NOT NULL, system_a TEXT NOT NULL, system_b TEXT NOT NULL,
    outcome INTEGER NOT NULL CHECK (outcome IN (0, 1, 2)),
    annotator TEXT NOT NULL, left_system TEXT NOT NULL, created_at TEXT NOT NULL, undone_at TEXT,
    CHECK (system_a < system_b), CHECK (left_system IN (system_a, system_b))
);
CREATE INDEX annotations_dataset ON annotations (dataset, undone_at);
"""
"""The round-1 store's table, as round 1 created it."""

ROUND_1_ROWS = [
    ("sample:summeval", "i1", "M0", "M1", 0, "ann", "M1", "2026-11-20T10:00:00.000+00:00", None),
    ("sample:summeval", "i1", "M0", "M1", 0, "ann", "M1", "2026-11-20T10:00:00.000+00:00", None),  # imported twice in round 1
    ("sample:summeval", "i2", "M0", "M1", 2, "bob", "M0", "2026-11-20T10:01:00.000+00:00", "2026-11-20T10:02:00.000+00:00"),
    ("upload:ab12", "naïve ✓", "Ä", "Ö", 1, "zoë", "Ö", "2026-11-20T10:03:00.000+00:00", None),
]


def round_1_store(folder: Path, schema: str = ROUND_1_SCHEMA) -> Path:
    path = folder / "annotations.sqlite"
    with sqlite3.connect(path) as conn:
        conn.executescript(schema)
        conn.executemany(
            "INSERT INTO annotations (dataset, item_id, system_a, system_b, outcome, annotator, left_system, created_at, undone_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            ROUND_1_ROWS,
        )
    conn.close()
    return path


def test_the_round_1_store_migrates_without_losing_a_row(tmp_path: Path) -> None:
    round_1_store(tmp_path)
    store = Store.at(f"sqlite:///{tmp_path / 'annotations.sqlite'}")
    assert store.schema_version == SCHEMA_VERSION == 2
    migrated = store.comparisons(include_undone=True)
    assert [(c.id, c.dataset, c.item_id, c.system_a, c.system_b, c.outcome, c.annotator, c.left_system, c.created_at, c.undone_at)
            for c in migrated] == [(k + 1, *row) for k, row in enumerate(ROUND_1_ROWS)]  # fmt: skip
    assert {c.origin for c in migrated} == {"legacy"} and len({c.identity for c in migrated}) == 4
    with store.db.reading() as conn:
        assert not inspect(conn).has_table("annotations")
        assert conn.execute(text("SELECT version FROM schema_version ORDER BY version")).scalars().all() == [1, 2]
        assert inspect(conn).has_table("secrets") and inspect(conn).has_table("invitations")
    # The round-1 duplicate stays (no row is dropped) but counts once: the annotator's latest judgment.
    assert store.complete_comparisons("sample:summeval")[["item_id", "judgments"]].values.tolist() == [["i1", 1]]
    new = store.add(make_comparison("sample:summeval", "i3", "M0", "M1", "left", "ann", left_system="M0"))
    assert new.id == 5  # ids continue after the old ones
    store.dispose()
    again = Store.at(f"sqlite:///{tmp_path / 'annotations.sqlite'}")  # opening again migrates nothing
    assert len(again.comparisons(include_undone=True)) == 5
    again.dispose()


def test_a_failed_migration_leaves_the_round_1_store_as_it_was(tmp_path: Path) -> None:
    # A round-1 file whose table lacked the checks and holds an outcome the new table refuses.
    path = round_1_store(tmp_path, ROUND_1_SCHEMA.replace("CHECK (outcome IN (0, 1, 2))", ""))
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE annotations SET outcome = 7 WHERE id = 4")
    conn.close()
    with pytest.raises(StoreError, match="could not write the annotation store"):
        Store.at(f"sqlite:///{path}")
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM annotations").fetchone() == (4,)
        assert conn.execute("SELECT name FROM sqlite_master WHERE name IN ('comparisons', 'schema_version')").fetchall() == []
    conn.close()


def test_a_store_from_a_newer_prefeval_is_refused(store_url: str) -> None:
    store = Store.at(store_url)
    with store.db.writing() as conn:
        conn.execute(text("INSERT INTO schema_version (version, applied_at) VALUES (3, 'later')"))
    store.dispose()
    with pytest.raises(StoreError, match="schema version 3; this prefeval reads versions up to 2"):
        Store.at(store_url)


def test_a_version_1_store_gains_the_criterion_and_the_team_tables_without_losing_a_row(store_url: str) -> None:
    store = Store.at(store_url)
    study = store.create_study("sample:summeval", "fp", "old study", "{}")
    store.add(Rating("sample:summeval", "i1", "M0", 4.0, "ann", utc_now(), study_id=study.id))
    with store.db.writing() as conn:  # back to version 1: no criterion column, no team tables
        conn.execute(text("DROP TABLE invitations"))
        conn.execute(text("DROP TABLE study_details"))
        for table in ("comparisons", "ratings"):
            conn.execute(text(f"ALTER TABLE {table} DROP COLUMN criterion"))
        conn.execute(text("DELETE FROM schema_version WHERE version = 2"))
    store.dispose()
    migrated = Store.at(store_url)
    assert migrated.schema_version == 2
    [old] = migrated.ratings()
    assert (old.item_id, old.score, old.annotator, old.criterion) == ("i1", 4.0, "ann", None)
    new = migrated.add(Rating("sample:summeval", "i2", "M0", 2.0, "ann", utc_now(), study_id=study.id, criterion="relevance"))
    assert [r.criterion for r in migrated.ratings()] == [None, "relevance"] and new.criterion == "relevance"
    with migrated.db.reading() as conn:
        assert inspect(conn).has_table("invitations") and inspect(conn).has_table("study_details")
    migrated.dispose()


def test_where_the_store_lives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PREFEVAL_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv(DATABASE_URL_ENV, raising=False)
    assert store_url().database == str(tmp_path / "data" / "annotations.sqlite")
    monkeypatch.setenv(DATABASE_URL_ENV, "postgresql://ann:secret@db.example:5432/prefeval")
    url = store_url()
    assert url.drivername == "postgresql+psycopg" and url.host == "db.example"
    assert store_url(tmp_path / "here").database == str(tmp_path / "here" / "annotations.sqlite")  # a folder given wins
    for bad, message in [("mysql://x@y/z", "runs on postgresql\\+psycopg or sqlite"), ("not a url", "not a database URL")]:
        monkeypatch.setenv(DATABASE_URL_ENV, bad)
        with pytest.raises(SettingsError, match=message):
            store_url()


def test_the_store_is_opened_once_per_process(tmp_path: Path) -> None:
    first = open_store(tmp_path / "a")
    assert open_store(tmp_path / "a") is first
    assert open_store(tmp_path / "b") is not first
    assert (tmp_path / "a" / "annotations.sqlite").exists()


def test_an_unreachable_database_is_a_clear_error() -> None:
    with pytest.raises(StoreError, match=r"could not read the annotation store postgresql\+psycopg://postgres@127.0.0.1:1/none"):
        Store.at("postgresql+psycopg://postgres@127.0.0.1:1/none")


def test_a_store_opened_while_another_process_writes_its_file_waits_and_switches_to_wal(tmp_path: Path) -> None:
    # Switching a file to WAL needs it to itself, and SQLite answers "database is locked" at once
    # (no busy_timeout) while another connection holds a write lock: CI saw it when two importers
    # opened a new store together. The opener must wait for the writer, as for any other lock.
    path = round_1_store(tmp_path)
    writer = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("UPDATE annotations SET annotator = annotator")
    probe = sqlite3.connect(path, timeout=5)
    with pytest.raises(sqlite3.OperationalError, match="locked"):  # the failure the store must absorb
        probe.execute("PRAGMA journal_mode=WAL")
    probe.close()
    release = threading.Timer(0.5, lambda: writer.execute("COMMIT"))
    release.start()
    store = Store.at(f"sqlite:///{path}")
    release.join()
    writer.close()
    assert len(store.comparisons(include_undone=True)) == len(ROUND_1_ROWS)
    with store.db.reading() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    store.db.dispose()


def test_a_version_1_store_gains_the_secrets_table(store_url: str) -> None:
    store = Store.at(store_url)
    with store.db.writing() as conn:  # back to version 1, as the previous prefeval left it
        conn.execute(text("DROP TABLE secrets"))
        conn.execute(text("DELETE FROM schema_version WHERE version = 2"))
    store.dispose()
    again = Store.at(store_url)
    assert again.schema_version == 2
    secret = again.secret("d", 1)
    assert len(secret) == 32 and again.secret("d", 1) == secret and again.secret("d", 2) != secret
    again.dispose()


def test_an_empty_file_is_not_a_new_store(tmp_path: Path) -> None:
    path = tmp_path / "annotations.sqlite"
    path.write_bytes(b"")
    with pytest.raises(StoreError, match=f"the store {path} is an empty file \\(0 bytes\\), not a prefeval store"):
        Store.at(f"sqlite:///{path}")
    assert path.stat().st_size == 0  # left as it was


def test_another_programs_database_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "places.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT)")
    conn.close()
    with pytest.raises(StoreError, match=r"places\.sqlite is not a prefeval store: it holds other tables \(moz_places\)"):
        Store.at(f"sqlite:///{path}")
    with sqlite3.connect(path) as conn:
        assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")] == ["moz_places"]
    conn.close()
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"this is a text file, not a database\n" * 200)
    with pytest.raises(StoreError, match=r"garbage\.sqlite: file is not a database"):
        Store.at(f"sqlite:///{garbage}")


def test_a_new_store_file_is_a_database_from_the_start(tmp_path: Path) -> None:
    path = tmp_path / "new" / "annotations.sqlite"
    Store.at(f"sqlite:///{path}").dispose()
    assert path.read_bytes().startswith(b"SQLite format 3\x00")
    assert [p.name for p in path.parent.iterdir() if p.name.endswith(".new")] == []


def test_a_new_store_file_without_hard_links(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import errno
    import os

    def no_links(source: object, target: object) -> None:
        raise OSError(errno.EPERM, "hard links are not supported here")

    monkeypatch.setattr(os, "link", no_links)
    path = tmp_path / "annotations.sqlite"
    store = Store.at(f"sqlite:///{path}")
    assert store.schema_version == SCHEMA_VERSION and path.read_bytes().startswith(b"SQLite format 3\x00")
    store.dispose()
    (tmp_path / "a-file").write_text("x")
    with pytest.raises(StoreError, match=r"could not create the annotation store .*a-file"):
        Store.at(f"sqlite:///{tmp_path / 'a-file' / 'annotations.sqlite'}")  # its folder is a file


def test_a_first_migration_committed_between_the_checks_reads_is_still_a_store(store_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two processes open a new store at once: the other's first migration commits right after this
    one's first look at the database. Its tables and its version row appear together, so the store
    is recognised, not refused as another program's database (a race seen once on PostgreSQL, whose
    statements each see what is committed when they start; a SQLite reader keeps one snapshot)."""
    from sqlalchemy.engine import make_url

    from prefeval_core.store import schema
    from prefeval_core.store.engine import connect

    url = make_url(store_url)
    reader, other = connect(url), connect(url)
    real_inspect = schema.inspect
    looks: list[str] = []

    class MigratedByTheOtherAfterTheFirstLook:
        def __init__(self, inspector: object) -> None:
            self.inspector = inspector

        def __getattr__(self, name: str) -> object:
            def look(*args: object, **kwargs: object) -> object:
                answer = getattr(self.inspector, name)(*args, **kwargs)
                if not looks:
                    looks.append(name)
                    schema.ensure_schema(other)  # commits every table and the version row at once
                return answer

            return look

    monkeypatch.setattr(schema, "inspect", lambda conn: MigratedByTheOtherAfterTheFirstLook(real_inspect(conn)))
    with reader.engine.connect() as conn:
        schema.check_is_store(conn, "the reader's store")  # must not raise
    assert looks  # the other migration did run between the reader's looks
    monkeypatch.setattr(schema, "inspect", real_inspect)
    assert schema.ensure_schema(reader) == SCHEMA_VERSION
    reader.engine.dispose()
    other.engine.dispose()
