"""Widgets of the Metric check page: the figures of one metric's diagnostics and a plain reading."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from prefeval_core.data.dataset import Dataset
from prefeval_core.diagnostics.comparison import ERROR_LABELS
from prefeval_core.diagnostics.metric_report import MetricReport, report_json
from prefeval_core.figures.confusion import confusion_heatmap
from prefeval_core.workflow.judges import default_judges, judge_candidates, judges_frame
from prefeval_core.workflow.metric_check import MetricCheck
from prefeval_core.workflow.session import DataChoice
from ui import cache, state
from ui.errors import escape_markdown, user_errors


def metric_picker(dataset: Dataset, check: MetricCheck) -> MetricCheck:
    """The metric to check and how (tie threshold, γ, seed), in a form; the choice is kept for
    the Report page and the HTML report."""
    metrics = state.metric_candidates(dataset, check.human)
    with st.form("pe.w.check"):
        columns = st.columns([3, 1, 1, 1])
        chosen = columns[0].selectbox("Metric to check", metrics, index=metrics.index(check.metric), key="pe.w.check_metric")
        eps = columns[1].number_input("Metric tie threshold", 0.0, 1e6, check.eps, format="%.4f", key="pe.w.check_eps")
        gamma = columns[2].number_input("Significance level γ", 0.001, 0.5, check.gamma, step=0.01, format="%.3f", key="pe.w.check_gamma")
        seed = columns[3].number_input("Seed", 0, 2**31 - 1, check.seed, key="pe.w.check_seed")
        if st.form_submit_button("Check"):
            with user_errors("Checking the settings"):
                st.session_state[state.CHECK] = MetricCheck(check.human, chosen, float(eps), float(gamma), int(seed))
    return st.session_state[state.CHECK] or check


def judges_view(choice: DataChoice, dataset: Dataset, check: MetricCheck) -> None:
    """Several judges side by side against the human rater, single annotators as the reference, a verdict on each."""
    candidates = list(judge_candidates(dataset, check.human))
    if not candidates:
        st.info("No rater of these data gives scores to compare with the human rater.")
        return
    c = st.columns([4, 1])
    default = default_judges(dataset, check.human, check.metric, state.raters(dataset)[1])
    chosen = c[0].multiselect("Judges", candidates, default=list(default), key="pe.w.judges")
    k = int(c[1].number_input("k (top-k boundary)", 1, max(1, len(dataset.systems) - 1), 3, key="pe.w.judges_k"))
    if not chosen:
        st.info("Choose one or more judges.")
        return
    with user_errors("Comparing the judges"):
        comparison = cache.judge_comparison(choice, check.human, tuple(chosen), k, check.eps)
    st.dataframe(judges_frame(comparison), hide_index=True, width="stretch")
    st.caption(
        escape_markdown(
            f"On the {len(comparison.systems)} systems every rater scored. System accuracy: share of pairs of systems that the "
            f"judge's mean scores order as {comparison.human}'s do (not item wins); Kendall τ between the two vectors of means; "
            f"inversions: pairs in opposite order; |Favi|: mean absolute Favi-Score over pairs with one system in the top {k} by "
            f"{comparison.human}'s means and one outside. {comparison.reference_note()} Verdict — {comparison.rule}"
        )
    )


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


def summary_figures(choice: DataChoice, check: MetricCheck) -> None:
    left, right = st.columns(2)
    left.plotly_chart(cache.metric_figure(choice, check, "sign"), key="pe.fig.sign")
    kendall = cache.metric_figure(choice, check, "kendall")
    if kendall is not None:
        right.plotly_chart(kendall, key="pe.fig.kendall")
    st.plotly_chart(cache.metric_figure(choice, check, "favi"), key="pe.fig.favi")


def confusion_of_pair(report: MetricReport) -> None:
    pairs = list(report.pairs)
    order = np.argsort(-np.nan_to_num(np.abs(report.favi), nan=-1.0), kind="stable")
    labels = {int(i): f"{pairs[i][0]} vs {pairs[i][1]}  (Favi {report.favi[i]:+.2f}, {report.errors[i]} errors)" for i in order}
    chosen = st.selectbox("Pair (largest |Favi-Score| first)", list(labels), format_func=labels.__getitem__, key="pe.w.check_pair")
    st.plotly_chart(
        confusion_heatmap(report.confusions.K[chosen], *pairs[chosen], metric=report.metric, human=report.human), key="pe.fig.confusion"
    )


def dags_side_by_side(choice: DataChoice, check: MetricCheck) -> None:
    left, right = st.columns(2)
    left.plotly_chart(cache.metric_figure(choice, check, "dag_human"), key="pe.fig.dag_human")
    right.plotly_chart(cache.metric_figure(choice, check, "dag_metric"), key="pe.fig.dag_metric")
    st.caption(
        "Arrows point from the significantly better system to the worse (transitive edges left out); "
        "colours: error type against the human reference."
    )


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
