"""Saving the session to JSON and restoring it; the HTML report of diagnostics and protocol."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

import streamlit as st

from prefeval_core.errors import PrefevalError, Problem, SettingsError
from prefeval_core.protocol import ProtocolState, protocol_result, state_from_dict, state_to_dict
from prefeval_core.report import ReportSection, diagnostics_sections, html_report
from prefeval_core.session import SessionFileError, SessionSnapshot, session_from_json
from prefeval_core.store import open_store
from prefeval_core.workflow import StudySetup, views
from prefeval_core.workflow.metric_check import MetricCheck
from prefeval_core.workflow.studies import begin_study
from ui import cache, state, studies
from ui.page import flash

RESTORE_KEY = "pe.w.restore"


def snapshot(session: Mapping[str, Any]) -> SessionSnapshot:
    """The session as data: data choice, raters, study setup, metric check, protocol state, stored annotations."""
    choice = session[state.DATA]
    protocol: ProtocolState | None = session[state.PROTOCOL]
    setup: StudySetup | None = session[state.SETUP]
    check: MetricCheck | None = session[state.CHECK]
    return SessionSnapshot(
        data=choice,
        human=session[state.HUMAN],
        metrics=tuple(session[state.METRICS] or ()),
        setup=None if setup is None else setup.as_dict(),
        check=None if check is None else asdict(check),
        protocol=None if protocol is None else state_to_dict(protocol),
        annotations=tuple(open_store().comparisons(choice.key)),
    )


def restore(snap: SessionSnapshot) -> int:
    """Put a snapshot into the session; its annotations go to the store. Returns how many were new.

    Everything is checked before anything changes: the setup, the check, and the protocol state
    against the study table its setup rebuilds from the session's data."""
    try:
        setup = None if snap.setup is None else StudySetup.from_dict(dict(snap.setup))
        check = None if snap.check is None else MetricCheck(**snap.check)
        protocol = None
        if snap.protocol is not None:
            if setup is None:
                raise SettingsError.single("bad_state", "the session has a protocol state but no study setup")
            protocol = state_from_dict(snap.protocol, cache.study_table(snap.data, setup))
    except (KeyError, TypeError, ValueError) as error:
        raise SessionFileError([Problem("error", "malformed", f"the session file is damaged: {error}")]) from None
    st.session_state[state.DATA] = snap.data
    st.session_state[state.HUMAN] = snap.human
    st.session_state[state.METRICS] = snap.metrics
    st.session_state[state.SETUP] = setup
    st.session_state[state.CHECK] = check
    st.session_state[state.PROTOCOL] = protocol
    st.session_state[state.STUDY] = None
    if protocol is not None and setup is not None:  # a restored run continues as a new study
        studies.adopt(begin_study(open_store(), snap.data, cache.dataset(snap.data), setup, "restored from a session file", state=protocol))
    return open_store().add_many(snap.annotations).added


def on_restore() -> None:
    """Uploader callback: restore the uploaded session file (problems are kept for the page to show)."""
    upload = st.session_state.get(RESTORE_KEY)
    if upload is None:
        return
    try:
        snap = session_from_json(upload.getvalue(), upload.name)
        added = restore(snap)
    except PrefevalError as error:
        st.session_state["pe.restore_problems"] = error.problems
        return
    flash(f"Restored the session saved at {snap.saved_at} ({added} annotations added to the store).")


def report_html(session: Mapping[str, Any]) -> str:
    """The offline HTML report: the metric check's diagnostics (if there is a metric) and the protocol (if started)."""
    choice = session[state.DATA]
    sections: list[ReportSection] = []
    check = state.metric_check(cache.dataset(choice))
    if check is not None:
        sections += diagnostics_sections(cache.metric_report(choice, check), seed=check.seed)
    protocol: ProtocolState | None = session[state.PROTOCOL]
    if protocol is not None:
        setup: StudySetup | None = session[state.SETUP]
        result = protocol_result(protocol) if setup is None or setup.mode == "replay" else None
        sections.append(views.protocol_section(protocol, result))
    return html_report(f"prefeval report: {choice.name}", sections)
