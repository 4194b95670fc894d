"""Annotate: what the protocol wants annotated next, in the app (stored on disk at once) or as files."""

import streamlit as st

from ui import annotate_widgets as aw
from ui import state
from ui.errors import escape_markdown
from ui.page import begin
from ui.protocol_widgets import feed_store_button

choice, dataset = begin("Annotate")
protocol = st.session_state[state.PROTOCOL]
annotator = aw.annotator_input()
if protocol is not None:
    tasks = aw.tasks_from_protocol(protocol)
    st.caption(f"The protocol's request for round {protocol.round + 1}: {len(tasks)} items.")
elif dataset.has_texts:
    st.caption("No protocol is running (start one on the Protocol page): annotate any pair.")
    tasks = aw.tasks_for_pair(dataset, *aw.pair_picker(dataset))
else:
    tasks = []
    st.info("Start a protocol on the Protocol page to get a list of items to annotate.")
pending = aw.pending_tasks(tasks, choice.key, annotator)
if tasks:
    done = len(tasks) - len(pending)
    st.progress(done / len(tasks), text=f"{done} of {len(tasks)} annotated by {escape_markdown(annotator)}")
tab_app, tab_files, tab_store = st.tabs(["In the app", "As files", "Stored annotations"])
with tab_app:
    if not dataset.has_texts:
        st.info("These data have no texts: annotate with the request files instead.")
    elif pending:
        aw.annotate_one(dataset, choice, pending[0], annotator)
    elif tasks:
        st.success("All requested items are annotated.")
    elif protocol is not None:
        st.info("The protocol asks for nothing more: it has finished, or its budget is spent.")
    if protocol is not None:
        feed_store_button(choice, protocol)
with tab_files:
    aw.request_files(dataset, choice, pending, annotator)
with tab_store:
    aw.store_view(choice)
