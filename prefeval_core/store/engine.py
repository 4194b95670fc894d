"""Where the store lives and how it is reached: one SQLAlchemy Engine per store.

* **SQLite** (the default): one file ``annotations.sqlite`` in the data folder
  (``$PREFEVAL_DATA_DIR``, default ``./prefeval_data``). WAL journal, so readers never wait
  for a writer; ``synchronous=FULL``, so a commit is on disk before it returns; every write
  transaction starts with ``BEGIN IMMEDIATE``, so concurrent writers queue for the lock (up to
  :data:`LOCK_TIMEOUT_S`) instead of failing half-way.
* **PostgreSQL** when ``$PREFEVAL_DATABASE_URL`` is set (``postgresql+psycopg://user@host:port/db``,
  psycopg 3), for a team: several annotators on their own machines, a lead watching.

A store is created only where no file exists: a new SQLite file is made complete (its header
written) under a temporary name and linked into place, so no process ever sees it half-made, and
a file that exists but is empty (0 bytes) is refused, never taken for a new store.

A write is one transaction: committed when :meth:`Database.writing` exits without error,
rolled back otherwise (also when the process is killed mid-way).
"""

from __future__ import annotations

import os
import sqlite3
import time
import uuid
from collections.abc import Iterator
from contextlib import closing, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from sqlalchemy import Connection, Engine, create_engine, event, make_url
from sqlalchemy.engine import URL
from sqlalchemy.exc import ArgumentError, DBAPIError

from prefeval_core.errors import PrefevalError, settings_error

DATA_DIR_ENV: Final = "PREFEVAL_DATA_DIR"
"""Environment variable naming the local data folder (tests point it at a temporary folder)."""
DATABASE_URL_ENV: Final = "PREFEVAL_DATABASE_URL"
"""Environment variable with a database URL (``postgresql+psycopg://...``); unset: SQLite in the data folder."""
STORE_FILE: Final = "annotations.sqlite"
"""The SQLite file's name in the data folder (also a version-0 store's name: its file migrates in place)."""
LOCK_TIMEOUT_S: Final = 60.0
"""How long a SQLite writer waits for another writer's lock before giving up."""

Dialect = Literal["sqlite", "postgresql"]
_WRITE_OPTION: Final = "prefeval_write"
_WAL_RETRY_S: Final = 0.05


class StoreError(PrefevalError, RuntimeError):
    """The store cannot be reached, written or read (database down, lock held too long, a
    schema from a newer prefeval); the message names the store."""


def default_data_dir() -> Path:
    """``$PREFEVAL_DATA_DIR`` if set, else ``./prefeval_data`` (git-ignored)."""
    return Path(os.environ.get(DATA_DIR_ENV) or "prefeval_data")


def store_url(data_dir: Path | str | None = None) -> URL:
    """The store's URL: SQLite in ``data_dir`` if given, else ``$PREFEVAL_DATABASE_URL`` if
    set, else SQLite in :func:`default_data_dir`.

    Raises:
        SettingsError: the URL cannot be read or names a database other than SQLite/PostgreSQL.
    """
    if data_dir is None and os.environ.get(DATABASE_URL_ENV):
        return database_url(os.environ[DATABASE_URL_ENV])
    folder = Path(data_dir) if data_dir is not None else default_data_dir()
    return URL.create("sqlite", database=str(folder / STORE_FILE))


def database_url(text: str) -> URL:
    """A database URL from its text: ``postgresql[+psycopg]://...`` (psycopg 3 is the driver) or ``sqlite:///path``.

    Raises:
        SettingsError: not a URL, or a database other than PostgreSQL and SQLite.
    """
    try:
        url = make_url(text)
    except ArgumentError:
        expected = "expected postgresql+psycopg://user@host:port/database"
        raise settings_error(f"{DATABASE_URL_ENV} is not a database URL: {expected}", field=DATABASE_URL_ENV) from None
    if url.drivername in ("postgresql", "postgres", "postgresql+psycopg"):
        return url.set(drivername="postgresql+psycopg")
    if url.drivername in ("sqlite", "sqlite+pysqlite"):
        return url
    message = f"{DATABASE_URL_ENV} names '{url.drivername}': the store runs on postgresql+psycopg or sqlite"
    raise settings_error(message, field=DATABASE_URL_ENV)


