"""A self-contained offline HTML report of one metric's diagnostics.

Figures are written with plotly's own HTML export; the plotly.js bundle is inlined once (no
CDN, no other external script or style), so the file opens without internet.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import plotly.graph_objects as go

from prefeval_core.diagnostics.metric_report import MetricReport
from prefeval_core.diagnostics.win_rate import win_rate_densities
from prefeval_core.figures.confusion import confusion_heatmap
from prefeval_core.figures.dag import dag_figure
from prefeval_core.figures.favi import favi_box_plot
from prefeval_core.figures.metrics import kendall_tau_bars, sign_accuracy_bars
from prefeval_core.figures.posterior import win_rate_figure, win_rate_ridge

_STYLE = """
body { font-family: system-ui, sans-serif; max-width: 1150px; margin: 2em auto; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; } td, th { padding: 0.25em 0.8em; border-bottom: 1px solid #ddd; text-align: left; }
p.note { color: #555; }
"""


@dataclass(frozen=True)
class ReportSection:
    """One heading of the report: a paragraph of text (plain, escaped), optional HTML, figures."""

    heading: str
    text: str = ""
    figures: tuple[go.Figure, ...] = ()
    html_body: str = field(default="")


def html_report(title: str, sections: Sequence[ReportSection], *, style: str = "") -> str:
    """One HTML document with every section's figures; plotly.js inlined once (only when there is a
    figure), no external references; ``style``: more CSS."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title><style>{_STYLE}{style}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
    ]
    bundle_written = False
    for section in sections:
        parts.append(f"<h2>{html.escape(section.heading)}</h2>")
        if section.text:
            parts.append(f'<p class="note">{html.escape(section.text)}</p>')
        if section.html_body:
            parts.append(section.html_body)
        for figure in section.figures:
            parts.append(
                figure.to_html(full_html=False, include_plotlyjs=not bundle_written, include_mathjax=False, config={"displaylogo": False})
            )
            bundle_written = True
    parts.append("</body></html>")
    return "\n".join(parts)


def _summary_table(report: MetricReport) -> str:
    def number(value: float | None, digits: int = 3) -> str:
        return "n/a" if value is None or math.isnan(value) else f"{value:.{digits}f}"

    kendall = report.kendall
    rows = [
        ("pairs diagnosed", str(len(report.pairs))),
        ("item comparisons (pairs × items both rated)", f"{report.sign.items:,}"),
        ("sample-level sign accuracy", number(report.sign.sample)),
        ("system-level sign accuracy", number(report.sign.system)),
        ("mean |Favi-Score| ± sd", f"{number(report.mean_abs_favi)} ± {number(report.std_abs_favi)}"),
        ("pairs without an error (Favi-Score undefined)", str(int(np.isnan(report.favi).sum()))),
        (
            "Kendall tau-b, all segments",
            "n/a (pairwise rater)" if kendall is None else f"{number(kendall.tau)} ({kendall.segments} segments)",
        ),
        (
            "Kendall tau-b, grouped by item",
            "n/a (pairwise rater)" if kendall is None else f"{number(kendall.tau_grouped)} ({kendall.items} items)",
        ),
        ("cycles in the naive metric DAG", str(len(report.dags.metric.cycles))),
    ]
    body = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in rows)
    return f"<table>{body}</table>"


def diagnostics_sections(report: MetricReport, *, confusions_shown: int = 12, seed: int = 0) -> list[ReportSection]:
    """The report's sections for one metric: summary, per-system Favi, DAGs, posteriors, confusions.

    Args:
        report: the diagnostics.
        confusions_shown: confusion heatmaps of this many pairs, largest |Favi-Score| first.
        seed: seed of the draws behind the ``p> - p<`` densities.
    """
    human, metric = report.human, report.metric
    dags = report.dags
    gamma = dags.gamma
    sections = [
        ReportSection(
            "Summary",
            f"{metric} against {human}; tie threshold eps = {report.eps} on the metric; significance level gamma = {gamma}.",
            (sign_accuracy_bars([report]), *([kendall_tau_bars([report.kendall])] if report.kendall is not None else [])),
            html_body=_summary_table(report),
        ),
        ReportSection(
            "Favi-Score per system",
            "Each point is the Favi-Score of one pair, oriented so that positive means the metric favours the system; "
            "pairs without an error are left out (score undefined).",
            (favi_box_plot(report.systems, metric=metric, human=human),),
        ),
        ReportSection(
            "Significance DAGs",
            "Arrows point from the significantly better system to the worse one (transitive edges omitted). "
            "Colours: error type of the pair against the human reference.",
            (
                dag_figure(dags.human, title=f"Human reference DAG ({human}, γ = {gamma})"),
                dag_figure(dags.metric, title=f"Naive metric DAG ({metric}, sign test, γ = {gamma})", reference=dags.human),
                *(
                    [dag_figure(dags.protocol, title=f"Protocol DAG ({metric}, γ = {gamma})", reference=dags.human)]
                    if dags.protocol is not None
                    else []
                ),
            ),
        ),
    ]
    human_counts = report.confusions.human_all
    densities = [win_rate_densities(alpha=n + 1, seed=seed + index) for index, n in enumerate(human_counts)]
    favi_order = [int(i) for i in np.argsort(-np.nan_to_num(np.abs(report.favi), nan=-1.0), kind="stable")]
    posterior_figures: list[go.Figure] = [
        win_rate_ridge(report.pairs, densities, gamma=gamma, title=f"Posterior of p> − p< per pair from all human outcomes ({human})")
    ]
    if favi_order:
        top = favi_order[0]
        posterior_figures.insert(0, win_rate_figure(densities[top], *report.pairs[top], counts=human_counts[top].tolist()))
    sections.append(
        ReportSection(
            "Posterior win rates (human only)",
            "Dirichlet(n + 1) posterior of each pair's human win, tie and loss rates; detail for the pair with the largest |Favi-Score|.",
            tuple(posterior_figures),
        )
    )
    shown = favi_order[:confusions_shown]
    sections.append(
        ReportSection(
            "Confusion matrices",
            f"The {len(shown)} pairs with the largest |Favi-Score| (rows = metric, columns = human).",
            tuple(confusion_heatmap(report.confusions.K[i], *report.pairs[i], metric=metric, human=human) for i in shown),
        )
    )
    return sections


def diagnostics_html(report: MetricReport, *, confusions_shown: int = 12, seed: int = 0) -> str:
    """The full offline HTML report of one metric's diagnostics."""
    return html_report(
        f"Metric diagnostics: {report.metric} vs {report.human}", diagnostics_sections(report, confusions_shown=confusions_shown, seed=seed)
    )


def write_diagnostics_html(report: MetricReport, path: str | Path, *, confusions_shown: int = 12, seed: int = 0) -> Path:
    """Write :func:`diagnostics_html` to ``path`` (UTF-8) and return the path."""
    path = Path(path)
    path.write_text(diagnostics_html(report, confusions_shown=confusions_shown, seed=seed), encoding="utf-8")
    return path
