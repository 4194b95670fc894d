"""The store under concurrent writers, kill -9 and concurrent imports, on SQLite and PostgreSQL:
the fast subset of the campaign in ``store_campaign.py`` (``bench/bench_store.py`` runs it in full)."""

from __future__ import annotations

from pathlib import Path

from tests.reliability.store_campaign import concurrent_imports, concurrent_writers, kill_imports, kill_writers, resumed_study

KILLS_PER_ENGINE = 6
"""Writers killed with SIGKILL per engine (12 in a run of the suite)."""


def test_four_concurrent_writers_lose_and_duplicate_nothing(store_url: str) -> None:
    figures = concurrent_writers(store_url, writers=4, per_writer=500)
    assert (figures.reported, figures.stored, figures.lost, figures.duplicated) == (2000, 2000, 0, 0)


def test_writers_killed_mid_stream_lose_nothing_they_reported(store_url: str) -> None:
    figures = kill_writers(store_url, kills=KILLS_PER_ENGINE, seed=20261123)
    assert figures.kills == KILLS_PER_ENGINE and figures.reported > 0
    assert (figures.lost, figures.duplicated) == (0, 0)
    assert figures.integrity == ("ok" if store_url.startswith("sqlite") else "n/a")


def test_two_processes_importing_one_file_store_each_judgment_once(store_url: str, tmp_path: Path) -> None:
    figures = concurrent_imports(store_url, tmp_path, rows=300)
    assert (figures.stored, figures.added, figures.already_there) == (300, 300, 300)


def test_a_killed_import_stores_all_or_nothing(store_url: str, tmp_path: Path) -> None:
    figures = kill_imports(store_url, tmp_path, kills=2, rows=20_000, seed=20261123)
    assert figures.partial == 0 and figures.complete + figures.empty == 2


def test_a_study_written_by_one_process_is_resumed_by_another(store_url: str) -> None:
    assert resumed_study(store_url) == {
        "latest_round": 3, "latest_state": '{"round": 3}', "undo_round": 2, "undo_state": '{"round": 2}',
        "per_item": 2, "summary_rounds": 2, "summary_cost": 20.0,
    }  # fmt: skip
