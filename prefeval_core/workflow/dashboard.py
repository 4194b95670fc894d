"""Start the dashboard: the command that serves it (``prefeval app`` runs it in its own place).

Light on purpose: ``prefeval app`` imports this module and then replaces its process with
Streamlit's, so nothing of the numeric stack is loaded here.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from prefeval_core.data.bundled import APP_SCRIPT


def dashboard_command(passed_on: Sequence[str] = ()) -> list[str]:
    """The command that serves the dashboard (``streamlit run`` on the bundled ``app.py``) with this
    Python, ``passed_on`` appended as options of ``streamlit run``; an argument list, no shell involved."""
    return [sys.executable, "-m", "streamlit", "run", str(APP_SCRIPT), *passed_on]
