"""Annotate (the lead's page): what the study asks for next — a rating of one output or a
comparison of two — judged in the app under a name the lead chooses (stored at once) or in request
files; the store's judgments and agreement; the team (annotators judge through their links). A
replay study takes its judgments from its data: nothing is judged for it here."""

import streamlit as st

from prefeval_core.vocabulary.tasks import ComparisonTask
from prefeval_core.workflow.forecast import budget_forecast
from prefeval_core.workflow.queue import requested_tasks
from prefeval_core.workflow.studies import request_scale, study_details, study_store
from ui import annotate_widgets as aw
from ui import live_round, state
from ui.page import begin
from ui.team_widgets import team_view

choice, dataset = begin("Annotate")
protocol = st.session_state[state.PROTOCOL]
study = st.session_state[state.STUDY]
setup = state.setup()
replay = protocol is not None and (setup is None or setup.mode != "live")
annotator = aw.LEAD_NAME if replay else aw.annotator_input(study)
study_id = None if study is None else study.id
per_item = 1 if study is None else study.judgments_per_item
details = None if study is None else study_details(study_store(), study.id)
criterion = None if details is None else details.criterion
scale = None
if replay:
    tasks = []
    st.info("A replay's judgments come from its data, so nothing is judged here: step it on the Protocol page.")
elif protocol is not None:
    tasks = list(requested_tasks(protocol))
    unit = "ratings of single outputs" if protocol.table.unit == "ratings" else "comparisons of two outputs"
    scale = request_scale(dataset, protocol)
    st.caption(f"The study's request for round {protocol.round + 1}: {len(tasks)} {unit}. {budget_forecast(protocol).sentence()}")
elif dataset.has_texts:
    st.caption("No protocol is running (start one on the Protocol page): compare any pair.")
    tasks = aw.tasks_for_pair(dataset, *aw.pair_picker(dataset))
else:
    tasks = []
    st.info("Start a protocol on the Protocol page to get a list of items to judge.")
judgments = aw.study_judgments(choice.key, study)
if tasks:
    aw.progress(tasks, judgments, annotator, per_item)
if not replay:
    aw.criterion_header(criterion, "" if details is None else details.guidelines)
labels = ["Stored judgments", "Team"] if replay else ["In the app", "As files", "Stored judgments", "Team"]
tabs = dict(zip(labels, st.tabs(labels, key="pe.w.annotate_tab", on_change="rerun"), strict=True))  # stays open after Save
if not replay:
    with tabs["In the app"]:
        task = aw.choose_task(tasks, judgments, annotator, per_item, st.session_state[state.ANNOTATION_SEED])
        if not dataset.has_texts:
            st.info("These data have no texts: judge with the request files instead.")
        elif task is not None:
            if isinstance(task, ComparisonTask):
                aw.compare_one(dataset, choice, study_id, task, annotator, criterion)
            elif scale is not None:
                aw.rate_one(dataset, choice, study_id, task, annotator, scale, criterion)
        elif tasks:
            st.success("Nothing left for you in this request: every item is judged (by enough annotators).")
        elif protocol is not None:
            st.info("The study asks for nothing more: it has finished, or its budget is spent.")
        if protocol is not None:
            live_round.decide_button(choice, protocol)
    with tabs["As files"]:
        aw.request_files(dataset, choice, study_id, tasks, annotator, scale, criterion)
with tabs["Stored judgments"]:
    aw.store_view(dataset, choice, study, st.session_state[state.SETUP])
with tabs["Team"]:
    team_view(study, judgments)
