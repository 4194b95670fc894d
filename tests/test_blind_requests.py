"""Blind request files: what annotators are handed names no system, data or study and cannot be
de-blinded by hashing candidate names; the side shown as A is no column; an edited, flipped,
swapped or contradictory row is refused naming file, row and column; what annotators fill in
comes back as the same judgments a file with the names would give; older files still read."""

from __future__ import annotations

import hashlib
import io
import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from prefeval_core.annotation.blind import BlindKey, BlindTasks, blind_order, shown_side
from prefeval_core.annotation.requests import (
    BLIND_RATING_REQUEST_COLUMNS,
    BLIND_REQUEST_COLUMNS,
    blind_requests,
    export_requests_csv,
    export_requests_jsonl,
    read_annotated_requests,
    read_rated_requests,
    request_frame,
)
from prefeval_core.errors import DataError, MissingColumnError, SettingsError
from prefeval_core.store.records import request_id_for
from prefeval_core.vocabulary.tasks import ComparisonTask, RatingTask

SYSTEMS = ("gpt-4", "llama", "mistral", "zephyr")
QUALITY = {"gpt-4": 4, "llama": 2, "mistral": 3, "zephyr": 1}
ITEMS = [f"doc{k}" for k in range(12)]
TEXTS = pd.DataFrame([{"item_id": i, "system": s, "output": f"answer of quality {QUALITY[s]} to {i}"} for i in ITEMS for s in SYSTEMS])
PAIRS = [ComparisonTask(i, a, b) for i in ITEMS for a, b in itertools.combinations(sorted(SYSTEMS), 2)]
KEY = BlindKey(bytes(range(32)))


def quality(output: str) -> int:
    """The annotators here judge by the text alone: "answer of quality 3 to doc1"."""
    return int(output.split()[3])


def label_by_text(frame: pd.DataFrame) -> pd.DataFrame:
    a, b = frame["output_a"].map(quality), frame["output_b"].map(quality)
    return frame.assign(label=[">" if x > y else "<" for x, y in zip(a, b, strict=True)], annotator="kim")


def csv_bytes(frame: pd.DataFrame) -> bytes:
    return export_requests_csv(frame)


def exported(tasks: list = PAIRS, study_id: int | None = 7, seed: int = 3) -> pd.DataFrame:
    return blind_requests(tasks, "d", key=KEY, texts=TEXTS, study_id=study_id, seed=seed)


def read_back(frame: pd.DataFrame, name: str = "r.csv", **kwargs: object) -> list:
    options = {"systems": SYSTEMS, "study_id": 7, "key": KEY} | kwargs
    return read_annotated_requests(name, csv_bytes(frame), "d", **options)  # type: ignore[arg-type]


def problems_of(frame: pd.DataFrame) -> list[tuple[str | None, int | None, str | None, str]]:
    with pytest.raises(DataError) as info:
        read_back(frame)
    return [(p.file, p.row, p.column, p.message) for p in info.value.problems]


def test_a_blind_comparison_file_names_no_system_data_or_study_and_hides_the_side() -> None:
    frame = exported()
    assert tuple(frame.columns) == BLIND_REQUEST_COLUMNS and len(frame) == len(PAIRS)
    assert "left" not in frame.columns
    text = csv_bytes(frame).decode()
    assert not any(system in text for system in SYSTEMS)
    blind = BlindTasks.of("d", 7, SYSTEMS, KEY)
    sides = []
    for row in frame.itertuples(index=False):
        found = blind.find("comparison", row.item_id, row.request_id)
        assert found is not None
        task, side = found
        assert isinstance(task, ComparisonTask) and side is not None
        left = task.system_a if side == "first" else task.system_b
        assert row.output_a == f"answer of quality {QUALITY[left]} to {task.item_id}"
        sides.append(side)
    assert 0.25 < np.mean([s == "first" for s in sides]) < 0.75
    # items stay together, in their order; within an item the tasks are not in the pairs' order
    assert list(dict.fromkeys(frame["item_id"])) == ITEMS
    tasks = {row.request_id: blind.find("comparison", row.item_id, row.request_id) for row in frame.itertuples(index=False)}
    positions = [[tasks[r][0] for r in frame.loc[frame["item_id"] == i, "request_id"]] for i in ITEMS]  # type: ignore[index]
    assert any(order != sorted(order, key=lambda t: (t.system_a, t.system_b)) for order in positions)


