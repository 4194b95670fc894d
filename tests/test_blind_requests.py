"""Blind request files: what annotators are handed names no system, shows each pair in the app's
left/right order and in a row order that gives nothing away; what they fill in comes back as
the same judgments a file with the names would give."""

from __future__ import annotations

import io
import itertools

import pandas as pd
import pytest

from prefeval_core.blind import BlindTasks, blind_order, shown_side
from prefeval_core.errors import DataError, MissingColumnError, SettingsError
from prefeval_core.requests import (
    BLIND_RATING_REQUEST_COLUMNS,
    BLIND_REQUEST_COLUMNS,
    blind_requests,
    export_requests_csv,
    read_annotated_requests,
    read_rated_requests,
    request_frame,
)
from prefeval_core.store.records import request_id_for
from prefeval_core.tasks import ComparisonTask, RatingTask

SYSTEMS = ("gpt-4", "llama", "mistral", "zephyr")
QUALITY = {"gpt-4": 4, "llama": 2, "mistral": 3, "zephyr": 1}
ITEMS = [f"doc{k}" for k in range(12)]
TEXTS = pd.DataFrame([{"item_id": i, "system": s, "output": f"answer of quality {QUALITY[s]} to {i}"} for i in ITEMS for s in SYSTEMS])
PAIRS = [ComparisonTask(i, a, b) for i in ITEMS for a, b in itertools.combinations(sorted(SYSTEMS), 2)]


def quality(output: str) -> int:
    """The annotators here judge by the text alone: "answer of quality 3 to doc1"."""
    return int(output.split()[3])


def label_by_text(frame: pd.DataFrame) -> pd.DataFrame:
    a, b = frame["output_a"].map(quality), frame["output_b"].map(quality)
    return frame.assign(label=[">" if x > y else "<" for x, y in zip(a, b, strict=True)], annotator="kim")


def csv_bytes(frame: pd.DataFrame) -> bytes:
    return export_requests_csv(frame)


def test_a_blind_comparison_file_names_no_system_and_shows_both_sides_as_a() -> None:
    frame = blind_requests(PAIRS, "d", texts=TEXTS, study_id=7, seed=3)
    assert tuple(frame.columns) == BLIND_REQUEST_COLUMNS and len(frame) == len(PAIRS)
    text = csv_bytes(frame).decode()
    assert not any(system in text for system in SYSTEMS)
    by_request = {request_id_for("d", 7, t.item_id, t.systems): t for t in PAIRS}
    for row in frame.itertuples(index=False):
        task = by_request[row.request_id]
        assert row.left == shown_side(3, "d", task)  # the app's own side for the seed
        left = task.system_a if row.left == "first" else task.system_b
        assert row.output_a == f"answer of quality {QUALITY[left]} to {task.item_id}"
    assert 0.25 < (frame["left"] == "first").mean() < 0.75
    # items stay together, in their order; within an item the tasks are not in the pairs' order
    assert list(dict.fromkeys(frame["item_id"])) == ITEMS
    positions = [[by_request[r] for r in frame.loc[frame["item_id"] == i, "request_id"]] for i in ITEMS]
    assert any(tasks != sorted(tasks, key=lambda t: (t.system_a, t.system_b)) for tasks in positions)


def test_what_annotators_fill_in_comes_back_as_the_named_files_judgments() -> None:
    blind = label_by_text(blind_requests(PAIRS, "d", texts=TEXTS, study_id=7, seed=3))
    from_blind = read_annotated_requests("blind.csv", csv_bytes(blind), "d", systems=SYSTEMS, study_id=7)
    named = request_frame(pd.DataFrame([vars(t) for t in PAIRS]), TEXTS)
    named = label_by_text(named)
    from_named = read_annotated_requests("named.csv", csv_bytes(named), "d", systems=SYSTEMS, study_id=7)

    def facts(judgments: list) -> list[tuple[str, str, str, int]]:
        return sorted((j.item_id, j.system_a, j.system_b, j.outcome) for j in judgments)

    assert len(from_blind) == len(PAIRS) and facts(from_blind) == facts(from_named)
    better = {(j.item_id, j.system_a, j.system_b): j.outcome for j in from_blind}
    assert all(better[t.item_id, t.system_a, t.system_b] == (0 if QUALITY[t.system_a] > QUALITY[t.system_b] else 2) for t in PAIRS)
    assert sum(j.left_system == j.system_a for j in from_blind) == (blind["left"] == "first").sum()


