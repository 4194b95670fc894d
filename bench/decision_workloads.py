"""Workloads of the decision-engine benchmarks: count triples and item-level studies, all seeded.

* :func:`hard_counts`: synthetic pairs with few human and very many metric-only items (the ideal
  metric of method.md §10);
* :func:`summeval_counts`: SummEval ``human:relevance`` vs ``rougeL`` after revealing some human
  items per pair;
* :func:`many_systems_study`: S systems with one latent quality each; human score = quality +
  item effect + noise, metric = human + noise, outcomes by method.md §2 with a tie threshold;
* :func:`wmt20_study`: WMT20 en-de (10 systems, 1418 items), MQM (``human``) against a metric,
  with half of each pair's human outcomes withheld (those items stay metric-only);
* :class:`Study` and :func:`replay_decisions`: the protocol's replay loop (method.md §5: N human
  outcomes revealed per undecided pair per round, then a decision on the undecided pairs),
  written here on purpose (the protocol package is being rewritten); it times the engine calls.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd

from prefeval_core.decision import DecisionResult
from prefeval_core.pairs.counts import CountTriples, JointCounts, align_outcomes, count_triples, joint_counts
from prefeval_core.vocabulary.outcomes import codes_from_differences

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
GOOD = np.array([[0.8, 0.25, 0.1], [0.1, 0.5, 0.1], [0.1, 0.25, 0.8]])


def hard_counts(pairs: int, humans: int, metric_only: int, seed: int) -> CountTriples:
    """Synthetic pairs: p ~ Dirichlet(2, 1, 2) per pair, the ideal metric of method.md §10, counts drawn."""
    rng = np.random.default_rng(seed)
    n = np.zeros((pairs, 3), dtype=np.int64)
    K = np.zeros((pairs, 3, 3), dtype=np.int64)
    m = np.zeros((pairs, 3), dtype=np.int64)
    for i in range(pairs):
        p = rng.dirichlet([2.0, 1.0, 2.0])
        n[i] = rng.multinomial(humans, p)
        for h in range(3):
            K[i, :, h] = rng.multinomial(n[i, h], GOOD[:, h])
        m[i] = rng.multinomial(metric_only, GOOD @ p)
    return CountTriples(n, K, m)


def summeval_counts(revealed_per_pair: int, seed: int) -> CountTriples:
    """SummEval, human:relevance vs rougeL, with ``revealed_per_pair`` human items per pair revealed in a seeded random order."""
    from prefeval_core.data.dataset import load_dataset
    from prefeval_core.pairs.preferences import pair_outcomes

    ds = load_dataset(SHARED / "summeval")
    table = align_outcomes(pair_outcomes(ds, "human:relevance"), pair_outcomes(ds, "rougeL"))
    rng = np.random.default_rng(seed)
    revealed = np.zeros(table.human.shape, dtype=bool)
    for pair in range(table.n_pairs):
        rows = np.flatnonzero((table.pair_index == pair) & (table.human >= 0))
        revealed[rng.permutation(rows)[:revealed_per_pair]] = True
    return count_triples(table, revealed)


@dataclass(frozen=True)
class Study:
    """Item-level outcomes of P pairs for a replay: row ``i`` of each array is one (pair, item).

    Attributes:
        pair: (R,) pair index of each row, sorted.
        human: (R,) human outcome code, -1 where withheld or missing (a metric-only item).
        metric: (R,) metric outcome code, -1 where the metric gave none.
        order: (R,) the seeded position of each row in its pair's reveal order (human rows first).
        n_pairs: P.
    """

    pair: npt.NDArray[np.int64]
    human: npt.NDArray[np.int8]
    metric: npt.NDArray[np.int8]
    order: npt.NDArray[np.int64]
    n_pairs: int

    def counts(self, revealed: npt.NDArray[np.int64]) -> CountTriples:
        """``(n, K, m)`` of every pair when its first ``revealed[pair]`` human rows (in reveal order) are revealed."""
        shown = (self.human >= 0) & (self.order < revealed[self.pair])
        P = self.n_pairs
        n = np.bincount(self.pair[shown] * 3 + self.human[shown], minlength=P * 3).reshape(P, 3)
        both = shown & (self.metric >= 0)
        K = np.bincount(self.pair[both] * 9 + self.metric[both] * 3 + self.human[both], minlength=P * 9).reshape(P, 3, 3)
        rest = ~shown & (self.metric >= 0)
        m = np.bincount(self.pair[rest] * 3 + self.metric[rest], minlength=P * 3).reshape(P, 3)
        return CountTriples(n, K, m)

    def pools(self) -> npt.NDArray[np.int64]:
        """Human outcomes available per pair."""
        return np.bincount(self.pair[self.human >= 0], minlength=self.n_pairs)

    def describe(self) -> str:
        humans, items = self.pools(), np.bincount(self.pair, minlength=self.n_pairs)
        return f"{self.n_pairs} pairs, {humans.mean():.0f} human and {(items - humans).mean():.0f} metric-only items per pair (mean)"


def _study(pair: npt.NDArray[np.int64], human: npt.NDArray[np.int8], metric: npt.NDArray[np.int8], n_pairs: int, seed: int) -> Study:
    """Sort rows by pair and give each pair's human rows a seeded reveal order (metric-only rows last)."""
    rng = np.random.default_rng([seed, 1])
    key = np.lexsort((rng.random(len(pair)), human < 0, pair))
    pair, human, metric = pair[key], human[key], metric[key]
    starts = np.searchsorted(pair, np.arange(n_pairs))
    order = np.arange(len(pair)) - starts[pair]
    return Study(pair.astype(np.int64), human.astype(np.int8), metric.astype(np.int8), order.astype(np.int64), n_pairs)


