"""Session state: small, namespaced (``pe.*``), initialised in one place.

Every page calls :func:`ensure_state` first, so each page also runs alone (``AppTest``).
Only domain values live here (the data choice, rater names, settings, the protocol's
state); everything derived is recomputed through :mod:`ui.cache`. Annotations live on disk
(:mod:`prefeval_core.annotations`), not here.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from prefeval_core.data.dataset import Dataset
from prefeval_core.session import DataChoice

DATA = "pe.data"
HUMAN = "pe.human"
METRIC = "pe.metric"
SETTINGS = "pe.settings"
PROTOCOL = "pe.protocol"
ANNOTATOR = "pe.annotator"
ANNOTATION_SEED = "pe.annotation_seed"

DEFAULT_RATERS = {"summeval": ("human:relevance", "rougeL")}
"""Raters the dashboard opens with per bundled sample; other data: the first human and metric rater."""
HUMAN_ONLY = "(none: human only)"


def ensure_state() -> None:
    """Create every key with its default if absent (idempotent; call at the top of each page)."""
    defaults: dict[str, Any] = {
        DATA: DataChoice.sample(),
        HUMAN: None,
        METRIC: None,
        SETTINGS: None,
        PROTOCOL: None,
        ANNOTATOR: "",
        ANNOTATION_SEED: 0,
    }
    for key, value in defaults.items():
        if key not in st.session_state:
            st.session_state[key] = value


def data_choice() -> DataChoice:
    return st.session_state[DATA]


def set_data(choice: DataChoice, *, keep_choices: bool = False) -> None:
    """Switch to other data; rater choices and the protocol start afresh if the data changed
    (unless ``keep_choices``: e.g. only computed metrics were added)."""
    if choice == st.session_state.get(DATA):
        return
    st.session_state[DATA] = choice
    if keep_choices:
        return
    st.session_state[HUMAN] = None
    st.session_state[METRIC] = None
    st.session_state[PROTOCOL] = None


def raters(dataset: Dataset) -> tuple[str, str | None]:
    """The chosen (human, metric) raters, defaulting to sensible ones for ``dataset``."""
    human, metric = st.session_state[HUMAN], st.session_state[METRIC]
    if human not in dataset.raters:
        preset = DEFAULT_RATERS.get(dataset.name)
        humans = dataset.human_raters or dataset.raters
        human = preset[0] if preset and preset[0] in dataset.raters else humans[0]
        metrics = [r for r in dataset.metric_raters if r != human]
        metric = preset[1] if preset and preset[1] in metrics else (metrics[0] if metrics else None)
        st.session_state[HUMAN], st.session_state[METRIC] = human, metric
    if metric is not None and metric not in dataset.raters:
        metric = st.session_state[METRIC] = None
    return human, metric


def set_raters(human: str, metric: str | None) -> None:
    """Choose other raters; the protocol starts afresh if they changed."""
    if (human, metric) != (st.session_state[HUMAN], st.session_state[METRIC]):
        st.session_state[HUMAN], st.session_state[METRIC] = human, metric
        st.session_state[PROTOCOL] = None
