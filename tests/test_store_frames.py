"""Combining several annotators (majority of v, mean of scores), items complete, and the next task
for an annotator when each item needs several different annotators."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefeval_core.store import Comparison, ComparisonTask, Rating, RatingTask, combined_outcomes, combined_scores, next_task, utc_now
from prefeval_core.vocabulary.combine import majority_outcomes, mean_scores


def comparison(item: str, who: str, outcome: int, *, undone: bool = False) -> Comparison:
    return Comparison("d", item, "A", "B", outcome, who, "A", utc_now(), undone_at=utc_now() if undone else None)


def test_majority_is_the_sign_of_the_sum_of_v() -> None:
    frame = pd.DataFrame({"item_id": ["i1"] * 3 + ["i2"] * 2 + ["i3"] * 3, "outcome": [0, 0, 2, 0, 2, 1, 1, 2]})
    combined = majority_outcomes(frame, ["item_id"])
    assert combined.values.tolist() == [["i1", 0], ["i2", 1], ["i3", 2]]
    assert combined["outcome"].dtype == np.int8
    assert majority_outcomes(frame.iloc[:0], ["item_id"]).empty
    scores = pd.DataFrame({"item_id": ["i2", "i1", "i2"], "system": "S", "score": [1, 4, 2]})
    assert mean_scores(scores, ["item_id", "system"]).to_dict("records") == [
        {"item_id": "i2", "system": "S", "score": 1.5},  # groups in order of first appearance
        {"item_id": "i1", "system": "S", "score": 4.0},
    ]


@pytest.mark.property
@given(st.lists(st.integers(0, 2), min_size=1, max_size=9))
@settings(max_examples=200)
def test_majority_flips_with_the_pair(codes: list[int]) -> None:
    """Seen from (B, A) every outcome flips, and so does the majority."""
    frame = pd.DataFrame({"k": 0, "outcome": codes})
    flipped = frame.assign(outcome=2 - frame["outcome"])
    assert majority_outcomes(flipped, ["k"])["outcome"].iloc[0] == 2 - majority_outcomes(frame, ["k"])["outcome"].iloc[0]


def test_the_latest_judgment_of_each_annotator_counts() -> None:
    judgments = [
        comparison("i1", "ann", 2),
        comparison("i1", "ann", 0),  # replaces ann's earlier judgment (e.g. an imported correction)
        comparison("i1", "bob", 2, undone=True),  # undone: does not count
        comparison("i1", "eve", 1),
    ]
    assert combined_outcomes(judgments).to_dict("records") == [
        {"system_a": "A", "system_b": "B", "item_id": "i1", "outcome": 0, "judgments": 2}
    ]
    assert combined_outcomes(judgments, per_item=3).empty
    empty = combined_outcomes([])
    assert empty.empty and list(empty.columns) == ["system_a", "system_b", "item_id", "outcome", "judgments"]
    ratings = [Rating("d", "i1", "S", s, who, utc_now()) for who, s in [("ann", 1), ("bob", 4), ("ann", 3)]]
    assert combined_scores(ratings).to_dict("records") == [{"item_id": "i1", "system": "S", "score": 3.5, "judgments": 2}]


def test_next_task_sends_each_item_to_per_item_different_annotators() -> None:
    tasks = [ComparisonTask(f"i{k}", "A", "B") for k in range(3)]
    judgments: list[Comparison] = []

    def judge(who: str) -> str | None:
        task = next_task(tasks, judgments, who, per_item=2)
        if task is None:
            return None
        assert isinstance(task, ComparisonTask)
        judgments.append(comparison(task.item_id, who, 0))
        return task.item_id

    assert [judge("ann"), judge("bob"), judge("ann"), judge("eve")] == ["i0", "i0", "i1", "i1"]
    assert [judge("ann"), judge("ann"), judge("bob"), judge("bob"), judge("eve")] == ["i2", None, "i2", None, None]
    assert next_task(tasks, judgments, "zoe", per_item=3) == tasks[0]  # a third annotator per item, if the study asks
    judgments[0] = comparison("i0", "ann", 0, undone=True)  # an undone judgment frees its place
    assert next_task(tasks, judgments, "ann", per_item=2) == tasks[0]
    assert next_task(tasks, [], "ann") == tasks[0] and next_task([], [], "ann") is None


def test_next_task_for_ratings() -> None:
    tasks = [RatingTask("i1", "S"), RatingTask("i1", "T")]
    rated = [Rating("d", "i1", "S", 3, "ann", utc_now())]
    assert next_task(tasks, rated, "ann") == tasks[1]
    assert next_task(tasks, rated, "bob") == tasks[1]  # i1/S has its one judgment
    assert next_task(tasks, rated, "bob", per_item=2) == tasks[0]
