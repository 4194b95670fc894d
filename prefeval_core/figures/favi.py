"""Favi-Score box plot per system (von Däniken et al. 2024, Fig. 6)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go

from prefeval_core.diagnostics.favi import SystemFavi
from prefeval_core.figures._style import ACCENT, NEUTRAL, base_layout


def favi_box_plot(systems: Mapping[str, SystemFavi], *, metric: str = "metric", human: str = "human") -> go.Figure:
    """One box per system of its Favi-Scores against every other system (positive favours it).

    Systems are ordered by median score, most favoured first; every score is also drawn as a
    point whose hover names the opponent and the number of errors. The label under each box
    gives ``n``, the number of pairs with a defined score. A dashed line marks 0 (no favouritism).
    Trace ``i`` holds the scores of the ``i``-th system in that order (``name`` = system).
    """
    entries = [entry for entry in systems.values()]
    entries.sort(key=lambda e: (-float(np.median(e.scores)) if e.scores else np.inf, e.system))
    figure = go.Figure()
    for entry in entries:
        figure.add_trace(
            go.Box(
                y=list(entry.scores),
                x=[f"{entry.system}<br>n={len(entry.scores)}"] * len(entry.scores),
                name=entry.system,
                boxpoints="all",
                jitter=0.4,
                pointpos=0,
                marker={"color": ACCENT[0], "size": 5, "opacity": 0.7},
                line={"color": NEUTRAL},
                fillcolor="rgba(0,114,178,0.15)",
                customdata=np.array([entry.opponents, entry.errors], dtype=object).T if entry.scores else None,
                hovertemplate=(
                    f"{entry.system} vs %{{customdata[0]}}<br>Favi-Score for {entry.system}: %{{y:+.2f}}"
                    "<br>errors: %{customdata[1]}<extra></extra>"
                ),
                showlegend=False,
            )
        )
    figure.add_hline(y=0, line_dash="dash", line_color=NEUTRAL, annotation_text="no favouritism", annotation_position="bottom right")
    # automargin: long system names are turned and the margins grow, never over the boxes
    figure.update_yaxes(
        title_text="Favi-Score (expected error cost; > 0 favours the system)", range=[-2.1, 2.1], zeroline=False, automargin=True
    )
    figure.update_xaxes(title_text="system (n = pairs with at least one error)", automargin=True)
    return base_layout(figure, f"Favi-Score per system: {metric} vs {human}", height=480)
