"""Significance DAGs (method.md §6, §8): the drawn DAG is the transitive reduction of the decided relation."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefeval_core.diagnostics.comparison import human_reference_outcomes, naive_metric_outcomes
from prefeval_core.diagnostics.metric_report import metric_report
from prefeval_core.diagnostics.partial_order import partial_order
from prefeval_core.figures.dag import EDGE_HOVER_TRACE, dag_figure, layer_positions


def decided_relation(pairs, outcomes) -> nx.DiGraph:
    """A -> B for every pair decided "A better", built independently of the code under test."""
    graph = nx.DiGraph()
    graph.add_nodes_from({s for pair in pairs for s in pair})
    for (a, b), code in zip(pairs, outcomes, strict=True):
        if code == 0:
            graph.add_edge(a, b)
        elif code == 2:
            graph.add_edge(b, a)
    return graph


def drawn_edges(figure) -> set[tuple[str, str]]:
    trace = next(t for t in figure.data if t.name == EDGE_HOVER_TRACE)
    return {(row[0], row[1]) for row in (trace.customdata if trace.customdata is not None else [])}


@st.composite
def acyclic_decisions(draw):
    """Pair decisions consistent with a hidden total order (so acyclic), some left undecided."""
    n = draw(st.integers(2, 7))
    systems = [f"s{i}" for i in range(n)]
    rank = draw(st.permutations(range(n)))
    pairs = list(itertools.combinations(systems, 2))
    decided = draw(st.lists(st.booleans(), min_size=len(pairs), max_size=len(pairs)))
    outcomes = [(0 if rank[int(a[1:])] < rank[int(b[1:])] else 2) if d else 1 for (a, b), d in zip(pairs, decided, strict=True)]
    return pairs, outcomes


@pytest.mark.property
@settings(max_examples=60, deadline=None)
@given(acyclic_decisions())
def test_dag_figure_draws_the_transitive_reduction(decisions) -> None:
    pairs, outcomes = decisions
    order = partial_order(pairs, outcomes)
    expected = nx.transitive_reduction(decided_relation(pairs, outcomes))
    assert drawn_edges(dag_figure(order)) == set(expected.edges)
    # every drawn edge points down the layers: the winner is ranked above the loser
    positions = layer_positions(order)
    assert all(positions[a][1] > positions[b][1] for a, b in expected.edges)


def test_hand_example_drops_the_implied_edge_and_colours_by_error_type() -> None:
    pairs = [("A", "B"), ("A", "C"), ("B", "C")]
    reference = [0, 0, 1]  # humans: A > B, A > C, B ~ C
    outcomes = [0, 0, 0]  # metric: A > B > C, so A > C is implied
    order = partial_order(pairs, outcomes, reference=reference)
    figure = dag_figure(order)
    hover = next(t for t in figure.data if t.name == EDGE_HOVER_TRACE)
    assert {tuple(row) for row in hover.customdata} == {("A", "B", "correct_significant"), ("B", "C", "insertion")}
    legend = {t.name for t in figure.data if t.mode == "lines"}
    # the legend counts pairs, as the bullets beside the graph do; the implied A > C is not drawn
    assert legend == {"Correct (significant): 2 pairs (1 drawn)", "Insertion: 1 pair"}


def test_cycles_are_drawn_and_named_in_the_title() -> None:
    pairs = [("A", "B"), ("A", "C"), ("B", "C")]
    order = partial_order(pairs, [0, 2, 0])  # A > B, C > A, B > C
    figure = dag_figure(order)
    assert order.cycles
    assert "cycle: A > B > C > A" in figure.layout.title.text
    assert drawn_edges(figure) == {("A", "B"), ("B", "C"), ("C", "A")}


def test_omissions_are_drawn_only_where_the_human_hasse_has_them() -> None:
    pairs = [("A", "B"), ("A", "C"), ("B", "C")]
    human = partial_order(pairs, [0, 0, 0])  # A > B > C
    metric = partial_order(pairs, [1, 1, 1], reference=[0, 0, 0])  # nothing decided
    figure = dag_figure(metric, reference=human)
    dotted = next(t for t in figure.data if t.line.dash == "dot")
    assert dotted.name == "Omission: decided by humans, not here: 3 pairs (2 drawn)"  # A > C is implied, not drawn


@pytest.mark.golden
def test_summeval_dags_match_the_comparison_module(summeval) -> None:
    report = metric_report(summeval, "human:relevance", "rougeL")
    dags = report.dags
    np.testing.assert_array_equal(dags.reference, human_reference_outcomes(report.confusions.human_all))
    np.testing.assert_array_equal(dags.naive, naive_metric_outcomes(report.confusions.metric_all))
    for order, outcomes in ((dags.human, dags.reference), (dags.metric, dags.naive)):
        relation = decided_relation(report.pairs, outcomes)
        if nx.is_directed_acyclic_graph(relation):
            assert set(order.hasse.edges) == set(nx.transitive_reduction(relation).edges)
    kinds = {str(t) for t in dags.naive_error_types}
    assert kinds <= {"correct_significant", "correct_undecided", "inversion", "omission", "insertion"}
    assert "inversion" in kinds  # rougeL inverts some human decisions on relevance


def test_protocol_outcomes_give_a_third_dag() -> None:
    from tests.diagnostics_fixtures import toy_dataset

    report = metric_report(toy_dataset(), "human:q", "metric", protocol_outcomes=[0, 1, 2])
    assert report.dags.protocol is not None
    assert set(report.dags.protocol.graph.edges) == {("X", "Y"), ("Z", "Y")}
    assert report.dags.protocol_error_types is not None and len(report.dags.protocol_error_types) == 3
