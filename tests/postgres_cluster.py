"""A throwaway PostgreSQL cluster for the store's tests and benchmark.

``initdb`` into a temporary folder, then ``pg_ctl start`` on a free port of 127.0.0.1 with the
socket in that folder; run as the ``postgres`` system user when we are root (the server refuses
to run as root). Binaries: ``initdb`` on the PATH (the machine image has them in /usr/local/bin)
or Debian's ``/usr/lib/postgresql/<version>/bin`` (``apt-get install postgresql``, which
``scripts/run-tests.sh`` does when they are missing). Each test gets a fresh schema.
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, text

RUN_AS = "postgres"
"""The system user that runs the server when we are root."""


class PostgresUnavailable(RuntimeError):
    """No PostgreSQL binaries, or the server would not start (the message says which)."""


def postgres_bindir() -> Path:
    """The folder holding ``initdb`` and ``pg_ctl``."""
    on_path = shutil.which("initdb")
    candidates = ([on_path] if on_path else []) + sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)
    for initdb in candidates:
        folder = Path(initdb).parent
        if (folder / "pg_ctl").exists():
            return folder
    raise PostgresUnavailable("no PostgreSQL binaries (initdb, pg_ctl) on PATH or in /usr/lib/postgresql/*/bin")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class PostgresCluster:
    """A running throwaway cluster; :meth:`stop` removes it."""

    root: Path
    bindir: Path
    port: int
    _schemas: itertools.count

    @property
    def _run_as_other(self) -> bool:
        return os.geteuid() == 0

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        extra: dict[str, Any] = {"user": RUN_AS, "cwd": self.root} if self._run_as_other else {"cwd": self.root}
        return subprocess.run(list(args), capture_output=True, text=True, timeout=120, **extra)

    @classmethod
    def start(cls) -> PostgresCluster:
        """Initialise and start a cluster (about 3 s).

        Raises:
            PostgresUnavailable: no binaries, no ``postgres`` user while root, or the server failed.
        """
        bindir = postgres_bindir()
        root = Path(tempfile.mkdtemp(prefix="prefeval-pg-"))
        if os.geteuid() == 0:
            try:
                user = pwd.getpwnam(RUN_AS)
            except KeyError:
                raise PostgresUnavailable(f"running as root and there is no '{RUN_AS}' user to run the server") from None
            os.chown(root, user.pw_uid, user.pw_gid)
        cluster = cls(root, bindir, 0, itertools.count(1))
        init = cluster._run(str(bindir / "initdb"), "-D", str(root / "data"), "-A", "trust", "-U", "postgres", "-E", "UTF8")
        if init.returncode != 0:
            shutil.rmtree(root, ignore_errors=True)
            raise PostgresUnavailable(f"initdb failed: {init.stderr.strip()[-500:]}")
        for _attempt in range(5):  # a free port can be taken by someone else before the server binds it
            cluster.port = _free_port()
            options = f"-p {cluster.port} -h 127.0.0.1 -k {root}"
            started = cluster._run(str(bindir / "pg_ctl"), "-D", str(root / "data"), "-o", options, "-l", str(root / "log"), "-w", "start")
            if started.returncode == 0:
                return cluster
        log = (root / "log").read_text(errors="replace")[-800:] if (root / "log").exists() else started.stderr
        shutil.rmtree(root, ignore_errors=True)
        raise PostgresUnavailable(f"the PostgreSQL server did not start: {log.strip()}")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"

    def fresh_database(self) -> str:
        """The URL of a new, empty schema of the cluster's database, as the connection's search
        path: an empty store for each test at the cost of a ``CREATE SCHEMA`` (ms, where
        ``CREATE DATABASE`` takes 0.2–1 s)."""
        name = f"prefeval_test_{next(self._schemas)}"
        engine = create_engine(self.url(), isolation_level="AUTOCOMMIT")
        with engine.connect() as conn:
            conn.execute(text(f"CREATE SCHEMA {name}"))
        engine.dispose()
        return f"{self.url()}?options=-csearch_path%3D{name}"

    def stop(self) -> None:
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.root / "data"), "-m", "immediate", "stop")
        shutil.rmtree(self.root, ignore_errors=True)
