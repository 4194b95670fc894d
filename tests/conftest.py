"""Test-wide setup: paths to the shared datasets and the bundled samples."""

from __future__ import annotations

from prefeval_core.runtime import configure_jax

# Before any test imports JAX: the decision engine's golden values are stated for x64.
configure_jax(x64=True, host_devices=2)

import os  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_DATA = ROOT / "sample_data"
SHARED_DATA = Path(os.environ.get("PREFEVAL_SHARED_DATA", ROOT.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The workplace's shared datasets (``../shared/data``); CI always has them."""
    if not SHARED_DATA.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"shared datasets not found at {SHARED_DATA}")
        pytest.skip(f"shared datasets not found at {SHARED_DATA} (set PREFEVAL_SHARED_DATA)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def summeval(shared_data: Path):
    from prefeval_core.data.dataset import load_dataset

    return load_dataset(shared_data / "summeval")


# --- PostgreSQL for the store tests (owner: store) -----------------------------------------
# A throwaway cluster for the whole session (tests/postgres_cluster.py); the store tests run
# on both engines through `store_url`. Under CI a cluster that cannot start fails the run.


@pytest.fixture(scope="session")
def postgres_cluster():
    from tests.postgres_cluster import PostgresCluster, PostgresUnavailable

    try:
        cluster = PostgresCluster.start()
    except PostgresUnavailable as error:
        if os.environ.get("CI"):
            pytest.fail(f"PostgreSQL is needed for the store tests: {error}")
        pytest.skip(f"PostgreSQL unavailable: {error}")
    yield cluster
    cluster.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of an empty store: a SQLite file in ``tmp_path``, or a fresh PostgreSQL schema."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'annotations.sqlite'}"
    return request.getfixturevalue("postgres_cluster").fresh_database()


# --- end of PostgreSQL for the store tests -------------------------------------------------
