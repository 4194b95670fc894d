#!/usr/bin/env bash
# Install (first run only) everything the tests need, including Debian's chromium for the
# browser test, then run the whole test suite. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing chromium (Debian package) for the browser test ..." >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
    || echo "warning: could not install chromium; the browser test will be skipped" >&2
fi
# --- PostgreSQL for the store tests (owner: store): the server binaries, from Debian when missing.
if ! command -v initdb >/dev/null && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 \
    && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing postgresql (Debian package) for the store tests ..." >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null) \
    || echo "warning: could not install postgresql; the store tests on PostgreSQL will fail under CI" >&2
fi
# --- end of PostgreSQL
scripts/setup-env.sh test
# The Label Studio server of tests/test_labelstudio_server.py, in its own .venv-labelstudio (first run only).
bash scripts/label-studio-server.sh >/dev/null \
  || echo "warning: could not install Label Studio; its server test will fail under CI" >&2
# (tests/test_package.py builds the wheel and installs it into a fresh venv with .venv/bin/uv: the install check)
# the import contract first (pyproject.toml [tool.importlinter]; tests/test_import_contract.py plants violations)
.venv/bin/lint-imports --no-logo --no-cache
# two workers (this machine kind has two cores); the slowest test alone takes a few minutes
exec .venv/bin/python -m pytest -n 2 --dist worksteal --durations=25 "$@"
