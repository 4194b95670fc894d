"""Blind requests: what annotators are handed outside the app names no system.

A request file or a Label Studio task carries, instead of system names, the task's request id
(:func:`~prefeval_core.store.request_id_for`, a digest of dataset, study, item and systems) and,
for a comparison, which system of the canonical pair is shown as A (``left``: ``"first"`` or
``"second"``, from the app's seeded coin flip :func:`~prefeval_core.left_right.left_right`).
Rows go out in :func:`blind_order`, so a row's place does not give its system away either.
Reading the judgments back, :class:`BlindTasks` finds each task again among the data's systems.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from prefeval_core.left_right import left_right
from prefeval_core.store.records import JudgmentKind, request_id_for
from prefeval_core.tasks import ComparisonTask, RatingTask, Task

Side = Literal["first", "second"]
"""Which system of a canonical pair (``system_a < system_b``) is shown as A, on the left."""
SIDES: Final[tuple[Side, Side]] = ("first", "second")


def shown_side(seed: int, dataset: str, task: ComparisonTask) -> Side:
    """The side shown as A for ``task``: the app's left/right coin flip for ``seed``."""
    left, _ = left_right(seed, dataset, task.item_id, task.system_a, task.system_b)
    return "first" if left == task.system_a else "second"


def left_system_of(task: ComparisonTask, side: Side) -> str:
    """The system shown as A when ``side`` is shown."""
    return task.system_a if side == "first" else task.system_b


def blind_order(item_ids: Sequence[str], request_ids: Sequence[str]) -> list[int]:
    """Row positions for a blind file: items in their order of first appearance, the tasks of
    one item in request-id order (a digest: a different, fixed shuffle on every item)."""
    first_seen: dict[str, int] = {}
    for item in item_ids:
        first_seen.setdefault(item, len(first_seen))
    return sorted(range(len(item_ids)), key=lambda k: (first_seen[item_ids[k]], request_ids[k]))


@dataclass(frozen=True)
class BlindTasks:
    """The tasks a blind file of ``dataset`` and ``study_id`` can hold (every rating and every
    canonical pair of ``systems`` on an item), found by request id; indexed per item on first use."""

    dataset: str
    study_id: int | None
    systems: frozenset[str]
    _by_request: dict[tuple[JudgmentKind, str], dict[str, Task]] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, dataset: str, study_id: int | None, systems: Collection[str]) -> BlindTasks:
        return cls(dataset, study_id, frozenset(systems))

    def request_id(self, task: Task) -> str:
        return request_id_for(self.dataset, self.study_id, task.item_id, task.systems)

    def task_of(self, kind: JudgmentKind, item: str, request_id: object) -> Task | None:
        """The task of ``kind`` on ``item`` whose request id is ``request_id`` (``None``: none is)."""
        if (kind, item) not in self._by_request:
            self._by_request[kind, item] = {self.request_id(t): t for t in self._candidates(kind, item)}
        return self._by_request[kind, item].get(str(request_id))

    def _candidates(self, kind: JudgmentKind, item: str) -> list[Task]:
        if kind == "rating":
            return [RatingTask(item, s) for s in self.systems]
        return [ComparisonTask(item, a, b) for a, b in itertools.combinations(sorted(self.systems), 2)]
