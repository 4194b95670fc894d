"""Studies in the dashboard: every run is a study record in the store, named in the URL
(``?study=<id>``), so a reload, another browser or a restarted server resume it where it stood."""

from __future__ import annotations

import streamlit as st

from prefeval_core.errors import PrefevalError
from prefeval_core.workflow.studies import (
    ProtocolState,
    StateKind,
    Study,
    all_study_details,
    list_studies,
    record_state,
    resume_study,
    study_parts,
    study_store,
)
from ui import cache, state
from ui.errors import escape_markdown, show_problems


def adopt(study: Study) -> None:
    """Make ``study`` the session's: its data, raters, setup and state; its id in the URL."""
    st.session_state[state.DATA] = study.data
    st.session_state[state.HUMAN], st.session_state[state.METRICS] = study.setup.human, study.setup.metrics
    st.session_state[state.SETUP] = study.setup
    st.session_state[state.PROTOCOL] = study.state
    st.session_state[state.STUDY] = study.record
    st.query_params[state.STUDY_PARAM] = str(study.id)


def resume(study_id: int) -> None:
    """Resume a stored study (its data loaded through the cache)."""
    data, _ = study_parts(study_store().study(study_id))
    adopt(resume_study(study_store(), study_id, cache.dataset(data)))


def resume_from_url() -> None:
    """After a reload (a fresh session), resume the study the URL names; keep the URL naming the
    session's study on every page (navigation does not carry query parameters)."""
    record = st.session_state[state.STUDY]
    if record is not None:
        st.query_params[state.STUDY_PARAM] = str(record.id)
        return
    wanted = st.query_params.get(state.STUDY_PARAM)
    if not wanted:
        return
    try:
        if not (wanted.isascii() and wanted.isdigit()):  # int("٣") is 3: a study id is ASCII digits
            raise ValueError(wanted)
        resume(int(wanted))
    except (ValueError, PrefevalError) as error:
        del st.query_params[state.STUDY_PARAM]
        problems = error.problems if isinstance(error, PrefevalError) else ()
        show_problems(problems, f"The study {escape_markdown(wanted)} named in the address could not be resumed")


def commit(protocol: ProtocolState, kind: StateKind = "round") -> None:
    """The new protocol state, in the session and (at once) in the study's trail."""
    st.session_state[state.PROTOCOL] = protocol
    record = st.session_state[state.STUDY]
    if record is not None:
        record_state(study_store(), record.id, protocol, kind)


def studies_picker(dataset_key: str) -> None:
    """The stored studies of these data (archived ones left out), newest first, each marked live or
    replay, with a button to resume one."""
    summaries = list_studies(study_store(), dataset_key)
    if not summaries:
        return
    current = st.session_state[state.STUDY]
    kinds = {i: d.kind for i, d in all_study_details(study_store()).items()}
    labels = {
        s.study.id: f"#{s.study.id} [{kinds.get(s.study.id, 'study')}] {s.study.name} · {s.rounds} rounds · cost {s.cost or 0:g}"
        for s in summaries
    }
    with st.expander(f"Studies on these data ({len(summaries)})", expanded=current is None):
        left, right = st.columns([4, 1])
        chosen = left.selectbox("Study", list(labels), format_func=labels.__getitem__, key="pe.w.study", label_visibility="collapsed")
        if right.button("Resume study", key="pe_resume", width="stretch", disabled=current is not None and current.id == chosen):
            resume(int(chosen))
            st.rerun()
