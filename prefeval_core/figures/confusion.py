"""Confusion-matrix heatmap of one pair: counts and the column-normalised mixture matrix."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from prefeval_core.diagnostics.confusion import mixture_matrix
from prefeval_core.diagnostics.favi import favi_score
from prefeval_core.errors import settings_error
from prefeval_core.figures._style import SEQUENTIAL, base_layout
from prefeval_core.vocabulary.outcomes import SYMBOLS


def outcome_labels(system_a: str, system_b: str) -> list[str]:
    """Axis labels in words for the codes 0, 1, 2 of the pair ``(system_a, system_b)``."""
    return [f"{system_a} better ({SYMBOLS[0]})", f"no preference ({SYMBOLS[1]})", f"{system_b} better ({SYMBOLS[2]})"]


def confusion_heatmap(K: npt.ArrayLike, system_a: str, system_b: str, *, metric: str = "metric", human: str = "human") -> go.Figure:
    """Two heatmaps of a pair's confusion matrix ``K`` (rows = metric, columns = human).

    Left: counts (items). Right: the mixture matrix ``mu[c, h] = P(metric says c | human
    says h)`` (each column sums to 1; blank where the human never gave that outcome). Row 0
    (``>``) is drawn at the top. Trace 0's ``z`` is ``K``, trace 1's ``z`` the mixture matrix.
    """
    K = np.asarray(K, dtype=np.int64)
    if K.shape != (3, 3):
        raise settings_error(f"a confusion matrix is 3x3, got shape {K.shape}")
    mixture = mixture_matrix(K)
    labels = outcome_labels(system_a, system_b)
    figure = make_subplots(
        rows=1, cols=2, horizontal_spacing=0.22, subplot_titles=("counts (items)", "mixture matrix (share of each human column)")
    )
    figure.add_trace(
        go.Heatmap(
            z=K,
            x=labels,
            y=labels,
            colorscale=SEQUENTIAL,
            text=K.astype(str),
            texttemplate="%{text}",
            hovertemplate=f"{metric} says %{{y}}<br>{human} says %{{x}}<br>items: %{{z}}<extra>{system_a} vs {system_b}</extra>",
            colorbar={"title": {"text": "items"}, "x": 0.39},
        ),
        row=1,
        col=1,
    )
    figure.add_trace(
        go.Heatmap(
            z=mixture,
            x=labels,
            y=labels,
            zmin=0,
            zmax=1,
            colorscale=SEQUENTIAL,
            text=np.where(np.isnan(mixture), "", np.char.mod("%.2f", np.nan_to_num(mixture))),
            texttemplate="%{text}",
            customdata=K,
            hovertemplate=(
                f"P({metric} says %{{y}} | {human} says %{{x}}) = %{{z:.2f}}<br>items: %{{customdata}}"
                f"<extra>{system_a} vs {system_b}</extra>"
            ),
            colorbar={"title": {"text": "share"}, "x": 1.0},
        ),
        row=1,
        col=2,
    )
    for col in (1, 2):
        figure.update_xaxes(title_text=f"{human} (outcome)", row=1, col=col)
        figure.update_yaxes(title_text=f"{metric} (outcome)", autorange="reversed", row=1, col=col)
    favi = favi_score(K)
    favi_text = "undefined (no error)" if np.isnan(favi) else f"{favi:+.2f}"
    title = f"Confusion of {metric} vs {human}: {system_a} vs {system_b} — {int(K.sum())} items, Favi-Score {favi_text}"
    return base_layout(figure, title, height=460)
