"""Partial order of decided pairs (method.md §8): hand-made graphs and properties."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefeval_core.diagnostics.partial_order import partial_order

GT, UNDECIDED, LT = 0, 1, 2


def test_chain_drops_the_implied_edge_and_layers_by_rank() -> None:
    pairs = [("a", "b"), ("a", "c"), ("b", "c"), ("a", "d")]
    order = partial_order(pairs, [GT, GT, GT, UNDECIDED])
    assert set(order.graph.edges) == {("a", "b"), ("a", "c"), ("b", "c")}
    assert set(order.hasse.edges) == {("a", "b"), ("b", "c")}
    assert order.layers == (("a", "d"), ("b",), ("c",))
    assert order.cycles == () and order.is_acyclic
    assert order.layer_of == {"a": 0, "d": 0, "b": 1, "c": 2}


def test_outcome_is_seen_from_the_pair_as_given() -> None:
    order = partial_order([("b", "a"), ("c", "a")], [GT, LT])
    assert set(order.graph.edges) == {("b", "a"), ("a", "c")}
    assert order.graph.edges["b", "a"]["pair"] == 0


def test_cycle_is_reported_and_kept_in_the_hasse_diagram() -> None:
    # a > b > c > a, and all three above d; a > d is implied through the block, b > d kept as the block edge
    pairs = [("a", "b"), ("b", "c"), ("a", "c"), ("a", "d"), ("b", "d"), ("c", "d"), ("d", "e"), ("a", "e")]
    order = partial_order(pairs, [GT, GT, LT, GT, GT, GT, GT, GT])
    assert order.cycles == (("a", "b", "c"),)
    assert not order.is_acyclic
    assert order.layers == (("a", "b", "c"), ("d",), ("e",))
    hasse = set(order.hasse.edges)
    assert {("a", "b"), ("b", "c"), ("c", "a")} <= hasse
    assert {("a", "d"), ("b", "d"), ("c", "d"), ("d", "e")} <= hasse  # block -> d keeps every decided edge
    assert ("a", "e") not in hasse  # implied by block -> d -> e


def test_error_types_and_omissions_from_the_reference() -> None:
    pairs = [("a", "b"), ("a", "c"), ("b", "c")]
    order = partial_order(pairs, [GT, UNDECIDED, LT], reference=[GT, LT, GT], theta=[0.99, 0.5, 0.01])
    assert order.graph.edges["a", "b"]["error_type"] == "correct_significant"
    assert order.graph.edges["c", "b"]["error_type"] == "inversion"
    assert order.graph.edges["a", "b"]["theta"] == pytest.approx(0.99)
    assert order.omitted == (("c", "a"),)


def test_isolated_systems_and_mismatched_lengths() -> None:
    order = partial_order([("a", "b")], [UNDECIDED], systems=["a", "b", "z"])
    assert order.layers == (("a", "b", "z"),)
    assert order.hasse.number_of_edges() == 0
    with pytest.raises(ValueError):
        partial_order([("a", "b")], [GT, GT])


def _closure(graph: nx.DiGraph) -> set[tuple[str, str]]:
    return set(nx.transitive_closure(graph, reflexive=False).edges)


outcome_lists = st.integers(min_value=2, max_value=7).flatmap(
    lambda k: st.tuples(st.just(k), st.lists(st.sampled_from([GT, UNDECIDED, LT]), min_size=k * (k - 1) // 2, max_size=k * (k - 1) // 2))
)


@pytest.mark.property
@settings(max_examples=60, deadline=None)
@given(outcome_lists, st.randoms(use_true_random=False))
def test_hasse_is_a_transitive_reduction_of_a_consistent_order(case, random) -> None:
    k, raw = case
    systems = [f"s{i}" for i in range(k)]
    rank = systems[:]
    random.shuffle(rank)
    position = {s: i for i, s in enumerate(rank)}
    pairs = list(itertools.combinations(systems, 2))
    # decisions consistent with a hidden ranking: keep only "undecided" from the draw
    outcomes = [UNDECIDED if o == UNDECIDED else (GT if position[a] < position[b] else LT) for o, (a, b) in zip(raw, pairs, strict=True)]
    order = partial_order(pairs, outcomes)
    assert order.is_acyclic
    assert _closure(order.hasse) == _closure(order.graph)
    for edge in list(order.hasse.edges):
        smaller = order.hasse.copy()
        smaller.remove_edge(*edge)
        assert _closure(smaller) != _closure(order.graph)  # minimal: every Hasse edge is needed
    for a, b in order.graph.edges:
        assert order.layer_of[a] < order.layer_of[b]
    assert sorted(s for layer in order.layers for s in layer) == systems


@pytest.mark.property
@settings(max_examples=60, deadline=None)
@given(outcome_lists)
def test_any_outcomes_never_crash_and_keep_reachability(case) -> None:
    k, outcomes = case
    systems = [f"s{i}" for i in range(k)]
    pairs = list(itertools.combinations(systems, 2))
    order = partial_order(pairs, np.array(outcomes))
    assert _closure(order.hasse) == _closure(order.graph)
    assert set(order.hasse.edges) <= set(order.graph.edges)
    for cycle in order.cycles:
        for u, v in zip(cycle, cycle[1:] + cycle[:1], strict=True):
            assert order.graph.has_edge(u, v)
    assert order.is_acyclic == nx.is_directed_acyclic_graph(order.graph)
