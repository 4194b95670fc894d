"""Annotate: what the protocol wants annotated next, in the app (stored on disk at once) or as files."""

import streamlit as st

from ui import cache, state
from ui.annotate_widgets import (
    annotate_one,
    annotator_input,
    pair_picker,
    pending_tasks,
    request_files,
    show_flash,
    store_view,
    tasks_for_pair,
    tasks_from_protocol,
)
from ui.errors import user_errors
from ui.protocol_widgets import feed_store_button

state.ensure_state()
st.title("Annotate")
show_flash()
choice = state.data_choice()
with user_errors("Loading the data"):
    dataset = cache.dataset(choice)
protocol = st.session_state[state.PROTOCOL]
annotator = annotator_input()
if protocol is not None:
    tasks = tasks_from_protocol(protocol)
    st.caption(f"The protocol's request for round {protocol.round + 1}: {len(tasks)} items.")
elif dataset.has_texts:
    st.caption("No protocol is running (start one on the Protocol page): annotate any pair.")
    tasks = tasks_for_pair(dataset, *pair_picker(dataset))
else:
    tasks = []
    st.info("Start a protocol on the Protocol page to get a list of items to annotate.")
pending = pending_tasks(tasks, choice.key, annotator)
if tasks:
    done = len(tasks) - len(pending)
    st.progress(done / len(tasks), text=f"{done} of {len(tasks)} annotated by {annotator}")
tab_app, tab_files, tab_store = st.tabs(["In the app", "As files", "Stored annotations"])
with tab_app:
    if not dataset.has_texts:
        st.info("These data have no texts: annotate with the request files instead.")
    elif pending:
        annotate_one(dataset, choice, pending[0], annotator)
    elif tasks:
        st.success("All requested items are annotated.")
    elif protocol is not None:
        st.info("The protocol asks for nothing more: it has finished, or its budget is spent.")
    if protocol is not None:
        feed_store_button(choice, protocol)
with tab_files:
    request_files(dataset, choice, pending, annotator)
with tab_store:
    store_view(choice)
