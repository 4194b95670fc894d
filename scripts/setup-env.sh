#!/usr/bin/env bash
# Create .venv and install the project's requirements into it. Idempotent: a second call only
# checks that everything is installed. Usage: scripts/setup-env.sh [app|learned|test]
set -euo pipefail
cd "$(dirname "$0")/.."
profile="${1:-app}"
# uv does not byte-compile unless asked; with PYTHONDONTWRITEBYTECODE set every start would
# recompile the stack, so compile once at install time.
# Profiles: app (the dashboard), learned (app + the optional learned-metric extra), test (all).
unset PYTHONDONTWRITEBYTECODE
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
if [ ! -x .venv/bin/uv ]; then
  .venv/bin/python -m pip install --quiet uv==0.13.9
fi
export VIRTUAL_ENV="$PWD/.venv"
if [ "$profile" = test ] || [ "$profile" = learned ]; then
  # The CPU build of torch comes from a local wheel that only pip finds; install it first so
  # that nothing else pulls the multi-GB CUDA build from the registry.
  if ! .venv/bin/python -c "import torch" 2>/dev/null; then
    .venv/bin/python -m pip install --quiet "torch==2.13.0"
  fi
fi
if [ "$profile" = test ]; then
  .venv/bin/uv pip install --quiet --compile-bytecode -r requirements-dev.txt
elif [ "$profile" = learned ]; then
  .venv/bin/uv pip install --quiet --compile-bytecode -r requirements.txt -r requirements-learned.txt
else
  .venv/bin/uv pip install --quiet --compile-bytecode -r requirements.txt
fi
