"""How many items one decision of ``pool_sign_clt`` needs, human only and with §10's ideal metric inside.

One pair alone, no run around it: a pool of ``--items`` human outcomes (+1 / 0 / -1, 10 % ties) with
net win rate ``--win``, revealed in ``--orders`` uniform orders; the ideal metric at sign accuracy a
(a decisive outcome kept with probability a, else a tie or the other sign; a tie +1 / 0 / -1 with
0.25 / 0.5 / 0.25) as the control variate. Printed: the mean number of items at which the evidence
that A is better first reaches the threshold (the pool's size where it never does), and its ratio to
human only — what the control variate's ``1 - r²`` buys a single decision, before a run's slowest
pairs and its batch size take their share (docs/results_question_control.md §8).

Usage (from the repository root)::

    PYTHONPATH=. .venv/bin/python bench/bench_decision_items.py [--orders 200] [--items 400] [--win 0.3]
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np
import numpy.typing as npt

from prefeval_core.protocol.ideal_metric import draw_metric_outcomes
from prefeval_core.protocol.simulation import ideal_mu
from prefeval_core.sequential.betting import PairSequences
from prefeval_core.sequential.mixture import mixture_log_e
from prefeval_core.sequential.pool_clt import clt_pool_evidence
from prefeval_core.vocabulary.outcomes import VALUES

FloatArray = npt.NDArray[np.float64]
TIES = 0.1
"""The share of human ties in the simulated pools."""


def mu(accuracy: float) -> npt.NDArray[np.float64]:
    """§10's ideal metric's mixture matrix at sign accuracy ``accuracy`` (rows = metric, columns = human)."""
    return np.asarray(ideal_mu(accuracy), dtype=np.float64)


def items_needed(items: int, win: float, accuracy: float | None, threshold: float, orders: int, seed: int, oracle: bool = False) -> float:
    """The mean first item count at which the evidence for "A better" reaches ``threshold`` (log).

    ``oracle``: the metric enters with the pool's own best coefficient, known in advance (the values
    tested are ``h - lambda (f - mean f)``, human only): what the control variate would buy if its
    coefficient did not have to be learnt on the first items. Not a valid rule, a bound to compare with."""
    rng = np.random.default_rng(seed)
    better = (1 - TIES + win) / 2
    needed = []
    for _ in range(orders):
        outcomes = rng.choice([1.0, 0.0, -1.0], size=items, p=[better, TIES, 1 - TIES - better])
        metric = None if accuracy is None else VALUES[draw_metric_outcomes(rng, mu(accuracy), (1 - outcomes).astype(np.int64))]
        sequences = PairSequences(outcomes[None, :], np.array([items]), np.array([1.0]))
        control = None if metric is None else metric.astype(np.float64)[None, None, :]
        if oracle and metric is not None:
            f = metric - metric.mean()
            residual = outcomes - (np.dot(outcomes - outcomes.mean(), f) / np.dot(f, f)) * f
            sequences, control = PairSequences(residual[None, :], np.array([items]), np.array([np.abs(residual).max()])), None
        evidence = clt_pool_evidence(sequences, np.ones((1, items), dtype=bool), None, control)
        null = evidence.nulls[0]
        path = mixture_log_e(null.z, null.observed, null.allowed, null.horizon, null.refuted)[0]
        reached = np.flatnonzero(path >= threshold)
        needed.append(reached[0] + 1 if reached.size else items)
    return float(np.mean(needed))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orders", type=int, default=200)
    parser.add_argument("--items", type=int, default=400)
    parser.add_argument("--win", type=float, default=0.3, help="the pool's net win rate (drawn: the expected one)")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--oracle", action="store_true", help="the metric's coefficient known in advance (a bound, not a rule)")
    args = parser.parse_args()
    print(f"command: PYTHONPATH=. .venv/bin/python bench/bench_decision_items.py {' '.join(sys.argv[1:])}")
    print("| threshold | human only | a = 0.6 | a = 0.7 | a = 0.8 | a = 0.9 |")
    print("|---|---|---|---|---|---|")
    for label, threshold in (("1 / 0.05", math.log(20)), ("Holm, 40 nulls: 40 / 0.05", math.log(800))):
        human = items_needed(args.items, args.win, None, threshold, args.orders, args.seed)
        cells = [f"{human:.1f}"]
        for accuracy in (0.6, 0.7, 0.8, 0.9):
            with_metric = items_needed(args.items, args.win, accuracy, threshold, args.orders, args.seed, args.oracle)
            cells.append(f"{with_metric:.1f} ({with_metric / human:.2f})")
        print(f"| {label} | " + " | ".join(cells) + " |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
