"""The annotation-budget protocol (method.md §5; Deriu et al. 2023 Alg. 2) as pure steps.

Typical use (replay of a finished human evaluation)::

    table = align_outcomes(pair_outcomes(ds, "human:relevance"), pair_outcomes(ds, "rougeL"))
    state = new_state(table, ProtocolSettings(budget=5000, batch=10, seed=0))
    state = run_protocol(state, replay_source(table), progress=print_round)
    result = protocol_result(state, table)

Live annotation: ``request = next_request(state)`` (export it), collect outcomes, then
``state = apply_annotations(state, annotations)`` and ``state = decide_round(state)``;
``undo_round`` reverts the latest step; ``state_to_json`` / ``state_from_json`` save and restore.
"""

from prefeval_core.protocol.policies import POLICIES, Policy, closest_first, paper_allocation
from prefeval_core.protocol.run import Source, replay_source, run_protocol
from prefeval_core.protocol.settings import Model, ProtocolSettings, Sampler
from prefeval_core.protocol.state import (
    PairState,
    ProtocolState,
    Reveal,
    RoundRecord,
    new_state,
    state_from_dict,
    state_from_json,
    state_to_dict,
    state_to_json,
)
from prefeval_core.protocol.steps import (
    Annotation,
    AnnotationRequest,
    ProtocolError,
    RequestedItem,
    apply_annotations,
    decide_round,
    is_finished,
    next_request,
    undo_round,
)
from prefeval_core.protocol.summary import ProtocolResult, protocol_result

__all__ = [
    "POLICIES",
    "Annotation",
    "AnnotationRequest",
    "Model",
    "PairState",
    "Policy",
    "ProtocolError",
    "ProtocolResult",
    "ProtocolSettings",
    "ProtocolState",
    "RequestedItem",
    "Reveal",
    "RoundRecord",
    "Sampler",
    "Source",
    "apply_annotations",
    "closest_first",
    "decide_round",
    "is_finished",
    "new_state",
    "next_request",
    "paper_allocation",
    "protocol_result",
    "replay_source",
    "run_protocol",
    "state_from_dict",
    "state_from_json",
    "state_to_dict",
    "state_to_json",
    "undo_round",
]
