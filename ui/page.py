"""What every page does first: state, title, messages from the last action, the loaded data."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from prefeval_core.data.dataset import Dataset
from prefeval_core.session import DataChoice
from ui import cache, state
from ui.errors import escape_markdown, user_errors
from ui.studies import resume_from_url

FLASH = "pe.flash"


def flash(message: str) -> None:
    """A message for the next run of the page (callbacks cannot place elements)."""
    st.session_state[FLASH] = message


def begin(title: str, before_loading: Callable[[], object] | None = None) -> tuple[DataChoice, Dataset]:
    """Initialise the session, show the title and any pending message, run ``before_loading``
    (widgets that choose the data), load the chosen data (a data problem is shown and stops the page)."""
    state.ensure_state()
    st.title(title)
    resume_from_url()
    message = st.session_state.pop(FLASH, None)
    if message:
        st.success(escape_markdown(message))
    if before_loading is not None:
        before_loading()
    choice = state.data_choice()
    with user_errors("Loading the data"):
        dataset = cache.dataset(choice)
    return choice, dataset