def test_a_changed_request_or_side_is_refused_naming_row_and_column() -> None:
    blind = label_by_text(blind_requests(PAIRS[:6], "d", texts=TEXTS, study_id=7, seed=3))
    blind.loc[1, "request_id"] = "0" * 32
    blind.loc[2, "left"] = "A"
    blind.loc[3, "item_id"] = "doc9"  # a request of doc0 is not one of doc9
    with pytest.raises(DataError) as info:
        read_annotated_requests("r.csv", csv_bytes(blind), "d", systems=SYSTEMS, study_id=7)
    found = [(p.file, p.row, p.column, p.message[:60]) for p in info.value.problems]
    assert found == [
        ("r.csv", 2, "request_id", "this request id is not one of a comparison of item 'doc0' am"),
        ("r.csv", 3, "left", "expected 'first' or 'second' (leave it as exported), found '"),
        ("r.csv", 4, "request_id", "this request id is not one of a comparison of item 'doc9' am"),
    ]
    with pytest.raises(DataError, match="not one of a comparison"):  # exported for another study
        read_annotated_requests("r.csv", csv_bytes(blind.iloc[[0]]), "d", systems=SYSTEMS, study_id=8)
    with pytest.raises(SettingsError, match=r"r\.csv is a blind request file: it is read against the data.s systems"):
        read_annotated_requests("r.csv", csv_bytes(blind.iloc[[0]]), "d", study_id=7)
    with pytest.raises(MissingColumnError, match=r"needs the column 'system_a' \(in a blind file: 'request_id', 'left'\)"):
        read_annotated_requests("r.csv", b"item_id,label\ndoc0,>\n", "d")
    with pytest.raises(MissingColumnError, match=r"needs the column 'left'"):
        read_annotated_requests("r.csv", csv_bytes(blind.drop(columns="left")), "d", systems=SYSTEMS, study_id=7)


def test_a_blind_rating_file_round_trips_and_refuses_a_changed_request() -> None:
    tasks = [RatingTask(i, s) for i in ITEMS[:5] for s in SYSTEMS]
    frame = blind_requests(tasks, "d", texts=TEXTS, study_id=None)
    assert tuple(frame.columns) == BLIND_RATING_REQUEST_COLUMNS and len(frame) == len(tasks)
    assert not any(system in csv_bytes(frame).decode() for system in SYSTEMS)
    order = [BlindTasks.of("d", None, SYSTEMS).task_of("rating", i, r) for i, r in zip(frame["item_id"], frame["request_id"], strict=True)]
    assert order != sorted(order, key=lambda t: (t.item_id, t.system))  # type: ignore[union-attr]
    filled = frame.assign(score=frame["output"].map(quality).astype(str))
    filled.loc[0, "score"] = ""  # not rated yet
    ratings = read_rated_requests("rated.csv", csv_bytes(filled), "d", annotator="lee", systems=SYSTEMS, scale=(1, 5))
    assert len(ratings) == len(tasks) - 1 and all(r.score == QUALITY[r.system] and r.annotator == "lee" for r in ratings)
    filled.loc[2, "request_id"] = request_id_for("d", None, "doc0", ("nobody",))
    with pytest.raises(DataError) as info:
        read_rated_requests("rated.csv", csv_bytes(filled), "d", systems=SYSTEMS)
    (problem,) = info.value.problems
    assert (problem.row, problem.column) == (3, "request_id") and "not one of a rating of item" in problem.message


def test_blind_order_keeps_items_together_in_their_order() -> None:
    items = ["b", "a", "b", "c", "a"]
    order = blind_order(items, ["9", "5", "1", "0", "2"])
    assert [items[k] for k in order] == ["b", "b", "a", "a", "c"] and order == [2, 0, 4, 1, 3]


def test_jsonl_export_reads_back_too() -> None:
    from prefeval_core.requests import export_requests_jsonl

    blind = label_by_text(blind_requests(PAIRS[:6], "d", texts=TEXTS, study_id=None, seed=1))
    data = export_requests_jsonl(blind)
    assert not any(system in data.decode() for system in SYSTEMS)
    judged = read_annotated_requests("r.jsonl", data, "d", systems=SYSTEMS)
    assert len(judged) == 6
    assert io.BytesIO(data).read().count(b"\n") == 6
