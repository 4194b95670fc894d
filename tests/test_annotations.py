"""The annotation store, left/right order, request files and their re-import."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefeval_core.annotations import (
    AnnotationStore,
    export_annotations_csv,
    export_annotations_jsonl,
    export_requests_csv,
    export_requests_jsonl,
    human_outcomes,
    left_right,
    make_annotation,
    neutralise_cell,
    outcome_from_choice,
    read_annotated_requests,
    request_frame,
    restore_cell,
)
from prefeval_core.errors import BadValueError, DataError, MissingColumnError


@pytest.fixture
def store(tmp_path: Path) -> AnnotationStore:
    return AnnotationStore.open(tmp_path)


def test_outcome_from_choice_undoes_the_shuffle() -> None:
    # Pair (A, B) = ("m1", "m2"). Shown m2 on the left:
    assert outcome_from_choice("left", "m2", "m1", "m2") == 2  # m2 better: '<'
    assert outcome_from_choice("right", "m2", "m1", "m2") == 0  # m1 better: '>'
    assert outcome_from_choice("equal", "m2", "m1", "m2") == 1
    # Shown m1 on the left, pair given in reverse order (still canonical m1 < m2):
    assert outcome_from_choice("left", "m1", "m2", "m1") == 0
    assert outcome_from_choice("right", "m1", "m2", "m1") == 2
    with pytest.raises(ValueError, match="not one of the pair"):
        outcome_from_choice("left", "m3", "m1", "m2")


def test_left_right_is_seeded_per_item_and_balanced() -> None:
    sides = [left_right(7, "sample:x", f"item{i}", "M0", "M1") for i in range(400)]
    assert sides == [left_right(7, "sample:x", f"item{i}", "M1", "M0") for i in range(400)]  # pair order irrelevant
    assert all(set(s) == {"M0", "M1"} for s in sides)
    left_a = sum(s[0] == "M0" for s in sides)
    assert 150 < left_a < 250  # a fair coin: 400 flips, 5 standard deviations is 50
    other_seed = [left_right(8, "sample:x", f"item{i}", "M0", "M1") for i in range(400)]
    assert other_seed != sides


def test_each_annotation_is_on_disk_immediately(store: AnnotationStore, tmp_path: Path) -> None:
    stored = store.add(make_annotation("sample:x", "i1", "M1", "M0", "left", " ann ", left_system="M1"))
    assert stored.id == 1
    # A fresh connection (as after an app restart) sees it, canonical and with the side recorded.
    with sqlite3.connect(tmp_path / "annotations.sqlite") as conn:
        rows = conn.execute("SELECT item_id, system_a, system_b, outcome, annotator, left_system FROM annotations").fetchall()
    assert rows == [("i1", "M0", "M1", 2, "ann", "M1")]
    assert AnnotationStore.open(tmp_path).annotations("sample:x")[0].outcome == 2


def test_undo_marks_the_newest_of_the_annotator(store: AnnotationStore) -> None:
    for item, who in [("i1", "ann"), ("i2", "bob"), ("i3", "ann")]:
        store.add(make_annotation("d", item, "A", "B", "equal", who, left_system="A"))
    store.add(make_annotation("other", "i9", "A", "B", "equal", "ann", left_system="A"))
    undone = store.undo_last("d", "ann")
    assert undone is not None and undone.item_id == "i3" and undone.undone_at is not None
    assert [a.item_id for a in store.annotations("d")] == ["i1", "i2"]
    assert len(store.annotations("d", include_undone=True)) == 3
    assert store.undo_last("d").item_id == "i2"
    assert store.undo_last("d").item_id == "i1"
    assert store.undo_last("d") is None
    assert [a.item_id for a in store.annotations("other")] == ["i9"]


def test_add_many_skips_copies(store: AnnotationStore) -> None:
    first = make_annotation("d", "i1", "A", "B", "left", "ann", left_system="B")
    assert store.add_many([first]) == 1
    assert store.add_many([first, make_annotation("d", "i2", "A", "B", "left", "ann", left_system="B")]) == 1
    assert len(store.annotations("d")) == 2


def test_human_outcomes_latest_per_annotator_then_majority(store: AnnotationStore) -> None:
    def add(item: str, who: str, choice: str) -> None:
        store.add(make_annotation("d", item, "A", "B", choice, who, left_system="A"))  # type: ignore[arg-type]

    add("i1", "ann", "right")  # replaced by ann's later judgement
    add("i1", "ann", "left")
    add("i1", "bob", "left")
    add("i1", "eve", "right")  # 2 x '>' vs 1 x '<': '>'
    add("i2", "ann", "left")
    add("i2", "bob", "right")  # +1 - 1 = 0: '='
    add("i3", "ann", "right")
    outcomes = human_outcomes(store.annotations("d"))
    assert outcomes.to_dict("records") == [
        {"system_a": "A", "system_b": "B", "item_id": "i1", "outcome": 0},
        {"system_a": "A", "system_b": "B", "item_id": "i2", "outcome": 1},
        {"system_a": "A", "system_b": "B", "item_id": "i3", "outcome": 2},
    ]
    assert human_outcomes([]).empty


@pytest.mark.property
@given(st.text(max_size=20))
@settings(max_examples=200)
def test_neutralise_then_restore_is_identity_and_safe(value: str) -> None:
    safe = neutralise_cell(value)
    assert isinstance(safe, str)
    assert not safe.startswith(("=", "+", "-", "@", "\t", "\r"))
    assert restore_cell(safe) == value


def test_request_export_neutralises_formulas_and_reimports() -> None:
    tasks = pd.DataFrame({"item_id": ["=cmd|' /C calc'!A0", "i2"], "system_a": ["M1", "M0"], "system_b": ["M0", "M1"]})
    texts = pd.DataFrame({"item_id": ["i2", "i2"], "system": ["M0", "M1"], "output": ["@SUM(1+1)", "+plain"]})
    sources = pd.DataFrame({"item_id": ["i2"], "source": ["-the article"]})
    requests = request_frame(tasks, texts, sources, annotator="ann")
    assert list(requests["system_a"]) == ["M0", "M0"]  # canonical order
    rows = list(csv.DictReader(io.StringIO(export_requests_csv(requests).decode())))
    assert rows[0]["item_id"] == "'=cmd|' /C calc'!A0"
    assert (rows[1]["output_a"], rows[1]["output_b"], rows[1]["source"]) == ("'@SUM(1+1)", "'+plain", "'-the article")
    # JSONL keeps the text as it is.
    assert json.loads(export_requests_jsonl(requests).decode().splitlines()[1])["output_a"] == "@SUM(1+1)"

    # Annotators fill in labels: row 1 ">" (A better), row 2 left empty (not annotated yet).
    rows[0]["label"] = ">"
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    annotations = read_annotated_requests("done.csv", buffer.getvalue().encode(), "d")
    assert len(annotations) == 1
    back = annotations[0]
    assert (back.item_id, back.system_a, back.system_b, back.outcome, back.annotator) == ("=cmd|' /C calc'!A0", "M0", "M1", 0, "ann")


def test_reimport_refuses_unknown_systems_naming_the_row() -> None:
    data = b"item_id,system_a,system_b,label\ni1,M0,M1,>\ni2,M0,M99,<\n"
    with pytest.raises(DataError, match=r"r\.csv, row 2, column 'system_b': unknown system 'M99'"):
        read_annotated_requests("r.csv", data, "d", systems=("M0", "M1", "M2"))
    assert len(read_annotated_requests("r.csv", data, "d")) == 2  # without the dataset's systems, nothing to check


def test_reimport_flips_reversed_pairs_and_names_bad_rows() -> None:
    data = b"item_id,system_a,system_b,label\ni1,M1,M0,A\ni2,M0,M1,-1\ni3,M0,M1,\n"
    annotations = read_annotated_requests("r.csv", data, "d", annotator="me")
    assert [(a.item_id, a.system_a, a.system_b, a.outcome, a.annotator) for a in annotations] == [
        ("i1", "M0", "M1", 2, "me"),  # M1 better, seen from (M0, M1): '<'
        ("i2", "M0", "M1", 2, "me"),
    ]
    with pytest.raises(BadValueError) as error:
        read_annotated_requests("r.csv", b"item_id,system_a,system_b,label\ni1,M0,M1,>\ni2,M0,M1,maybe\n", "d")
    (problem,) = error.value.problems
    assert (problem.file, problem.row, problem.line, problem.column) == ("r.csv", 2, 3, "label")
    with pytest.raises(MissingColumnError, match="label"):
        read_annotated_requests("r.csv", b"item_id,system_a,system_b\ni1,M0,M1\n", "d")


def test_store_exports(store: AnnotationStore) -> None:
    store.add(make_annotation("d", "=1+1", "A", "B", "left", "ann", left_system="B"))
    rows = list(csv.DictReader(io.StringIO(export_annotations_csv(store.annotations("d")).decode())))
    assert rows[0]["item_id"] == "'=1+1" and rows[0]["outcome"] == "2" and rows[0]["left_system"] == "B"
    record = json.loads(export_annotations_jsonl(store.annotations("d")))
    assert record["item_id"] == "=1+1" and record["outcome"] == 2
