"""The full tampered-session campaign: seeded mutations of real session files, each through the
core and through the app's restore uploader.

    .venv/bin/python bench/reliability/sessions.py                  # 600 tampered sessions, seed 0
    .venv/bin/python bench/reliability/sessions.py --count 200 --seed 7
    .venv/bin/python bench/reliability/sessions.py --show 12        # what session 12 is and what happens to it

Each file is built from its index (``tests/reliability/session_corpus.py``: the mutation kinds
in turn, on a base session and at positions chosen by the seed) and checked twice
(``tests/reliability/session_checks.py``): in the core (``session_from_json`` and every
restore check on the file's data) and in the app (the Report & session page under Streamlit's
AppTest, with a private annotation store: no exception, a visible message naming the file and
the JSON path, a refused file changing neither the session nor the store). Prints the figures
(docs/reliability.md) and the command; exit code 1 unless every failure count is zero.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import tempfile
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.reliability.session_checks import SessionFigures, check_app, check_core  # noqa: E402
from tests.reliability.session_corpus import tampered_session  # noqa: E402


def run(count: int, seed: int, app: bool) -> tuple[SessionFigures, SessionFigures]:
    core, shell = SessionFigures(), SessionFigures()
    at = AppTest.from_file(str(ROOT / "pages" / "report.py"), default_timeout=120)
    if app:
        at.run()
    started = time.perf_counter()
    for index in range(count):
        tampered = tampered_session(index, seed=seed)
        core.add(check_core(tampered))
        if app:
            shell.add(check_app(at, tampered))
        if (index + 1) % 100 == 0:
            failures = len(core.failures) + len(shell.failures)
            print(f"  {index + 1:,} sessions, {time.perf_counter() - started:,.0f} s, {failures} failures", file=sys.stderr, flush=True)
    return core, shell


def show(index: int, seed: int) -> None:
    tampered = tampered_session(index, seed=seed)
    print(f"session {index}: {tampered.kind} on {tampered.base}, {len(tampered.data):,} bytes, expect {tampered.expect} at {tampered.path}")
    print(repr(tampered.data[:300]))
    print(check_core(tampered))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=600, help="tampered sessions (default %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="corpus seed (default %(default)s)")
    parser.add_argument("--core-only", action="store_true", help="skip the app (AppTest) check")
    parser.add_argument("--show", type=int, metavar="INDEX", help="build and check one session file, and print what happened")
    args = parser.parse_args()
    from prefeval_core.runtime import configure_jax

    configure_jax(x64=True)
    if args.show is not None:
        show(args.show, args.seed)
        return 0
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="prefeval-sessions-") as scratch:
        os.environ["PREFEVAL_DATA_DIR"] = scratch  # the app's store: private, thrown away
        core, shell = run(args.count, args.seed, not args.core_only)
    command = " ".join([".venv/bin/python", "bench/reliability/sessions.py", *map(shlex.quote, sys.argv[1:])])
    print(f"$ {command}")
    print(f"{args.count:,} tampered sessions in {time.perf_counter() - started:,.0f} s (seed {args.seed}, {os.cpu_count()} cores)")
    for name, figures in (("core", core), ("app", shell)):
        if figures.total:
            print(f"[{name}]")
            print(figures.table())
            for failure in figures.failures:
                print("FAIL", name, failure)
    return 0 if core.clean and shell.clean else 1


if __name__ == "__main__":
    sys.exit(main())
