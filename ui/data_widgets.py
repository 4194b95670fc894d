"""Widgets of the Data page: where the data comes from, column mapping, raters, summary."""

from __future__ import annotations

from dataclasses import replace
from typing import cast

import pandas as pd
import streamlit as st

from prefeval_core.workflow.datasets import Dataset, DatasetSummary, grouped_warnings
from prefeval_core.workflow.input_kinds import input_kind_words
from prefeval_core.workflow.raters import NEGATED_PREFIX, ROLE_WORDS, Direction, RaterRole, negated_copy
from prefeval_core.workflow.session import DataChoice, InputKind, sample_names
from prefeval_core.workflow.text_metrics import Against, MetricName
from ui import cache, state
from ui.errors import escape_markdown, user_errors

SOURCES = ("Bundled sample", "Your files")
UPLOAD_TYPES = ["csv", "tsv", "txt", "jsonl", "ndjson", "json", "parquet", "pq", "gz"]


def _on_source() -> None:
    if st.session_state["pe.w.source"] == SOURCES[0]:
        state.set_data(DataChoice.sample(st.session_state.get("pe.w.sample") or DataChoice.sample().name))
    else:
        _on_upload()


def _on_sample() -> None:
    state.set_data(DataChoice.sample(st.session_state["pe.w.sample"]))


def _on_upload() -> None:
    files = st.session_state.get("pe.w.upload") or []
    if files:
        name = files[0].name if len(files) == 1 else f"{files[0].name} + {len(files) - 1} more"
        state.set_data(DataChoice("upload", name, tuple((f.name, f.getvalue()) for f in files)))
    elif state.data_choice().kind == "upload":  # every file removed: nothing of them (nor their errors) stays
        state.set_data(DataChoice.sample())


def data_source_picker() -> DataChoice:
    """Sample picker or file upload; returns the data choice in effect."""
    current = state.data_choice()
    source = st.radio("Data", SOURCES, index=int(current.kind == "upload"), key="pe.w.source", horizontal=True, on_change=_on_source)
    if source == SOURCES[0]:
        names = sample_names()
        index = names.index(current.name) if current.kind == "sample" and current.name in names else 0
        st.selectbox("Sample", names, index=index, key="pe.w.sample", on_change=_on_sample, help="Bundled copies of public evaluations")
    else:
        st.file_uploader(
            f"Your files (CSV, TSV, JSONL, JSON or Parquet, optionally gzipped; up to {cache.MAX_UPLOAD_MB} MB each)",
            type=UPLOAD_TYPES,
            accept_multiple_files=True,
            key="pe.w.upload",
            on_change=_on_upload,
            help="Ratings (long or wide) or pairwise preferences, plus optional texts, sources and references.",
        )
        if state.data_choice().kind == "upload":
            column_mapping(state.data_choice())
        else:
            st.caption(f"No files yet: the pages show the bundled sample {state.data_choice().name} until you upload.")
    return state.data_choice()


def loaded_message(dataset: Dataset) -> None:
    counts = f"{len(dataset.systems)} systems, {len(dataset.items):,} items, {len(dataset.raters)} raters"
    st.success(f"Loaded **{escape_markdown(dataset.name)}**: {counts}.")


def column_mapping(choice: DataChoice) -> None:
    """Override what each uploaded file holds and which columns of a wide file are raters."""
    kinds, columns = dict(choice.kinds), dict(choice.rater_columns)
    with st.expander("Column mapping (only if a file was misread)"), st.form("pe.w.mapping"):
        new_kinds: dict[str, str] = {}
        new_columns: dict[str, tuple[str, ...]] = {}
        for index, (name, data) in enumerate(choice.files):
            with user_errors(f"Reading {name}", stop=False):
                options = list(cache.raw_columns(name, data))
                left, right = st.columns(2)
                label = escape_markdown(name)  # widget labels render Markdown: a file name is shown as written
                kind_words = input_kind_words()  # from the field-format registry
                kind = left.selectbox(
                    f"{label}: holds", list(kind_words), index=list(kind_words).index(kinds.get(name, "")),
                    format_func=kind_words.__getitem__, key=f"pe.w.kind{index}",
                )  # fmt: skip
                chosen = right.multiselect(
                    f"{label}: rater columns (wide ratings only; empty = all but item and system)",
                    options, default=[c for c in columns.get(name, ()) if c in options], key=f"pe.w.cols{index}",
                )  # fmt: skip
                if kind:
                    new_kinds[name] = kind
                if chosen:
                    new_columns[name] = tuple(chosen)
        if st.form_submit_button("Apply mapping"):
            kinds_chosen = tuple(sorted((name, cast(InputKind, kind)) for name, kind in new_kinds.items()))
            state.set_data(replace(choice, kinds=kinds_chosen, rater_columns=tuple(sorted(new_columns.items()))))
            st.rerun()


