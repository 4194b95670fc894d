"""Saving the session to JSON and restoring it; the HTML report of diagnostics and protocol."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from prefeval_core.errors import DataError, Problem
from prefeval_core.protocol import ProtocolState, state_from_dict, state_to_dict
from prefeval_core.report import ReportSection, diagnostics_sections, html_report
from prefeval_core.session import SessionFileError, SessionSnapshot, session_from_json
from prefeval_core.store import open_store
from ui import cache, state
from ui.page import flash
from ui.protocol_widgets import pairs_frame, theta_history_figure

RESTORE_KEY = "pe.w.restore"


def snapshot(session: Mapping[str, Any]) -> SessionSnapshot:
    """The session as data: data choice, raters, settings, protocol state, stored annotations."""
    choice = session[state.DATA]
    protocol: ProtocolState | None = session[state.PROTOCOL]
    return SessionSnapshot(
        data=choice,
        human=session[state.HUMAN],
        metric=session[state.METRIC],
        settings=dict(session[state.SETTINGS] or {}),
        protocol=None if protocol is None else state_to_dict(protocol),
        annotations=tuple(open_store().comparisons(choice.key)),
    )


def restore(snap: SessionSnapshot) -> int:
    """Put a snapshot into the session; its annotations go to the store. Returns how many were new."""
    try:
        protocol = None if snap.protocol is None else state_from_dict(snap.protocol)
    except (KeyError, TypeError, ValueError) as error:
        raise SessionFileError([Problem("error", "malformed", f"the protocol state in the session file is damaged: {error}")]) from None
    st.session_state[state.DATA] = snap.data
    st.session_state[state.HUMAN] = snap.human
    st.session_state[state.METRIC] = snap.metric
    st.session_state[state.SETTINGS] = dict(snap.settings) or None
    st.session_state[state.PROTOCOL] = protocol
    return open_store().add_many(snap.annotations).added


def on_restore() -> None:
    """Uploader callback: restore the uploaded session file (problems are kept for the page to show)."""
    upload = st.session_state.get(RESTORE_KEY)
    if upload is None:
        return
    try:
        snap = session_from_json(upload.getvalue(), upload.name)
        added = restore(snap)
    except DataError as error:
        st.session_state["pe.restore_problems"] = error.problems
        return
    flash(f"Restored the session saved at {snap.saved_at} ({added} annotations added to the store).")


def protocol_section(protocol: ProtocolState) -> ReportSection:
    table = pairs_frame(protocol).to_html(index=False, escape=True, float_format=lambda v: f"{v:.3f}")
    text = (
        f"Round {protocol.round}; {protocol.human_used:,} of {protocol.settings.budget:,} human outcomes spent; "
        f"{int((protocol.decisions != 1).sum())} of {len(protocol.pairs)} pairs decided (model {protocol.settings.model}, "
        f"gamma {protocol.settings.gamma}, batch {protocol.settings.batch}, seed {protocol.settings.seed})."
    )
    return ReportSection("Protocol", text, (theta_history_figure(protocol),), html_body=table)


def report_html(session: Mapping[str, Any]) -> str:
    """The offline HTML report: the metric's diagnostics (if a metric is chosen) and the protocol (if started)."""
    choice, human, metric = session[state.DATA], session[state.HUMAN], session[state.METRIC]
    settings = session[state.SETTINGS] or {}
    sections: list[ReportSection] = []
    if metric:
        report = cache.metric_report(choice, human, metric, float(settings.get("eps_metric", 0.0)), float(settings.get("gamma", 0.05)), 0)
        sections += diagnostics_sections(report)
    if session[state.PROTOCOL] is not None:
        sections.append(protocol_section(session[state.PROTOCOL]))
    return html_report(f"prefeval report: {choice.name}", sections)
