"""One configuration of the metric check (method.md §6-§9), used by the Metric check page, the
Report page, the HTML report and ``diagnose``: the same numbers everywhere; its figures, its
reading in plain words and its table per pair."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from prefeval_core.data.dataset import Dataset
from prefeval_core.diagnostics.comparison import ERROR_LABELS
from prefeval_core.diagnostics.metric_report import MetricReport, metric_report, report_json
from prefeval_core.errors import settings_error
from prefeval_core.figures.dag import dag_figure
from prefeval_core.figures.favi import favi_box_plot
from prefeval_core.figures.metrics import kendall_tau_bars, sign_accuracy_bars
from prefeval_core.vocabulary.levels import DEFAULT_FAVI_DRAWS, DEFAULT_GAMMA

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
        if self.metric == self.human:
            raise settings_error(f"the human rater {self.human!r} cannot also be the metric checked against it", field="metric")


def check_metric(dataset: Dataset, check: MetricCheck, *, samples: int = DEFAULT_FAVI_DRAWS) -> MetricReport:
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


def reading(report: MetricReport) -> list[str]:
    """A few sentences saying what the figures show, in plain words (numbers from ``report``)."""
    metric, human = report.metric, report.human
    lines = [
        f"{metric} agrees with {human} on which system is better for {report.sign.sample:.0%} of the items "
        f"(sample-level sign accuracy) and for {report.sign.system:.0%} of the {report.sign.pairs} system pairs (system-level: "
        "whether the metric's item wins and the human's point the same way — counted from item wins, not from mean scores)."
    ]
    if report.kendall is not None and not math.isnan(report.kendall.tau):
        lines.append(
            f"Kendall tau-b between the two scores is {report.kendall.tau:.3f} over {report.kendall.segments:,} segments "
            f"({report.kendall.tau_grouped:.3f} averaged per item)."
        )
    favoured = []
    for system, scores in report.systems.items():
        values = np.asarray(scores.scores, dtype=float)
        if values.size:
            favoured.append((float(np.mean(values > 0)), int(np.sum(values > 0)), values.size, float(np.median(values)), system))
    if favoured:
        _, count, total, median, system = max(favoured)
        lines.append(f"{metric} favours {system} in {count} of {total} pairs with errors (median Favi-Score {median:+.2f}).")
        _, count, total, median, system = min(favoured)
        lines.append(f"{metric} is hardest on {system}: it favours it in only {count} of {total} pairs (median Favi-Score {median:+.2f}).")
    types, counts = np.unique(report.dags.naive_error_types, return_counts=True)
    parts = ", ".join(f"{n} {ERROR_LABELS.get(t, t).lower()}" for t, n in zip(types, counts, strict=True))
    lines.append(f"A sign test on {metric} alone, against the full human evaluation, gives: {parts} (pairs).")
    return lines


def metric_pairs_frame(report: MetricReport) -> pd.DataFrame:
    """Per pair: items, errors, Favi-Score with its interval, the human reference and naive
    metric outcomes and the naive outcome's error type (confusion rows = metric, columns = human)."""
    frame = pd.DataFrame(report_json(report)["pairs"])
    words = {0: "> A better", 1: "not significant", 2: "< B better"}
    agree = np.trace(report.confusions.K, axis1=1, axis2=2)
    frame["confusion"] = [f"same outcome on {int(a)} of {int(n)} items" for a, n in zip(agree, frame["items"], strict=True)]
    frame["favi_interval"] = frame["favi_interval"].map(lambda v: f"{v[0]:+.2f} to {v[1]:+.2f}")
    frame["human reference"] = [words[int(c)] for c in report.dags.reference]
    frame["naive metric"] = [words[int(c)] for c in report.dags.naive]
    frame["error type"] = [ERROR_LABELS.get(t, t) for t in report.dags.naive_error_types]
    names = {"system_a": "system A", "system_b": "system B", "confusion": "agreement", "favi": "Favi-Score"}
    return frame.rename(columns=names | {"favi_interval": "Favi-Score 95% interval", "errors": "errors (items)"})
