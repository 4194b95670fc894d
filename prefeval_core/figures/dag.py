"""Significance DAG figure: the Hasse diagram of a partial order in rank layers (method.md §8).

Systems are drawn top to bottom by layer (layer 0, the best, at the top), an arrow
``A -> B`` for every edge of the Hasse diagram (transitive reduction of the decided
relation: "A significantly better than B"), coloured by error type against the human
reference (method.md §6: green correct, olive correct-undecided, red inversion, blue
omission, yellow insertion). Pairs the reference decided but this evaluation did not
(omissions) are drawn dotted. Edges spanning several layers are drawn curved so that they do
not run through the systems between. Systems on a cycle get a thick reddish-purple frame, and
the cycles are listed under the title.

Legend counts are **pairs**, all of them (the same counts as any list of error types beside the
figure), with how many are drawn as edges when the transitive reduction leaves some out. Pairs a run
still going on has not decided (``open_pairs``) are no decision and no omission: they are never
drawn, and the legend counts them apart (:data:`~prefeval_core.diagnostics.comparison.OPEN_LABEL`).
Systems without any decided pair are drawn on their own row under the layers, never beside the
best. From :data:`MATRIX_FROM` systems on, :func:`dag_figure` draws a matrix instead of a graph
(a diagram of that many systems is a tangle).
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import numpy.typing as npt
import plotly.graph_objects as go

from prefeval_core.diagnostics.comparison import ERROR_COLOURS, ERROR_LABELS, ERROR_TYPES, OPEN_LABEL
from prefeval_core.diagnostics.partial_order import PartialOrder
from prefeval_core.figures._style import CYCLE_COLOUR, NEUTRAL, base_layout

MATRIX_FROM = 16
"""From this many systems on, the decisions are drawn as a matrix (:func:`decision_matrix_figure`)."""
EDGE_HOVER_TRACE = "edges"
"""``name`` of the marker trace at the edge midpoints; its ``customdata`` rows are
``(winner, loser, error type or "")``, one per Hasse edge drawn."""


def layer_positions(order: PartialOrder) -> dict[str, tuple[float, float]]:
    """``(x, y)`` of each system: ``y = -layer``; each layer centred on ``x = 0``; systems
    without a decided pair on a row of their own under the layers (:func:`drawn_layers`).

    Layer 0 is ordered by name; every further layer by the mean ``x`` of each system's
    parents in the Hasse diagram (the barycentre heuristic, fewer crossings), then by name.
    """
    positions: dict[str, tuple[float, float]] = {}
    for depth, layer in enumerate(drawn_layers(order)):

        def barycentre(system: str) -> float:
            parents = [positions[p][0] for p in order.hasse.predecessors(system) if p in positions]
            return float(np.mean(parents)) if parents else 0.0

        ordered = sorted(layer, key=lambda s: (barycentre(s), s)) if depth else sorted(layer)
        for index, system in enumerate(ordered):
            positions[system] = (index - (len(ordered) - 1) / 2, -float(depth))
    return positions


def undecided_systems(order: PartialOrder) -> tuple[str, ...]:
    """Systems without any decided pair (sorted)."""
    return tuple(sorted(s for s in order.graph.nodes if order.graph.degree(s) == 0))


def drawn_layers(order: PartialOrder) -> tuple[tuple[str, ...], ...]:
    """The rank layers without the undecided systems, then (if any) one row of those."""
    apart = set(undecided_systems(order))
    layers = tuple(kept for layer in order.layers if (kept := tuple(s for s in layer if s not in apart)))
    return layers + ((tuple(sorted(apart)),) if apart else ())


def type_counts(order: PartialOrder, reference: PartialOrder | None = None) -> dict[str, tuple[int, int]]:
    """Per error type (``""``: no type): ``(pairs, edges drawn)``; ``omission`` counts the pairs the
    reference decided and this order did not (drawn: those that are Hasse edges of ``reference``)."""
    counts: dict[str, tuple[int, int]] = {}
    drawn = {(a, b) for a, b in order.hasse.edges}
    for a, b, attributes in order.graph.edges(data=True):
        kind = str(attributes.get("error_type", ""))
        pairs, edges = counts.get(kind, (0, 0))
        counts[kind] = (pairs + 1, edges + ((a, b) in drawn))
    if order.omitted:
        shown = [e for e in order.omitted if reference is None or reference.hasse.has_edge(*e)]
        counts["omission"] = (len(order.omitted), len(shown))
    return counts


def _legend(label: str, pairs: int, drawn: int) -> str:
    unit = "pair" if pairs == 1 else "pairs"
    return f"{label}: {pairs} {unit}" + ("" if drawn == pairs else f" ({drawn} drawn)")


def _open_legend(open_pairs: int) -> go.Scatter:
    """A legend entry only: the pairs not decided yet, which no edge or cell shows."""
    marker = {"color": "rgba(0,0,0,0)", "line": {"color": NEUTRAL, "width": 1}, "size": 10, "symbol": "square"}
    name = f"{OPEN_LABEL}: {open_pairs} {'pair' if open_pairs == 1 else 'pairs'}, not drawn"
    return go.Scatter(x=[None], y=[None], mode="markers", marker=marker, name=name, showlegend=True)


def edge_path(
    start: tuple[float, float], end: tuple[float, float], points: int = 25
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Points of the drawn edge from ``start`` to ``end``: straight between neighbouring layers,
    else a quadratic curve bent sideways so that it does not run through the systems between."""
    (x0, y0), (x1, y1) = start, end
    span = abs(y1 - y0)
    if span == 1:
        t = np.array([0.0, 0.5, 1.0])
        return x0 + t * (x1 - x0), y0 + t * (y1 - y0)
    length = float(np.hypot(x1 - x0, y1 - y0)) or 1.0
    bend = 0.3 + 0.08 * span
    cx = (x0 + x1) / 2 + bend * (y1 - y0) / length
    cy = (y0 + y1) / 2 - bend * (x1 - x0) / length
    t = np.linspace(0.0, 1.0, points)
    return (1 - t) ** 2 * x0 + 2 * (1 - t) * t * cx + t**2 * x1, (1 - t) ** 2 * y0 + 2 * (1 - t) * t * cy + t**2 * y1


