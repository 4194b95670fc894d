"""Feeding stored human judgments into the protocol (live studies).

The store combines the annotators' answers per task (majority for comparisons, mean for
ratings, :mod:`prefeval_core.combine`) and keeps only complete tasks (judged by at least
``judgments per item`` annotators). Of those, the protocol gets what it has not seen yet: the
tasks of its current request first, then the others (in the store's order), as many as the
budget left allows **(choice)**, so feeding never fails for going over budget. Each combined
answer costs the judgments behind it.
"""

from __future__ import annotations

import pandas as pd

from prefeval_core.protocol import ComparisonJudgment, ComparisonTask, Judgment, ProtocolState, RatingJudgment, RatingTask, next_request
from prefeval_core.store import Store


def unseen_judgments(state: ProtocolState, complete: pd.DataFrame) -> list[Judgment]:
    """The combined answers of ``complete`` (the store's ``complete_ratings`` or
    ``complete_comparisons`` frame) that the protocol has not seen, ready for
    :func:`~prefeval_core.protocol.apply_judgments`."""
    table = state.table
    requested = {_key(t): k for k, t in enumerate(next_request(state).tasks)}
    candidates: list[tuple[int, Judgment]] = []
    if table.grid is not None:
        systems = {name: i for i, name in enumerate(table.systems)}
        items = {name: i for i, name in enumerate(table.items)}
        for item, system, score, judgments in complete[["item_id", "system", "score", "judgments"]].itertuples(index=False):
            s, i = systems.get(str(system)), items.get(str(item))
            if s is None or i is None or state.reveals.round[s * len(table.items) + i] > 0:
                continue
            key = (str(item), str(system))
            candidates.append((requested.get(key, len(requested)), RatingJudgment(key[0], key[1], float(score), int(judgments))))
    else:
        rounds, _ = state.row_reveals
        open_rows = {
            (table.pairs[p], table.items[i]) for p, i in zip(table.row_pair[rounds == 0], table.row_item[rounds == 0], strict=True)
        }
        for a, b, item, outcome, judgments in complete[["system_a", "system_b", "item_id", "outcome", "judgments"]].itertuples(index=False):
            if ((a, b), str(item)) not in open_rows:
                continue
            comparison = ComparisonJudgment(str(item), str(a), str(b), int(outcome), int(judgments))
            candidates.append((requested.get((str(item), str(a), str(b)), len(requested)), comparison))
    candidates.sort(key=lambda pair: pair[0])  # stable: the store's order within each group
    chosen: list[Judgment] = []
    left = state.budget_left
    for _, candidate in candidates:
        if candidate.cost <= left:
            chosen.append(candidate)
            left -= candidate.cost
    return chosen


def _key(task: RatingTask | ComparisonTask) -> tuple[str, ...]:
    return (task.item_id, task.system) if isinstance(task, RatingTask) else (task.item_id, task.system_a, task.system_b)


def stored_judgments(
    store: Store, dataset_key: str, state: ProtocolState, *, study_id: int | None = None, per_item: int = 1
) -> list[Judgment]:
    """The store's complete, combined judgments of this data (and study) the protocol has not seen."""
    if state.table.grid is not None:
        complete = store.complete_ratings(dataset_key, study_id=study_id, per_item=per_item)
    else:
        complete = store.complete_comparisons(dataset_key, study_id=study_id, per_item=per_item)
    return unseen_judgments(state, complete)
