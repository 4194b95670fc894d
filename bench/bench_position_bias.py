"""Position bias (prefeval_core/annotation/position_bias.py): the Cochran–Mantel–Haenszel test's error rate
at no bias and its power, by simulation of annotators with randomised sides.

Each simulated annotator judges ``pairs`` pairs of unequal quality (P(A wins) uniform on
[0.1, 0.9] per pair), ``items`` decisive judgments per pair, each side a fair coin; a bias ``b``
raises the left output's chance of winning by ``b``. The table gives the share of annotators
flagged at p <= 0.05 with its Monte-Carlo s.e.; at ``b = 0`` that share must stay within
0.05 + 2 s.e. Seeded: the same command prints the same table.

Usage (from the repository root)::

    PYTHONPATH=. .venv/bin/python bench/bench_position_bias.py [--runs 4000]
"""

from __future__ import annotations

import argparse
import math
import sys

from tests.test_position_bias import GAMMA, rejection_rate

DESIGNS = ((6, 20), (10, 4), (30, 10))
BIASES = (0.0, 0.05, 0.10, 0.20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=4000, help="simulated annotators per cell (default 4000)")
    args = parser.parse_args()
    print(f"PYTHONPATH=. {' '.join([sys.executable.split('/')[-1], *sys.argv])}")
    print(f"| pairs x items | bias | flagged at p <= {GAMMA} | MC s.e. |")
    print("|---|---|---|---|")
    for seed, (pairs, items) in enumerate(DESIGNS):
        for bias in BIASES:
            rate = rejection_rate(bias, args.runs, pairs=pairs, items=items, seed=seed)
            se = math.sqrt(max(rate * (1 - rate), GAMMA * (1 - GAMMA)) / args.runs)
            print(f"| {pairs} x {items} | {bias:.2f} | {rate:.4f} | {se:.4f} |")


if __name__ == "__main__":
    main()
