"""The partial order of systems given by a set of pair decisions (method.md §8).

A directed graph with one node per system and an edge ``A -> B`` for every pair decided
"A better than B" (outcome ``>`` of the canonical pair ``(A, B)``, or ``<`` of ``(B, A)``).
Undecided pairs (code 1) give no edge. The Hasse diagram is its transitive reduction: an edge
``A -> B`` stays only if no longer chain of decisions leads from A to B.

Decisions made pair by pair need not be transitive, so a cycle ``A > B > C > A`` can occur.
The transitive reduction of a cyclic graph is not unique (networkx refuses it), so **(choice)**
every strongly connected component with more than one system is treated as one block: the
reduction is computed on the condensation (blocks as single nodes), a reduced block-to-block
edge keeps every decided edge between the two blocks, and all edges inside a block are kept,
so the cycle stays visible. Cycles are reported, never raised.

Layers are ranks for layout: layer 0 holds the systems no decision puts below anything (the
sources), and a system's layer is the length of the longest chain of decisions above it
(systems of one cycle share the layer of their block). Systems without decided pairs are in
layer 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import networkx as nx
import numpy as np
import numpy.typing as npt

from prefeval_core.diagnostics.comparison import error_types as compute_error_types
from prefeval_core.errors import settings_error
from prefeval_core.vocabulary.outcomes import BETTER, WORSE


@dataclass(frozen=True)
class PartialOrder:
    """Decided pairs as a graph, its Hasse diagram and a layered layout.

    Attributes:
        graph: ``networkx.DiGraph`` with every system as a node and an edge ``A -> B`` for each
            pair decided "A better than B". Edge attributes: ``pair`` (index into the input
            pairs), ``theta`` (if thetas were given, the pair's ``P(p> > p<)`` seen from the
            canonical pair), ``error_type`` (if error types or a reference were given). Node
            attribute ``layer``. Treat as read-only.
        hasse: the transitive reduction of ``graph`` (same nodes and edge attributes); for a
            cyclic graph, the reduction of the condensation with cycles kept (module docstring).
        layers: systems by rank, best first; each layer sorted by name.
        cycles: one closed chain ``(s1, s2, ..., sk)`` (meaning ``s1 > s2 > ... > sk > s1``) per
            strongly connected component with more than one system; empty when acyclic.
        omitted: ``(winner, loser)`` of every pair the reference decided but these outcomes
            left undecided (error type ``omission``); these are not edges of ``graph``. Empty
            unless a reference was given.
    """

    graph: nx.DiGraph
    hasse: nx.DiGraph
    layers: tuple[tuple[str, ...], ...]
    cycles: tuple[tuple[str, ...], ...]
    omitted: tuple[tuple[str, str], ...]

    @property
    def is_acyclic(self) -> bool:
        return not self.cycles

    @property
    def layer_of(self) -> dict[str, int]:
        """Layer index of each system."""
        return {system: index for index, layer in enumerate(self.layers) for system in layer}


def partial_order(
    pairs: Sequence[tuple[str, str]],
    outcomes: npt.ArrayLike,
    error_types: npt.ArrayLike | None = None,
    *,
    reference: npt.ArrayLike | None = None,
    theta: npt.ArrayLike | None = None,
    systems: Sequence[str] | None = None,
) -> PartialOrder:
    """The partial order given by pair decisions.

    Args:
        pairs: ``(system_a, system_b)`` per pair (any order; outcomes are seen from the order given).
        outcomes: outcome code per pair: 0 ``>`` (A better), 1 undecided, 2 ``<`` (B better).
        error_types: optional error type per pair (``comparison.ERROR_TYPES``), stored on edges.
        reference: optional human reference outcome codes per pair; when given, error types
            are computed from it (unless given explicitly) and ``omitted`` is filled.
        theta: optional ``P(p> > p<)`` per pair, stored on edges.
        systems: all systems to show (default: those in ``pairs``); systems without an edge
            still appear as nodes.
    """
    codes = np.asarray(outcomes, dtype=np.int64).reshape(-1)
    if len(codes) != len(pairs):
        raise settings_error(f"{len(pairs)} pairs but {len(codes)} outcomes")
    ref = None if reference is None else np.asarray(reference, dtype=np.int64).reshape(-1)
    types: npt.NDArray[np.str_] | None = None
    if error_types is not None:
        types = np.asarray(error_types).reshape(-1)
    elif ref is not None:
        types = compute_error_types(codes, ref)
    graph = nx.DiGraph()
    graph.add_nodes_from(sorted(set(systems or ()) | {s for pair in pairs for s in pair}))
    for index, (a, b) in enumerate(pairs):
        edge = _edge(a, b, int(codes[index]))
        if edge is None:
            continue
        attributes: dict[str, object] = {"pair": index}
        if theta is not None:
            attributes["theta"] = float(np.asarray(theta, dtype=np.float64).reshape(-1)[index])
        if types is not None:
            attributes["error_type"] = str(types[index])
        graph.add_edge(*edge, **attributes)
    omitted: list[tuple[str, str]] = []
    if ref is not None and types is not None:
        for index, (a, b) in enumerate(pairs):
            edge = _edge(a, b, int(ref[index]))
            if edge is not None and types[index] == "omission":
                omitted.append(edge)
    condensation = nx.condensation(graph)
    blocks: dict[int, list[str]] = {c: sorted(condensation.nodes[c]["members"]) for c in condensation.nodes}
    hasse = _reduction(graph, condensation)
    layers = _layers(condensation, blocks)
    for index, layer in enumerate(layers):
        for system in layer:
            graph.nodes[system]["layer"] = index
            hasse.nodes[system]["layer"] = index
    cycles = tuple(_closed_chain(graph.subgraph(members)) for members in blocks.values() if len(members) > 1)
    return PartialOrder(graph=graph, hasse=hasse, layers=layers, cycles=tuple(sorted(cycles)), omitted=tuple(omitted))


def _edge(a: str, b: str, code: int) -> tuple[str, str] | None:
    """``(winner, loser)`` of a decided pair, ``None`` if undecided."""
    if code == BETTER:
        return a, b
    if code == WORSE:
        return b, a
    return None


def _reduction(graph: nx.DiGraph, condensation: nx.DiGraph) -> nx.DiGraph:
    """Transitive reduction on the condensation, expanded back to systems (cycles kept)."""
    reduced = nx.transitive_reduction(condensation)
    mapping = condensation.graph["mapping"]
    hasse = nx.DiGraph()
    hasse.add_nodes_from(graph.nodes)
    for a, b, attributes in graph.edges(data=True):
        block_a, block_b = mapping[a], mapping[b]
        if block_a == block_b or reduced.has_edge(block_a, block_b):
            hasse.add_edge(a, b, **attributes)
    return hasse


def _layers(condensation: nx.DiGraph, blocks: dict[int, list[str]]) -> tuple[tuple[str, ...], ...]:
    """Longest-path rank of each block from the sources, expanded to systems."""
    rank: dict[int, int] = {}
    for block in nx.topological_sort(condensation):
        rank[block] = max((rank[p] + 1 for p in condensation.predecessors(block)), default=0)
    depth = max(rank.values(), default=-1) + 1
    layers: list[list[str]] = [[] for _ in range(depth)]
    for block, members in blocks.items():
        layers[rank[block]].extend(members)
    return tuple(tuple(sorted(layer)) for layer in layers)


def _closed_chain(component: nx.DiGraph) -> tuple[str, ...]:
    """One cycle through a strongly connected component, starting at its first system by name."""
    start = min(component.nodes)
    cycle = nx.find_cycle(component, source=start)
    chain = [u for u, _ in cycle]
    first = chain.index(min(chain))
    return tuple(chain[first:] + chain[:first])
