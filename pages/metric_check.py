"""Metric check: how well does an automatic metric agree with the human rater?"""

import streamlit as st

from prefeval_core.workflow.metric_check import reading
from ui import cache, state
from ui.errors import escape_markdown, user_errors
from ui.metric_widgets import confusion_of_pair, dags_side_by_side, judges_view, metric_picker, summary_figures
from ui.page import begin

choice, dataset = begin("Metric check")
default = state.metric_check(dataset)
if default is None:
    st.info("These data have no metric to check: every rater is human.")
    st.stop()
check = metric_picker(dataset, default)
with user_errors(f"Checking {check.metric}"):
    report = cache.metric_report(choice, check)
st.markdown("\n".join(f"- {escape_markdown(line)}" for line in reading(report)))
TABS = ["Accuracy and Favi-Score", "Judges side by side", "Confusion of a pair", "Significance DAGs"]
tabs = st.tabs(TABS, key="pe.w.check_tab", on_change="rerun")
render = [
    lambda: summary_figures(choice, check),
    lambda: judges_view(choice, dataset, check),
    lambda: confusion_of_pair(report),
    lambda: dags_side_by_side(choice, check, report),
]
for tab, show in zip(tabs, render, strict=True):
    if tab.open:  # only the open tab is computed and sent
        with tab:
            show()
