"""Running the protocol loop with a source of human outcomes (method.md §5).

A *source* is a function ``source(request) -> annotations``. Replay answers from a finished
human evaluation (:func:`replay_source`); a live source is whatever the shell provides (the
dashboard collects the outcomes, then calls :func:`prefeval_core.protocol.steps.apply_annotations`
and :func:`~prefeval_core.protocol.steps.decide_round` itself). The loop is the same.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from prefeval_core.counts import PairTable
from prefeval_core.decision import SamplerSettings
from prefeval_core.outcomes import canonical_pair
from prefeval_core.protocol.state import ProtocolState
from prefeval_core.protocol.steps import (
    Annotation,
    AnnotationRequest,
    apply_annotations,
    decide_round,
    is_finished,
    next_request,
)

Source = Callable[[AnnotationRequest], Sequence[Annotation]]
Progress = Callable[[ProtocolState], None]


def replay_source(table: PairTable) -> Source:
    """Answers requests with the human outcomes of ``table`` (items without one are skipped)."""
    known: dict[tuple[str, str, str], int] = {}
    for row in range(len(table.item_id)):
        if table.human[row] >= 0:
            a, b = table.pairs[table.pair_index[row]]
            known[(a, b, str(table.item_id[row]))] = int(table.human[row])

    def answer(request: AnnotationRequest) -> list[Annotation]:
        annotations = []
        for wanted in request.items:
            a, b, _ = canonical_pair(wanted.system_a, wanted.system_b)
            outcome = known.get((a, b, wanted.item_id))
            if outcome is not None:
                annotations.append(Annotation(wanted.item_id, a, b, outcome))
        return annotations

    return answer


def run_protocol(
    state: ProtocolState,
    source: Source,
    *,
    progress: Progress | None = None,
    max_rounds: int | None = None,
    sampler_settings: SamplerSettings | None = None,
) -> ProtocolState:
    """Rounds until :func:`~prefeval_core.protocol.steps.is_finished` (or ``max_rounds`` more rounds).

    ``progress(state)`` is called after every round. A round whose request gets no answer
    ends the run (a source that cannot answer would otherwise loop forever).
    """
    rounds = 0
    while not is_finished(state) and (max_rounds is None or rounds < max_rounds):
        if not state.open_reveals:
            request = next_request(state)
            if not len(request):
                break
            annotations = source(request)
            if not annotations:
                break
            state = apply_annotations(state, annotations)
        state = decide_round(state, sampler_settings=sampler_settings)
        rounds += 1
        if progress is not None:
            progress(state)
    return state
