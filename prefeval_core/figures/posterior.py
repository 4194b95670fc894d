"""Posterior win-rate figures: one pair in detail, many pairs as a ridge plot (method.md §4)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from prefeval_core.diagnostics.win_rate import WinRateDensities
from prefeval_core.errors import settings_error
from prefeval_core.figures._style import NEUTRAL, OUTCOME_COLOURS, base_layout
from prefeval_core.vocabulary.levels import DEFAULT_GAMMA


def win_rate_figure(densities: WinRateDensities, system_a: str, system_b: str, *, counts: Sequence[int] | None = None) -> go.Figure:
    """Posterior of one pair: densities of ``p>``, ``p=``, ``p<`` (left) and of ``p> - p<`` (right).

    On the right the mass above 0, ``theta = P(p> > p<)``, is shaded and its value written;
    the dashed line marks 0 (equal rates). Traces 0-2 are ``p>``, ``p=``, ``p<`` (``y`` =
    ``densities.rate_density[k]``), trace 3 is the difference, trace 4 its shaded part > 0.

    Args:
        densities: from :func:`~prefeval_core.diagnostics.win_rate.win_rate_densities`.
        system_a, system_b: the pair, ``p>`` = rate of "A better".
        counts: optional human outcome counts ``(n>, n=, n<)`` for the title and hover.
    """
    names = (f"p> ({system_a} better)", "p= (no preference)", f"p< ({system_b} better)")
    figure = make_subplots(
        rows=1, cols=2, horizontal_spacing=0.1, subplot_titles=("win, tie and loss rates", f"p> − p< ({system_a} minus {system_b})")
    )
    for k in range(3):
        figure.add_trace(
            go.Scatter(
                x=densities.rate_grid,
                y=densities.rate_density[k],
                mode="lines",
                name=names[k],
                line={"color": OUTCOME_COLOURS[k], "width": 2},
                hovertemplate=f"{names[k]}<br>rate %{{x:.2f}}: density %{{y:.2f}}<br>posterior mean {densities.mean[k]:.3f}<extra></extra>",
            ),
            row=1,
            col=1,
        )
    x, y = densities.difference_grid, densities.difference_density
    figure.add_trace(
        go.Scatter(
            x=x,
            y=y,
            mode="lines",
            name="p> − p<",
            line={"color": NEUTRAL, "width": 2},
            hovertemplate="p> − p< = %{x:.2f}: density %{y:.2f}<extra></extra>",
        ),
        row=1,
        col=2,
    )
    above = x > 0
    figure.add_trace(
        go.Scatter(
            x=x[above],
            y=y[above],
            mode="lines",
            fill="tozeroy",
            line={"color": OUTCOME_COLOURS[0], "width": 0},
            fillcolor="rgba(0,114,178,0.3)",
            name=f"θ = P(p> > p<) = {densities.theta:.3f}",
            hoverinfo="skip",
        ),
        row=1,
        col=2,
    )
    figure.add_vline(x=0, line_dash="dash", line_color=NEUTRAL, row=1, col=2)
    figure.add_annotation(
        x=0.98,
        y=0.95,
        xref="x2 domain",
        yref="y2 domain",
        showarrow=False,
        xanchor="right",
        text=f"θ = P(p> > p<) = {densities.theta:.3f}",
    )
    figure.update_xaxes(title_text="rate (probability)", range=[0, 1], row=1, col=1)
    figure.update_xaxes(title_text="difference of rates", range=[-1, 1], row=1, col=2)
    figure.update_yaxes(title_text="posterior density (per unit)", rangemode="tozero", row=1, col=1)
    figure.update_yaxes(title_text="posterior density (per unit)", rangemode="tozero", row=1, col=2)
    counted = f" — human outcomes {tuple(int(c) for c in counts)} (>, =, <)" if counts is not None else ""
    source = "exact Dirichlet" if densities.source == "dirichlet" else "posterior samples"
    return base_layout(figure, f"Posterior win rates: {system_a} vs {system_b}{counted} ({source})", height=420)


def win_rate_ridge(
    pairs: Sequence[tuple[str, str]],
    densities: Sequence[WinRateDensities],
    *,
    gamma: float = DEFAULT_GAMMA,
    title: str = "Posterior of p> − p< per pair",
) -> go.Figure:
    """Ridge plot of the ``p> - p<`` densities of many pairs, one row per pair (top = first).

    Each row is filled blue if the pair is decided ``>`` (``theta > 1 - gamma/2``),
    vermillion if decided ``<`` (``theta < gamma/2``), grey if undecided; hover gives the
    pair, ``theta`` and the posterior means. Trace ``i`` is pair ``i`` (``name`` = "A vs B"),
    its ``y`` the density scaled to at most 0.9 row heights plus the row offset.
    """
    if len(pairs) != len(densities):
        raise settings_error(f"{len(pairs)} pairs but {len(densities)} densities")
    figure = go.Figure()
    rows = len(pairs)
    peak = max((float(d.difference_density.max()) for d in densities), default=1.0) or 1.0
    for row, ((a, b), d) in enumerate(zip(pairs, densities, strict=True)):
        offset = float(rows - 1 - row)
        colour = OUTCOME_COLOURS[0] if d.theta > 1 - gamma / 2 else OUTCOME_COLOURS[2] if d.theta < gamma / 2 else OUTCOME_COLOURS[1]
        hover = (
            f"{a} vs {b}<br>θ = P(p> > p<) = {d.theta:.3f}<br>"
            f"mean p> {d.mean[0]:.3f}, p= {d.mean[1]:.3f}, p< {d.mean[2]:.3f}<extra></extra>"
        )
        figure.add_trace(
            go.Scatter(
                x=np.concatenate([[-1.0], d.difference_grid, [1.0]]),
                y=offset + 0.9 * np.concatenate([[0.0], d.difference_density / peak, [0.0]]),
                mode="lines",
                fill="toself",
                line={"color": colour, "width": 1},
                name=f"{a} vs {b}",
                hovertemplate=hover,
                showlegend=False,
            )
        )
    figure.add_vline(x=0, line_dash="dash", line_color=NEUTRAL)
    figure.update_xaxes(title_text="p> − p< (difference of win and loss rates of A over B)", range=[-1, 1])
    figure.update_yaxes(
        title_text="pair (A vs B); ridge height = posterior density",
        tickvals=[rows - 1 - r for r in range(rows)],
        ticktext=[f"{a} vs {b}" for a, b in pairs],
        range=[-0.3, rows + 0.2],
    )
    subtitle = f"<br><sup>blue: A better, vermillion: B better, grey: undecided (γ = {gamma})</sup>"
    return base_layout(figure, title + subtitle, height=max(360, 22 * rows + 160))
