"""Saving the session to JSON and restoring it; the HTML report of diagnostics and protocol."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

import streamlit as st

from prefeval_core.errors import PrefevalError, Problem
from prefeval_core.figures.report import ReportSection, diagnostics_sections, html_report
from prefeval_core.protocol import ProtocolState, protocol_result, state_to_dict
from prefeval_core.store import open_store
from prefeval_core.workflow import StudySetup, views
from prefeval_core.workflow.judges import default_judges
from prefeval_core.workflow.metric_check import MetricCheck
from prefeval_core.workflow.session import SessionSnapshot, session_from_json
from prefeval_core.workflow.session_restore import restore_session, session_dataset
from prefeval_core.workflow.studies import begin_study
from prefeval_core.workflow.study_report import judge_bought, judges_section, metric_section, study_report_html
from ui import cache, state, studies
from ui.page import flash

RESTORE_KEY = "pe.w.restore"
_LOG = logging.getLogger(__name__)


def snapshot(session: Mapping[str, Any]) -> SessionSnapshot:
    """The session as data: data choice, raters, study setup, metric check, protocol state, stored judgments."""
    choice = session[state.DATA]
    protocol: ProtocolState | None = session[state.PROTOCOL]
    setup: StudySetup | None = session[state.SETUP]
    check: MetricCheck | None = session[state.CHECK]
    store = open_store()
    return SessionSnapshot(
        data=choice,
        human=session[state.HUMAN],
        metrics=tuple(session[state.METRICS] or ()),
        setup=None if setup is None else setup.as_dict(),
        check=None if check is None else asdict(check),
        protocol=None if protocol is None else state_to_dict(protocol),
        annotations=(*store.comparisons(choice.key), *store.ratings(choice.key)),
    )


def restore(snap: SessionSnapshot, file: str = "session.json") -> int:
    """Put a snapshot into the session; its annotations go to the store. Returns how many were new.

    Everything is checked first (:func:`~prefeval_core.workflow.session_restore.restore_session`):
    a refused file changes neither the session nor the store."""
    store = open_store()
    dataset = session_dataset(snap, file, lambda: cache.dataset(snap.data))
    known = {s.study.id for s in store.list_studies()}
    restored = restore_session(snap, dataset, file=file, table_of=lambda setup: cache.study_table(snap.data, setup), known_studies=known)
    added = store.add_many(restored.annotations).added  # one transaction: all or nothing, before the session changes
    study = None
    if restored.protocol is not None and restored.setup is not None:  # a restored run continues as a new study
        study = begin_study(store, snap.data, dataset, restored.setup, "restored from a session file", state=restored.protocol)
    st.session_state[state.DATA] = snap.data
    st.session_state[state.HUMAN] = snap.human
    st.session_state[state.METRICS] = snap.metrics
    st.session_state[state.SETUP] = restored.setup
    st.session_state[state.CHECK] = restored.check
    st.session_state[state.PROTOCOL] = restored.protocol
    st.session_state[state.STUDY] = None
    if study is not None:
        studies.adopt(study)
    return added


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
    appendix = []
    if figures and metric is not None and check is not None:
        appendix = diagnostics_sections(metric, confusions_shown=3, seed=check.seed)
    judges = None
    if check is not None and (chosen := default_judges(dataset, check.human, check.metric, tuple(session[state.METRICS] or ()))):
        question = None if protocol is None else protocol.settings.question
        k = question.k if question is not None and question.kind == "top-k" else 1
        with contextlib.suppress(PrefevalError):  # judges that share no system with the human rater: no section
            judges = cache.judge_comparison(choice, check.human, chosen, k, check.eps)
    title = f"prefeval report: {choice.name}"
    if protocol is None:
        sections = [*([] if metric is None else [metric_section(metric)]), *([] if judges is None else [judges_section(judges)])]
        return html_report(title, [*sections, *appendix])
    setup: StudySetup | None = session[state.SETUP]
    replay = setup is None or setup.mode == "replay"
    result = protocol_result(protocol) if replay else None
    if figures:
        appendix.append(ReportSection("Decisions across rounds", figures=(views.theta_history_figure(protocol),)))
    bought = judge_bought(protocol) if replay else None
    return study_report_html(title, protocol, result, judges=judges, metric=metric, bought=bought, appendix=appendix)
