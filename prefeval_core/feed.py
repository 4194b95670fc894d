"""Feeding stored human judgments into the annotation-budget protocol."""

from __future__ import annotations

from collections.abc import Sequence

from prefeval_core.protocol import Annotation as ProtocolAnnotation
from prefeval_core.protocol import ProtocolState, next_request
from prefeval_core.store import Comparison, combined_outcomes


def protocol_annotations(annotations: Sequence[Comparison], state: ProtocolState) -> list[ProtocolAnnotation]:
    """The stored human outcomes the protocol has not seen yet, ready for
    :func:`~prefeval_core.protocol.steps.apply_annotations` ("feed the annotations in").

    Outcomes are combined per (item, pair) by :func:`~prefeval_core.store.combined_outcomes`. Kept: pairs of the
    protocol, items not revealed yet; the items the protocol currently requests come first,
    then the others (pair order, item order); at most the budget left **(choice)**, so feeding
    never fails for going over budget.
    """
    revealed = {(p.system_a, p.system_b): p.revealed_items for p in state.pairs}
    requested = {(r.system_a, r.system_b, r.item_id): k for k, r in enumerate(next_request(state).items)}
    outcomes = combined_outcomes(annotations)
    fresh = [
        (requested.get((a, b, item), len(requested)), a, b, item, int(code))
        for a, b, item, code in outcomes[["system_a", "system_b", "item_id", "outcome"]].itertuples(index=False)
        if (a, b) in revealed and item not in revealed[(a, b)]
    ]
    fresh.sort(key=lambda row: row[0])  # stable: pair and item order kept within each group
    return [ProtocolAnnotation(item, a, b, code) for _, a, b, item, code in fresh[: max(state.budget_left, 0)]]
