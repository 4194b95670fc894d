"""One configuration of the metric check (method.md §6-§9), used by the Metric check page, the
Report page, the HTML report and ``diagnose``: the same numbers everywhere."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import plotly.graph_objects as go

from prefeval_core.data.dataset import Dataset
from prefeval_core.diagnostics.metric_report import MetricReport, metric_report, report_json
from prefeval_core.errors import settings_error
from prefeval_core.figures.dag import dag_figure
from prefeval_core.figures.favi import favi_box_plot
from prefeval_core.figures.metrics import kendall_tau_bars, sign_accuracy_bars
from prefeval_core.vocabulary.levels import DEFAULT_GAMMA

MetricFigure = Literal["sign", "kendall", "favi", "dag_human", "dag_metric"]
"""The figures of a metric check."""


@dataclass(frozen=True)
class MetricCheck:
    """Which metric is checked against which human rater, and how.

    Attributes:
        human, metric: the raters.
        eps: tie threshold of the metric's score differences (the human's ties are kept as rated).
        gamma: significance level of the human reference and the naive sign test.
        seed: seeds the Favi-Score posterior draws.
    """

    human: str
    metric: str
    eps: float = 0.0
    gamma: float = DEFAULT_GAMMA
    seed: int = 0

    def __post_init__(self) -> None:
        if not self.eps >= 0:
            raise settings_error(f"the tie threshold must be >= 0, got {self.eps}", field="eps")
        if not 0.0 < self.gamma < 1.0:
            raise settings_error(f"gamma must be in (0, 1), got {self.gamma}", field="gamma")


DEFAULT_SAMPLES = 4000
"""Posterior draws of each pair's Favi-Score by default."""


def check_metric(dataset: Dataset, check: MetricCheck, *, samples: int = DEFAULT_SAMPLES) -> MetricReport:
    """Every diagnostic of the check (see :func:`prefeval_core.diagnostics.metric_report.metric_report`),
    with ``samples`` posterior draws of each pair's Favi-Score.

    Raises:
        UnknownNameError, CoverageError: a rater is not in the data, or the two share no pair.
    """
    return metric_report(dataset, check.human, check.metric, eps=check.eps, gamma=check.gamma, seed=check.seed, samples=samples)


def check_json(report: MetricReport) -> dict[str, Any]:
    """The check as ``diagnose --json`` prints it (a stable shape; see
    :func:`prefeval_core.diagnostics.metric_report.report_json`)."""
    return report_json(report)


def metric_figure(report: MetricReport, name: MetricFigure) -> go.Figure | None:
    """One figure of a metric check (``None``: Kendall tau needs two scalar raters)."""
    gamma = report.dags.gamma
    if name == "sign":
        return sign_accuracy_bars([report])
    if name == "kendall":
        return None if report.kendall is None else kendall_tau_bars([report.kendall])
    if name == "favi":
        return favi_box_plot(report.systems, metric=report.metric, human=report.human)
    if name == "dag_human":
        return dag_figure(report.dags.human, title=f"Human reference ({report.human}, γ = {gamma})")
    return dag_figure(report.dags.metric, title=f"Naive metric ({report.metric}, sign test, γ = {gamma})")
