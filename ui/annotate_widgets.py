"""Widgets of the Annotate page: what to annotate, one pair side by side, the store."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import pandas as pd
import streamlit as st

from prefeval_core.annotations import (
    AnnotationStore,
    Choice,
    export_annotations_csv,
    export_annotations_jsonl,
    export_requests_csv,
    export_requests_jsonl,
    left_right,
    make_annotation,
    read_annotated_requests,
    request_frame,
)
from prefeval_core.data.dataset import Dataset
from prefeval_core.errors import DataError
from prefeval_core.protocol import ComparisonTask, ProtocolState, next_request
from prefeval_core.session import DataChoice
from ui import state
from ui.errors import escape_markdown, show_problems
from ui.page import flash, set_annotator

BUTTONS: dict[Choice, tuple[str, str, str]] = {
    "left": ("pe_ann_left", "A better", "A"),
    "equal": ("pe_ann_equal", "Equal", "E"),
    "right": ("pe_ann_right", "B better", "B"),
}
"""Per choice: the button's key, its label and its keyboard shortcut (Streamlit shows the key on the
button and ignores it while the user types in a text field)."""


@dataclass(frozen=True)
class Task:
    """One (item, pair) to annotate, pair canonical."""

    item_id: str
    system_a: str
    system_b: str


def tasks_from_protocol(protocol: ProtocolState) -> list[Task]:
    """The comparisons of the protocol's next request."""
    return [Task(t.item_id, t.system_a, t.system_b) for t in next_request(protocol).tasks if isinstance(t, ComparisonTask)]


def tasks_for_pair(dataset: Dataset, system_a: str, system_b: str) -> list[Task]:
    """Every item on which both systems have an output, sorted by item."""
    texts = dataset.texts
    items = set(texts.loc[texts["system"] == system_a, "item_id"]) & set(texts.loc[texts["system"] == system_b, "item_id"])
    return [Task(str(i), system_a, system_b) for i in sorted(items)]


def pair_picker(dataset: Dataset) -> tuple[str, str]:
    systems = sorted(set(dataset.texts["system"]))
    pairs = list(combinations(systems, 2))
    return st.selectbox("Pair to annotate", pairs, format_func=lambda p: f"{p[0]} vs {p[1]}", key="pe.w.annotate_pair")


def _on_annotator() -> None:
    set_annotator(st.session_state["pe.w.annotator"])


def annotator_input() -> str:
    """The annotator's name (``anonymous`` if none); kept in the URL, so it survives a reload."""
    st.text_input(
        "Annotator name", value=st.session_state[state.ANNOTATOR], key="pe.w.annotator", on_change=_on_annotator,
        placeholder="your name", help="Stored with each annotation; progress counts this name's annotations.",
    )  # fmt: skip
    return st.session_state[state.ANNOTATOR] or "anonymous"


def _record(dataset_key: str, task: Task, choice: Choice, left: str, annotator: str) -> None:
    AnnotationStore.open().add(make_annotation(dataset_key, task.item_id, task.system_a, task.system_b, choice, annotator, left))


def _undo(dataset_key: str, annotator: str) -> None:
    undone = AnnotationStore.open().undo_last(dataset_key, annotator)
    flash(f"Undid {annotator}'s annotation of item {undone.item_id}." if undone else "Nothing to undo.")


def pending_tasks(tasks: list[Task], dataset_key: str, annotator: str) -> list[Task]:
    """Tasks the annotator has not judged yet (judgements in the store that count)."""
    done = {(a.item_id, a.system_a, a.system_b) for a in AnnotationStore.open().annotations(dataset_key) if a.annotator == annotator}
    return [t for t in tasks if (t.item_id, t.system_a, t.system_b) not in done]


def _text(frame: pd.DataFrame, item_id: str, system: str | None = None) -> str:
    rows = frame[frame["item_id"] == item_id] if system is None else frame[(frame["item_id"] == item_id) & (frame["system"] == system)]
    column = "source" if system is None else "output"
    return str(rows[column].iloc[0]) if len(rows) else ""