def dag_figure(
    order: PartialOrder,
    *,
    title: str = "Significance DAG",
    reference: PartialOrder | None = None,
    show_omitted: bool = True,
    open_pairs: int = 0,
) -> go.Figure:
    """Plot the Hasse diagram of ``order`` in rank layers, edges coloured by error type.

    Args:
        order: the partial order (edges may carry an ``error_type`` attribute).
        title: the figure title (say whose decisions these are).
        reference: the human reference's partial order; when given, only omissions that are
            edges of its Hasse diagram are drawn (the rest are implied by them).
        show_omitted: draw the reference's decisions missing here as dotted blue lines.
        open_pairs: pairs a run still going on has not decided: counted in the legend, never drawn.
    """
    if order.graph.number_of_nodes() >= MATRIX_FROM:
        return decision_matrix_figure(order, title=title, reference=reference, open_pairs=open_pairs)
    positions = layer_positions(order)
    counts = type_counts(order, reference)
    figure = go.Figure()
    by_type: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for winner, loser, attributes in order.hasse.edges(data=True):
        by_type[str(attributes.get("error_type", ""))].append((winner, loser))
    for kind in [*ERROR_TYPES, ""]:
        edges = sorted(by_type.get(kind, []))
        if not edges:
            continue
        colour = ERROR_COLOURS[kind] if kind else NEUTRAL  # type: ignore[index]
        label = ERROR_LABELS[kind] if kind else "decided"  # type: ignore[index]
        figure.add_trace(_segments(edges, positions, colour, _legend(label, *counts[kind]), dash="solid"))
        for winner, loser in edges:
            xs, ys = edge_path(positions[winner], positions[loser])
            # the arrow's shaft (a straight chord) must outlast its standoff but hug a curve
            base = 1 if len(xs) == 3 else int(0.8 * (len(xs) - 1))
            figure.add_annotation(
                x=xs[-1],
                y=ys[-1],
                ax=xs[base],
                ay=ys[base],
                xref="x",
                yref="y",
                axref="x",
                ayref="y",
                showarrow=True,
                arrowhead=3,
                arrowsize=1.3,
                arrowwidth=1.8,
                arrowcolor=colour,
                standoff=13,
                text="",
            )
    omitted = sorted(order.omitted)
    if reference is not None:
        omitted = [edge for edge in omitted if reference.hasse.has_edge(*edge)]
    if show_omitted and omitted:
        omission_label = _legend("Omission: decided by humans, not here", *counts["omission"])
        figure.add_trace(
            _segments(
                omitted,
                positions,
                ERROR_COLOURS["omission"],
                omission_label,
                dash="dot",
            )
        )
    if open_pairs:
        figure.add_trace(_open_legend(open_pairs))
    figure.add_trace(_edge_hover(order, positions))
    figure.add_trace(_nodes(order, positions))
    on_cycle = {system for cycle in order.cycles for system in cycle}
    for system, (x, y) in positions.items():
        figure.add_annotation(
            x=x,
            y=y,
            xref="x",
            yref="y",
            text=system,
            showarrow=False,
            font={"size": 11, "color": "#000000"},
            bgcolor="#F2F2F2",
            bordercolor=CYCLE_COLOUR if system in on_cycle else NEUTRAL,
            borderwidth=3 if system in on_cycle else 1,
            borderpad=3,
        )
    cycle_text = "; ".join(" > ".join((*cycle, cycle[0])) for cycle in order.cycles)
    subtitle = f"<br><sup>cycle{'s' if len(order.cycles) > 1 else ''}: {cycle_text}</sup>" if order.cycles else ""
    rows = drawn_layers(order)
    apart = bool(undecided_systems(order))
    widest = max((len(layer) for layer in rows), default=1)
    figure.update_xaxes(visible=False, range=[-(widest + 1) / 2, (widest + 1) / 2])
    figure.update_yaxes(
        title_text="rank layer (0 = best)",
        tickvals=[-d for d in range(len(rows))],
        ticktext=[str(d) for d in range(len(rows) - apart)] + (["no pair decided"] if apart else []),
        range=[-len(rows) + 0.5, 0.5],
        zeroline=False,
        showgrid=False,
    )
    figure.update_layout(legend={"title": {"text": "edge (A → B: A significantly better)"}})
    return base_layout(figure, title + subtitle, height=max(360, 110 * len(rows) + 140))


