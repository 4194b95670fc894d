#!/usr/bin/env bash
# Create .venv and install the project's requirements into it. Idempotent: a second call only
# checks that everything is installed. Usage: scripts/setup-env.sh [app|test]
set -euo pipefail
cd "$(dirname "$0")/.."
profile="${1:-app}"
# uv does not byte-compile unless asked; with PYTHONDONTWRITEBYTECODE set every start would
# recompile the stack, so compile once at install time.
unset PYTHONDONTWRITEBYTECODE
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
if [ ! -x .venv/bin/uv ]; then
  .venv/bin/python -m pip install --quiet uv==0.13.9
fi
export VIRTUAL_ENV="$PWD/.venv"
if [ "$profile" = test ]; then
  # The CPU build of torch comes from a local wheel that only pip finds; install it first so
  # that nothing else pulls the multi-GB CUDA build from the registry.
  if [ -f requirements-learned.txt ] && ! .venv/bin/python -c "import torch" 2>/dev/null; then
    .venv/bin/python -m pip install --quiet "torch==2.13.0"
  fi
  .venv/bin/uv pip install --quiet --compile-bytecode -r requirements-dev.txt
else
  .venv/bin/uv pip install --quiet --compile-bytecode -r requirements.txt
fi