def test_hashing_candidate_system_names_recovers_nothing() -> None:
    """The old attack: request ids were an unsalted digest of (dataset, study, item, pair), and
    ``left`` told which of the alphabetically sorted pair was A. On a new export no guess of
    data key and study id matches a single token, and the side is no column at all."""
    frame = exported()
    tokens = set(frame["request_id"])
    guesses = {
        request_id_for(dataset, study, item, pair)
        for dataset in ("d", "sample:summeval", "upload:d")
        for study in (None, *range(1, 20))
        for item in ITEMS
        for pair in itertools.combinations(sorted(SYSTEMS), 2)
    }
    assert not tokens & guesses
    plain = {
        hashlib.sha256(json.dumps([item, *pair]).encode()).hexdigest()[:32] for item in ITEMS for pair in itertools.permutations(SYSTEMS, 2)
    }
    assert not tokens & plain
    assert not {"left", "dataset", "study_id", "system_a", "system_b"} & set(frame.columns)
    # the side is not the app's unkeyed coin for the export's seed either
    unkeyed = [shown_side(3, "d", t) for t in PAIRS]
    keyed = [shown_side(KEY.coin_seed(3), "d", t) for t in PAIRS]
    assert unkeyed != keyed


def test_another_studys_key_finds_no_task() -> None:
    frame = label_by_text(exported(PAIRS[:6]))
    with pytest.raises(DataError, match="not one of a comparison of item 'doc0' exported for this study"):
        read_back(frame, key=BlindKey(b"another study's key, 32 bytes!!"))
    with pytest.raises(DataError, match="not one of a comparison"):
        read_back(frame, study_id=8)


def test_what_annotators_fill_in_comes_back_as_the_named_files_judgments() -> None:
    blind = label_by_text(exported())
    from_blind = read_back(blind, "blind.csv")
    named = label_by_text(request_frame(pd.DataFrame([vars(t) for t in PAIRS]), TEXTS))
    from_named = read_annotated_requests("named.csv", csv_bytes(named), "d", systems=SYSTEMS, study_id=7)

    def facts(judgments: list) -> list[tuple[str, str, str, int]]:
        return sorted((j.item_id, j.system_a, j.system_b, j.outcome) for j in judgments)

    assert len(from_blind) == len(PAIRS) and facts(from_blind) == facts(from_named)
    better = {(j.item_id, j.system_a, j.system_b): j.outcome for j in from_blind}
    assert all(better[t.item_id, t.system_a, t.system_b] == (0 if QUALITY[t.system_a] > QUALITY[t.system_b] else 2) for t in PAIRS)
    shown_left = {(j.item_id, j.left_system) for j in from_blind}
    assert all((row.item_id, None) not in shown_left for row in blind.itertuples())
    assert {j.request_id for j in from_blind} == {request_id_for("d", 7, t.item_id, t.systems) for t in PAIRS}


def test_flipped_swapped_and_edited_rows_are_refused_naming_row_and_column() -> None:
    blind = label_by_text(exported(PAIRS[:6]))
    blind.loc[0, ["output_a", "output_b"]] = blind.loc[0, ["output_b", "output_a"]].to_numpy()  # flipped A and B
    blind.loc[1, "request_id"], blind.loc[2, "request_id"] = blind.loc[2, "request_id"], blind.loc[1, "request_id"]  # swapped
    blind.loc[4, "output_b"] = "answer of quality 9 to doc0"  # edited text
    blind.loc[5, "request_id"] = "0" * 32  # no request
    found = problems_of(blind)
    assert [(f, r, c) for f, r, c, _ in found] == [
        ("r.csv", 1, "output_a"),
        ("r.csv", 2, "digest"),
        ("r.csv", 3, "digest"),
        ("r.csv", 5, "digest"),
        ("r.csv", 6, "request_id"),
    ]
    assert "swapped" in found[0][3] and "not as exported" in found[1][3] and "not one of a comparison" in found[4][3]


def test_rows_moved_to_another_item_are_refused() -> None:
    blind = label_by_text(exported(PAIRS[:12]))
    first, other = blind.index[blind["item_id"] == "doc0"][0], blind.index[blind["item_id"] == "doc1"][0]
    blind.loc[first, "item_id"] = "doc1"
    assert problems_of(blind)[0][1:3] == (first + 1, "request_id")
    assert other != first


def test_two_different_answers_to_one_request_are_refused() -> None:
    blind = label_by_text(exported(PAIRS[:3]))
    again = blind.iloc[[0]].assign(label="=")
    found = problems_of(pd.concat([blind, again, blind.iloc[[1]]], ignore_index=True))
    assert [(f, r, c) for f, r, c, _ in found] == [("r.csv", 4, "label")]
    assert "different answer to the request of row 1" in found[0][3]
    later = read_back(pd.concat([blind, again], ignore_index=True), latest_wins=True)
    before, after = ({j.task: j.outcome for j in judged} for judged in (read_back(blind), later))
    changed = [task for task in before if before[task] != after[task]]
    assert len(later) == 3 and len(changed) == 1 and after[changed[0]] == 1  # the later row's '=' counts
    by_another = pd.concat([blind, again.assign(annotator="lee")], ignore_index=True)
    assert len(read_back(by_another)) == 4  # another annotator may answer differently
    same_twice = pd.concat([blind, blind.iloc[[0]]], ignore_index=True)
    assert len({j.identity for j in read_back(same_twice)}) == 3  # the same answer twice is one judgment