def _on_raters() -> None:
    state.set_raters(st.session_state["pe.w.human"], tuple(st.session_state["pe.w.metrics"]))


def rater_picker(dataset: Dataset) -> tuple[str, tuple[str, ...]]:
    """The human rater and the metrics (none: human only) the other pages work with."""
    human, metrics = state.raters(dataset)
    humans = list(dataset.human_raters or dataset.raters)
    if human not in humans:
        humans.append(human)
    # the widgets show the session's choice (also after the data changed under them)
    st.session_state["pe.w.human"], st.session_state["pe.w.metrics"] = human, list(metrics)
    left, right = st.columns([1, 2])
    left.selectbox("Human rater", humans, key="pe.w.human", on_change=_on_raters)
    right.multiselect(
        "Metrics",
        state.metric_candidates(dataset, human),
        key="pe.w.metrics",
        on_change=_on_raters,
        placeholder="none: human only",
        help="The automatic raters the protocol uses together (several: one posterior); the first is checked on Metric check",
    )
    return state.raters(dataset)


def summary_view(dataset: Dataset, summary: DatasetSummary) -> None:
    """Counts, raters, warnings and the per-pair coverage."""
    columns = st.columns(4)
    columns[0].metric("Systems", len(summary.systems))
    columns[1].metric("Items", f"{summary.items:,}")
    columns[2].metric("Raters", len(summary.raters))
    columns[3].metric("Texts", "yes" if summary.has_texts else "no")
    st.caption("Systems: " + escape_markdown(", ".join(summary.systems)))
    warnings_view(dataset)
    st.subheader("Raters")
    st.dataframe(pd.DataFrame([vars(r) for r in summary.raters]), hide_index=True, width="stretch")
    if summary.pairs is not None:
        st.subheader("Per-pair coverage")
        st.caption("Items per system pair: human outcomes, metric outcomes, both, and metric-only items the protocol can use.")
        st.dataframe(pd.DataFrame(summary.pairs), hide_index=True, width="stretch", height=300)
    if summary.notes:
        with st.expander("How the files were read"):
            st.text("\n".join(summary.notes))


def text_metrics_form(dataset: Dataset, choice: DataChoice) -> None:
    """Compute metrics from the texts (against references or sources) and add them as raters."""
    if not dataset.has_texts or (dataset.references.empty and dataset.sources.empty):
        return
    metrics = ["bleu", "chrf", "ter"] + (["embed"] if cache.learned_metrics_available() else [])
    with st.expander("Compute metrics from the texts"), st.form("pe.w.textmetrics"):
        if "embed" not in metrics:
            st.caption("The embedding metric needs the optional extra (torch, requirements-learned.txt); string metrics only.")
        chosen = st.multiselect("Metrics", metrics, default=["chrf"], key="pe.w.tm_metrics")
        sides = [s for s, frame in (("references", dataset.references), ("sources", dataset.sources)) if not frame.empty]
        against = st.radio("Compare each output with its item's", sides, horizontal=True, key="pe.w.tm_against")
        if st.form_submit_button("Compute and add as raters") and chosen:
            with user_errors("Computing the metrics"):
                computed = cache.text_metric_file(choice, tuple(cast(list[MetricName], chosen)), cast(Against, against))
                state.set_data(replace(choice, computed=(*choice.computed, computed)), keep_choices=True)
            st.rerun()


