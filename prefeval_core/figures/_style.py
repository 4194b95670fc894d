"""Colours and layout shared by the figures (colour-blind safe: Okabe-Ito, Cividis)."""

from __future__ import annotations

from typing import Final

import plotly.graph_objects as go

OUTCOME_COLOURS: Final = ("#0072B2", "#999999", "#D55E00")
"""``>`` (A better) blue, ``=`` grey, ``<`` (B better) vermillion (Okabe-Ito)."""
SEQUENTIAL: Final = "Cividis"
"""Sequential colour scale for counts and rates (readable with every colour-vision type)."""
ACCENT: Final = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00")
"""Qualitative colours for series (Okabe-Ito)."""
NEUTRAL: Final = "#555555"
CYCLE_COLOUR: Final = "#CC79A7"
"""Reddish purple: systems and edges on a cycle."""


def base_layout(figure: go.Figure, title: str, *, height: int | None = None) -> go.Figure:
    """Apply the common title, template and margins; returns the same figure."""
    figure.update_layout(
        title={"text": title, "x": 0.01, "xanchor": "left"},
        template="plotly_white",
        margin={"l": 70, "r": 30, "t": 80, "b": 60},
        hoverlabel={"namelength": -1},
        **({"height": height} if height else {}),
    )
    return figure