def test_both_bad_is_a_label_request_files_accept() -> None:
    blind = exported(PAIRS[:3]).assign(label=["both bad", "Both_Bad", ">"], annotator="kim")
    judged = read_back(blind)
    assert [(j.outcome, j.label) for j in judged[:2]] == [(1, "both_bad"), (1, "both_bad")] and judged[2].label is None
    with pytest.raises(DataError) as info:
        read_back(blind.assign(label=["maybe", "", ""]))
    (problem,) = info.value.problems
    assert problem.column == "label" and "both bad" in problem.message and "system_a" not in problem.message


def test_missing_columns_are_named_by_the_layout_the_file_has() -> None:
    blind = label_by_text(exported(PAIRS[:2]))
    with pytest.raises(MissingColumnError) as info:
        read_back(blind.drop(columns="digest"))
    (problem,) = info.value.problems
    assert problem.column == "digest" and "system_a" not in problem.message and "left" not in problem.message
    with pytest.raises(MissingColumnError, match=r"needs the column 'system_a' \(a blind file keeps 'request_id' and 'digest'"):
        read_annotated_requests("r.csv", b"item_id,label\ndoc0,>\n", "d")
    with pytest.raises(SettingsError, match=r"r\.csv is a blind request file: it is read against the data.s systems"):
        read_back(blind, systems=None)
    with pytest.raises(SettingsError, match="read with the study's key"):
        read_back(blind, key=None)


def older_file(tasks: list[ComparisonTask], study_id: int | None, seed: int) -> pd.DataFrame:
    """A blind comparison file as prefeval wrote it before keyed tokens: an unkeyed request id
    and ``left``, A and B in the app's order for ``seed``."""
    named = request_frame(pd.DataFrame([vars(t) for t in tasks]), TEXTS)
    sides = [shown_side(seed, "d", t) for t in tasks]
    swap = np.array([s == "second" for s in sides])
    return named.assign(
        request_id=[request_id_for("d", study_id, t.item_id, t.systems) for t in tasks],
        left=sides,
        output_a=np.where(swap, named["output_b"], named["output_a"]),
        output_b=np.where(swap, named["output_a"], named["output_b"]),
    )[["request_id", "left", "item_id", "source", "output_a", "output_b", "label", "annotator"]]


def test_an_older_blind_file_still_imports() -> None:
    old = label_by_text(older_file(PAIRS, 7, 3))
    judged = read_back(old)
    assert len(judged) == len(PAIRS)
    assert all(j.outcome == (0 if QUALITY[j.system_a] > QUALITY[j.system_b] else 2) for j in judged)
    old.loc[2, "left"] = "A"
    assert problems_of(old) == [("r.csv", 3, "left", "expected 'first' or 'second' (leave it as exported), found 'A'")]
    # a new file dressed as an old one: its tokens are no unkeyed request ids
    new = label_by_text(exported(PAIRS[:2])).drop(columns="digest").assign(left="first")
    assert [c for _, _, c, _ in problems_of(new)] == ["request_id", "request_id"]


def test_a_blind_rating_file_round_trips_and_refuses_changed_rows() -> None:
    tasks = [RatingTask(i, s) for i in ITEMS[:5] for s in SYSTEMS]
    frame = blind_requests(tasks, "d", key=KEY, texts=TEXTS, study_id=None)
    assert tuple(frame.columns) == BLIND_RATING_REQUEST_COLUMNS and len(frame) == len(tasks)
    assert not any(system in csv_bytes(frame).decode() for system in SYSTEMS)
    blind = BlindTasks.of("d", None, SYSTEMS, KEY)
    order = [blind.find("rating", i, r)[0] for i, r in zip(frame["item_id"], frame["request_id"], strict=True)]  # type: ignore[index]
    assert order != sorted(order, key=lambda t: (t.item_id, t.system))  # type: ignore[attr-defined]
    filled = frame.assign(score=frame["output"].map(quality).astype(str))
    filled.loc[0, "score"] = ""  # not rated yet
    options = {"systems": SYSTEMS, "key": KEY, "scale": (1, 5)}
    ratings = read_rated_requests("rated.csv", csv_bytes(filled), "d", annotator="lee", **options)  # type: ignore[arg-type]
    assert len(ratings) == len(tasks) - 1 and all(r.score == QUALITY[r.system] and r.annotator == "lee" for r in ratings)
    changed = filled.copy()
    changed.loc[2, "output"] = "answer of quality 5 to doc0"
    changed.loc[3, "request_id"] = request_id_for("d", None, "doc0", ("nobody",))
    with pytest.raises(DataError) as info:
        read_rated_requests("rated.csv", csv_bytes(changed), "d", **options)  # type: ignore[arg-type]
    assert [(p.row, p.column) for p in info.value.problems] == [(3, "digest"), (4, "request_id")]
    twice = pd.concat([filled, filled.iloc[[1]].assign(score="1" if filled.loc[1, "score"] != "1" else "2")], ignore_index=True)
    with pytest.raises(DataError) as info:
        read_rated_requests("rated.csv", csv_bytes(twice), "d", **options)  # type: ignore[arg-type]
    assert [(p.row, p.column) for p in info.value.problems] == [(len(twice), "score")]


