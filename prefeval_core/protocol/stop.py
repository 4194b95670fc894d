"""Why a run stopped, said honestly (method.md §12).

:func:`stop_reason` of a finished run, checked in this order:

* ``max_rounds``: the round limit is reached while some pair still matters;
* ``budget``: the budget is spent while some pair still matters;
* ``answered``: every pair of the question is decided or shown equivalent (all-pairs,
  baseline), or the top-k tier has at most k members;
* ``futile``: the futility rule is on (β = ``settings.futility``), undecided pairs are left and at
  least one of them was stopped by it (its evidence is unlikely to reach the threshold before its
  items run out; with a pool statistic the exact refutation as they run out can still decide it:
  :func:`cost_to_settle` bounds what that costs, results_question_control.md §15.1);
* ``exhausted``: undecided pairs are left and no judgment left can decide them (their items
  are used up, or even every outcome left could not make them significant: the exact stop
  that error control applies with the futility rule off).

``running`` while the run is not finished. :func:`futile_pairs` names the pairs that were
stopped before their items ran out (by the futility rule or the exact stop).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from prefeval_core.protocol.questions import open_pairs, question_pairs
from prefeval_core.protocol.state import ProtocolState
from prefeval_core.protocol.steps import is_finished, pairs_that_matter
from prefeval_core.vocabulary.outcomes import TIE

STOP_REASONS = ("running", "answered", "futile", "exhausted", "budget", "max_rounds")
"""Every value :func:`stop_reason` returns."""


def unanswered_pairs(state: ProtocolState) -> npt.NDArray[np.bool_]:
    """(P,) undecided pairs that would still matter to the answer if they could get judgments (a pair
    shown equivalent within the margin is answered)."""
    table = state.table
    question = state.settings.question
    asked = question_pairs(question, table.systems, table.pair_systems)
    none_stopped = np.zeros(table.n_pairs, dtype=bool)
    still_open = open_pairs(question, asked, state.members, state.decisions, none_stopped, table.pair_systems)
    return still_open & (state.decisions == TIE) & ~state.status.equivalent


def _stopped(state: ProtocolState) -> npt.NDArray[np.bool_]:
    """(P,) pairs that still matter to the answer but were stopped (futility rule or exact stop)."""
    return unanswered_pairs(state) & state.status.futile


def futile_pairs(state: ProtocolState) -> tuple[tuple[str, str], ...]:
    """The pairs that still matter to the answer but were stopped before their items ran out
    (futility rule or exact stop), in table order."""
    return tuple(state.table.pairs[p] for p in np.flatnonzero(_stopped(state)))


def stop_reason(state: ProtocolState) -> str:
    """Why the run stopped (module docstring), one of :data:`STOP_REASONS`."""
    if not is_finished(state):
        return "running"
    limit = state.settings.max_rounds
    matter = pairs_that_matter(state).any()
    if limit is not None and state.round >= limit and matter:
        return "max_rounds"
    if state.budget_left <= 0 and matter:
        return "budget"
    if not unanswered_pairs(state).any():
        return "answered"
    return "futile" if state.settings.futility is not None and futile_pairs(state) else "exhausted"


def cost_to_settle(state: ProtocolState) -> int:
    """The most that judging the pairs the futility rule stopped to the end of their items could
    still cost (in the study's unit): every judgment still purchasable for them — in a ratings
    study the unrated outputs of their systems, in a comparisons study their unjudged rows. The
    run with the rule off (``futility=None``) buys at most this much more of them; 0 when no pair
    that matters was stopped by it."""
    table = state.table
    stopped = _stopped(state) & (state.rows_left() > 0)
    if not stopped.any():
        return 0
    if table.grid is not None:
        systems = np.unique(table.pair_systems[stopped].ravel())
        return int(table.grid.cost[systems][state.free_cells()[systems]].sum())
    return int(table.row_cost[stopped[table.row_pair] & state.free_rows()].sum())
