"""Report & session: save or restore the whole session; download the HTML report and the results."""

import streamlit as st

from prefeval_core.workflow import views
from prefeval_core.workflow.metric_check import metric_pairs_frame
from prefeval_core.workflow.session import session_to_json
from ui import cache, state
from ui.errors import escape_markdown, show_problems, user_errors
from ui.page import begin
from ui.session_io import RESTORE_KEY, on_restore, report_html, snapshot

choice, dataset = begin("Report & session")
st.subheader("Session")
st.caption("The session file holds the data choice (uploaded files included), raters, settings, protocol state and annotations.")
st.download_button(
    "Save session (JSON)", session_to_json(snapshot(st.session_state)), "prefeval-session.json", "application/json", key="pe_save"
)
st.file_uploader("Restore a session file", type=["json"], key=RESTORE_KEY, on_change=on_restore)
show_problems(st.session_state.pop("pe.restore_problems", ()), "The session file could not be restored")
st.subheader("Report")
figures = st.toggle(
    "Append the interactive figures",
    key="pe.w.report_figures",
    help="adds the diagnostics' figures and the plotly.js bundle (about 4.6 MB)",
)
if st.button("Prepare the HTML report", key="pe_report"):
    with user_errors("Writing the report"), st.spinner("Writing the report ..."):
        html = report_html(st.session_state, figures=figures)
    st.download_button("Download the HTML report (offline, self-contained)", html, "prefeval-report.html", "text/html", key="pe_report_dl")
st.subheader("Results")
protocol = st.session_state[state.PROTOCOL]
if protocol is None or not protocol.records:
    st.info("No round of the protocol has been decided yet (Protocol page): the results appear here after the first.")
else:
    st.markdown("**Protocol decisions per pair**")
    results = views.pairs_frame(protocol)
    st.dataframe(results, hide_index=True, width="stretch", height=300)
    st.download_button("Results as CSV", views.table_csv(results), "prefeval-results.csv", "text/csv", key="pe_results_csv")
check = state.metric_check(dataset)
if check is not None:
    st.markdown(
        f"**{escape_markdown(check.metric)} against {escape_markdown(check.human)} per pair** "
        f"(tie threshold {check.eps:g}, γ = {check.gamma:g}; set on Metric check)"
    )
    with user_errors(f"Checking {check.metric}"):
        diagnostics = metric_pairs_frame(cache.metric_report(choice, check))
    st.dataframe(diagnostics, hide_index=True, width="stretch", height=300)
    st.download_button("Metric diagnostics as CSV", views.table_csv(diagnostics), "prefeval-diagnostics.csv", "text/csv", key="pe_diag_csv")