def test_an_older_blind_rating_file_still_imports() -> None:
    tasks = [RatingTask(i, s) for i in ITEMS[:2] for s in SYSTEMS]
    old = pd.DataFrame(
        {
            "request_id": [request_id_for("d", None, t.item_id, t.systems) for t in tasks],
            "item_id": [t.item_id for t in tasks],
            "score": [str(QUALITY[t.system]) for t in tasks],
        }
    )
    ratings = read_rated_requests("old.csv", csv_bytes(old), "d", systems=SYSTEMS, key=KEY)
    assert [(r.system, r.score) for r in ratings] == [(t.system, QUALITY[t.system]) for t in tasks]


def test_blind_order_keeps_items_together_in_their_order() -> None:
    items = ["b", "a", "b", "c", "a"]
    order = blind_order(items, ["9", "5", "1", "0", "2"])
    assert [items[k] for k in order] == ["b", "b", "a", "a", "c"] and order == [2, 0, 4, 1, 3]


def test_jsonl_export_reads_back_too() -> None:
    blind = label_by_text(exported(PAIRS[:6], study_id=None, seed=1))
    data = export_requests_jsonl(blind)
    assert not any(system in data.decode() for system in SYSTEMS)
    judged = read_annotated_requests("r.jsonl", data, "d", systems=SYSTEMS, key=KEY)
    assert len(judged) == 6
    assert io.BytesIO(data).read().count(b"\n") == 6


def test_the_workflow_keeps_one_secret_per_study_in_the_store(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from prefeval_core.store import Store
    from prefeval_core.workflow.request_files import blind_key, fill_in_instructions, judged_requests, request_files

    url = f"sqlite:///{tmp_path / 'annotations.sqlite'}"
    store = Store.at(url)
    dataset = SimpleNamespace(texts=TEXTS, sources=pd.DataFrame(columns=["item_id", "source"]))  # what the export reads of a Dataset
    files = request_files(
        PAIRS[:6],
        dataset,  # type: ignore[arg-type]
        "d",
        study_id=None,
        seed=0,
        secret=blind_key(store, "d", None),
    )
    again = request_files(
        PAIRS[:6],
        dataset,  # type: ignore[arg-type]
        "d",
        study_id=None,
        seed=0,
        secret=blind_key(Store.at(url), "d", None),
    )
    assert files == again  # the secret is the store's, the same in every process
    filled = label_by_text(pd.read_csv(io.BytesIO(files["csv"]), dtype=str, keep_default_na=False))
    judged = judged_requests("r.csv", csv_bytes(filled), "d", systems=SYSTEMS, scale=None, store=store)
    assert len(judged) == 6
    other = Store.at(f"sqlite:///{tmp_path / 'other.sqlite'}")
    with pytest.raises(DataError, match="not one of a comparison"):
        judged_requests("r.csv", csv_bytes(filled), "d", systems=SYSTEMS, scale=None, store=other)
    assert "Which output is better in relevance?" in fill_in_instructions(None, "relevance")


def test_texts_a_spreadsheet_would_change_keep_their_digest() -> None:
    """Formula-like texts (neutralised in the CSV, restored on reading), line ends and
    surrounding white space: the digest of a row read back still matches."""
    outputs = ["=1+1", "a\r\nb", "  padded  ", "@cmd"]
    odd = pd.DataFrame([{"item_id": "doc0", "system": s, "output": text} for s, text in zip(SYSTEMS, outputs, strict=True)])
    tasks = [ComparisonTask("doc0", a, b) for a, b in itertools.combinations(sorted(SYSTEMS), 2)]
    frame = blind_requests(tasks, "d", key=KEY, texts=odd, study_id=7, seed=3).assign(label=">", annotator="kim")
    assert len(read_back(frame)) == 6
    assert len(read_annotated_requests("r.jsonl", export_requests_jsonl(frame), "d", systems=SYSTEMS, study_id=7, key=KEY)) == 6
