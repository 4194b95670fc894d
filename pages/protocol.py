"""Protocol: step the annotation-budget protocol round by round and watch the decisions."""

import streamlit as st

from ui import cache, state
from ui.errors import user_errors
from ui.protocol_widgets import (
    comparison_view,
    decided_dag,
    pairs_frame,
    replay_result,
    settings_form,
    status,
    step_buttons,
    theta_history_figure,
    win_rates,
)

state.ensure_state()
st.title("Protocol")
choice = state.data_choice()
with user_errors("Loading the data"):
    dataset = cache.dataset(choice)
    human, metric = state.raters(dataset)
st.caption(f"Human rater **{human}**, metric **{metric or 'none (human only)'}** (change them on the Data page).")
with st.expander("Settings", expanded=st.session_state[state.PROTOCOL] is None):
    with user_errors("Preparing the protocol"):
        settings_form(choice, human, metric)
protocol = st.session_state[state.PROTOCOL]
if protocol is None:
    st.info("Choose the settings and press **Start protocol**.")
    st.stop()
step_buttons(choice, protocol)
status(protocol)
with user_errors("Comparing with the human evaluation", stop=False):
    result = replay_result(choice, protocol)
tab_pairs, tab_theta, tab_rates, tab_dag = st.tabs(["Pairs", "θ across rounds", "Win rates", "Decided so far"])
with tab_pairs:
    if result is not None:
        comparison_view(result)
    st.dataframe(pairs_frame(protocol), hide_index=True, width="stretch", height=320)
with tab_theta:
    st.plotly_chart(theta_history_figure(protocol), key="pe.fig.theta")
with tab_rates:
    win_rates(protocol)
with tab_dag:
    decided_dag(protocol, result)
