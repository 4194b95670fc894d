"""What every page does first: run through the app, state, title, messages from the last action,
the loaded data."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

from prefeval_core.workflow.datasets import Dataset
from prefeval_core.workflow.session import DataChoice
from ui import cache, state
from ui.errors import escape_markdown, user_errors
from ui.roles import INVITEE, unprotected_warning
from ui.studies import resume_from_url

FLASH = "pe.flash"


def flash(message: str) -> None:
    """A message for the next run of the page (callbacks cannot place elements)."""
    st.session_state[FLASH] = message


def run_through_the_app() -> None:
    """Rerun through ``app.py`` if Streamlit ran this page on its own.

    Streamlit decides per process, not per session, whether the app uses ``st.navigation``: until
    some run has called it, every run takes the legacy ``pages/`` mode
    (``PagesManager.uses_pages_directory``), which lists the raw files ("app, annotate, data, ...")
    and runs a page named in the URL directly, without ``app.py``. So a tab whose first request
    names a page (a deep link, a reload, or a click in that listing while the first run was still
    starting) kept the raw listing, and its pages ran without the app's page settings, for as long
    as no run reached ``app.py``'s navigation. The rerun keeps the requested page.
    """
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


def begin(title: str, before_loading: Callable[[], object] | None = None) -> tuple[DataChoice, Dataset]:
    """Make sure the page runs through the app, initialise the session, show the title and any
    pending message, run ``before_loading`` (widgets that choose the data), load the chosen data
    (a data problem is shown and stops the page)."""
    run_through_the_app()
    if INVITEE in st.session_state:  # an annotator's session opens no lead page, whatever the address
        st.stop()
    state.ensure_state()
    st.title(title)
    unprotected_warning()
    resume_from_url()
    state.data_from_url()
    message = st.session_state.pop(FLASH, None)
    if message:
        st.success(escape_markdown(message))
    if before_loading is not None:
        before_loading()
    choice = state.data_choice()
    with user_errors("Loading the data"):
        dataset = cache.dataset(choice)
    return choice, dataset
