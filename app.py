"""prefeval dashboard: ``streamlit run app.py``.

The entry point sets the page, JAX's process-wide flags (before any page computes) and the
navigation over the files in ``pages/`` (listed explicitly: automatic discovery is off).
"""

import streamlit as st

from prefeval_core.runtime import configure_jax

st.set_page_config(page_title="prefeval", page_icon=":material/balance:", layout="wide")
configure_jax(x64=True, host_devices=5)  # NUTS (reference sampler) runs its 5 chains in parallel

PAGES = [
    st.Page("pages/data.py", title="Data", icon=":material/table:", default=True),
    st.Page("pages/metric_check.py", title="Metric check", icon=":material/fact_check:"),
    st.Page("pages/protocol.py", title="Protocol", icon=":material/play_circle:"),
    st.Page("pages/annotate.py", title="Annotate", icon=":material/rate_review:"),
    st.Page("pages/report.py", title="Report & session", icon=":material/save:"),
]
st.navigation(PAGES).run()
