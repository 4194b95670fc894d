"""The answer to a study's question in names, and the leaderboard behind it.

The answer in words and each system's status are its question kind's (the registry entry's
``words``, ``status`` and ``status_words``, :data:`~prefeval_core.protocol.QUESTION_KINDS`); each
reads only the current decisions and the question, and "yet" becomes "with the judgments available"
once the run is finished.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from prefeval_core.diagnostics.leaderboard import Leaderboard, ScoreKind, comparison_points, leaderboard
from prefeval_core.protocol import QUESTION_KINDS, ProtocolState
from prefeval_core.protocol.questions import Decided
from prefeval_core.protocol.result import decided
from prefeval_core.protocol.settings import POOL_STATISTICS

LEADERBOARD_DRAWS = 2000
"""Bootstrap resamples behind the leaderboard's intervals and P(top k)."""


def answer_words(state: ProtocolState) -> str:
    """The run's answer in names (its kind's ``words``)."""
    return state.settings.question.entry.words(decided(state))


def system_status(d: Decided) -> tuple[str, ...]:
    """(S,) each system's status for the question (its kind's ``status``; e.g. top-k: ``sure``,
    ``in``, ``out``; baseline: ``baseline``, ``better``, ``worse``, ``undecided``; all-pairs:
    ``settled`` or ``undecided``)."""
    return d.question.entry.status(d)


def status_words(kind: str) -> str:
    """What the leaderboard's status column means for a question kind (:func:`system_status`)."""
    return QUESTION_KINDS[kind].status_words


@dataclass(frozen=True)
class Exclusion:
    """A system a tier question ruled out: after round ``round``, with ``cost`` judgments revealed
    by then (in the study's unit)."""

    system: str
    round: int
    cost: int


def exclusions(state: ProtocolState) -> tuple[Exclusion, ...]:
    """The systems a tier question (top-k) has ruled out, in the order it ruled them out (systems
    ruled out in the same round in the table's order); none for the other questions. Under
    question-level control a system leaves by closed testing over the sets that could still hold
    the tier (method.md §13), not by one pair's decision, so this, not a pair matrix, is the
    answer's history."""
    if not state.settings.question.entry.tier:
        return ()
    out, inside, cost = [], np.ones(len(state.table.systems), dtype=bool), 0
    for record in state.records:
        cost += record.cost
        out += [Exclusion(state.table.systems[s], record.round, cost) for s in np.flatnonzero(inside & ~record.members)]
        inside = inside & record.members
    return tuple(out)


def exclusion_words(state: ProtocolState) -> str:
    """How many systems the tier question ruled out, and how its rule rules one out, for the caption
    of :func:`exclusions_frame` (dashboard and report)."""
    k = state.settings.question.tier_size
    count = f"{len(exclusions(state))} of {len(state.table.systems)} systems ruled out so far, in the order below. "
    if state.settings.error_control == "question":
        best = "the best" if k == 1 else f"among the best {k}"
        return count + (
            f"Under question-level control a system leaves when closed testing shows, for the whole answer at once, that it "
            f"cannot be {best} (method.md §13): no pair needs to be decided on its own."
        )
    return count + f"A system leaves once {k} {'system is' if k == 1 else 'systems are'} decided better than it."


def exclusions_frame(state: ProtocolState) -> pd.DataFrame:
    """One row per :func:`exclusions` entry: system, round, judgments revealed by then."""
    found = exclusions(state)
    return pd.DataFrame(
        {
            "system": [e.system for e in found],
            "ruled out after round": [e.round for e in found],
            f"{state.table.unit} used by then": [e.cost for e in found],
        }
    )


def study_leaderboard(state: ProtocolState, *, draws: int = LEADERBOARD_DRAWS) -> Leaderboard:
    """The leaderboard of the human judgments revealed so far (:mod:`prefeval_core.diagnostics.leaderboard`):
    mean human score per system (ratings) or win rate (comparisons), with each system's status for
    the question; P(top k) with the question's k (1 for the other questions); seeded by the run's seed."""
    table, reveals = state.table, state.reveals
    n_systems, n_items = len(table.systems), len(table.items)
    revealed = reveals.round > 0
    kind: ScoreKind
    if table.grid is not None:
        shape = (n_systems, n_items)
        points = np.where(revealed, np.nan_to_num(reveals.value), 0.0).reshape(shape)
        weights = revealed.astype(np.float64).reshape(shape)
        spent = np.where(revealed, reveals.cost, 0).reshape(shape).sum(axis=1)
        pool = table.grid.requestable.sum(axis=1).astype(np.float64)
        kind = "mean score"
    else:
        rows = np.flatnonzero(revealed)
        outcome = np.nan_to_num(reveals.value[rows], nan=-1).astype(np.int8)
        pairs = table.pair_systems[table.row_pair[rows]]
        points, weights = comparison_points(n_systems, n_items, pairs, table.row_item[rows], outcome)
        spent = np.bincount(pairs.ravel(), weights=np.repeat(reveals.cost[rows], 2), minlength=n_systems).astype(np.int64)
        pool = np.bincount(table.pair_systems[table.row_pair[table.requestable]].ravel(), minlength=n_systems).astype(np.float64)
        kind = "win rate"
    return leaderboard(
        table.systems,
        points,
        weights,
        spent,
        kind=kind,
        k=state.settings.question.tier_size,
        status=system_status(decided(state)),
        draws=draws,
        seed=state.settings.seed,
        pool=pool if state.settings.statistic in POOL_STATISTICS else None,  # the estimand is the study's own items
    )


def leaderboard_frame(board: Leaderboard) -> pd.DataFrame:
    """One row per system, best first: score, interval, P(top k), status, judgments spent."""
    score = "mean human score" if board.kind == "mean score" else "win rate"
    return pd.DataFrame(
        {
            "system": board.systems,
            score: board.score,
            "95% low": board.low,
            "95% high": board.high,
            f"P(top {board.k})": board.p_top,
            "status": board.status,
            "judgments": board.spent,
        }
    )


def leaderboard_json(board: Leaderboard) -> dict[str, Any]:
    """The leaderboard's keys of the ``replay --json`` summary (NaN as null: a score without a judgment,
    an interval from fewer than two items judged, P(top k) while any system has that few)."""

    def number(value: float) -> float | None:
        return None if np.isnan(value) else float(value)

    rows = [
        {
            "system": system,
            "score": number(board.score[i]),
            "low": number(board.low[i]),
            "high": number(board.high[i]),
            "p_top": number(board.p_top[i]),
            "status": board.status[i],
            "judgments": int(board.spent[i]),
        }
        for i, system in enumerate(board.systems)
    ]
    return {"leaderboard": rows, "leaderboard_score": board.kind, "leaderboard_k": board.k}
