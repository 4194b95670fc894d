"""The lead's team panel on the Annotate page: the study's criterion and guidelines,
its name and archive mark, annotator links (invite, revoke), and who judged what."""

from __future__ import annotations

from collections import Counter
from urllib.parse import urlsplit

import pandas as pd
import streamlit as st

from prefeval_core.workflow.judgments import Judgment, StudyRecord
from prefeval_core.workflow.roles import annotator_link, invitations, invite_annotator, revoke_annotator
from prefeval_core.workflow.studies import archive_study, rename_study, set_criterion, study_details, study_store
from ui.errors import escape_markdown, user_errors
from ui.page import flash

LINK = "pe.new_link"


def _base_url() -> str:
    """The dashboard's address as this browser reached it (scheme and host)."""
    parts = urlsplit(st.context.url or "http://localhost:8501")
    return f"{parts.scheme}://{parts.netloc}"


def _invite(study_id: int) -> None:
    name = st.session_state.get("pe.w.invite_name", "")
    with user_errors("Inviting the annotator", stop=False):
        token = invite_annotator(study_store(), study_id, name)
        st.session_state[LINK] = (name.strip(), annotator_link(_base_url(), token))
        st.session_state["pe.w.invite_name"] = ""


def _revoke(study_id: int, name: str) -> None:
    revoked = revoke_annotator(study_store(), study_id, name)
    flash(f"{name}'s link no longer works." if revoked else f"{name} had no working link.")


def criterion_form(study: StudyRecord) -> None:
    """The criterion and guidelines the annotators see; the study's name; archive."""
    current = study_details(study_store(), study.id)
    with st.form("pe.w.criterion"):
        criterion = st.text_input("Criterion (what annotators judge)", value=current.criterion)
        label = "Guidelines (Markdown, on every screen under a Guidelines fold the annotator opens)"
        guidelines = st.text_area(label, value=current.guidelines, height=120)
        name = st.text_input("Study name", value=study.name)
        if st.form_submit_button("Save"):
            with user_errors("Saving the study's details", stop=False):
                set_criterion(study_store(), study.id, criterion, guidelines)
                if name.strip() != study.name:
                    rename_study(study_store(), study.id, name)
                flash("Saved: the next screens ask for the new criterion (stored judgments keep theirs).")
                st.rerun()
    archived = current.archived_at is not None
    if st.button("Bring back from the archive" if archived else "Archive this study", key="pe_archive"):
        archive_study(study_store(), study.id, not archived)
        flash("The study is back in the list." if archived else "Archived: the study no longer shows in the list (nothing is deleted).")
        st.rerun()


def team_view(study: StudyRecord | None, judgments: list[Judgment]) -> None:
    """Invite annotators by name (a personal link each), revoke a link, see who judged what."""
    if study is None:
        st.info("Start a live study on the Protocol page, then invite its annotators here.")
        return
    criterion_form(study)
    st.markdown("**Annotators**: each gets a personal link that opens only their queue in this study.")
    left, right = st.columns([3, 1], vertical_alignment="bottom")
    left.text_input("Annotator's name", key="pe.w.invite_name", placeholder="e.g. alice")
    right.button("Invite", key="pe_invite", on_click=_invite, args=(study.id,), width="stretch")
    made = st.session_state.pop(LINK, None)
    if made:
        st.success(f"Send this link to {escape_markdown(made[0])} (shown once; invite again for a new one):")
        st.code(made[1], language=None)
    judged = Counter(j.annotator for j in judgments if j.undone_at is None)
    links = invitations(study_store(), study.id)
    rows = [
        {"annotator": i.annotator, "invited": i.created_at, "link": "revoked " + i.revoked_at if i.revoked_at else "works",
         "judgments": judged.get(i.annotator, 0)}
        for i in links
    ]  # fmt: skip
    uninvited = sorted(set(judged) - {i.annotator for i in links})
    rows += [{"annotator": name, "invited": "", "link": "(no link)", "judgments": judged[name]} for name in uninvited]
    if rows:
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    working = sorted({i.annotator for i in links if i.revoked_at is None})
    if working:
        left, right = st.columns([3, 1], vertical_alignment="bottom")
        chosen = left.selectbox("Revoke the link of", working, key="pe.w.revoke_name")
        right.button("Revoke", key="pe_revoke", on_click=_revoke, args=(study.id, chosen), width="stretch")
