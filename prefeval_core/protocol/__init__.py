"""The annotation-budget protocol (method.md §5, §12; Deriu et al. 2023 Alg. 2) as pure steps.

Typical use (replay of a finished human evaluation; the application layer
:mod:`prefeval_core.workflow` does this from a :class:`~prefeval_core.workflow.StudySetup`)::

    table = build_study_table(ds, "human:relevance", ["rougeL"])
    state = new_state(table, ProtocolSettings(budget=table.cost_available(), batch=10, unit=table.unit, metrics=("rougeL",),
                                          error_control="question", statistic="pool_mean", futility=0.05))
    state = run_protocol(state, replay_source(table), progress=print_round)
    result = protocol_result(state)

Live annotation: ``request = next_request(state)`` (export it), collect judgments, then
``state = apply_judgments(state, judgments)`` and ``state = decide_round(state)``;
``undo_round`` reverts the latest step; ``state_to_json`` / ``state_from_json`` save and restore
(against the same study table).
"""

from prefeval_core.protocol.error_controls import ERROR_CONTROL_RULES, ErrorControlRule
from prefeval_core.protocol.policies import POLICIES, closest_first, paper_allocation
from prefeval_core.protocol.questions import QUESTION_KINDS, Question, QuestionKind, QuestionKindEntry
from prefeval_core.protocol.questions_top_k import TopKComparison
from prefeval_core.protocol.result import ProtocolResult, protocol_result
from prefeval_core.protocol.run import Progress, Source, replay_source, run_protocol
from prefeval_core.protocol.settings import ErrorControl, MuRows, Policy, ProtocolSettings
from prefeval_core.protocol.state import (
    PairStatus,
    ProtocolState,
    Reveals,
    RoundRecord,
    new_state,
    state_from_dict,
    state_from_json,
    state_to_dict,
    state_to_json,
)
from prefeval_core.protocol.steps import (
    AnnotationRequest,
    ComparisonJudgment,
    ComparisonTask,
    Judgment,
    ProtocolError,
    RatingJudgment,
    RatingTask,
    Task,
    apply_judgments,
    decide_round,
    is_finished,
    next_request,
    pairs_that_matter,
    stop_reason,
    undo_round,
    withdraw_requests,
)
from prefeval_core.protocol.table import RatingGrid, StudyTable, Unit, build_study_table

__all__ = [
    "ERROR_CONTROL_RULES",
    "POLICIES",
    "QUESTION_KINDS",
    "AnnotationRequest",
    "ComparisonJudgment",
    "ComparisonTask",
    "ErrorControl",
    "ErrorControlRule",
    "Judgment",
    "MuRows",
    "PairStatus",
    "Policy",
    "Progress",
    "ProtocolError",
    "ProtocolResult",
    "ProtocolSettings",
    "ProtocolState",
    "Question",
    "QuestionKind",
    "QuestionKindEntry",
    "RatingGrid",
    "RatingJudgment",
    "RatingTask",
    "Reveals",
    "RoundRecord",
    "Source",
    "StudyTable",
    "Task",
    "TopKComparison",
    "Unit",
    "apply_judgments",
    "build_study_table",
    "closest_first",
    "decide_round",
    "is_finished",
    "new_state",
    "next_request",
    "pairs_that_matter",
    "paper_allocation",
    "protocol_result",
    "replay_source",
    "run_protocol",
    "state_from_dict",
    "state_from_json",
    "state_to_dict",
    "state_to_json",
    "stop_reason",
    "undo_round",
    "withdraw_requests",
]
