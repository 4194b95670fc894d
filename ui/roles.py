"""The role gate: which pages a session may open.

An address with ``?token=...`` (an annotator's link) opens only that annotator's queue in that
study; a token the store refuses opens a page that says why, and nothing else. Without a token
the session is the lead's: the lead's pages, behind ``$PREFEVAL_LEAD_PASSWORD`` when it is set.
A session that entered through a link stays the annotator's even if the token leaves the address,
and its link is checked again on every run: once the lead withdraws it, the session opens only the
refusal page (and the store refuses what a page drawn before still sends).
"""

from __future__ import annotations

from urllib.parse import urlsplit

import streamlit as st

from prefeval_core.workflow.roles import (
    LEAD_PASSWORD_ENV,
    TOKEN_PARAM,
    AccessError,
    Annotator,
    annotator_for_token,
    lead_password,
    password_matches,
)
from prefeval_core.workflow.studies import study_store as open_store
from ui import state
from ui.errors import escape_markdown

INVITEE = "pe.invitee"
"""Session key: the :class:`Annotator` a link let in (absent: not an annotator session)."""
LEAD = "pe.lead"
"""Session key: ``True`` once the lead gave the password."""
REFUSED = "pe.refused"


def _study_in_address() -> int | None:
    wanted = st.query_params.get(state.STUDY_PARAM, "")
    return int(wanted) if wanted.isdigit() else None


def resolve() -> str:
    """The session's role from the address and the session: ``annotator``, ``refused``, ``login`` or ``lead``."""
    known: Annotator | None = st.session_state.get(INVITEE)
    link = st.query_params.get(TOKEN_PARAM, "") or ("" if known is None else known.token)
    if link or known is not None:
        try:
            st.session_state[INVITEE] = annotator_for_token(open_store(), link, _study_in_address())
        except AccessError as error:
            st.session_state[REFUSED] = error.problems[0].message
            return "refused"  # a session that was an annotator's stays one: never the lead's
        return "annotator"
    password = lead_password()
    if password is not None and not st.session_state.get(LEAD):
        return "login"
    return "lead"


def invitee() -> Annotator:
    """The annotator this session is; outside an annotator session the page says so and stops."""
    found: Annotator | None = st.session_state.get(INVITEE)
    if found is None:
        st.title("This page opens through an annotator's link")
        st.info("Ask the study's lead for your personal link.")
        st.stop()
    return found


def refused_page() -> None:
    """What a refused link shows: the reason, and nothing of any study."""
    st.title("This link does not open a study")
    st.error(escape_markdown(st.session_state.get(REFUSED, "This link is not valid.")))
    st.caption("Annotator links are personal: each opens one person's queue in one study, until the lead withdraws it.")


def _check_password() -> None:
    password = lead_password()
    if password is not None and password_matches(st.session_state.get("pe.w.lead_password", ""), password):
        st.session_state[LEAD] = True
    else:
        st.session_state[REFUSED] = "That is not the lead's password."


def login_page() -> None:
    """The lead's password form (``$PREFEVAL_LEAD_PASSWORD`` is set)."""
    st.title("prefeval: lead sign-in")
    st.caption(
        "This dashboard is shared: the study lead's pages need the lead's password. Annotators open the personal link the lead sent them."
    )
    with st.form("pe.w.lead_login"):
        st.text_input("Lead password", type="password", key="pe.w.lead_password")
        st.form_submit_button("Sign in", on_click=_check_password)
    message = st.session_state.pop(REFUSED, None)
    if message:
        st.error(message)


LOOPBACK = ("localhost", "127.0.0.1", "::1", "[::1]")


def unprotected_warning() -> None:
    """On a lead page reached over the network with no lead password set: say that anyone who can
    open the address can steer the studies (on one's own machine, nothing is said)."""
    host = urlsplit(st.context.url or "").hostname or "localhost"
    if lead_password() is None and host not in LOOPBACK:
        st.warning(
            f"This dashboard is reached as {escape_markdown(host)} and has no lead password: anyone who can open the address can "
            f"set up and steer studies and see results. Set {LEAD_PASSWORD_ENV} before serving it to others."
        )
