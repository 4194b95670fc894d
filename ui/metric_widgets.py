"""Widgets of the Metric check page: the metric and its settings, the figures of its diagnostics, judges side by side."""

from __future__ import annotations

import numpy as np
import streamlit as st

from prefeval_core.figures.confusion import confusion_heatmap
from prefeval_core.figures.dag import dag_caption
from prefeval_core.workflow.datasets import Dataset
from prefeval_core.workflow.judges import default_judges, judge_candidates, judges_frame
from prefeval_core.workflow.metric_check import MetricCheck, MetricReport
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


def dags_side_by_side(choice: DataChoice, check: MetricCheck, report: MetricReport) -> None:
    left, right = st.columns(2)
    left.plotly_chart(cache.metric_figure(choice, check, "dag_human"), key="pe.fig.dag_human")
    right.plotly_chart(cache.metric_figure(choice, check, "dag_metric"), key="pe.fig.dag_metric")
    st.caption(dag_caption(report.dags.human.graph.number_of_nodes()))