def dag_caption(n_systems: int) -> str:
    """How to read :func:`dag_figure` for a study of ``n_systems``: arrows in a graph, cells from
    :data:`MATRIX_FROM` systems on (both coloured by error type against the human reference)."""
    if n_systems >= MATRIX_FROM:
        return (
            f"With {n_systems} systems the decisions are drawn as a matrix: a coloured cell (row A, column B) means A is "
            "significantly better than B, its colour the error type of that decision against the human reference; "
            "omissions are the reference's decisions missing here."
        )
    return (
        "Arrows point from the significantly better system to the worse (transitive edges left out); "
        "colours: error type against the human reference."
    )


def decision_matrix_figure(order: PartialOrder, *, title: str, reference: PartialOrder | None = None, open_pairs: int = 0) -> go.Figure:
    """The decisions as a matrix: cell (row A, column B) coloured by the error type of "A
    significantly better than B" (omissions: the reference's decision missing here); systems by
    rank layer, undecided ones last. Legend counts as in :func:`dag_figure` (pairs; ``open_pairs``
    apart, no cell)."""
    systems = [s for layer in drawn_layers(order) for s in layer]
    index = {s: i for i, s in enumerate(systems)}
    kinds = [*ERROR_TYPES, ""]
    z = np.full((len(systems), len(systems)), np.nan)
    text = np.full((len(systems), len(systems)), "", dtype=object)
    cells = [(a, b, str(attributes.get("error_type", ""))) for a, b, attributes in order.graph.edges(data=True)]
    cells += [(a, b, "omission") for a, b in order.omitted]
    for a, b, kind in cells:
        z[index[a], index[b]] = kinds.index(kind) + 0.5  # the middle of the kind's band of the colour scale
        text[index[a], index[b]] = f"{a} > {b}" + (f"<br>{ERROR_LABELS[kind]}" if kind else "")  # type: ignore[index]
    colours = [ERROR_COLOURS[k] if k else NEUTRAL for k in kinds]  # type: ignore[index]
    scale = [[step / len(kinds), colour] for i, colour in enumerate(colours) for step in (i, i + 1)]
    figure = go.Figure(
        go.Heatmap(
            z=z, x=systems, y=systems, zmin=0, zmax=len(kinds), colorscale=scale, showscale=False,
            text=text, hoverinfo="text", xgap=1, ygap=1,
        )
    )  # fmt: skip
    counts = type_counts(order, reference)
    for kind in kinds:  # legend entries only (the cells are the heatmap's)
        if kind in counts:
            label = ERROR_LABELS[kind] if kind else "decided"  # type: ignore[index]
            figure.add_trace(
                go.Scatter(x=[None], y=[None], mode="markers", marker={"color": colours[kinds.index(kind)], "size": 10, "symbol": "square"},
                           name=_legend(label, counts[kind][0], counts[kind][0]))
            )  # fmt: skip
    if open_pairs:
        figure.add_trace(_open_legend(open_pairs))
    figure.update_yaxes(autorange="reversed", title_text="significantly better (row) …")
    figure.update_xaxes(title_text="… than (column)", tickangle=-45)
    figure.update_layout(legend={"title": {"text": "cell: row significantly better than column"}}, plot_bgcolor="#F7F7F7")
    return base_layout(figure, title + "<br><sup>systems by rank layer, best first; those without a decided pair last</sup>",
                       height=max(420, 26 * len(systems) + 200))  # fmt: skip


