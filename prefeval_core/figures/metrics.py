"""Per-metric comparisons: sign accuracies with mean |Favi-Score|, and Kendall tau-b."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from prefeval_core.diagnostics.kendall import KendallResult
from prefeval_core.diagnostics.metric_report import MetricReport
from prefeval_core.figures._style import ACCENT, base_layout


def sign_accuracy_bars(reports: Sequence[MetricReport]) -> go.Figure:
    """Sample- and system-level sign accuracy per metric, and mean |Favi-Score| ± its spread.

    The paper's overview (von Däniken et al. 2024, Fig. 4) in two panels, since the units
    differ: left, accuracies (fraction, 0-1); right, mean |F| over pairs with its standard
    deviation as error bar (cost per error, 0-2). Traces: 0 sample accuracy, 1 system
    accuracy, 2 mean |F|; ``x`` = metric names in the order given.
    """
    metrics = [r.metric for r in reports]
    # The right panel's axis sits on the right, so neither axis title can reach the other panel.
    figure = make_subplots(
        rows=1, cols=2, column_widths=[0.62, 0.38], horizontal_spacing=0.06, subplot_titles=("sign accuracy", "favouritism")
    )
    series = (
        ("sample level (items)", [r.sign.sample for r in reports], [r.sign.items for r in reports], "over %{customdata} items"),
        ("system level (pairs)", [r.sign.system for r in reports], [r.sign.pairs for r in reports], "over %{customdata} pairs"),
    )
    for bar in _bars(metrics, series):
        figure.add_trace(bar, row=1, col=1)
    defined = [int(np.sum(~np.isnan(r.favi))) for r in reports]
    figure.add_trace(
        go.Bar(
            x=metrics,
            y=[r.mean_abs_favi for r in reports],
            error_y={"type": "data", "array": [r.std_abs_favi for r in reports], "visible": True},
            name="mean |Favi-Score| ± sd",
            showlegend=False,  # the axis title says it: the legend keeps to one row at half width
            marker_color=ACCENT[2],
            customdata=np.array([[r.std_abs_favi for r in reports], defined]).T,
            hovertemplate="%{x}<br>mean |F|: %{y:.3f} ± %{customdata[0]:.3f}<br>over %{customdata[1]} pairs<extra></extra>",
        ),
        row=1,
        col=2,
    )
    figure.update_yaxes(title_text="accuracy (fraction)", range=[0, 1.1], row=1, col=1)
    figure.update_yaxes(title_text="mean |Favi-Score| ± sd (cost per error)", rangemode="tozero", side="right", row=1, col=2)
    human = ", ".join(sorted({r.human for r in reports}))
    figure = base_layout(figure, "Sign accuracy and favouritism per metric", height=460)
    return _readable_at_half_width(figure, f"against {human}", panel_titles=True)


def kendall_tau_bars(results: Sequence[KendallResult]) -> go.Figure:
    """Segment-level Kendall tau-b per metric: overall and grouped by item (method.md §9).

    Traces: 0 overall, 1 grouped by item; ``x`` = metric names in the order given; hover
    gives the numbers of segments and items.
    """
    metrics = [r.metric for r in results]
    figure = go.Figure()
    series = (
        ("tau-b overall (all segments)", [r.tau for r in results], [r.segments for r in results], "%{customdata} segments"),
        ("tau-b grouped by item (mean)", [r.tau_grouped for r in results], [r.items for r in results], "mean over %{customdata} items"),
    )
    for bar in _bars(metrics, series):
        figure.add_trace(bar)
    figure.update_yaxes(title_text="Kendall tau-b (−1 to 1)", range=[-1, 1])
    human = ", ".join(sorted({r.human for r in results}))
    return _readable_at_half_width(base_layout(figure, "Segment-level Kendall tau-b", height=420), f"against {human}", panel_titles=False)


def _readable_at_half_width(figure: go.Figure, subtitle: str, *, panel_titles: bool) -> go.Figure:
    """Lay a bar chart out so it reads in half a 1280-1440 px page (about 550-630 px wide).

    From the top, in fixed pixel bands so nothing can overlap: the title with ``subtitle`` (what
    the metrics are compared with, which can be long) on a line of its own, the legend in one
    horizontal row (a legend on the right would take a third of the width), then the panel titles
    just above the plot area (``panel_titles``); axes grow the margins for their tick labels (long
    metric names are turned, not cut). The x axes have no title: their tick labels are the metrics.
    """
    height = figure.layout.height
    title_top, legend_top, plot_top = 8, 66, 124 if panel_titles else 100
    figure.update_layout(
        title={"subtitle": {"text": subtitle}, "y": 1 - title_top / height, "yanchor": "top", "yref": "container"},
        legend={"orientation": "h", "x": 0, "xanchor": "left", "y": 1 - legend_top / height, "yanchor": "top", "yref": "container"},
        margin={"t": plot_top},
    )
    figure.update_xaxes(automargin=True)
    figure.update_yaxes(automargin=True)
    return figure


def _bars(metrics: list[str], series: Sequence[tuple[str, list[float], list[int], str]]) -> list[go.Bar]:
    """One bar trace per ``(name, values, counts, hover line about the counts)``, Okabe-Ito colours."""
    return [
        go.Bar(
            x=metrics,
            y=values,
            name=name,
            marker_color=colour,
            customdata=counts,
            text=[f"{v:.2f}" for v in values],
            textposition="outside",
            hovertemplate=f"%{{x}}<br>{name}: %{{y:.3f}}<br>{counted}<extra></extra>",
        )
        for colour, (name, values, counts, counted) in zip(ACCENT, series, strict=False)
    ]
