"""Running the protocol loop with a source of human judgments (method.md §5).

A *source* is a function ``source(request) -> judgments``. Replay answers from a finished
human evaluation (:func:`replay_source`); a live source is whatever the shell provides (the
dashboard collects judgments, then calls :func:`~prefeval_core.protocol.steps.apply_judgments`
and :func:`~prefeval_core.protocol.steps.decide_round` itself). The loop is the same.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from prefeval_core.decision import SamplerSettings
from prefeval_core.protocol.state import ProtocolState
from prefeval_core.protocol.steps import (
    AnnotationRequest,
    ComparisonJudgment,
    Judgment,
    RatingJudgment,
    RatingTask,
    apply_judgments,
    decide_round,
    next_request,
)
from prefeval_core.protocol.table import StudyTable

Source = Callable[[AnnotationRequest], Sequence[Judgment]]
Progress = Callable[[ProtocolState], None]


def replay_source(table: StudyTable) -> Source:
    """Answers requests with the judgments of the finished human evaluation in ``table``
    (ratings from its grid, with their cost; comparisons from its rows); tasks the data
    cannot answer are skipped."""
    systems = {name: i for i, name in enumerate(table.systems)}
    items = {name: i for i, name in enumerate(table.items)}
    pairs = {pair: p for p, pair in enumerate(table.pairs)}

    def row_of(pair: tuple[str, str], item_id: str) -> int | None:
        """The table row of ``pair`` on ``item_id`` (a pair's rows are sorted by item), if any."""
        p, i = pairs.get(pair), items.get(item_id)
        if p is None or i is None:
            return None
        start, stop = table.pair_starts[p], table.pair_starts[p + 1]
        row = start + int(np.searchsorted(table.row_item[start:stop], i))
        return row if row < stop and table.row_item[row] == i else None

    def answer(request: AnnotationRequest) -> list[Judgment]:
        judgments: list[Judgment] = []
        for task in request.tasks:
            if isinstance(task, RatingTask):
                assert table.grid is not None
                s, i = systems[task.system], items[task.item_id]
                score = table.grid.scores[s, i]
                if not np.isnan(score):
                    judgments.append(RatingJudgment(task.item_id, task.system, float(score), int(table.grid.cost[s, i])))
            else:
                row = row_of((task.system_a, task.system_b), task.item_id)
                if row is not None and table.human[row] >= 0:
                    judgments.append(
                        ComparisonJudgment(task.item_id, task.system_a, task.system_b, int(table.human[row]), int(table.row_cost[row]))
                    )
        return judgments

    return answer


def run_protocol(
    state: ProtocolState,
    source: Source,
    *,
    max_rounds: int | None = None,
    progress: Progress | None = None,
    sampler_settings: SamplerSettings | None = None,
) -> ProtocolState:
    """Run rounds until the protocol is finished (or ``max_rounds`` more rounds are done).

    Each round: request, collect from ``source``, apply, decide. A round whose request the
    source cannot answer at all ends the run (nothing more can be learned from that source).
    """
    done = 0
    while max_rounds is None or done < max_rounds:
        request = next_request(state)
        if not request.tasks:
            break
        judgments = source(request)
        if not judgments:
            break
        state = decide_round(apply_judgments(state, judgments), sampler_settings=sampler_settings)
        done += 1
        if progress is not None:
            progress(state)
    return state
