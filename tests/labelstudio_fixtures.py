"""Label Studio's JSON export, written the way Label Studio writes it, for tasks prefeval exported.

The layout follows Label Studio's task-format documentation (``docs/source/includes/task_format.md``:
a list of tasks with ``id``, ``data``, ``annotations`` with ``id``, ``result``, ``was_cancelled``,
``ground_truth``, ``created_at``, ``updated_at``, ``lead_time``, ``result_count``, ``task``,
``completed_by``; ``predictions``; results with ``from_name``, ``id``, ``to_name``, ``type``,
``value``) plus the fields a Label Studio 1.x export carries beside them (``drafts``, ``meta``,
``inner_id``, ``total_annotations``, ``origin``, ...). Choices results hold
``{"choices": [label]}``, Rating results ``{"rating": n}``, Number results ``{"number": x}``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from prefeval_core.annotation.labelstudio import PREFERENCE, SCORE


@dataclass(frozen=True)
class Answer:
    """One annotation of a task: what the ``result`` value is (``None``: an empty result), by
    which user, when (``edited``: the minute it was last changed, else ``minute``), and whether
    it was cancelled (skipped)."""

    value: dict[str, Any] | None
    user: int | dict[str, Any] = 1
    minute: int = 0
    cancelled: bool = False
    edited: int | None = None


def choice(label: str) -> dict[str, Any]:
    return {"choices": [label]}


def _result(task: dict[str, Any], value: dict[str, Any]) -> dict[str, Any]:
    meta = task["data"].get("prefeval", {"kind": "comparison", "request_id": ""})  # a task made in Label Studio has none
    kind = meta["kind"]
    control = PREFERENCE if kind == "comparison" else SCORE
    result_type = "choices" if "choices" in value else "rating" if "rating" in value else "number"
    return {
        "value": value,
        "id": hashlib.sha256(json.dumps([meta["request_id"], value]).encode()).hexdigest()[:10],
        "from_name": control,
        "to_name": "output_a" if kind == "comparison" else "output",
        "type": result_type,
        "origin": "manual",
    }


def _annotation(number: int, task_id: int, task: dict[str, Any], answer: Answer) -> dict[str, Any]:
    stamp = f"2025-03-04T10:{answer.minute:02d}:07.512345Z"
    return {
        "id": number,
        "completed_by": answer.user,
        "result": [] if answer.value is None else [_result(task, answer.value)],
        "was_cancelled": answer.cancelled,
        "ground_truth": False,
        "created_at": stamp,
        "updated_at": stamp if answer.edited is None else f"2025-03-04T10:{answer.edited:02d}:07.512345Z",
        "draft_created_at": None,
        "lead_time": 4.2,
        "prediction": {},
        "result_count": 0,
        "unique_id": f"00000000-0000-4000-8000-{number:012d}",
        "import_id": None,
        "last_action": None,
        "task": task_id,
        "project": 7,
        "updated_by": answer.user if isinstance(answer.user, int) else None,
        "parent_prediction": None,
        "parent_annotation": None,
        "last_created_by": None,
    }


def label_studio_export(tasks: Sequence[dict[str, Any]], answers: Callable[[dict[str, Any]], Sequence[Answer]]) -> bytes:
    """The export Label Studio gives for the imported ``tasks`` (``{"data": ...}`` each) once
    annotated with ``answers(task)``."""
    exported: list[dict[str, Any]] = []
    annotation_id = 1000
    for task_id, task in enumerate(tasks, start=41):
        annotations = []
        for answer in answers(task):
            annotation_id += 1
            annotations.append(_annotation(annotation_id, task_id, task, answer))
        exported.append(
            {
                "id": task_id,
                "annotations": annotations,
                "file_upload": "5e1a3c2b-prefeval-tasks.json",
                "drafts": [],
                "predictions": [],
                "data": task["data"],
                "meta": {},
                "created_at": "2025-03-04T09:58:00.123456Z",
                "updated_at": "2025-03-04T10:30:00.123456Z",
                "inner_id": task_id - 40,
                "total_annotations": sum(not a["was_cancelled"] for a in annotations),
                "cancelled_annotations": sum(a["was_cancelled"] for a in annotations),
                "total_predictions": 0,
                "comment_count": 0,
                "unresolved_comment_count": 0,
                "last_comment_updated_at": None,
                "project": 7,
                "updated_by": 1,
                "comment_authors": [],
            }
        )
    return json.dumps(exported, indent=2, ensure_ascii=False).encode("utf-8")
