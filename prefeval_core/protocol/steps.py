"""The protocol as pure steps (method.md §5; Deriu et al. Alg. 2).

One round is ``next_request`` (which items of which pairs to annotate) -> a source answers
with human outcomes -> ``apply_annotations`` -> ``decide_round``. Replay (outcomes looked up
in an uploaded human evaluation) and live annotation (outcomes typed in by people) differ
only in the source; see :mod:`prefeval_core.protocol.run`.

Choices (method.md §5): the budget is never exceeded; when a round's requests exceed the
budget left, it is shared one item at a time over the requesting pairs in pair order
(round-robin), so no pair gets a second item before each got a first. ``decide_round``
re-decides only the undecided pairs whose counts changed in the round (a pair whose data did
not change keeps its decision instead of re-drawing the same posterior until a Monte-Carlo
fluke decides it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from prefeval_core.counts import CountTriples
from prefeval_core.decision import SamplerSettings
from prefeval_core.protocol.decide import decide_with_settings
from prefeval_core.protocol.policies import POLICIES, Policy
from prefeval_core.protocol.state import ProtocolState, Reveal, RoundRecord


class ProtocolError(ValueError):
    """An annotation or step that the protocol refuses (over budget, unknown pair, conflicting outcome)."""


@dataclass(frozen=True)
class RequestedItem:
    """One human outcome to collect: the canonical pair (and its index) and the item."""

    pair: int
    system_a: str
    system_b: str
    item_id: str


@dataclass(frozen=True)
class AnnotationRequest:
    """What to annotate for round ``round``: items grouped by pair, in pair order then request order."""

    round: int
    items: tuple[RequestedItem, ...]

    def __len__(self) -> int:
        return len(self.items)


@dataclass(frozen=True)
class Annotation:
    """One human outcome for ``item_id`` of the pair ``(system_a, system_b)`` as given (either
    order; it is flipped to the canonical pair): 0 ``>`` (system_a better), 1 ``=``, 2 ``<``."""

    item_id: str
    system_a: str
    system_b: str
    outcome: int


def next_request(state: ProtocolState, policy: Policy | None = None) -> AnnotationRequest:
    """The items to annotate next: the policy's wish per pair (default: the settings' policy),
    capped by each pair's unrevealed pool and by the budget left (round-robin, pair order)."""
    policy = policy or POLICIES[state.settings.policy]
    pools = [p.unrevealed_pool() for p in state.pairs]
    wanted = np.minimum(np.asarray(policy(state), dtype=np.int64), [len(pool) for pool in pools])
    granted = _share_budget(np.maximum(wanted, 0), state.budget_left)
    items = tuple(
        RequestedItem(index, pair.system_a, pair.system_b, item)
        for index, pair in enumerate(state.pairs)
        for item in pools[index][: granted[index]]
    )
    return AnnotationRequest(round=state.round + 1, items=items)


def _share_budget(wanted: npt.NDArray[np.int64], budget: int) -> npt.NDArray[np.int64]:
    """Grant ``wanted`` if the budget allows, else hand out the budget one item per pair per pass."""
    if wanted.sum() <= budget:
        return wanted
    granted = np.zeros_like(wanted)
    left = budget
    while left > 0:
        asking = np.flatnonzero(granted < wanted)
        step = asking[:left]
        granted[step] += 1
        left -= len(step)
    return granted


def apply_annotations(state: ProtocolState, annotations: Iterable[Annotation]) -> ProtocolState:
    """The state with the human outcomes added to the open round.

    Items need not have been requested (live annotators may add more) nor be in the pool.
    An outcome repeated for an already revealed item is ignored; a different outcome for it
    raises :class:`ProtocolError`, as do unknown pairs, invalid codes, and going over budget
    (then nothing is applied).
    """
    pairs = list(state.pairs)
    added: dict[int, list[Reveal]] = {}
    for annotation in annotations:
        try:
            index, flipped = state.index_of(annotation.system_a, annotation.system_b)
        except KeyError as exc:
            raise ProtocolError(str(exc.args[0])) from None
        if annotation.outcome not in (0, 1, 2):
            raise ProtocolError(f"outcome code must be 0, 1 or 2, got {annotation.outcome!r}")
        outcome = 2 - annotation.outcome if flipped else annotation.outcome
        known = {r.item_id: r.outcome for r in pairs[index].revealed} | {r.item_id: r.outcome for r in added.get(index, [])}
        if annotation.item_id in known:
            if known[annotation.item_id] != outcome:
                raise ProtocolError(
                    f"item {annotation.item_id} of {pairs[index].system_a} vs {pairs[index].system_b} already has outcome "
                    f"{known[annotation.item_id]}, got {outcome}"
                )
            continue
        added.setdefault(index, []).append(Reveal(str(annotation.item_id), int(outcome), state.round + 1))
    total = sum(len(v) for v in added.values())
    if total > state.budget_left:
        raise ProtocolError(f"{total} new human outcomes exceed the budget left ({state.budget_left})")
    for index, reveals in added.items():
        pairs[index] = replace(pairs[index], revealed=pairs[index].revealed + tuple(reveals))
    return replace(state, pairs=tuple(pairs))


def round_seed(seed: int, round_number: int) -> int:
    """The sampler seed of a round, derived from the run's seed (independent streams per round)."""
    return int(np.random.SeedSequence([seed, round_number]).generate_state(1)[0])


def decide_round(state: ProtocolState, *, sampler_settings: SamplerSettings | None = None) -> ProtocolState:
    """Close the open round: decide every undecided pair that got new human outcomes in it.

    Args:
        state: the state after :func:`apply_annotations`.
        sampler_settings: passed to the decision engine (e.g. smaller sampler sizes in tests).
    """
    number = state.round + 1
    chosen = [i for i, p in enumerate(state.pairs) if p.undecided and any(r.round == number for r in p.revealed)]
    pairs = list(state.pairs)
    if chosen:
        counts = state.counts()
        subset = CountTriples(counts.n[chosen], counts.K[chosen], counts.m[chosen])
        result = decide_with_settings(subset, state.settings, round_seed(state.settings.seed, number), sampler_settings)
        for k, index in enumerate(chosen):
            record = RoundRecord(number, float(result.theta[k]), int(result.decision[k]), _triple(result.p_mean[k]))
            pairs[index] = replace(pairs[index], history=(*pairs[index].history, record))
    return replace(state, pairs=tuple(pairs), round=number)


def _triple(values: npt.NDArray[np.float64]) -> tuple[float, float, float]:
    return float(values[0]), float(values[1]), float(values[2])


def is_finished(state: ProtocolState) -> bool:
    """No open round, and: budget spent, no undecided pair, or no undecided pair has items left."""
    if state.open_reveals:
        return False
    undecided = [p for p in state.pairs if p.undecided]
    return state.budget_left <= 0 or not undecided or all(not p.unrevealed_pool() for p in undecided)


def undo_round(state: ProtocolState) -> ProtocolState:
    """Undo the latest step: the open round's annotations if there are any, else the last
    completed round (its decisions and its annotations). Round 0 with nothing open is returned as is."""
    target = state.round + 1 if state.open_reveals else state.round
    if target == 0:
        return state
    pairs = tuple(
        replace(
            p,
            revealed=tuple(r for r in p.revealed if r.round != target),
            history=tuple(h for h in p.history if h.round != target),
        )
        for p in state.pairs
    )
    return replace(state, pairs=pairs, round=min(state.round, target - 1))