def annotate_one(dataset: Dataset, choice: DataChoice, task: Task, annotator: str) -> None:
    """The source, the two outputs in seeded random left/right order, the buttons and shortcuts."""
    left, right = left_right(st.session_state[state.ANNOTATION_SEED], choice.key, task.item_id, task.system_a, task.system_b)
    st.markdown(f"**Item:** {escape_markdown(task.item_id)}")
    source = _text(dataset.sources, task.item_id) if not dataset.sources.empty else ""
    if source:
        with st.expander("Source / context", expanded=True), st.container(height=240 if len(source) > 800 else "content"):
            st.markdown(escape_markdown(source))
    columns = st.columns(2)
    for column, label, system in ((columns[0], "Output A", left), (columns[1], "Output B", right)):
        with column.container(border=True):
            st.markdown(f"**{label}**")
            st.markdown(escape_markdown(_text(dataset.texts, task.item_id, system)) or "*(no output)*")
    buttons = st.columns(4)
    for column, (option, (key, label, shortcut)) in zip(buttons, BUTTONS.items(), strict=False):
        column.button(
            label, key=key, on_click=_record, args=(choice.key, task, option, left, annotator), width="stretch", shortcut=shortcut
        )
    buttons[3].button("Undo last", key="pe_ann_undo", on_click=_undo, args=(choice.key, annotator), width="stretch")


def _on_import(dataset_key: str, annotator: str, systems: tuple[str, ...]) -> None:
    upload = st.session_state.get("pe.w.annotated")
    if upload is None:
        return
    try:
        annotations = read_annotated_requests(upload.name, upload.getvalue(), dataset_key, annotator=annotator, systems=systems)
    except DataError as error:
        st.session_state["pe.import_problems"] = error.problems
        return
    added = AnnotationStore.open().add_many(annotations)
    flash(f"Imported {added} annotations from {upload.name}.")


def request_files(dataset: Dataset, choice: DataChoice, tasks: list[Task], annotator: str) -> None:
    """Download what is left to annotate; upload it back once annotated."""
    frame = pd.DataFrame([vars(t) for t in tasks], columns=["item_id", "system_a", "system_b"])
    requests = request_frame(frame, dataset.texts, dataset.sources, annotator="")
    left, right = st.columns(2)
    left.download_button("Requests as CSV", export_requests_csv(requests), "prefeval-requests.csv", "text/csv", key="pe.w.req_csv")
    right.download_button(
        "Requests as JSONL", export_requests_jsonl(requests), "prefeval-requests.jsonl", "application/jsonl", key="pe.w.req_jsonl"
    )
    st.caption("Fill the `label` column with > (A better), = or < (or A / tie / B), then upload the file here.")
    st.file_uploader(
        "Annotated request file", type=["csv", "tsv", "jsonl", "json", "gz"], key="pe.w.annotated",
        on_change=_on_import, args=(choice.key, annotator, dataset.systems),
    )  # fmt: skip
    problems = st.session_state.pop("pe.import_problems", None)
    if problems:
        show_problems(problems, "The annotated file could not be imported")


def store_view(choice: DataChoice) -> None:
    """What the store holds for this data, and its export."""
    annotations = AnnotationStore.open().annotations(choice.key)
    st.caption(f"{len(annotations)} annotations stored for this data in {escape_markdown(AnnotationStore.open().path)}.")
    if annotations:
        left, right = st.columns(2)
        left.download_button(
            "Annotations as CSV", export_annotations_csv(annotations), "prefeval-annotations.csv", "text/csv", key="pe.w.ann_csv"
        )
        right.download_button(
            "Annotations as JSONL",
            export_annotations_jsonl(annotations),
            "prefeval-annotations.jsonl",
            "application/jsonl",
            key="pe.w.ann_jsonl",
        )
        frame = pd.DataFrame([vars(a) for a in annotations[-200:]])
        st.dataframe(frame.drop(columns=["dataset", "undone_at"]).iloc[::-1], hide_index=True, width="stretch", height=240)
