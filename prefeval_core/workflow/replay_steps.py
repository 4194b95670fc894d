"""What the Protocol page does to a study, one function per action: start it (recorded in the
store), reveal the next round or every round left (replay), undo the last round, and compare
the run with the full human evaluation.

The page holds the state; each function returns the next one (or the comparison) and records
nothing else, except :func:`start_recorded` and :func:`undo_last`, which go through the study's
trail in the annotation store.
"""

from __future__ import annotations

from prefeval_core.data.dataset import Dataset
from prefeval_core.diagnostics.comparison import ERROR_LABELS
from prefeval_core.protocol import (
    Progress,
    ProtocolResult,
    ProtocolState,
    is_finished,
    protocol_result,
    replay_source,
    run_protocol,
    undo_round,
)
from prefeval_core.store import open_store
from prefeval_core.workflow.session import DataChoice
from prefeval_core.workflow.setup import StudySetup
from prefeval_core.workflow.studies import Study, begin_study, undo_study

__all__ = ["ERROR_LABELS", "is_finished", "next_round", "replay_result", "run_to_end", "start_recorded", "undo_last"]


def start_recorded(choice: DataChoice, dataset: Dataset, setup: StudySetup) -> Study:
    """A fresh protocol for ``setup`` on ``dataset``, recorded as a new study in the store."""
    return begin_study(open_store(), choice, dataset, setup)


def next_round(state: ProtocolState) -> ProtocolState:
    """Replay: the next round revealed from the data and decided."""
    return run_protocol(state, replay_source(state.table), max_rounds=1)


def run_to_end(state: ProtocolState, progress: Progress | None = None) -> ProtocolState:
    """Replay: every round left, ``progress`` called after each."""
    return run_protocol(state, replay_source(state.table), progress=progress)


def undo_last(state: ProtocolState, study_id: int | None) -> ProtocolState:
    """The state before the last round: from the study's trail (which keeps the undone state)
    when the study is recorded and has one to go back to, else computed."""
    back = None if study_id is None else undo_study(open_store(), study_id, state.table)
    return undo_round(state) if back is None else back


def replay_result(state: ProtocolState) -> ProtocolResult:
    """The run compared with the full human evaluation (replay)."""
    return protocol_result(state)
