"""Judgments in the store, on SQLite and PostgreSQL: committed at once, idempotent, undo as an
audit trail, filters by dataset and study, complete items, exports with attribution."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator

import pandas as pd
import pytest

from prefeval_core.annotation.left_right import make_comparison
from prefeval_core.errors import BadValueError
from prefeval_core.store import Comparison, Rating, Store, StoreError, export_judgments, utc_now


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    opened = Store.at(store_url)
    yield opened
    opened.dispose()


def rating(item: str, system: str, score: float, who: str, *, dataset: str = "d", study_id: int | None = None) -> Rating:
    return Rating(dataset, item, system, score, who, utc_now(), study_id=study_id)


def test_each_judgment_is_committed_at_once_and_seen_by_a_fresh_store(store: Store, store_url: str) -> None:
    stored = store.add(make_comparison("sample:x", "i1", "M1", "M0", "left", " ann ", left_system="M1"))
    assert stored.id is not None
    fresh = Store.at(store_url)  # as after an app restart
    (back,) = fresh.comparisons("sample:x")
    assert (back.item_id, back.system_a, back.system_b, back.outcome) == ("i1", "M0", "M1", 2)
    assert (back.annotator, back.left_system) == ("ann", "M1")
    assert back == stored
    fresh.dispose()


def test_the_same_judgment_twice_is_stored_once_until_undone(store: Store) -> None:
    first = store.add(make_comparison("d", "i1", "A", "B", "left", "ann", left_system="A"))
    again = store.add(make_comparison("d", "i1", "A", "B", "right", "ann", left_system="A"))  # a second click on the same task
    assert again.id == first.id and again.outcome == 0
    assert len(store.comparisons("d")) == 1
    other = store.add(make_comparison("d", "i1", "A", "B", "right", "bob", left_system="A"))  # another annotator: a judgment of its own
    assert other.id != first.id
    undone = store.undo_last("d", "ann")
    assert undone is not None and undone.id == first.id and undone.undone_at is not None
    rejudged = store.add(make_comparison("d", "i1", "A", "B", "right", "ann", left_system="A"))  # after the undo: allowed
    assert rejudged.id not in (first.id, other.id) and rejudged.outcome == 2
    assert [(c.annotator, c.outcome, c.undone_at is None) for c in store.comparisons("d", include_undone=True)] == [
        ("ann", 0, False),
        ("bob", 2, True),
        ("ann", 2, True),
    ]


def test_add_many_says_how_many_were_already_there(store: Store) -> None:
    batch = [make_comparison("d", f"i{k}", "A", "B", "left", "ann", left_system="B") for k in range(5)]
    batch += [rating(f"i{k}", "A", 3, "ann") for k in range(3)]
    first = store.add_many(batch)
    assert (first.added, first.already_there) == (8, 0)
    again = store.add_many([*batch, *batch[:2], rating("i9", "A", 1, "ann")])
    assert (again.added, again.already_there) == (1, 10)
    assert len(store.comparisons("d")) == 5 and len(store.ratings("d")) == 4
    assert [c.item_id for c in store.comparisons("d")] == [f"i{k}" for k in range(5)]  # in the order given (a file's rows)


def test_imported_judgments_are_identified_by_content(store: Store) -> None:
    def imported(outcome: int) -> Comparison:
        return Comparison("d", "i1", "A", "B", outcome, "ann", "A", utc_now(), origin="import")

    assert store.add_many([imported(0)]).added == 1
    assert store.add_many([imported(0)]).already_there == 1  # the same file again, minutes later
    assert store.add_many([imported(2)]).added == 1  # a corrected label is a new judgment ...
    assert store.complete_comparisons("d")["outcome"].tolist() == [2]  # ... and the annotator's latest counts


def test_undo_marks_the_newest_of_the_annotator_and_keeps_the_trail(store: Store) -> None:
    for item, who in [("i1", "ann"), ("i2", "bob"), ("i3", "ann")]:
        store.add(make_comparison("d", item, "A", "B", "equal", who, left_system="A"))
    store.add(make_comparison("other", "i9", "A", "B", "equal", "ann", left_system="A"))
    undone = store.undo_last("d", "ann")
    assert undone is not None and undone.item_id == "i3" and undone.undone_at is not None
    assert [a.item_id for a in store.comparisons("d")] == ["i1", "i2"]
    assert len(store.comparisons("d", include_undone=True)) == 3
    assert [store.undo_last("d").item_id, store.undo_last("d").item_id, store.undo_last("d")] == ["i2", "i1", None]
    assert [a.item_id for a in store.comparisons("other")] == ["i9"]
    store.add(rating("i1", "A", 4, "ann"))
    assert store.undo_last("d", "ann", kind="rating").system == "A"
    assert store.ratings("d") == [] and len(store.ratings("d", include_undone=True)) == 1


def test_studies_never_mix(store: Store) -> None:
    one = store.create_study("d", "fp", "one", "{}")
    two = store.create_study("d", "fp", "two", "{}")
    store.add(make_comparison("d", "i1", "A", "B", "left", "ann", left_system="A", study_id=one.id))
    store.add(make_comparison("d", "i1", "A", "B", "right", "ann", left_system="A", study_id=two.id))  # same task, other study
    assert [c.outcome for c in store.comparisons("d", study_id=one.id)] == [0]
    assert [c.outcome for c in store.comparisons("d", study_id=two.id)] == [2]
    assert store.undo_last("d", "ann", study_id=one.id).study_id == one.id
    assert len(store.comparisons("d", study_id=two.id)) == 1


def test_both_bad_is_a_labelled_tie(store: Store) -> None:
    stored = store.add(make_comparison("d", "i1", "A", "B", "both_bad", "ann", left_system="B"))
    (back,) = store.comparisons("d")
    assert (back.outcome, back.label) == (1, "both_bad") == (stored.outcome, stored.label)


@pytest.mark.parametrize(
    ("change", "column"),
    [
        ({"outcome": 7}, "outcome"),
        ({"outcome": True}, "outcome"),
        ({"system_a": "B", "system_b": "A"}, "system_b"),
        ({"left_system": "C"}, "left_system"),
        ({"label": "both_bad", "outcome": 0}, "label"),
        ({"item_id": ""}, "item_id"),
        ({"annotator": 5}, "annotator"),
        ({"item_id": "a\x00b"}, "item_id"),
        ({"study_id": "1"}, "study_id"),
        ({"origin": "elsewhere"}, "origin"),
    ],
)
def test_bad_comparisons_are_refused_naming_the_column(change: dict[str, object], column: str) -> None:
    values: dict[str, object] = {
        "dataset": "d", "item_id": "i1", "system_a": "A", "system_b": "B", "outcome": 0, "annotator": "ann",
        "left_system": "A", "created_at": utc_now(),
    }  # fmt: skip
    with pytest.raises(BadValueError) as error:
        Comparison(**(values | change))  # type: ignore[arg-type]
    assert error.value.problems[0].column == column


@pytest.mark.parametrize("score", [float("nan"), float("inf"), "4", True])
def test_bad_scores_are_refused(score: object) -> None:
    with pytest.raises(BadValueError, match="score must be a finite number"):
        Rating("d", "i1", "A", score, "ann", utc_now())  # type: ignore[arg-type]


def test_the_database_refuses_what_slips_past_the_checks(store: Store) -> None:
    # A row written around the dataclass (e.g. by another tool) still meets the table's constraints.
    from prefeval_core.store.schema import comparisons

    row = {
        "identity": "x", "dataset": "d", "study_id": None, "request_id": "r", "item_id": "i", "annotator": "a", "origin": "app",
        "created_at": utc_now(), "undone_at": None, "system_a": "B", "system_b": "A", "outcome": 1, "label": None, "left_system": "A",
    }  # fmt: skip
    for bad in ({}, {"system_a": "A", "system_b": "B", "outcome": 7}, {"system_a": "A", "system_b": "B", "label": "meh"}):
        with pytest.raises(StoreError, match="could not write the annotation store"), store.db.writing() as conn:
            conn.execute(comparisons.insert().values(row | bad))
    assert store.comparisons() == []


def test_complete_items_need_per_item_annotators(store: Store) -> None:
    def judge(item: str, who: str, choice: str) -> None:
        store.add(make_comparison("d", item, "A", "B", choice, who, left_system="A"))  # type: ignore[arg-type]

    judge("i1", "ann", "left")
    judge("i1", "bob", "left")
    judge("i1", "eve", "right")  # 2 x '>' vs 1 x '<': '>'
    judge("i2", "ann", "left")
    judge("i2", "bob", "right")  # +1 - 1 = 0: '='
    judge("i3", "ann", "right")  # one annotator only
    assert store.complete_comparisons("d", per_item=2).to_dict("records") == [
        {"system_a": "A", "system_b": "B", "item_id": "i1", "outcome": 0, "judgments": 3},
        {"system_a": "A", "system_b": "B", "item_id": "i2", "outcome": 1, "judgments": 2},
    ]
    assert store.complete_comparisons("d")["item_id"].tolist() == ["i1", "i2", "i3"]
    study = store.create_study("d", "fp", "three per item", "{}", judgments_per_item=3)
    for who, score in [("ann", 2), ("bob", 3), ("eve", 5)]:
        store.add(rating("i1", "A", score, who, study_id=study.id))
    store.add(rating("i1", "B", 4, "ann", study_id=study.id))
    complete = store.complete_ratings("d", study_id=study.id)  # per item from the study: 3
    assert complete.to_dict("records") == [{"item_id": "i1", "system": "A", "score": pytest.approx(10 / 3), "judgments": 3}]


def test_exports_carry_attribution_and_are_safe(store: Store) -> None:
    store.add(make_comparison("d", "=1+1", "A", "B", "left", "ann", left_system="B"))
    store.add(rating("i2", "@SUM(A1)", 4.5, "bob"))
    store.undo_last("d", "bob", kind="rating")
    rows = list(csv.DictReader(io.StringIO(store.export("csv", "d").decode())))
    assert (rows[0]["kind"], rows[0]["item_id"], rows[0]["annotator"], rows[0]["outcome"]) == ("comparison", "'=1+1", "ann", "2")
    assert rows[0]["left_system"] == "B"
    assert (rows[1]["kind"], rows[1]["system"], rows[1]["score"], rows[1]["outcome"]) == ("rating", "'@SUM(A1)", "4.5", "")
    assert rows[1]["undone_at"] != ""  # the trail is exported too
    records = [json.loads(line) for line in store.export("jsonl", "d").decode().splitlines()]
    assert records[0]["item_id"] == "=1+1" and records[0]["kind"] == "comparison" and "score" not in records[0]
    parquet = pd.read_parquet(io.BytesIO(store.export("parquet", "d")))
    assert parquet["kind"].tolist() == ["comparison", "rating"] and parquet["score"].iloc[1] == 4.5
    assert str(parquet["outcome"].dtype) == "Int8" and pd.isna(parquet["outcome"].iloc[1])
    assert export_judgments([], "csv").decode().startswith("kind,id,dataset")