def many_systems_study(systems: int, items: int, metric_only: int, seed: int, *, eps: float = 0.1) -> Study:
    """S systems, one latent quality each (N(0, 0.3²)); on each of ``items + metric_only`` items,
    human score = quality + item effect (N(0, 1)) + noise (N(0, 1)), metric score = human score +
    noise (N(0, 0.7²)); outcomes of every pair by method.md §2 with tie threshold ``eps``. The
    human scores of the last ``metric_only`` items are withheld (metric-only items)."""
    rng = np.random.default_rng(seed)
    total = items + metric_only
    quality = rng.normal(0.0, 0.3, systems)
    human = quality[:, None] + rng.normal(0.0, 1.0, total)[None, :] + rng.normal(0.0, 1.0, (systems, total))
    metric = human + rng.normal(0.0, 0.7, (systems, total))
    a, b = np.triu_indices(systems, k=1)
    human_codes = codes_from_differences(human[a] - human[b], eps)  # (pairs, total)
    metric_codes = codes_from_differences(metric[a] - metric[b], eps)
    human_codes[:, items:] = -1
    pairs = len(a)
    pair = np.repeat(np.arange(pairs), total)
    return _study(pair, human_codes.ravel(), metric_codes.ravel(), pairs, seed)


def wmt20_study(metric: str, withheld: float, seed: int) -> Study:
    """WMT20 en-de, human MQM (``human``) vs ``metric``; a seeded share ``withheld`` of each pair's
    human outcomes is withheld (those items stay metric-only)."""
    from prefeval_core.data.dataset import load_dataset
    from prefeval_core.pairs.preferences import pair_outcomes

    ds = load_dataset(SHARED / "wmt20_ende_mqm")
    table = align_outcomes(pair_outcomes(ds, "human"), pair_outcomes(ds, metric))
    human = table.human.copy()
    rng = np.random.default_rng([seed, 2])
    for p in range(table.n_pairs):
        rows = np.flatnonzero((table.pair_index == p) & (human >= 0))
        human[rng.permutation(rows)[: round(withheld * len(rows))]] = -1
    return _study(table.pair_index.astype(np.int64), human, table.metric, table.n_pairs, seed)


@dataclass(frozen=True)
class ReplayTiming:
    """One replay: engine calls, total seconds in them, rounds, pairs decided, human outcomes used."""

    calls: int
    engine_seconds: float
    call_seconds: tuple[float, ...]
    pairs_per_call: tuple[int, ...]
    decided: int
    humans_used: int


def replay_decisions(study: Study, decide: Callable[[CountTriples, int], DecisionResult], *, batch: int = 10) -> ReplayTiming:
    """The protocol's replay loop (method.md §5, budget = every human outcome): each round reveals up
    to ``batch`` more human outcomes of every undecided pair that has any left, then decides all
    undecided pairs with ``decide(counts, round)``; decided pairs (``>`` or ``<``) leave. Stops when
    no pair is undecided or none can get more human outcomes. Times the ``decide`` calls only."""
    pools = study.pools()
    revealed = np.zeros(study.n_pairs, dtype=np.int64)
    undecided = np.ones(study.n_pairs, dtype=bool)
    times: list[float] = []
    sizes: list[int] = []
    round_number = 0
    while True:
        grow = undecided & (revealed < pools)
        if not grow.any():
            break
        revealed[grow] = np.minimum(pools[grow], revealed[grow] + batch)
        index = np.flatnonzero(undecided)
        counts = study.counts(revealed)
        subset = CountTriples(counts.n[index], counts.K[index], counts.m[index])
        start = time.perf_counter()
        result = decide(subset, round_number)
        times.append(time.perf_counter() - start)
        sizes.append(len(index))
        undecided[index[result.decision != 1]] = False
        round_number += 1
    return ReplayTiming(len(times), sum(times), tuple(times), tuple(sizes), int((~undecided).sum()), int(revealed.sum()))


def summeval_joint_counts(metrics: tuple[str, ...], revealed_per_pair: int, seed: int) -> JointCounts:
    """SummEval ``human:relevance`` with several metrics as :class:`JointCounts`, ``revealed_per_pair``
    human outcomes per pair revealed in a seeded random order (every other item with a metric
    outcome is unrevealed)."""
    from prefeval_core.data.dataset import load_dataset
    from prefeval_core.pairs.preferences import pair_outcomes

    ds = load_dataset(SHARED / "summeval")
    keys = ["system_a", "system_b", "item_id"]
    frame = pair_outcomes(ds, "human:relevance").frame.rename(columns={"outcome": "human"})
    for j, metric in enumerate(metrics):
        frame = frame.merge(pair_outcomes(ds, metric).frame.rename(columns={"outcome": f"m{j}"}), on=keys, how="left")
    frame = frame.sort_values(keys, kind="stable").reset_index(drop=True)
    pair_index, _ = pd.factorize(pd.MultiIndex.from_frame(frame[["system_a", "system_b"]]), sort=True)
    human = frame["human"].fillna(-1).to_numpy().astype(np.int8)
    codes = np.stack([frame[f"m{j}"].fillna(-1).to_numpy().astype(np.int8) for j in range(len(metrics))], axis=1)
    rng = np.random.default_rng(seed)
    revealed = np.zeros(len(frame), dtype=bool)
    for pair in range(int(pair_index.max()) + 1):
        rows = np.flatnonzero((pair_index == pair) & (human >= 0))
        revealed[rng.permutation(rows)[:revealed_per_pair]] = True
    return joint_counts(metrics, pair_index, human, codes, revealed, int(pair_index.max()) + 1)
