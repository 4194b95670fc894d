"""The full synthetic-study campaign: ``--count`` studies nobody has seen, each replayed with every
question and error control (``tests/reliability/synthetic_studies.py``). Prints the figures and
the command; exit code 1 unless nothing went wrong. With ``--orders N``, also the share of the
question-control runs on a pool statistic (each with N item orders) that made any false decision
against the study's own full evaluation (the guarantee bounds it by γ = 0.05 per run).

    PYTHONPATH=. .venv/bin/python bench/reliability/studies.py                # 100 studies, 1,400 replays
    PYTHONPATH=. .venv/bin/python bench/reliability/studies.py --count 20 --first 100
    PYTHONPATH=. .venv/bin/python bench/reliability/studies.py --count 400 --orders 5   # and the error shares
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

from tests.reliability.synthetic_studies import question_errors, replay_arguments, replay_checks, synthetic_study  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100, help="studies (default 100)")
    parser.add_argument("--first", type=int, default=0, help="the first study's seed (default 0)")
    parser.add_argument("--orders", type=int, default=0, help="item orders per question-control run for the error shares (default 0: none)")
    args = parser.parse_args()
    started = time.perf_counter()
    failures: list[str] = []
    kinds = {True: 0, False: 0}
    runs = 0
    errors: dict[tuple[str, str], list[bool]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for seed in range(args.first, args.first + args.count):
            study = synthetic_study(seed, Path(folder) / f"study{seed}")
            kinds[study.scalar] += 1
            runs += len(replay_arguments(study, seed))
            if args.orders:
                for question, statistic, wrong in question_errors(study, seed, args.orders):
                    errors.setdefault((question, statistic), []).append(wrong)
            failures += [f"study {seed}: {f}" for f in replay_checks(study, seed)]
    print(f"$ PYTHONPATH=. .venv/bin/python {shlex.join(sys.argv)}")
    print(f"{args.count} studies ({kinds[True]} scalar, {kinds[False]} pairwise), {runs} replays, {time.perf_counter() - started:.0f} s")
    print(f"failures: {len(failures)}")
    for failure in failures[:20]:
        print(" ", failure)
    if errors:
        print("\nquestion-level control, runs with any false decision against the study's own full evaluation (γ = 0.05):")
        print("| question | statistic | runs | with an error | share |\n|---|---|---:|---:|---:|")
        for (question, statistic), wrong in sorted(errors.items()):
            print(f"| {question} | {statistic} | {len(wrong)} | {sum(wrong)} | {sum(wrong) / len(wrong):.3f} |")
        every = [w for wrong in errors.values() for w in wrong]
        print(f"| all | all | {len(every)} | {sum(every)} | {sum(every) / len(every):.4f} |")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
