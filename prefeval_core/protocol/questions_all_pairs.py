"""The ``all-pairs`` question (the paper, method.md §12): the order of every pair of systems.

Every pair is asked; a pair matters while it is undecided and can still get judgments. The answer
is the decided pairs, said as tiers, best first: a system's tier is the length of the longest
chain of significant wins above it (systems in a cycle of decisions share a tier); systems with no
decided pair are named apart, never put in a tier. A kind whose answer is its pairs' decisions
alone says it this way too (the defaults of
:class:`~prefeval_core.protocol.questions.QuestionKindEntry`).

Decision codes: 0 ``>`` (A better), 1 undecided, 2 ``<``; pairs canonical.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

from prefeval_core.vocabulary.outcomes import BETTER, TIE, WORSE
from prefeval_core.vocabulary.words import listing, natural

if TYPE_CHECKING:
    from prefeval_core.protocol.questions import Decided, Question

NAME = "all-pairs"
LABEL = "Order of every pair (the paper)"
GROUPS_SHOWN = 3
"""The answer's words name at most this many groups of practically equal systems (largest first;
equivalence is not transitive, so groups overlap): every pair's equivalence is in the pairs table."""
STATUS_WORDS = "Status: settled = every pair of the system decided (or equivalent within the margin); undecided otherwise."


def describe(question: Question) -> str:
    return "the order of every pair of systems"


def pairs(question: Question, systems: Sequence[str], pair_systems: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
    """(P,) all pairs."""
    return np.ones(len(pair_systems), dtype=bool)


def beaten_by(decisions: npt.NDArray[np.int8], pair_systems: npt.NDArray[np.int64], n_systems: int) -> npt.NDArray[np.bool_]:
    """(S, S) ``beats[t, s]``: t is significantly better than s according to ``decisions`` (P,)."""
    beats = np.zeros((n_systems, n_systems), dtype=bool)
    a, b = pair_systems[:, 0], pair_systems[:, 1]
    better = decisions == BETTER
    worse = decisions == WORSE
    beats[a[better], b[better]] = True
    beats[b[worse], a[worse]] = True
    return beats


def tiers(d: Decided) -> tuple[tuple[tuple[str, ...], ...], tuple[str, ...]]:
    """The decided systems in tiers, best first (module docstring), and the systems with no decided pair."""
    import networkx as nx  # on use: the other answers never need it

    beats = d.beats
    placed = beats.any(axis=0) | beats.any(axis=1)
    graph = nx.DiGraph()
    graph.add_nodes_from(int(s) for s in np.flatnonzero(placed))
    graph.add_edges_from((int(t), int(s)) for t, s in zip(*np.nonzero(beats), strict=True))
    condensed = nx.condensation(graph)
    level: dict[int, int] = {}
    for node in nx.topological_sort(condensed):
        level[node] = max((level[p] + 1 for p in condensed.predecessors(node)), default=0)
    layers: dict[int, list[str]] = {}
    for node, depth in level.items():
        layers.setdefault(depth, []).extend(d.systems[s] for s in condensed.nodes[node]["members"])
    ordered = tuple(tuple(sorted(layers[depth], key=natural)) for depth in sorted(layers))
    return ordered, tuple(d.systems[s] for s in np.flatnonzero(~placed))


ACROSS_SHOWN: Final = 4
"""Open pairs across tiers named in the answer's words (the rest are counted)."""


def words(d: Decided) -> str:
    """E.g. "M17 > {M0, M22, M23} > M8; M3 cannot be placed yet; practically equal within the margin:
    {M0, M22} (1 pair); 12 pairs cannot be separated yet"."""
    ranked, unplaced = tiers(d)
    equivalent = d.asked & (d.decisions == TIE) & (False if d.equivalent is None else d.equivalent)
    open_pairs = int(np.sum(d.asked & (d.decisions == TIE) & ~equivalent))
    groups = d.equal_groups()
    grouped = {name for group in groups for name in group}
    unplaced = tuple(name for name in unplaced if name not in grouped)
    if not ranked and not groups:
        return f"No pair has a significant winner {d.when}."
    parts = [" > ".join(t[0] if len(t) == 1 else "{" + ", ".join(t) + "}" for t in ranked)] if ranked else []
    if unplaced:
        parts.append(f"{listing(unplaced)} cannot be placed {d.when} (no pair decided)")
    if groups:
        shown = int(np.sum(d.asked & d.equivalent)) if d.equivalent is not None else 0
        sets = ", ".join("{" + ", ".join(group) + "}" for group in groups[:GROUPS_SHOWN])
        more = "" if len(groups) <= GROUPS_SHOWN else f" and {len(groups) - GROUPS_SHOWN} smaller groups"
        parts.append(f"practically equal within the margin: {sets}{more} ({shown} {'pair' if shown == 1 else 'pairs'} equivalent)")
    if open_pairs:
        parts.append(f"{open_pairs} {'pair' if open_pairs == 1 else 'pairs'} cannot be separated {d.when}{_across(d, ranked, equivalent)}")
    else:
        parts.append("every pair is decided")
    return "; ".join(parts) + "."


def _across(d: Decided, ranked: tuple[tuple[str, ...], ...], equivalent: npt.NDArray[np.bool_]) -> str:
    """The open pairs whose systems sit in different tiers, which ``>`` between tiers does not decide
    (a tier is placed below the longest chain of decisions above it, not below every system above):
    ``, 4 of them across the tiers (M0 vs M5, …)``; empty when there are none."""
    tier_of = {name: depth for depth, tier in enumerate(ranked) for name in tier}
    open_pairs = np.flatnonzero(d.asked & (d.decisions == TIE) & ~equivalent)
    names = [(d.systems[d.pair_systems[k, 0]], d.systems[d.pair_systems[k, 1]]) for k in open_pairs]
    across = [(a, b) for a, b in names if a in tier_of and b in tier_of and tier_of[a] != tier_of[b]]
    if not across:
        return ""
    shown = ", ".join(f"{a} vs {b}" for a, b in across[:ACROSS_SHOWN]) + (", …" if len(across) > ACROSS_SHOWN else "")
    return f", {len(across)} of them across the tiers ({shown})"


def status(d: Decided) -> tuple[str, ...]:
    """(S,) ``settled`` (every pair of the system asked is decided: a direction, or equivalent
    within the margin) or ``undecided``."""
    open_pairs = d.asked & (d.decisions == TIE) & (True if d.equivalent is None else ~d.equivalent)
    unsettled = np.zeros(len(d.systems), dtype=bool)
    unsettled[d.pair_systems[open_pairs].ravel()] = True
    return tuple("undecided" if u else "settled" for u in unsettled)
