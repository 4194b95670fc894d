"""Saving the session to JSON and restoring it; the HTML report of diagnostics and protocol."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from typing import Any

import streamlit as st

from prefeval_core.errors import PrefevalError, Problem
from prefeval_core.workflow import StudySetup
from prefeval_core.workflow.judges import default_judges
from prefeval_core.workflow.metric_check import MetricCheck
from prefeval_core.workflow.session import SessionSnapshot, session_from_json, session_snapshot
from prefeval_core.workflow.session_restore import restore_into_store
from prefeval_core.workflow.studies import study_store
from prefeval_core.workflow.study import ProtocolState
from prefeval_core.workflow.study_report import session_report_html
from ui import cache, state, studies
from ui.page import flash

RESTORE_KEY = "pe.w.restore"
_LOG = logging.getLogger(__name__)


def snapshot(session: Mapping[str, Any]) -> SessionSnapshot:
    """The session as data: data choice, raters, study setup, metric check, protocol state, stored judgments."""
    setup: StudySetup | None = session[state.SETUP]
    check: MetricCheck | None = session[state.CHECK]
    protocol: ProtocolState | None = session[state.PROTOCOL]
    metrics = tuple(session[state.METRICS] or ())
    return session_snapshot(study_store(), session[state.DATA], session[state.HUMAN], metrics, setup, check, protocol)


def restore(snap: SessionSnapshot, file: str = "session.json") -> int:
    """Put a snapshot into the session; its annotations go to the store. Returns how many were new.

    Everything is checked first (:func:`~prefeval_core.workflow.session_restore.restore_into_store`):
    a refused file changes neither the session nor the store."""
    done = restore_into_store(
        study_store(), snap, file, load=lambda: cache.dataset(snap.data), table_of=lambda setup: cache.study_table(snap.data, setup)
    )
    restored = done.session
    st.session_state[state.DATA] = snap.data
    st.session_state[state.HUMAN] = snap.human
    st.session_state[state.METRICS] = snap.metrics
    st.session_state[state.SETUP] = restored.setup
    st.session_state[state.CHECK] = restored.check
    st.session_state[state.PROTOCOL] = restored.protocol
    st.session_state[state.STUDY] = None
    if done.study is not None:
        studies.adopt(done.study)
    return done.added


def on_restore() -> None:
    """Uploader callback: restore the uploaded session file (problems are kept for the page to show)."""
    upload = st.session_state.get(RESTORE_KEY)
    if upload is None:
        return
    try:
        snap = session_from_json(upload.getvalue(), upload.name)
        added = restore(snap, upload.name)
    except PrefevalError as error:
        st.session_state["pe.restore_problems"] = error.problems
        return
    except Exception as error:  # the last line of defence: logged, shown as one problem, never a traceback
        _LOG.exception("restoring %s failed", upload.name)
        problem = Problem("error", "internal", f"restoring failed unexpectedly ({type(error).__name__}); see the server log", upload.name)
        st.session_state["pe.restore_problems"] = (problem,)
        return
    flash(f"Restored the session saved at {snap.saved_at} ({added} annotations added to the store).")


def report_html(session: Mapping[str, Any], *, figures: bool = False) -> str:
    """The offline HTML report: with a protocol, the study report (summary, leaderboard, judges,
    settings, diagnostics); without one, the metric check and the judges. ``figures``: append the
    interactive figures (brings the plotly.js bundle, about 4.6 MB)."""
    choice = session[state.DATA]
    dataset = cache.dataset(choice)
    protocol: ProtocolState | None = session[state.PROTOCOL]
    check = state.metric_check(dataset)
    metric = None if check is None else cache.metric_report(choice, check)
    judges = None
    if check is not None and (chosen := default_judges(dataset, check.human, check.metric, tuple(session[state.METRICS] or ()))):
        k = 1 if protocol is None else protocol.settings.question.tier_size
        with contextlib.suppress(PrefevalError):  # judges that share no system with the human rater: no section
            judges = cache.judge_comparison(choice, check.human, chosen, k, check.eps)
    title = f"prefeval report: {choice.name}"
    seed = 0 if check is None else check.seed
    setup: StudySetup | None = session[state.SETUP]
    design_note = None if setup is None else cache.design_note(choice, setup)
    return session_report_html(title, protocol, setup, metric=metric, judges=judges, figures=figures, seed=seed, design_note=design_note)
