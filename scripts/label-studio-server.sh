#!/usr/bin/env bash
# Install (first run only) the Label Studio server that tests/test_labelstudio_server.py starts on
# the loopback, into its own virtualenv .venv-labelstudio (its Django stack pins versions of its
# own, so it never shares prefeval's .venv). Idempotent: a second call checks and returns.
# Usage: scripts/label-studio-server.sh    (prints the path of the label-studio command)
set -euo pipefail
cd "$(dirname "$0")/.."
version=1.23.2
venv=.venv-labelstudio
unset PYTHONDONTWRITEBYTECODE  # compile once at install time, not on every server start
if ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('label-studio') != '$version')" 2>/dev/null; then
  echo "installing label-studio==$version into $venv (first run: about 3 minutes) ..." >&2
  python3 -m venv "$venv"
  if [ -x .venv/bin/uv ]; then
    .venv/bin/uv pip install --quiet --compile-bytecode --python "$venv/bin/python" "label-studio==$version"
  else
    "$venv/bin/python" -m pip install --quiet "label-studio==$version"
  fi
fi
echo "$PWD/$venv/bin/label-studio"