def warnings_view(dataset: Dataset) -> None:
    """The data's warnings, one line per kind and file with a count (259 alike read as one line)."""
    warnings = dataset.report.warnings
    if not warnings:
        return
    groups = grouped_warnings(dataset)
    lines = "\n".join(f"- {escape_markdown(g.line())}" for g in groups)
    st.warning(f"{len(warnings):,} warning(s) about the data, {len(groups)} kind(s):\n{lines}")


DIRECTION_WORDS: dict[Direction, str] = {"higher": "higher is better", "lower": "lower is better"}


def _on_roles(names: tuple[str, ...]) -> None:
    edited = st.session_state["pe.w.roles"]["edited_rows"]
    roles = {w: r for r, w in ROLE_WORDS.items()}
    directions = {w: d for d, w in DIRECTION_WORDS.items()}
    role_edits = dict(st.session_state.get(state.ROLE_EDITS) or {})
    direction_edits = dict(st.session_state.get(state.DIRECTION_EDITS) or {})
    for row, change in edited.items():
        if "role" in change:
            role_edits[names[int(row)]] = roles[change["role"]]
        if "better" in change:
            direction_edits[names[int(row)]] = directions[change["better"]]
    st.session_state[state.ROLE_EDITS], st.session_state[state.DIRECTION_EDITS] = role_edits, direction_edits


def _add_negated(choice: DataChoice, raters: tuple[str, ...]) -> None:
    state.set_data(replace(choice, computed=(*choice.computed, negated_copy(cache.dataset(choice), raters))), keep_choices=True)


def rater_roles_view(dataset: Dataset, choice: DataChoice, human: str, metrics: tuple[str, ...]) -> None:
    """Each rater's role (editable), direction, scale, criterion, its paired human rater and what
    looks wrong; and, when the data hold no metric, that the study runs human-only."""
    profiles = cache.rater_profiles(choice)
    roles: dict[str, RaterRole] = state.rater_roles(dataset)
    directions = state.rater_directions(dataset)
    st.subheader("What each rater is")
    if not metrics and not state.metric_candidates(dataset, human):
        st.info("These data hold no metric or LLM judge: studies run human-only (every judgment is a paid human one).")
    rows = [
        {"rater": p.name, "role": ROLE_WORDS[roles[p.name]], "better": DIRECTION_WORDS[directions[p.name]], "criterion": p.criterion or "",
         "scale": "" if p.low is None else f"{p.low:g} to {p.high:g}", "paired human": p.paired_human or "",
         "scores": p.scores, "check": "; ".join(p.flags)}
        for p in profiles
    ]  # fmt: skip
    fixed = [k for k in rows[0] if k not in ("role", "better")] if rows else True
    st.data_editor(
        pd.DataFrame(rows), hide_index=True, width="stretch", key="pe.w.roles", disabled=fixed,
        column_config={
            "role": st.column_config.SelectboxColumn("role", options=list(ROLE_WORDS.values()), required=True),
            "better": st.column_config.SelectboxColumn("better", options=list(DIRECTION_WORDS.values()), required=True),
        },
        on_change=_on_roles, args=(tuple(p.name for p in profiles),),
    )  # fmt: skip
    lower = tuple(r for r, d in directions.items() if d == "lower" and NEGATED_PREFIX + r not in directions)
    if lower:
        st.button(
            f"Add a higher-is-better copy of {', '.join(lower)} (scores negated, named {NEGATED_PREFIX}…)", key="pe_negate",
            on_click=_add_negated, args=(choice, lower),
            help="prefeval takes higher as better: a lower-is-better rater is offered as a metric only as its negated copy",
        )  # fmt: skip
    st.caption(
        "Roles come from the names (human:<criterion> is the trusted human score, human:<criterion>:<who> one annotator, "
        "a model's name an LLM judge, anything else a metric); change a role here if a name misleads. Annotators are never "
        "offered as metrics. A judge is paired with the human rater of its criterion."
    )
