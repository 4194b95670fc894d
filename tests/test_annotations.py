"""Left/right order and what a click means; request files of both kinds and their re-import."""

from __future__ import annotations

import csv
import io
import json

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefeval_core.annotation.left_right import left_right, make_comparison, outcome_from_choice
from prefeval_core.annotation.requests import (
    export_requests_csv,
    export_requests_jsonl,
    rating_request_frame,
    read_annotated_requests,
    read_rated_requests,
    request_frame,
)
from prefeval_core.data.safe_csv import neutralise_cell, restore_cell
from prefeval_core.errors import BadValueError, DataError, MissingColumnError


def test_outcome_from_choice_undoes_the_shuffle() -> None:
    # Pair (A, B) = ("m1", "m2"). Shown m2 on the left:
    assert outcome_from_choice("left", "m2", "m1", "m2") == 2  # m2 better: '<'
    assert outcome_from_choice("right", "m2", "m1", "m2") == 0  # m1 better: '>'
    assert outcome_from_choice("equal", "m2", "m1", "m2") == 1
    assert outcome_from_choice("both_bad", "m2", "m1", "m2") == 1
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


def test_a_click_becomes_a_canonical_comparison() -> None:
    judged = make_comparison("d", "i1", "M1", "M0", "left", "  ", left_system="M1", study_id=4)
    assert (judged.system_a, judged.system_b, judged.outcome, judged.annotator) == ("M0", "M1", 2, "anonymous")
    assert (judged.label, judged.study_id, judged.origin) == (None, 4, "app")
    both_bad = make_comparison("d", "i1", "M1", "M0", "both_bad", "ann", left_system="M0")
    assert (both_bad.outcome, both_bad.label) == (1, "both_bad")
    assert both_bad.request_id == make_comparison("d", "i1", "M0", "M1", "left", "bob", left_system="M0").request_id  # one task
    assert both_bad.request_id != make_comparison("d", "i1", "M0", "M1", "left", "ann", "M0", study_id=4).request_id  # another study


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


def test_reimporting_a_file_gives_the_same_identities() -> None:
    data = b"item_id,system_a,system_b,label,annotator\ni1,M0,M1,>,ann\ni1,M0,M1,<,bob\n"
    first, again = read_annotated_requests("r.csv", data, "d"), read_annotated_requests("r.csv", data, "d")
    assert [c.identity for c in first] == [c.identity for c in again]
    assert len({c.identity for c in first}) == 2 and {c.origin for c in first} == {"import"}
    changed = read_annotated_requests("r.csv", data.replace(b">,ann", b"=,ann"), "d")
    assert changed[0].identity != first[0].identity  # a corrected label is a new judgment


def test_rating_request_files_round_trip() -> None:
    tasks = pd.DataFrame({"item_id": ["i1", "i1", "=i2"], "system": ["S", "T", "S"]})
    texts = pd.DataFrame({"item_id": ["i1", "i1"], "system": ["S", "T"], "output": ["-minus", "plain"]})
    requests = rating_request_frame(tasks, texts, pd.DataFrame({"item_id": ["i1"], "source": ["src"]}), annotator="ann")
    assert list(requests.columns) == ["item_id", "system", "source", "output", "score", "annotator"]
    rows = list(csv.DictReader(io.StringIO(export_requests_csv(requests).decode())))
    assert (rows[0]["output"], rows[2]["item_id"], rows[0]["source"], rows[2]["output"]) == ("'-minus", "'=i2", "src", "")
    rows[0]["score"], rows[2]["score"] = "4", "2.5"
    rows[2]["annotator"] = ""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    ratings = read_rated_requests("done.csv", buffer.getvalue().encode(), "d", annotator="lead", scale=(1, 5), study_id=3)
    assert [(r.item_id, r.system, r.score, r.annotator, r.study_id, r.origin) for r in ratings] == [
        ("i1", "S", 4.0, "ann", 3, "import"),
        ("=i2", "S", 2.5, "lead", 3, "import"),
    ]


def test_rating_files_name_bad_rows() -> None:
    with pytest.raises(BadValueError) as error:
        read_rated_requests("r.csv", b"item_id,system,score\ni1,S,4\ni2,S,good\ni3,S,inf\ni4,S,9\n", "d", scale=(1, 5))
    assert [(p.row, p.line, p.column, p.message.split(",")[0]) for p in error.value.problems] == [
        (2, 3, "score", "expected a score (a finite number)"),
        (3, 4, "score", "expected a score (a finite number)"),
        (4, 5, "score", "expected a score from 1 to 5"),
    ]
    with pytest.raises(DataError, match=r"r\.csv, row 1, column 'system': unknown system 'X'"):
        read_rated_requests("r.csv", b"item_id,system,score\ni1,X,4\n", "d", systems=("S", "T"))
    with pytest.raises(MissingColumnError, match="score"):
        read_rated_requests("r.csv", b"item_id,system\ni1,S\n", "d")
    with pytest.raises(BadValueError, match=r"r\.csv, row 1 \(line 2\), column 'item_id': item_id must be a non-empty text"):
        read_rated_requests("r.csv", b"item_id,system,score\n,S,4\n", "d")
