"""The protocol as pure steps (method.md §5, §12; Deriu et al. Alg. 2).

One round is :func:`next_request` (which judgments to collect) -> a source answers ->
:func:`apply_judgments` -> :func:`decide_round`. Replay (answers looked up in a finished human
evaluation) and live annotation (answers typed in by people) differ only in the source; see
:mod:`prefeval_core.protocol.run`.

What a round asks for (method.md §12): only judgments that can still change the answer to the
question (:mod:`prefeval_core.protocol.questions`). In a ratings study, the next N items of one
seeded item order (shared by all systems) for every system in a pair that still matters — each
rating, once revealed, serves every pair of its system; in a comparisons study, N comparisons
(each pair's own seeded order) for every pair that still matters.

Requests the lead withdrew (:func:`withdraw_requests`) come last in either order: a round asks
for them again only when a system or pair has nothing else left.

Choices: the budget (in the study's unit) is never exceeded; when a round's requests exceed
the budget left it is shared one request at a time over the requesting systems or pairs in
order (round-robin). :func:`decide_round` re-decides only the undecided pairs whose
judgments changed in the round (a pair whose data did not change keeps its decision instead
of re-drawing the same posterior until a Monte-Carlo fluke decides it); a decided pair stays
decided.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from prefeval_core.decision import SamplerSettings
from prefeval_core.errors import PrefevalError
from prefeval_core.protocol.error_controls import ERROR_CONTROL_RULES
from prefeval_core.protocol.policies import POLICIES
from prefeval_core.protocol.question_control import DecidedRound
from prefeval_core.protocol.questions import open_pairs, question_pairs
from prefeval_core.protocol.state import ProtocolState, RoundRecord
from prefeval_core.protocol.table import StudyTable
from prefeval_core.vocabulary.outcomes import canonical_pair, oriented_code
from prefeval_core.vocabulary.tasks import ComparisonTask, RatingTask, Task


class ProtocolError(PrefevalError, ValueError):
    """A judgment or step the protocol refuses (over budget, unknown system or item, conflicting value)."""


def _refused(message: str) -> ProtocolError:
    return ProtocolError.single("refused", message)


@dataclass(frozen=True)
class AnnotationRequest:
    """What to collect for round ``round``: tasks in request order (by system or pair, then in
    the seeded item order), and what they cost in the study's unit."""

    round: int
    tasks: tuple[Task, ...]
    cost: int

    def __len__(self) -> int:
        return len(self.tasks)


@dataclass(frozen=True)
class RatingJudgment:
    """A human score of ``system``'s output for ``item_id`` (higher is better), and the
    judgments it combines (several annotators' mean: one each)."""

    item_id: str
    system: str
    score: float
    cost: int = 1


@dataclass(frozen=True)
class ComparisonJudgment:
    """A human outcome for ``item_id`` of the pair ``(system_a, system_b)`` *as given* (either
    order; flipped to the canonical pair): 0 ``>`` (system_a better), 1 ``=``, 2 ``<``."""

    item_id: str
    system_a: str
    system_b: str
    outcome: int
    cost: int = 1


Judgment = RatingJudgment | ComparisonJudgment


def stopped_pairs(state: ProtocolState) -> npt.NDArray[np.bool_]:
    """(P,) pairs that will get no more judgments: no items left, futile, or equivalent."""
    status = state.status
    return (state.rows_left() == 0) | status.futile | status.equivalent


def pairs_that_matter(state: ProtocolState) -> npt.NDArray[np.bool_]:
    """(P,) pairs whose judgments can still change the answer (method.md §12)."""
    table = state.table
    question = state.settings.question
    return open_pairs(
        question,
        question_pairs(question, table.systems, table.pair_systems),
        state.members,
        state.decisions,
        stopped_pairs(state),
        table.pair_systems,
    )


