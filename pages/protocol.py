"""Protocol: step the annotation-budget protocol round by round and watch the decisions."""

import streamlit as st

from ui import protocol_widgets as pw
from ui import state
from ui.errors import escape_markdown, user_errors
from ui.page import begin

choice, dataset = begin("Protocol")
human, metric = state.raters(dataset)
st.caption(
    f"Human rater **{escape_markdown(human)}**, metric **{escape_markdown(metric or 'none (human only)')}** (change them on the Data page)."
)
with st.expander("Settings", expanded=st.session_state[state.PROTOCOL] is None), user_errors("Preparing the protocol"):
    pw.settings_form(choice, human, metric)
protocol = st.session_state[state.PROTOCOL]
if protocol is None:
    st.info("Choose the settings and press **Start protocol**.")
    st.stop()
pw.step_buttons(choice, protocol)
pw.status(protocol)
with user_errors("Comparing with the human evaluation", stop=False):
    result = pw.replay_result(choice, protocol)
tab_pairs, tab_theta, tab_rates, tab_dag = st.tabs(["Pairs", "θ across rounds", "Win rates", "Decided so far"])
with tab_pairs:
    if result is not None:
        pw.comparison_view(result)
    st.dataframe(pw.pairs_frame(protocol), hide_index=True, width="stretch", height=320)
with tab_theta:
    st.plotly_chart(pw.theta_history_figure(protocol), key="pe.fig.theta")
with tab_rates:
    pw.win_rates(protocol)
with tab_dag:
    pw.decided_dag(protocol, result)
