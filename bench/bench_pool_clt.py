"""How valid the asymptotic pool-mean test (``pool_mean_clt``, method.md §13) is, on fixed pools.

The guarantee of ``pool_mean_clt`` is asymptotic; this benchmark measures it where it matters, on the
design's own randomness: a fixed pool of paired differences whose mean is exactly 0 (the null's
boundary), revealed in ``--orders`` uniform item orders, and the share of orders in which the evidence
against "Δ <= 0" or against "Δ >= 0" ever reaches ``2 / a`` (a false decision at level ``a``, the
two directions at ``a / 2`` each, as a Holm family of the two sides starts), with two Monte-Carlo
standard errors. The exact ``pool_mean`` test on the same orders beside it.

Pools: synthetic shapes (Likert means, MQM-like penalties, normal, and the adversarial pool of
rare large losses where the CLT fails at these sizes), and every pair of the shared studies with its
differences centred to mean 0 (the real shapes: SummEval relevance, means of three experts; WMT20 and
WMT21 TED MQM scores; SummEval's 300 (item, annotator) units of ``--ratings-per-request one_pooled``,
whose units of one item are dependent), human only and with a synthetic metric correlated with the differences
(sign of the difference plus noise) as a control variate.

Usage (from the repository root)::

    PYTHONPATH=. .venv/bin/python bench/bench_pool_clt.py [--orders 1000] [--level 0.05] [--pools synthetic,real]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import numpy.typing as npt

from prefeval_core.data.dataset import load_dataset
from prefeval_core.protocol.question_control import full_differences
from prefeval_core.protocol.table import build_study_table
from prefeval_core.sequential.betting import PairSequences
from prefeval_core.sequential.pool_betting import pool_evidence
from prefeval_core.sequential.pool_clt import clt_pool_evidence

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
FloatArray = npt.NDArray[np.float64]


def synthetic_pools(rng: np.random.Generator) -> Iterator[tuple[str, FloatArray]]:
    penalties = np.array([0, 0, 0, 0, 0, 0, 1, 1, 5, 10, 25], dtype=float)
    for n in (60, 200):
        means = np.clip(np.round(rng.normal(3.5, 0.9, (2, n, 3))), 1, 5).mean(axis=2)
        yield f"Likert means of 3, {n} items", means[0] - means[1]
        yield f"MQM-like penalties, {n} items", rng.choice(penalties, n) - rng.choice(penalties, n)
        yield f"normal, {n} items", rng.normal(0, 1, n)
        yield f"rare large losses (+0.5 : -4 = 8 : 1), {n} items", rng.choice([-4.0] + [0.5] * 8, n)


def real_pools() -> Iterator[tuple[str, FloatArray]]:
    studies = (
        ("SummEval relevance", "summeval", "human:relevance", "all"),
        ("SummEval relevance, (item, annotator) units", "summeval", "human:relevance", "one_pooled"),
        ("WMT21 TED MQM", "wmt21_ted_ende_mqm", "human", "all"),
        ("WMT20 MQM", "wmt20_ende_mqm", "human", "all"),
    )
    for label, name, human, per_request in studies:
        table = build_study_table(load_dataset(SHARED / name), human, ratings_per_request=per_request)  # type: ignore[arg-type]
        for p, d in enumerate(full_differences(table)):
            d = d[~np.isnan(d)]
            if len(d) >= 30 and d.std() > 0:
                yield f"{label} (pair {p})", d


def false_decisions(values: FloatArray, orders: int, level: float, rng: np.random.Generator, metric: bool) -> tuple[float, float]:
    """The share of orders with a false decision (either direction) by the exact and the asymptotic test."""
    values = values - values.mean()
    n = len(values)
    permutations = np.stack([rng.permutation(n) for _ in range(orders)])
    d = values[permutations]
    sequences = PairSequences(d, np.full(orders, n), np.full(orders, float(np.abs(values).max() * (1 + 1e-9) + 1e-9)))
    in_pool = np.ones(d.shape, dtype=bool)
    f = np.sign(values + rng.normal(0, values.std(), n))[permutations][None] if metric else None
    threshold = math.log(2 / level)
    exact = (pool_evidence(sequences, in_pool).direction >= threshold).any(axis=1).mean()
    clt = (clt_pool_evidence(sequences, in_pool, metric=f).direction >= threshold).any(axis=1).mean()
    return float(exact), float(clt)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orders", type=int, default=1000)
    parser.add_argument("--level", type=float, default=0.05)
    parser.add_argument("--pools", default="synthetic,real", help="which pools: synthetic and/or real")
    args = parser.parse_args()
    print(f"command: PYTHONPATH=. .venv/bin/python bench/bench_pool_clt.py {' '.join(sys.argv[1:])}")
    rng = np.random.default_rng(2026)
    se2 = 2 * math.sqrt(args.level * (1 - args.level) / args.orders)
    print(f"level a = {args.level}; {args.orders} orders per pool; a + 2 s.e. = {args.level + se2:.3f} (either direction at a / 2)")
    print("| pools | pools | exact pool_mean: mean (max) | pool_mean_clt: mean (max) | with a metric: mean (max) | s |")
    print("|---|---|---|---|---|---|")
    groups: dict[str, list[tuple[float, float, float]]] = {}
    start = time.perf_counter()
    pools = [*(synthetic_pools(rng) if "synthetic" in args.pools else ()), *(real_pools() if "real" in args.pools else ())]
    for label, values in pools:
        exact, clt = false_decisions(values, args.orders, args.level, rng, metric=False)
        _, with_metric = false_decisions(values, args.orders, args.level, rng, metric=True)
        groups.setdefault(label.split(" (pair")[0], []).append((exact, clt, with_metric))
    for label, rows in groups.items():
        table = np.array(rows)
        cells = " | ".join(f"{table[:, c].mean():.3f} ({table[:, c].max():.3f})" for c in range(3))
        print(f"| {label} | {len(rows)} | {cells} | {time.perf_counter() - start:.0f} |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
