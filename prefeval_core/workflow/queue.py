"""The order in which one annotator sees a request's tasks.

A protocol's request lists its tasks grouped (all of one pair, or one system, then the next);
judged in that order an annotator would see ten outputs of one system in a row and learn its
style. :func:`annotator_queue` interleaves the groups and shuffles within each, seeded by the
study's seed and the annotator's name: the same annotator gets the same order after a reload,
two annotators get different orders (so several at once rarely reach for the same task).
:func:`next_for` takes the next task from that queue, tasks others have started first when each
needs several annotators (so complete answers, the ones the protocol can use, come early).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from prefeval_core.protocol import ProtocolState, next_request
from prefeval_core.store import Judgment, next_task
from prefeval_core.store.assignment import annotators_by_task
from prefeval_core.vocabulary.tasks import Task


def requested_tasks(state: ProtocolState) -> tuple[Task, ...]:
    """The tasks of the protocol's next request, in the protocol's order (empty when it asks for nothing more)."""
    return tuple(next_request(state).tasks)


def _rng(seed: int, annotator: str) -> np.random.Generator:
    name = int.from_bytes(hashlib.sha256(annotator.encode()).digest()[:8], "big")
    return np.random.default_rng([seed, name])


def annotator_queue(tasks: Sequence[Task], annotator: str, seed: int) -> list[Task]:
    """``tasks`` reordered for ``annotator``: each group of tasks on the same systems (a pair, or
    one system) shuffled, the groups in a shuffled order, then dealt round-robin (one task of each
    group in turn), so neighbours in the queue are on different systems wherever the request
    allows. The same ``(tasks, annotator, seed)`` always gives the same queue; every task appears once.
    """
    rng = _rng(seed, annotator)
    groups: dict[tuple[str, ...], list[Task]] = {}
    for task in tasks:
        groups.setdefault(task.systems, []).append(task)
    keys = list(groups)
    shuffled = [[groups[keys[g]][i] for i in rng.permutation(len(groups[keys[g]]))] for g in rng.permutation(len(keys))]
    longest = max((len(group) for group in shuffled), default=0)
    return [group[i] for i in range(longest) for group in shuffled if i < len(group)]


def next_for(tasks: Sequence[Task], judgments: Sequence[Judgment], annotator: str, per_item: int, seed: int) -> Task | None:
    """The annotator's next task: in :func:`annotator_queue` order, first the tasks other
    annotators have started but fewer than ``per_item`` finished, then the untouched ones; never
    one the annotator judged (see :func:`~prefeval_core.store.next_task`); ``None`` when none is left."""
    queue = annotator_queue(tasks, annotator, seed)
    started = annotators_by_task(judgments)
    return next_task(sorted(queue, key=lambda task: task not in started), judgments, annotator, per_item)