@dataclass(frozen=True)
class Database:
    """An Engine and the two ways to use it: :meth:`reading` and :meth:`writing`."""

    engine: Engine

    @property
    def dialect(self) -> Dialect:
        return "postgresql" if self.engine.dialect.name == "postgresql" else "sqlite"

    @property
    def where(self) -> str:
        """The store's URL without its password, for messages."""
        return self.engine.url.render_as_string(hide_password=True)

    @contextmanager
    def reading(self) -> Iterator[Connection]:
        """A connection for reads (one consistent snapshot on SQLite; rolled back on exit)."""
        with self._failures("read"), self.engine.connect() as conn:
            yield conn

    @contextmanager
    def writing(self) -> Iterator[Connection]:
        """A write transaction: committed on a normal exit, rolled back on an error."""
        with self._failures("write"), self.engine.connect() as conn:
            conn.execution_options(**{_WRITE_OPTION: True})
            with conn.begin():
                yield conn

    @contextmanager
    def _failures(self, verb: str) -> Iterator[None]:
        try:
            yield
        except DBAPIError as error:
            cause = str(error.orig).strip().splitlines()[0] if error.orig is not None else str(error)
            raise StoreError.single("store_failed", f"could not {verb} the annotation store {self.where}: {cause}") from error

    def dispose(self) -> None:
        """Close the Engine's pooled connections (tests, benchmarks; the app keeps one Engine)."""
        self.engine.dispose()


def connect(url: URL) -> Database:
    """A :class:`Database` for ``url`` (no schema work; see :func:`prefeval_core.store.schema.ensure_schema`).
    A SQLite file's folder is created if absent."""
    if url.get_backend_name() == "postgresql":
        try:
            return Database(create_engine(url, pool_pre_ping=True))
        except ModuleNotFoundError:  # psycopg is the optional `postgres` extra
            raise StoreError.single("store_failed", "PostgreSQL needs psycopg: pip install 'prefeval[postgres]'") from None
    if url.database and url.database != ":memory:":
        _sqlite_file(Path(url.database))
    engine = create_engine(url, connect_args={"timeout": LOCK_TIMEOUT_S})
    event.listen(engine, "connect", _sqlite_connect)
    event.listen(engine, "begin", _sqlite_begin)
    return Database(engine)


def _sqlite_file(path: Path) -> None:
    """Make a new store's file where none exists (complete, then linked into place: another
    process opening the store at the same time sees no file or a whole one).

    Raises:
        StoreError: the path exists but is no SQLite database (0 bytes, or not a file).
    """
    if path.exists():
        if not path.is_file() or path.stat().st_size == 0:
            what = "an empty file (0 bytes)" if path.is_file() else "not a file"
            message = f"the store {path} is {what}, not a prefeval store; remove it, or point the store at another folder"
            raise StoreError.single("not_a_store", message)
        return
    draft = path.with_name(f".{path.name}.{uuid.uuid4().hex}.new")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with closing(sqlite3.connect(draft)) as conn:
            conn.execute("PRAGMA journal_mode=WAL")  # writes the header: the file is a database from the start
        _place(draft, path)
    except (OSError, sqlite3.Error) as error:
        raise StoreError.single("store_failed", f"could not create the annotation store {path}: {error}") from None
    finally:
        with suppress(OSError):  # (no draft where the folder could not be made)
            draft.unlink(missing_ok=True)


def _place(draft: Path, path: Path) -> None:
    """``draft`` linked as ``path`` unless that exists by now (another process made it: theirs is used)."""
    try:
        os.link(draft, path)
    except FileExistsError:
        pass
    except OSError:  # a file system without hard links: create it exclusively, with the draft's bytes
        try:
            with path.open("xb") as out:
                out.write(draft.read_bytes())
        except FileExistsError:
            pass


def _sqlite_connect(dbapi_connection: Any, _record: object) -> None:
    # pysqlite's own implicit BEGIN is deferred and starts only at the first write; turn it off
    # and emit BEGIN ourselves (below), as SQLAlchemy's SQLite documentation recommends.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        for pragma in (f"busy_timeout={int(LOCK_TIMEOUT_S * 1000)}", "synchronous=FULL", "foreign_keys=ON"):
            cursor.execute(f"PRAGMA {pragma}")
        _use_wal(cursor)
    finally:
        cursor.close()


def _use_wal(cursor: Any) -> None:
    # WAL is a property of the file. Switching to it needs the file to itself and SQLite does not
    # wait on busy_timeout for that (it would deadlock), so two processes opening a new store at
    # once can see "database is locked": retry until one of them has switched the file.
    deadline = time.monotonic() + LOCK_TIMEOUT_S
    while True:
        try:
            if str(cursor.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
                cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as error:
            held_by_another = "locked" in str(error) or "busy" in str(error)
            if not held_by_another or time.monotonic() > deadline:
                raise
            time.sleep(_WAL_RETRY_S)


def _sqlite_begin(conn: Connection) -> None:
    # A deferred transaction that reads and then writes cannot wait for the lock (SQLITE_BUSY at
    # once); writers take it up front and queue on busy_timeout instead.
    conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get(_WRITE_OPTION) else "BEGIN")
