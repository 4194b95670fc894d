"""Studies as records, on SQLite and PostgreSQL: an append-only trail, the latest state, undo as a
new record, the list of studies; a study written by one Store is resumed by a fresh one."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from prefeval_core.errors import SettingsError
from prefeval_core.store import Store
from prefeval_core.store.studies import live_stack


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    opened = Store.at(store_url)
    yield opened
    opened.dispose()


def test_a_study_resumes_where_it_stood(store: Store, store_url: str) -> None:
    study = store.create_study("sample:x", "sha-1", "first try", '{"budget": 40}', judgments_per_item=2)
    assert store.latest_state(study.id) is None
    store.append_state(study.id, 0, '{"r": 0}', None, "start", cost=0)
    store.append_state(study.id, 1, '{"r": 1}', '{"items": [1]}', "round", cost=10)
    store.append_state(study.id, 1, '{"r": "1+"}', '{"items": [2]}', "feed", cost=12)
    fresh = Store.at(store_url)  # a restarted server
    assert fresh.study(study.id) == study
    latest = fresh.latest_state(study.id)
    assert latest is not None and (latest.round, latest.kind, latest.state_json, latest.request_json, latest.cost) == (
        1, "feed", '{"r": "1+"}', '{"items": [2]}', 12.0,
    )  # fmt: skip
    fresh.dispose()


def test_undo_goes_back_one_state_at_a_time_and_keeps_the_trail(store: Store) -> None:
    study = store.create_study("d", "fp", "s", "{}")
    assert store.undo_state(study.id) is None  # nothing yet
    start = store.append_state(study.id, 0, "s0", None, "start")
    assert store.undo_state(study.id) is None  # the start is not undone
    one = store.append_state(study.id, 1, "s1", "q1")
    store.append_state(study.id, 2, "s2", "q2", cost=20)
    back = store.undo_state(study.id)
    assert back is not None and (back.kind, back.round, back.state_json, back.request_json) == ("undo", 1, "s1", "q1")
    assert back.restores == one.id
    assert store.latest_state(study.id) == back
    again = store.undo_state(study.id)
    assert again is not None and (again.round, again.state_json, again.restores) == (0, "s0", start.id)
    assert store.undo_state(study.id) is None
    store.append_state(study.id, 1, "s1b", "q1b")  # a new branch after the undos
    assert store.undo_state(study.id).state_json == "s0"
    trail = store.state_trail(study.id)
    assert [r.kind for r in trail] == ["start", "round", "round", "undo", "undo", "round", "undo"]
    assert [r.state_json for r in live_stack(trail)] == ["s0"]


def test_the_list_of_studies_is_newest_first_with_where_each_stands(store: Store) -> None:
    old = store.create_study("d", "fp", "old", "{}")
    store.append_state(old.id, 0, "s0", None, "start", cost=0)
    store.append_state(old.id, 3, "s3", None, cost=30.5)
    new = store.create_study("d", "fp", "new", "{}")
    elsewhere = store.create_study("other", "fp2", "elsewhere", "{}")
    listed = store.list_studies("d")
    assert [(s.study.name, s.rounds, s.cost, s.records) for s in listed] == [("new", 0, None, 0), ("old", 3, 30.5, 2)]
    assert listed[0].updated_at == new.created_at
    assert [s.study.id for s in store.list_studies()] == [elsewhere.id, new.id, old.id]


def test_studies_are_separate(store: Store) -> None:
    one = store.create_study("d", "fp", "one", "{}")
    two = store.create_study("d", "fp", "two", "{}")
    store.append_state(one.id, 0, "one-0", None, "start")
    store.append_state(two.id, 0, "two-0", None, "start")
    store.append_state(one.id, 1, "one-1", None)
    assert store.undo_state(two.id) is None
    assert store.latest_state(one.id).state_json == "one-1" and store.latest_state(two.id).state_json == "two-0"


def test_bad_study_calls_are_refused(store: Store) -> None:
    with pytest.raises(SettingsError, match="no study with id 99"):
        store.append_state(99, 0, "{}")
    with pytest.raises(SettingsError, match="no study with id 99"):
        store.study(99)
    with pytest.raises(SettingsError, match="no study with id 99"):
        store.undo_state(99)
    with pytest.raises(SettingsError, match="judgments per item"):
        store.create_study("d", "fp", "n", "{}", judgments_per_item=0)
    study = store.create_study("d", "fp", "n", "{}")
    with pytest.raises(SettingsError, match="undo_state"):
        store.append_state(study.id, 0, "{}", None, "undo")