def _segments(edges: list[tuple[str, str]], positions: dict[str, tuple[float, float]], colour: str, name: str, *, dash: str) -> go.Scatter:
    xs: list[float | None] = []
    ys: list[float | None] = []
    for winner, loser in edges:
        path_x, path_y = edge_path(positions[winner], positions[loser])
        xs += [*path_x.tolist(), None]
        ys += [*path_y.tolist(), None]
    return go.Scatter(x=xs, y=ys, mode="lines", line={"color": colour, "width": 2, "dash": dash}, name=name, hoverinfo="skip")


def _midpoint(start: tuple[float, float], end: tuple[float, float]) -> tuple[float, float]:
    """The point halfway along the drawn edge (``t = 0.5`` of its path, which has an odd length)."""
    xs, ys = edge_path(start, end, points=25)
    return float(xs[len(xs) // 2]), float(ys[len(ys) // 2])


def _edge_hover(order: PartialOrder, positions: dict[str, tuple[float, float]]) -> go.Scatter:
    edges = sorted(order.hasse.edges(data=True))
    mids = np.array([_midpoint(positions[a], positions[b]) for a, b, _ in edges])
    data = [[a, b, str(attributes.get("error_type", ""))] for a, b, attributes in edges]
    text = [
        f"{a} > {b}" + (f"<br>{ERROR_LABELS[t]}" if t else "") + (f"<br>θ = {attributes['theta']:.3f}" if "theta" in attributes else "")
        for (a, b, t), (_, _, attributes) in zip(data, edges, strict=True)
    ]
    return go.Scatter(
        x=mids[:, 0] if len(edges) else [],
        y=mids[:, 1] if len(edges) else [],
        mode="markers",
        marker={"size": 10, "color": "rgba(0,0,0,0)"},
        customdata=data,
        hovertext=text,
        hoverinfo="text",
        name=EDGE_HOVER_TRACE,
        showlegend=False,
    )


def _nodes(order: PartialOrder, positions: dict[str, tuple[float, float]]) -> go.Scatter:
    on_cycle = {system for cycle in order.cycles for system in cycle}
    systems = sorted(positions)
    hover = [
        f"{s}<br>rank layer {order.layer_of[s]}<br>significantly better than {order.graph.out_degree(s)} systems"
        f"<br>significantly worse than {order.graph.in_degree(s)} systems" + ("<br>on a cycle" if s in on_cycle else "")
        for s in systems
    ]
    return go.Scatter(
        x=[positions[s][0] for s in systems],
        y=[positions[s][1] for s in systems],
        mode="markers",
        marker={"size": 26, "color": "rgba(0,0,0,0)"},
        hovertext=hover,
        hoverinfo="text",
        name="systems",
        showlegend=False,
    )
