"""Session state: small, namespaced (``pe.*``), initialised in one place.

Every page calls :func:`ensure_state` first, so each page also runs alone (``AppTest``).
Only domain values live here (the data choice, the raters, the study setup, the metric check,
the protocol's state); everything derived is recomputed through :mod:`ui.cache`. Annotations
live on disk (the store), not here.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from prefeval_core.workflow import StudySetup
from prefeval_core.workflow import raters as rater_choices
from prefeval_core.workflow.datasets import Dataset
from prefeval_core.workflow.metric_check import MetricCheck
from prefeval_core.workflow.session import DataChoice
from prefeval_core.workflow.studies import recalled_data, remember_data, study_store

DATA = "pe.data"
HUMAN = "pe.human"
METRICS = "pe.metrics"
SETUP = "pe.setup"
CHECK = "pe.check"
PROTOCOL = "pe.protocol"
STUDY = "pe.study"
STUDY_PARAM = "study"
"""The query parameter naming the session's study in the address (see :mod:`ui.studies`)."""
ANNOTATOR = "pe.annotator"
ANNOTATION_SEED = "pe.annotation_seed"
DATA_DIGEST = "pe.data_digest"
DATA_PARAM = "data"
"""The query parameter naming the session's uploaded data (kept in the store by digest)."""
DIRECTION_EDITS = "pe.rater_directions"
"""Directions the user set on the Data page, by rater (the others: as detected)."""
ROLE_EDITS = "pe.rater_roles"
"""Roles the user set on the Data page, by rater (the others: as detected from the names)."""

DEFAULT_RATERS = {"summeval": ("human:relevance", ("rougeL",))}
"""Raters the dashboard opens with per bundled sample; other data: the first human and metric rater."""


def ensure_state() -> None:
    """Create every key with its default if absent (idempotent; call at the top of each page)."""
    defaults: dict[str, Any] = {
        DATA: DataChoice.sample(),
        HUMAN: None,
        METRICS: None,
        SETUP: None,
        CHECK: None,
        PROTOCOL: None,
        STUDY: None,
        ANNOTATOR: "",
        ANNOTATION_SEED: 0,
    }
    for key, value in defaults.items():
        if key not in st.session_state:
            st.session_state[key] = value


def data_choice() -> DataChoice:
    return st.session_state[DATA]


def _reset_study() -> None:
    st.session_state[SETUP] = None
    st.session_state[CHECK] = None
    st.session_state[PROTOCOL] = None
    st.session_state[STUDY] = None
    if STUDY_PARAM in st.query_params:
        del st.query_params[STUDY_PARAM]


def set_data(choice: DataChoice, *, keep_choices: bool = False) -> None:
    """Switch to other data; raters, study and protocol start afresh if the data changed
    (unless ``keep_choices``: e.g. only computed metrics were added)."""
    if choice == st.session_state.get(DATA):
        return
    st.session_state[DATA] = choice
    _data_to_url(choice)
    if keep_choices:
        return
    st.session_state[HUMAN] = None
    st.session_state[METRICS] = None
    st.session_state.pop(ROLE_EDITS, None)
    st.session_state.pop(DIRECTION_EDITS, None)
    _reset_study()


def _data_to_url(choice: DataChoice) -> None:
    """Uploaded data are kept in the store and named in the address (``?data=<digest>``), so a
    reload (a new session) finds them; a sample needs no name there."""
    if choice.kind == "upload":
        st.session_state[DATA_DIGEST] = remember_data(study_store(), choice)
        st.query_params[DATA_PARAM] = st.session_state[DATA_DIGEST]
    else:
        st.session_state.pop(DATA_DIGEST, None)
        st.query_params.pop(DATA_PARAM, None)


def data_from_url() -> None:
    """Keep the address naming the session's uploaded data on every page (navigation drops query
    parameters); in a fresh session (a reload), take the data the address names."""
    digest = st.session_state.get(DATA_DIGEST)
    if digest is not None:
        st.query_params[DATA_PARAM] = digest
        return
    wanted = st.query_params.get(DATA_PARAM)
    if wanted and data_choice() == DataChoice.sample():
        recalled = recalled_data(study_store(), wanted)
        if recalled is None:
            st.query_params.pop(DATA_PARAM, None)
            return
        st.session_state[DATA], st.session_state[DATA_DIGEST] = recalled, wanted


def rater_roles(dataset: Dataset) -> dict[str, rater_choices.RaterRole]:
    """Each rater's role: as detected from its name, or as the user set it on the Data page."""
    return rater_choices.rater_roles(dataset, st.session_state.get(ROLE_EDITS) or {})


def rater_directions(dataset: Dataset) -> dict[str, rater_choices.Direction]:
    """Each rater's direction: as detected from its name and scores, or as the user set it on the Data page."""
    return rater_choices.rater_directions(dataset, st.session_state.get(DIRECTION_EDITS) or {})


def metric_candidates(dataset: Dataset, human: str) -> list[str]:
    """Raters that can serve as metrics for ``human``: the metrics and LLM judges that are higher
    is better (never a human rater, one annotator, or a lower-is-better rater as it stands)."""
    return rater_choices.metric_candidates(dataset, human, rater_roles(dataset), rater_directions(dataset))


def raters(dataset: Dataset) -> tuple[str, tuple[str, ...]]:
    """The chosen human rater and metrics (empty: human only), defaulting to sensible ones for ``dataset``."""
    human, metrics = st.session_state[HUMAN], st.session_state[METRICS]
    if human not in dataset.raters:
        preset = DEFAULT_RATERS.get(dataset.name)
        human, metrics = rater_choices.starting_raters(dataset, rater_roles(dataset), rater_directions(dataset), preset)
        st.session_state[HUMAN], st.session_state[METRICS] = human, metrics
    metrics = tuple(m for m in (metrics or ()) if m in dataset.raters and m != human)
    st.session_state[METRICS] = metrics
    return human, metrics


def set_raters(human: str, metrics: tuple[str, ...]) -> None:
    """Choose other raters; the study starts afresh if they changed."""
    if (human, metrics) != (st.session_state[HUMAN], st.session_state[METRICS]):
        st.session_state[HUMAN], st.session_state[METRICS] = human, metrics
        _reset_study()


def setup() -> StudySetup | None:
    """The study setup of the running (or last started) protocol."""
    return st.session_state[SETUP]


def metric_check(dataset: Dataset) -> MetricCheck | None:
    """The metric check in effect: as set on the Metric check page, else the first metric against
    the human rater with default settings; ``None`` when there is no metric."""
    human, metrics = raters(dataset)
    check: MetricCheck | None = st.session_state[CHECK]
    if check is not None and check.human == human and check.metric in dataset.raters:
        return check
    candidates = metric_candidates(dataset, human)
    if not candidates:
        return None
    return MetricCheck(human, metrics[0] if metrics else candidates[0])
