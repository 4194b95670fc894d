"""The annotator's screen: the study's criterion and guidelines, their own queue, one
task at a time; no results, no system names, no other page."""

from __future__ import annotations

import streamlit as st

from prefeval_core.vocabulary.tasks import ComparisonTask
from prefeval_core.workflow.datasets import Dataset
from prefeval_core.workflow.queue import requested_tasks
from prefeval_core.workflow.roles import Annotator
from prefeval_core.workflow.studies import Study, resume_study, study_parts, study_store
from ui import annotate_widgets as aw
from ui import cache, roles, state
from ui.errors import escape_markdown, user_errors
from ui.page import run_through_the_app


def begin_judging() -> tuple[Annotator, Study, Dataset]:
    """The annotator the link names, their study at its latest state, and its data."""
    run_through_the_app()
    state.ensure_state()
    who = roles.invitee()
    store = study_store()
    with user_errors("Opening your study"):
        data, setup = study_parts(store.study(who.study_id))
        dataset = cache.dataset(data)
        study = resume_study(store, who.study_id, dataset, table=cache.study_table(data, setup))
    return who, study, dataset


def judge(who: Annotator, study: Study, dataset: Dataset) -> None:
    """The criterion, the progress of the annotator's queue, and the next task in it."""
    st.title(f"Judge the {escape_markdown(study.criterion)}")
    st.caption(f"Signed in by your personal link as **{escape_markdown(who.annotator)}**; every judgment is saved the moment you make it.")
    aw.guidelines_box(study.guidelines)
    tasks = list(requested_tasks(study.state)) if study.setup.mode == "live" else []
    if not tasks:
        st.info("Nothing to judge right now: the lead will open the next round. Come back to this link later.")
        return
    judgments = aw.study_judgments(study.data.key, study.record)
    per_item = study.record.judgments_per_item
    aw.progress(tasks, judgments, who.annotator, per_item)
    task = aw.choose_task(tasks, judgments, who.annotator, per_item, study.setup.seed)
    if task is None:
        st.success("Thank you: nothing is left for you in this round.")
    elif isinstance(task, ComparisonTask):
        aw.compare_one(dataset, study.data, study.id, task, who.annotator, study.criterion, who.token)
    else:
        scale = study.scale
        if scale is not None:
            aw.rate_one(dataset, study.data, study.id, task, who.annotator, scale, study.criterion, who.token)
