"""The default route on studies whose top systems tie exactly in their own pool, annotators kept
apart (``tests/reliability/pool_ties.py``): the share of runs that broke the guarantee, per design,
question, batch size and pool statistic. Prints a Markdown table and the command; exit code 1 if a
cell's share exceeds γ plus two Monte-Carlo standard errors (under the default control; the per-pair
controls are there for contrast: they are expected to exceed it).

    PYTHONPATH=. .venv/bin/python bench/reliability/pool_ties.py --runs 1000
    PYTHONPATH=. .venv/bin/python bench/reliability/pool_ties.py --runs 200 --batches 10 --statistics pool_mean
    PYTHONPATH=. .venv/bin/python bench/reliability/pool_ties.py --runs 300 --batches 10 --controls spending,none --statistics default
    PYTHONPATH=. .venv/bin/python bench/reliability/pool_ties.py --runs 1000 --designs comparisons --statistics pool_mean
"""

from __future__ import annotations

import argparse
import itertools
import os
import shlex
import sys
import tempfile
import time
from pathlib import Path
from typing import cast

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from prefeval_core.protocol.settings import ErrorControl, Question, Statistic  # noqa: E402
from tests.reliability.pool_ties import Design, default_route_errors  # noqa: E402

QUESTIONS = {"top-1": Question("top-k", k=1), "all-pairs": Question()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000, help="studies per cell (default 1000)")
    parser.add_argument("--designs", default="experts,crowd")
    parser.add_argument("--questions", default=",".join(QUESTIONS))
    parser.add_argument("--batches", default="10,1", help="items per system and round")
    parser.add_argument("--statistics", default="pool_mean,pool_mean_clt", help="pool_mean is the default's ('default': as the control's)")
    parser.add_argument("--controls", default="question", help="error controls (question is the default; others for contrast)")
    args = parser.parse_args()
    os.environ.setdefault("PREFEVAL_DATA_DIR", tempfile.mkdtemp())
    print(f"`PYTHONPATH=. .venv/bin/python bench/reliability/pool_ties.py {shlex.join(sys.argv[1:])}`\n")
    print(
        "8 systems, 60 items, 3 ratings per output (comparisons: 3 annotators compare every pair on every item, one bought per "
        "request); s0-s2 tie exactly in the pool, the others 0.4, 0.4, 0.8, 0.8 and 1.2 lower.\n"
    )
    print("| design | question | N | control | statistic | design bought | runs | error share (γ + 2 s.e.) | cost | s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    broken = False
    cells = itertools.product(
        args.controls.split(","), args.designs.split(","), args.questions.split(","), args.batches.split(","), args.statistics.split(",")
    )
    for control, design, question, batch, statistic in cells:
        start = time.perf_counter()
        asked = QUESTIONS[question]
        found = default_route_errors(
            args.runs,
            design=cast(Design, design),
            question=asked,
            batch=int(batch),
            statistic=None if statistic == "default" else cast(Statistic, statistic),
            error_control=cast(ErrorControl, control),
        )
        broken |= control == "question" and found.share > found.bound
        print(
            f"| {design} | {question} | {batch} | {control} | {statistic} | {', '.join(sorted(found.designs))} | {found.runs} | "
            f"{found.share:.3f} ({found.bound:.3f}) | {found.cost:.3f} | {time.perf_counter() - start:.0f} |",
            flush=True,
        )
    return int(broken)


if __name__ == "__main__":
    sys.exit(main())