def next_request(state: ProtocolState) -> AnnotationRequest:
    """The judgments to collect next (module docstring); empty when nothing matters any more,
    the budget is spent or the round limit is reached."""
    number = state.round + 1
    limit = state.settings.max_rounds
    if (limit is not None and state.round >= limit) or state.budget_left <= 0:
        return AnnotationRequest(number, (), 0)
    matter = pairs_that_matter(state)
    if state.table.grid is not None:
        return _rating_request(state, matter, number)
    return _comparison_request(state, matter, number)


def _rating_request(state: ProtocolState, matter: npt.NDArray[np.bool_], number: int) -> AnnotationRequest:
    table = state.table
    grid = table.grid
    assert grid is not None
    width = len(table.items)
    systems = np.unique(table.pair_systems[matter].ravel())
    order = item_order(state)
    free = state.free_cells().ravel()
    wanted: list[list[int]] = []
    for system in systems:
        cells = system * width + order
        cells = cells[free[cells]]
        cells = cells[np.argsort(state.withdrawn_slots[cells], kind="stable")]
        wanted.append(cells[: state.settings.batch].tolist())
    granted = _share_budget(wanted, grid.cost.ravel(), state.budget_left)
    tasks = tuple(RatingTask(table.items[cell % width], table.systems[cell // width]) for cells in granted for cell in cells)
    return AnnotationRequest(number, tasks, int(sum(grid.cost.ravel()[c] for cells in granted for c in cells)))


def _comparison_request(state: ProtocolState, matter: npt.NDArray[np.bool_], number: int) -> AnnotationRequest:
    table = state.table
    rank = row_order(state)
    free = state.free_rows()
    policy = POLICIES[state.settings.policy]
    count = policy(state, matter)
    wanted: list[list[int]] = []
    starts = table.pair_starts
    for pair in np.flatnonzero(count > 0):
        rows = np.arange(starts[pair], starts[pair + 1])
        rows = rows[free[rows]]
        wanted.append(rows[np.lexsort((rank[rows], state.withdrawn_slots[rows]))][: count[pair]].tolist())
    granted = _share_budget(wanted, table.row_cost, state.budget_left)
    tasks = tuple(ComparisonTask(table.items[table.row_item[r]], *table.pairs[table.row_pair[r]]) for rows in granted for r in rows)
    return AnnotationRequest(number, tasks, int(sum(table.row_cost[r] for rows in granted for r in rows)))


def _share_budget(wanted: list[list[int]], cost: npt.NDArray[np.int64], budget: int) -> list[list[int]]:
    """All of ``wanted`` if the budget allows, else one request per asker per pass, in order,
    while the next request still fits."""
    total = sum(int(cost[s]) for slots in wanted for s in slots)
    if total <= budget:
        return wanted
    granted: list[list[int]] = [[] for _ in wanted]
    left = budget
    for depth in range(max((len(w) for w in wanted), default=0)):
        for asker, slots in enumerate(wanted):
            if depth < len(slots) and cost[slots[depth]] <= left:
                granted[asker].append(slots[depth])
                left -= int(cost[slots[depth]])
        if left <= 0:
            break
    return granted


def item_order(state: ProtocolState) -> npt.NDArray[np.int64]:
    """The seeded item order shared by all systems of a ratings study: a permutation of the
    item indices by ``np.random.default_rng(seed)``."""
    return _item_order(len(state.table.items), state.settings.seed)


@lru_cache(maxsize=16)
def _item_order(n_items: int, seed: int) -> npt.NDArray[np.int64]:
    order = np.random.default_rng(seed).permutation(n_items).astype(np.int64)
    order.flags.writeable = False
    return order


def row_order(state: ProtocolState) -> npt.NDArray[np.int64]:
    """(R,) each requestable row's position in its pair's seeded order (comparisons studies;
    -1 elsewhere): pairs in table order, each pair's requestable rows (sorted by item) shuffled
    by one ``np.random.default_rng(seed)`` — the replay order of Deriu et al. (unchanged since state format 1)."""
    return _row_order(state.table, state.settings.seed)


@lru_cache(maxsize=16)  # tables hash by identity: one order per table and seed, computed once
def _row_order(table: StudyTable, seed: int) -> npt.NDArray[np.int64]:
    rng = np.random.default_rng(seed)
    rank = np.full(len(table.row_pair), -1, dtype=np.int64)
    starts = table.pair_starts
    for pair in range(table.n_pairs):
        rows = np.arange(starts[pair], starts[pair + 1])
        rows = rows[table.requestable[rows]]
        rank[rows[rng.permutation(len(rows))]] = np.arange(len(rows))
    rank.flags.writeable = False
    return rank


def apply_judgments(state: ProtocolState, judgments: Iterable[Judgment]) -> ProtocolState:
    """The state with the human judgments added to the open round.

    Judgments need not have been requested (annotators may add more). A judgment repeated for
    an already revealed slot with the same value is ignored; a different value raises
    :class:`ProtocolError`, as do unknown systems, items or pairs, a rating in a comparisons
    study (or the reverse), invalid values, and going over budget (then nothing is applied).
    """
    slots, values, costs = _slots_of(state, judgments)
    if not slots:
        return state
    index = np.array(slots, dtype=np.int64)
    value = np.array(values, dtype=np.float64)
    cost = np.array(costs, dtype=np.int64)
    known = state.reveals.round[index] > 0
    same = known & (state.reveals.value[index] == value)
    clash = np.flatnonzero(known & ~same)
    if clash.size:
        raise _refused(
            f"judgment slot {int(index[clash[0]])} already has the value {state.reveals.value[index[clash[0]]]}, got {value[clash[0]]}"
        )
    new = ~known
    index, value, cost = index[new], value[new], cost[new]
    _, first = np.unique(index, return_index=True)  # one judgment per slot within a batch too
    if len(first) != len(index):
        duplicate = np.setdiff1d(np.arange(len(index)), first)
        mismatch = [int(i) for i in duplicate if value[i] != value[first[np.searchsorted(index[first], index[i])]]]
        if mismatch:
            raise _refused(f"two different judgments for slot {int(index[mismatch[0]])} in one batch")
    index, value, cost = index[np.sort(first)], value[np.sort(first)], cost[np.sort(first)]
    if int(cost.sum()) > state.budget_left:
        raise _refused(f"{int(cost.sum())} new judgments exceed the budget left ({state.budget_left})")
    return replace(state, reveals=state.reveals.with_values(index, value, cost, state.round + 1))


def _slots_of(state: ProtocolState, judgments: Iterable[Judgment]) -> tuple[list[int], list[float], list[int]]:
    table = state.table
    systems = {name: i for i, name in enumerate(table.systems)}
    items = {name: i for i, name in enumerate(table.items)}
    slots: list[int] = []
    values: list[float] = []
    costs: list[int] = []
    for judgment in judgments:
        item = items.get(str(judgment.item_id))
        if item is None:
            raise _refused(f"item {judgment.item_id!r} is not part of this study")
        if judgment.cost < 1:
            raise _refused(f"a judgment costs at least 1, got {judgment.cost}")
        if isinstance(judgment, RatingJudgment):
            if table.grid is None:
                raise _refused("this study collects comparisons, not ratings")
            system = systems.get(judgment.system)
            if system is None:
                raise _refused(f"system {judgment.system!r} is not part of this study")
            if not np.isfinite(judgment.score):
                raise _refused(f"a score must be a finite number, got {judgment.score!r}")
            slots.append(system * len(table.items) + item)
            values.append(float(judgment.score))
        else:
            if table.grid is not None:
                raise _refused("this study collects ratings of single outputs, not comparisons")
            if judgment.outcome not in (0, 1, 2):
                raise _refused(f"outcome code must be 0, 1 or 2, got {judgment.outcome!r}")
            slots.append(_row_of(state, judgment.system_a, judgment.system_b, item, systems))
            values.append(float(oriented_code(judgment.outcome, canonical_pair(judgment.system_a, judgment.system_b)[2])))
        costs.append(int(judgment.cost))
    return slots, values, costs


def _row_of(state: ProtocolState, system_a: str, system_b: str, item: int, systems: dict[str, int]) -> int:
    table = state.table
    a, b = systems.get(system_a), systems.get(system_b)
    if a is None or b is None or a == b:
        raise _refused(f"no pair {system_a} vs {system_b} in this study")
    pair = _pair_lookup(state).get((min(a, b), max(a, b)))
    if pair is None:
        raise _refused(f"no pair {system_a} vs {system_b} in this study")
    start, stop = table.pair_starts[pair], table.pair_starts[pair + 1]
    position = start + np.searchsorted(table.row_item[start:stop], item)
    if position >= stop or table.row_item[position] != item:
        raise _refused(f"item {table.items[item]!r} is not an item of the pair {system_a} vs {system_b}")
    return int(position)


def _pair_lookup(state: ProtocolState) -> dict[tuple[int, int], int]:
    return _pairs_by_systems(state.table)


@lru_cache(maxsize=16)
def _pairs_by_systems(table: StudyTable) -> dict[tuple[int, int], int]:
    return {(int(a), int(b)): p for p, (a, b) in enumerate(table.pair_systems)}


def decide_round(state: ProtocolState, *, sampler_settings: SamplerSettings | None = None) -> ProtocolState:
    """Close the open round: decide every undecided pair that got new judgments in it, update
    the futility flags and (top-k) the answer's members.

    Args:
        sampler_settings: passed to the decision engine (e.g. smaller sampler sizes in tests).
    """
    number = state.round + 1
    rule = ERROR_CONTROL_RULES[state.settings.error_control]
    return _close_round(state, number, rule.decide(state, number, sampler_settings))


def _close_round(state: ProtocolState, number: int, decided: DecidedRound) -> ProtocolState:
    cost = int(state.reveals.cost[state.reveals.round == number].sum())
    record = RoundRecord(round=number, pairs=decided.pairs, members=decided.members, cost=cost, **decided.decisions.fields())
    return state.with_record(record)


def is_finished(state: ProtocolState) -> bool:
    """No open round, and the budget is spent, the round limit reached, or no judgment can
    change the answer any more."""
    if state.open_reveals:
        return False
    return len(next_request(state)) == 0


def stop_reason(state: ProtocolState) -> str:
    """Why a finished run stopped (``running`` while it is not): see :mod:`prefeval_core.protocol.stop`."""
    from prefeval_core.protocol.stop import stop_reason as reason  # stop.py builds on this module

    return reason(state)


def undo_round(state: ProtocolState) -> ProtocolState:
    """Undo the latest step: the open round's judgments if there are any, else the last
    completed round (its decisions and its judgments). Round 0 with nothing open is returned as is."""
    if state.open_reveals:
        return replace(state, reveals=state.reveals.without_round(state.round + 1))
    if not state.records:
        return state
    kept = tuple(w for w in state.withdrawn if w[1] != state.round)
    return replace(state, reveals=state.reveals.without_round(state.round), records=state.records[:-1], withdrawn=kept)


def withdraw_requests(state: ProtocolState, tasks: Iterable[Task]) -> ProtocolState:
    """The state with the requests for ``tasks`` withdrawn (a round decided early whose open
    requests the lead does not want judged): listed with the last completed round, so that
    :func:`undo_round` brings them back; revealed ones are left as they are.

    Raises:
        ProtocolError: no round decided yet, or a task on a system, item or pair outside the study.
    """
    if not state.records:
        raise _refused("requests are withdrawn when a round is decided; no round is decided yet")
    slots = {_task_slot(state, task) for task in tasks}
    slots = {s for s in slots if state.reveals.round[s] == 0}
    if not slots:
        return state
    withdrawn = dict(state.withdrawn) | dict.fromkeys(slots, state.round)
    return replace(state, withdrawn=tuple(sorted(withdrawn.items())))


def _task_slot(state: ProtocolState, task: Task) -> int:
    if isinstance(task, RatingTask):
        return _slots_of(state, [RatingJudgment(task.item_id, task.system, 0.0)])[0][0]
    return _slots_of(state, [ComparisonJudgment(task.item_id, task.system_a, task.system_b, 0)])[0][0]
