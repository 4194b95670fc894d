"""A finished replay compared with the full human evaluation (method.md §6)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from prefeval_core.comparison import Comparison, annotation_fraction, compare_with_reference
from prefeval_core.counts import PairTable, count_triples
from prefeval_core.protocol.state import ProtocolState


@dataclass(frozen=True)
class ProtocolResult:
    """Outcome of a protocol run, pair by pair (pairs in the state's order).

    Attributes:
        pairs: canonical ``(system_a, system_b)``.
        outcomes: (P,) int8 final decisions (1 = undecided).
        theta: (P,) latest ``P(p> > p<)``; NaN for a pair never decided on.
        human_used: (P,) human outcomes revealed per pair.
        human_available: (P,) human outcomes the table holds per pair.
        comparison: outcomes and posterior means against the human reference.
        annotation_fraction: ``sum(human_used) / sum(human_available)``.
        rounds: completed rounds.
    """

    pairs: tuple[tuple[str, str], ...]
    outcomes: npt.NDArray[np.int8]
    theta: npt.NDArray[np.float64]
    human_used: npt.NDArray[np.int64]
    human_available: npt.NDArray[np.int64]
    comparison: Comparison
    annotation_fraction: float
    rounds: int


def protocol_result(state: ProtocolState, table: PairTable) -> ProtocolResult:
    """Compare the state's decisions with the full human evaluation in ``table`` (same pairs)."""
    pairs = tuple((p.system_a, p.system_b) for p in state.pairs)
    order = np.array([table.index_of(a, b) for a, b in pairs], dtype=np.int64)
    n_all = count_triples(table, table.human >= 0).n[order]
    available = table.human_pool()[order].astype(np.int64)
    used = np.array([len(p.revealed) for p in state.pairs], dtype=np.int64)
    theta = np.array([np.nan if p.theta is None else p.theta for p in state.pairs], dtype=np.float64)
    p_mean = np.array([p.p_mean() for p in state.pairs]).reshape(len(pairs), 3)
    comparison = compare_with_reference(state.decisions, p_mean, n_all, state.settings.gamma)
    return ProtocolResult(
        pairs=pairs,
        outcomes=state.decisions,
        theta=theta,
        human_used=used,
        human_available=available,
        comparison=comparison,
        annotation_fraction=annotation_fraction(int(used.sum()), int(available.sum())),
        rounds=state.round,
    )
