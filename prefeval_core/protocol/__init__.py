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

from typing import TYPE_CHECKING

from prefeval_core.lazy import lazy_package

if TYPE_CHECKING:  # the package's names, imported on first use (`X as X`: re-exported)
    from prefeval_core.protocol.error_controls import ERROR_CONTROL_RULES as ERROR_CONTROL_RULES
    from prefeval_core.protocol.error_controls import ErrorControlRule as ErrorControlRule
    from prefeval_core.protocol.policies import POLICIES as POLICIES
    from prefeval_core.protocol.policies import closest_first as closest_first
    from prefeval_core.protocol.policies import paper_allocation as paper_allocation
    from prefeval_core.protocol.questions import QUESTION_KINDS as QUESTION_KINDS
    from prefeval_core.protocol.questions import Question as Question
    from prefeval_core.protocol.questions import QuestionKind as QuestionKind
    from prefeval_core.protocol.questions import QuestionKindEntry as QuestionKindEntry
    from prefeval_core.protocol.questions_top_k import TopKComparison as TopKComparison
    from prefeval_core.protocol.result import ProtocolResult as ProtocolResult
    from prefeval_core.protocol.result import protocol_result as protocol_result
    from prefeval_core.protocol.run import Progress as Progress
    from prefeval_core.protocol.run import Source as Source
    from prefeval_core.protocol.run import replay_source as replay_source
    from prefeval_core.protocol.run import run_protocol as run_protocol
    from prefeval_core.protocol.settings import ErrorControl as ErrorControl
    from prefeval_core.protocol.settings import MuRows as MuRows
    from prefeval_core.protocol.settings import Policy as Policy
    from prefeval_core.protocol.settings import ProtocolSettings as ProtocolSettings
    from prefeval_core.protocol.state import PairStatus as PairStatus
    from prefeval_core.protocol.state import ProtocolState as ProtocolState
    from prefeval_core.protocol.state import Reveals as Reveals
    from prefeval_core.protocol.state import RoundRecord as RoundRecord
    from prefeval_core.protocol.state import new_state as new_state
    from prefeval_core.protocol.state import state_from_dict as state_from_dict
    from prefeval_core.protocol.state import state_from_json as state_from_json
    from prefeval_core.protocol.state import state_to_dict as state_to_dict
    from prefeval_core.protocol.state import state_to_json as state_to_json
    from prefeval_core.protocol.steps import AnnotationRequest as AnnotationRequest
    from prefeval_core.protocol.steps import ComparisonJudgment as ComparisonJudgment
    from prefeval_core.protocol.steps import ComparisonTask as ComparisonTask
    from prefeval_core.protocol.steps import Judgment as Judgment
    from prefeval_core.protocol.steps import ProtocolError as ProtocolError
    from prefeval_core.protocol.steps import RatingJudgment as RatingJudgment
    from prefeval_core.protocol.steps import RatingTask as RatingTask
    from prefeval_core.protocol.steps import Task as Task
    from prefeval_core.protocol.steps import apply_judgments as apply_judgments
    from prefeval_core.protocol.steps import decide_round as decide_round
    from prefeval_core.protocol.steps import is_finished as is_finished
    from prefeval_core.protocol.steps import next_request as next_request
    from prefeval_core.protocol.steps import pairs_that_matter as pairs_that_matter
    from prefeval_core.protocol.steps import stop_reason as stop_reason
    from prefeval_core.protocol.steps import undo_round as undo_round
    from prefeval_core.protocol.steps import withdraw_requests as withdraw_requests
    from prefeval_core.protocol.table import RatingGrid as RatingGrid
    from prefeval_core.protocol.table import StudyTable as StudyTable
    from prefeval_core.protocol.table import Unit as Unit
    from prefeval_core.protocol.table import build_study_table as build_study_table

__getattr__, __all__ = lazy_package(__name__, __file__)
