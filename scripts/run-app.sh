#!/usr/bin/env bash
# Install (first run only) and start the dashboard on http://127.0.0.1:8501
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-env.sh app
exec .venv/bin/streamlit run app.py "$@"
