"""Which task an annotator gets next when each requested item needs several annotators.

A study's "judgments per item" (``per_item``, 1 by default) sends each requested task to that
many *different* annotators, never twice to one: an annotator gets the first task, in the
request's order, that they have not judged and that fewer than ``per_item`` annotators have
judged. Several annotators working at once thus fill the request front to back.
"""

from __future__ import annotations

from collections.abc import Sequence

from prefeval_core.store.records import Judgment, Task


def annotators_by_task(judgments: Sequence[Judgment]) -> dict[Task, set[str]]:
    """Who has judged each task, among the judgments that count."""
    judged: dict[Task, set[str]] = {}
    for judgment in judgments:
        if judgment.undone_at is None:
            judged.setdefault(judgment.task, set()).add(judgment.annotator)
    return judged


def next_task(tasks: Sequence[Task], judgments: Sequence[Judgment], annotator: str, per_item: int = 1) -> Task | None:
    """The first of ``tasks`` (in request order) that ``annotator`` has not judged and that
    has fewer than ``per_item`` judgments by different annotators; ``None`` when there is none.

    ``judgments`` are the study's (or the dataset's) stored judgments; undone ones do not count.
    Comparison tasks are canonical pairs, as judgments are.
    """
    judged = annotators_by_task(judgments)
    for task in tasks:
        who = judged.get(task, set())
        if annotator not in who and len(who) < per_item:
            return task
    return None
