"""The protocol's state: everything a session stores, self-contained and JSON-serialisable.

The state holds, per pair, the items it may ask about (in the seeded order they will be
asked), the metric's outcomes, and every revealed human outcome *with its value* (live
annotations may concern items that have no human outcome in any loaded file), plus the
decision history. It does not refer back to the data table, so a saved session restores
from its JSON alone. Outcome codes: 0 ``>`` (A better), 1 ``=``, 2 ``<``; decisions use
1 for undecided. Pairs are canonical (``system_a < system_b``).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from functools import cached_property
from typing import Any, Literal

import numpy as np

from prefeval_core.comparison import dirichlet_mean
from prefeval_core.counts import CountTriples, PairTable
from prefeval_core.outcomes import TIE
from prefeval_core.protocol.settings import ProtocolSettings

FORMAT_VERSION = 1
"""Version of the JSON layout written by :func:`state_to_json`."""

Pool = Literal["human", "all"]
"""Which items of a pair may be requested: those with a human outcome in the table (replay),
or every item of the pair in the table (live: humans annotate what was never annotated)."""


@dataclass(frozen=True)
class Reveal:
    """One revealed human outcome: ``item_id``, ``outcome`` code, and the ``round`` (1-based) it belongs to."""

    item_id: str
    outcome: int
    round: int


@dataclass(frozen=True)
class RoundRecord:
    """The decision on one pair after a round: ``theta = P(p> > p<)``, ``decision`` code (1 undecided),
    ``p_mean`` the posterior mean of ``(p>, p=, p<)``."""

    round: int
    theta: float
    decision: int
    p_mean: tuple[float, float, float]


@dataclass(frozen=True)
class PairState:
    """One pair's part of the state.

    Attributes:
        system_a, system_b: the canonical pair.
        pool: items that may be requested, in the order they will be requested (seeded).
        metric_items, metric: items the metric rated and its outcome codes on them (aligned).
        revealed: human outcomes revealed so far, in the order they arrived.
        history: one record per round in which the pair was decided on.
    """

    system_a: str
    system_b: str
    pool: tuple[str, ...]
    metric_items: tuple[str, ...]
    metric: tuple[int, ...]
    revealed: tuple[Reveal, ...] = ()
    history: tuple[RoundRecord, ...] = ()

    @property
    def decision(self) -> int:
        """Current decision code: 0 ``>``, 2 ``<``, 1 undecided (also before any round)."""
        return self.history[-1].decision if self.history else TIE

    @property
    def undecided(self) -> bool:
        return self.decision == TIE

    @property
    def theta(self) -> float | None:
        return self.history[-1].theta if self.history else None

    @property
    def revealed_items(self) -> frozenset[str]:
        return frozenset(r.item_id for r in self.revealed)

    def unrevealed_pool(self) -> tuple[str, ...]:
        """Pool items not yet revealed, in request order."""
        done = self.revealed_items
        return tuple(item for item in self.pool if item not in done)

    def human_counts(self) -> np.ndarray:
        """``n``: revealed human outcome counts, shape (3,)."""
        return np.bincount([r.outcome for r in self.revealed], minlength=3).astype(np.int64)

    def p_mean(self) -> np.ndarray:
        """Latest posterior mean of ``p``; before any decision, the human-only mean ``(n + 1) / (sum + 3)``."""
        if self.history:
            return np.asarray(self.history[-1].p_mean, dtype=np.float64)
        return dirichlet_mean(self.human_counts())


@dataclass(frozen=True)
class ProtocolState:
    """The whole protocol: settings, pairs, and the number of completed rounds.

    Human outcomes revealed after the last completed round belong to the open round
    ``round + 1`` until :func:`prefeval_core.protocol.steps.decide_round` closes it.
    """

    settings: ProtocolSettings
    pairs: tuple[PairState, ...]
    round: int = 0

    @property
    def human_used(self) -> int:
        return sum(len(p.revealed) for p in self.pairs)

    @property
    def budget_left(self) -> int:
        return self.settings.budget - self.human_used

    @property
    def decisions(self) -> np.ndarray:
        return np.array([p.decision for p in self.pairs], dtype=np.int8)

    @property
    def open_reveals(self) -> int:
        """Human outcomes revealed since the last completed round."""
        return sum(1 for p in self.pairs for r in p.revealed if r.round > self.round)

    def index_of(self, system_a: str, system_b: str) -> tuple[int, bool]:
        """Index of the pair and whether ``(system_a, system_b)`` is its flipped order; KeyError if absent."""
        flipped = system_a > system_b
        key = (system_b, system_a) if flipped else (system_a, system_b)
        index = self._pair_lookup.get(key)
        if index is None:
            raise KeyError(f"no pair {key[0]} vs {key[1]} in this protocol")
        return index, flipped

    @cached_property
    def _pair_lookup(self) -> dict[tuple[str, str], int]:
        return {(pair.system_a, pair.system_b): index for index, pair in enumerate(self.pairs)}

    def counts(self) -> CountTriples:
        """``(n, K, m)`` of every pair from the revealed outcomes (method.md §3): ``n`` (P, 3)
        revealed human counts, ``K`` (P, 3, 3) rows = metric, columns = human on revealed items
        the metric rated, ``m`` (P, 3) metric outcomes on items not revealed."""
        P = len(self.pairs)
        n = np.zeros((P, 3), dtype=np.int64)
        K = np.zeros((P, 3, 3), dtype=np.int64)
        m = np.zeros((P, 3), dtype=np.int64)
        for index, pair in enumerate(self.pairs):
            human = {r.item_id: r.outcome for r in pair.revealed}
            n[index] = np.bincount(list(human.values()), minlength=3)
            for item, code in zip(pair.metric_items, pair.metric, strict=True):
                h = human.get(item)
                if h is None:
                    m[index, code] += 1
                else:
                    K[index, code, h] += 1
        return CountTriples(n, K, m)


def new_state(table: PairTable, settings: ProtocolSettings, *, pool: Pool = "human") -> ProtocolState:
    """A fresh state (round 0, nothing revealed) for every pair of ``table``.

    Each pair's pool is shuffled with ``np.random.default_rng(settings.seed)``, pairs in
    table order, items first sorted by id: the replay order of Deriu et al. (random reveal).
    """
    rng = np.random.default_rng(settings.seed)
    starts = np.searchsorted(table.pair_index, np.arange(table.n_pairs + 1))
    pairs = []
    for index, (a, b) in enumerate(table.pairs):
        rows = slice(starts[index], starts[index + 1])
        items = table.item_id[rows].astype(str)
        human, metric = table.human[rows], table.metric[rows]
        candidates = np.sort(items[human >= 0] if pool == "human" else items)
        order = candidates[rng.permutation(len(candidates))]
        rated = metric >= 0
        pairs.append(
            PairState(
                system_a=a,
                system_b=b,
                pool=tuple(str(i) for i in order),
                metric_items=tuple(str(i) for i in items[rated]),
                metric=tuple(int(c) for c in metric[rated]),
            )
        )
    return ProtocolState(settings=settings, pairs=tuple(pairs))


def state_to_dict(state: ProtocolState) -> dict[str, Any]:
    """Plain JSON-ready dict of the state (lossless; floats kept exactly by ``json``)."""
    return {
        "format": FORMAT_VERSION,
        "settings": asdict(state.settings),
        "round": state.round,
        "pairs": [
            {
                "system_a": p.system_a,
                "system_b": p.system_b,
                "pool": list(p.pool),
                "metric_items": list(p.metric_items),
                "metric": list(p.metric),
                "revealed": [[r.item_id, r.outcome, r.round] for r in p.revealed],
                "history": [[h.round, h.theta, h.decision, list(h.p_mean)] for h in p.history],
            }
            for p in state.pairs
        ],
    }


def state_from_dict(data: dict[str, Any]) -> ProtocolState:
    """Inverse of :func:`state_to_dict`."""
    if data.get("format") != FORMAT_VERSION:
        raise ValueError(f"unsupported protocol state format {data.get('format')!r}")
    raw = dict(data["settings"])
    if raw.get("mu") is not None:
        raw["mu"] = tuple(tuple(float(v) for v in row) for row in raw["mu"])
    settings = ProtocolSettings(**raw)
    pairs = tuple(
        PairState(
            system_a=p["system_a"],
            system_b=p["system_b"],
            pool=tuple(p["pool"]),
            metric_items=tuple(p["metric_items"]),
            metric=tuple(int(c) for c in p["metric"]),
            revealed=tuple(Reveal(str(i), int(o), int(r)) for i, o, r in p["revealed"]),
            history=tuple(RoundRecord(int(r), float(t), int(d), (float(q[0]), float(q[1]), float(q[2]))) for r, t, d, q in p["history"]),
        )
        for p in data["pairs"]
    )
    return ProtocolState(settings=settings, pairs=pairs, round=int(data["round"]))


def state_to_json(state: ProtocolState) -> str:
    return json.dumps(state_to_dict(state), allow_nan=False, separators=(",", ":"))


def state_from_json(text: str) -> ProtocolState:
    return state_from_dict(json.loads(text))

