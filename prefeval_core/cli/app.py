"""``app [STREAMLIT OPTIONS]``: start the dashboard (``streamlit run`` on the bundled ``app.py``).

Options it does not know go to ``streamlit run`` (``prefeval app --server.port 8502``). The
dashboard's own settings (127.0.0.1 only, no outside requests, upload limit) come from the
``.streamlit/config.toml`` beside its ``app.py``, which Streamlit reads wherever it is started;
annotations go to ``./prefeval_data/`` (or ``$PREFEVAL_DATA_DIR``) as with ``streamlit run app.py``.
Streamlit is the optional ``app`` extra: without it the command says which extra to install.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys

from prefeval_core.workflow.dashboard import dashboard_command


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "app",
        help="start the dashboard (options it does not know go to streamlit run)",
        description="Start the prefeval dashboard on http://127.0.0.1:8501 (streamlit run on the bundled app.py). "
        "Other options go to streamlit run, e.g. --server.port 8502.",
    )
    parser.set_defaults(run=run, passes_on=True)


MISSING_STREAMLIT = "prefeval app: the dashboard needs Streamlit, which is not installed: pip install 'prefeval[app]'"


def streamlit_installed() -> bool:
    """Whether Streamlit can be imported (without importing it)."""
    try:
        return importlib.util.find_spec("streamlit") is not None
    except (ImportError, ValueError):  # blocked, or a broken entry in sys.modules
        return False


def run(args: argparse.Namespace) -> int:
    if not streamlit_installed():
        print(MISSING_STREAMLIT, file=sys.stderr)
        return 1
    command = dashboard_command(args.passed_on)
    sys.stdout.flush()
    # Replace this process: Ctrl+C and a service manager's signals reach the server itself.
    os.execv(command[0], command)
