"""prefeval dashboard: ``streamlit run app.py``.

The entry point sets the page, JAX's process-wide flags (before any page computes) and the
navigation over the files in ``pages/`` (listed explicitly: automatic discovery is off), shown
at the top of the page. Every page goes through here: a page that Streamlit runs on its own
(its legacy ``pages/`` mode, see :func:`ui.page.begin`) reruns through this script first.

No icon comes from elsewhere: the favicon and the logo are a bundled SVG (sent inline as a ``data:``
URL; a ``:material/...:`` page icon would make the browser fetch it from fonts.gstatic.com), and
the navigation's Material icons are drawn with the font Streamlit serves itself.

Roles (:mod:`ui.roles`): an annotator's link (``?token=...``) opens only the annotator's
queue (``pages/judge.py``, no navigation); a refused link opens only the page saying why; the
lead's pages ask for ``$PREFEVAL_LEAD_PASSWORD`` when it is set.
"""

from pathlib import Path

import streamlit as st

from prefeval_core.runtime import configure_jax
from ui import roles
from ui.errors import user_errors

ICON = Path(__file__).resolve().parent / "ui" / "assets" / "prefeval.svg"

st.set_page_config(page_title="prefeval", page_icon=ICON, layout="wide")
st.logo(ICON, size="large")  # before the navigation, at the left of the top bar
configure_jax(x64=True, host_devices=5)  # NUTS (reference sampler) runs its 5 chains in parallel

PAGES = [
    st.Page("pages/data.py", title="Data", icon=":material/table:", default=True),
    st.Page("pages/metric_check.py", title="Metric check", icon=":material/fact_check:"),
    st.Page("pages/protocol.py", title="Protocol", icon=":material/play_circle:"),
    st.Page("pages/annotate.py", title="Annotate", icon=":material/rate_review:"),
    st.Page("pages/report.py", title="Report & session", icon=":material/save:"),
]
with user_errors("Checking the address"):
    role = roles.resolve()
if role == "annotator":
    st.navigation([st.Page("pages/judge.py", title="Your queue", icon=":material/rate_review:", default=True)], position="hidden").run()
elif role == "refused":
    st.navigation([st.Page(roles.refused_page, title="Link refused", default=True)], position="hidden").run()
elif role == "login":
    # the sign-in form under every lead page's address, so that a deep link (`/protocol?study=7`) is
    # no unknown page and, once signed in, opens the page it names (a page's identity is its address)
    sign_in = [st.Page(roles.login_page, title="Sign in", default=True)]
    sign_in += [st.Page(roles.login_page, title=page.title, url_path=page.url_path) for page in PAGES[1:]]  # PAGES[0]: the default
    st.navigation(sign_in, position="hidden").run()
# At the top: `client.showSidebarNavigation = false` (.streamlit/config.toml) hides the sidebar
# listing Streamlit's legacy mode would show, and with it any sidebar navigation.
else:
    st.navigation(PAGES, position="top").run()
