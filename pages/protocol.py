"""Protocol: step the annotation-budget protocol round by round and watch the decisions."""

import streamlit as st

from prefeval_core.workflow import views
from ui import protocol_widgets as pw
from ui import state
from ui.errors import escape_markdown, user_errors
from ui.page import begin
from ui.studies import studies_picker

choice, dataset = begin("Protocol")
studies_picker(choice.key)
human, metrics = state.raters(dataset)
st.caption(
    f"Human rater **{escape_markdown(human)}**, metrics **{escape_markdown(', '.join(metrics) or 'none (human only)')}** "
    "(change them on the Data page)."
)
with st.expander("Settings", expanded=st.session_state[state.PROTOCOL] is None), user_errors("Preparing the protocol"):
    pw.settings_form(choice, dataset, human, metrics)
protocol = st.session_state[state.PROTOCOL]
if protocol is None:
    st.info("Choose the settings and press **Start protocol**.")
    st.stop()
pw.step_buttons(choice, protocol)
pw.status(protocol)
pw.design_note(choice)
with user_errors("Comparing with the human evaluation", stop=False):
    result = pw.replay_result(protocol)
tabs = st.tabs(
    ["Leaderboard", "Pairs", "Decisions across rounds", "Win rates", "Decided so far", "Baselines"],
    key="pe.w.protocol_tab",
    on_change="rerun",
)
render = [
    lambda: pw.leaderboard(protocol),
    lambda: pw.pairs_view(protocol, result),
    lambda: st.plotly_chart(views.theta_history_figure(protocol), key="pe.fig.theta"),
    lambda: pw.win_rates(protocol),
    lambda: pw.decided_dag(protocol, result),
    lambda: pw.baselines_view(protocol, result),
]
for tab, show in zip(tabs, render, strict=True):
    if tab.open:  # only the open tab is computed and sent
        with tab:
            show()
