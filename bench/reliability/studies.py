"""The full synthetic-study campaign: ``--count`` studies nobody has seen, each replayed with every
question and error control (``tests/reliability/synthetic_studies.py``). Prints the figures and
the command; exit code 1 unless nothing went wrong.

    PYTHONPATH=. .venv/bin/python bench/reliability/studies.py                # 100 studies, 1,400 replays
    PYTHONPATH=. .venv/bin/python bench/reliability/studies.py --count 20 --first 100
"""

from __future__ import annotations

import argparse
import shlex
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.reliability.synthetic_studies import replay_arguments, replay_checks, synthetic_study  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100, help="studies (default 100)")
    parser.add_argument("--first", type=int, default=0, help="the first study's seed (default 0)")
    args = parser.parse_args()
    started = time.perf_counter()
    failures: list[str] = []
    kinds = {True: 0, False: 0}
    runs = 0
    with tempfile.TemporaryDirectory() as folder:
        for seed in range(args.first, args.first + args.count):
            study = synthetic_study(seed, Path(folder) / f"study{seed}")
            kinds[study.scalar] += 1
            runs += len(replay_arguments(study, seed))
            failures += [f"study {seed}: {f}" for f in replay_checks(study, seed)]
    print(f"$ PYTHONPATH=. .venv/bin/python {shlex.join(sys.argv)}")
    print(f"{args.count} studies ({kinds[True]} scalar, {kinds[False]} pairwise), {runs} replays, {time.perf_counter() - started:.0f} s")
    print(f"failures: {len(failures)}")
    for failure in failures[:20]:
        print(" ", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
