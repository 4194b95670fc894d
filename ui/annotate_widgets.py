"""Widgets of the Annotate page: what to judge next (a rating of one output, or a comparison of
two), request files, the store's judgments with attribution, and the annotators' agreement."""

from __future__ import annotations

import math
from itertools import combinations

import pandas as pd
import streamlit as st

from prefeval_core.errors import DataError
from prefeval_core.vocabulary.tasks import ComparisonTask, RatingTask, Task
from prefeval_core.workflow import StudySetup
from prefeval_core.workflow.annotators import PositionBias, agreement_rows, annotator_report, default_metric, why_no_agreement
from prefeval_core.workflow.annotators import study_judgments as stored_study_judgments  # the page's own takes a record
from prefeval_core.workflow.datasets import Dataset
from prefeval_core.workflow.judgments import (
    Choice,
    ExportFormat,
    Judgment,
    JudgmentKind,
    StudyRecord,
    export_judgments,
    import_judged_requests,
    record_comparison,
    record_rating,
    shown_sides,
    undo_last,
)
from prefeval_core.workflow.labelstudio import import_label_studio_export, label_studio_project
from prefeval_core.workflow.queue import next_for
from prefeval_core.workflow.request_files import RatingScale, blind_key, fill_in_instructions
from prefeval_core.workflow.roles import AccessError, invitations
from prefeval_core.workflow.session import DataChoice
from prefeval_core.workflow.studies import study_store
from ui import cache, state
from ui.errors import escape_markdown, show_problems
from ui.page import flash
from ui.roles import REFUSED

BUTTONS: dict[Choice, tuple[str, str, str]] = {
    "left": ("pe_ann_left", "A better", "A"),
    "equal": ("pe_ann_equal", "Equal", "E"),
    "right": ("pe_ann_right", "B better", "B"),
    "both_bad": ("pe_ann_bad", "Both bad", "X"),
}
"""Per choice: the button's key, its label and its keyboard shortcut (Streamlit shows the key on the
button and ignores it while the user types in a text field)."""


def tasks_for_pair(dataset: Dataset, system_a: str, system_b: str) -> list[Task]:
    """Every item on which both systems have an output, sorted by item (free annotation)."""
    texts = dataset.texts
    items = set(texts.loc[texts["system"] == system_a, "item_id"]) & set(texts.loc[texts["system"] == system_b, "item_id"])
    return [ComparisonTask(str(i), system_a, system_b) for i in sorted(items)]


def pair_picker(dataset: Dataset) -> tuple[str, str]:
    systems = sorted(set(dataset.texts["system"]))
    pairs = list(combinations(systems, 2))
    return st.selectbox("Pair to annotate", pairs, format_func=lambda p: f"{p[0]} vs {p[1]}", key="pe.w.annotate_pair")


LEAD_NAME = "lead"
"""The name the lead's judgments carry until the lead names themself."""


def _on_annotator() -> None:
    st.session_state[state.ANNOTATOR] = st.session_state["pe.w.annotator"].strip()


def annotator_input(study: StudyRecord | None) -> str:
    """Who the lead annotates as on this page: a name kept for the session (``lead`` if none;
    never in the address, which gives nobody an identity: annotators come in through their
    links). Warns when the name is that of an annotator invited to ``study``."""
    st.text_input(
        "Annotator name", value=st.session_state[state.ANNOTATOR], key="pe.w.annotator", on_change=_on_annotator,
        placeholder=LEAD_NAME, help="You annotate as the lead under this name, kept while this tab is open (stored with each "
        "judgment; progress counts this name's). Annotators judge through their personal links (Team tab).",
    )  # fmt: skip
    name = st.session_state[state.ANNOTATOR] or LEAD_NAME
    if study is not None and name in {i.annotator for i in invitations(study_store(), study.id)}:
        st.warning(f"{escape_markdown(name)} is an invited annotator: what you judge here counts as theirs.")
    return name


def study_judgments(dataset_key: str, study: StudyRecord | None) -> list[Judgment]:
    """The judgments that count for the study (or, without one, for the data), both kinds."""
    return stored_study_judgments(study_store(), dataset_key, None if study is None else study.id)


def progress(tasks: list[Task], judgments: list[Judgment], annotator: str, per_item: int) -> None:
    """How far the request is: this annotator's judgments and the complete tasks."""
    mine = {j.task for j in judgments if j.annotator == annotator and j.undone_at is None}
    judged_by: dict[Task, set[str]] = {}
    for judgment in judgments:
        judged_by.setdefault(judgment.task, set()).add(judgment.annotator)
    done = sum(task in mine for task in tasks)
    complete = sum(len(judged_by.get(task, ())) >= per_item for task in tasks)
    text = f"{done} of {len(tasks)} judged by {escape_markdown(annotator)}"
    if per_item > 1:
        text += f"; {complete} of {len(tasks)} complete ({per_item} annotators each)"
    st.progress(done / len(tasks), text=text)


def choose_task(tasks: list[Task], judgments: list[Judgment], annotator: str, per_item: int, seed: int) -> Task | None:
    """The next task for this annotator in their own queue (pairs or systems interleaved, shuffled
    per annotator; never one they judged; each task to ``per_item`` annotators)."""
    return next_for(tasks, judgments, annotator, per_item, seed)


def criterion_header(criterion: str | None, guidelines: str = "") -> None:
    """What the annotator judges, and the lead's guidelines (Markdown, as the lead wrote them)."""
    if criterion is None:
        return
    st.markdown(f"**You judge: {escape_markdown(criterion)}**")
    guidelines_box(guidelines)


def guidelines_box(guidelines: str) -> None:
    """The lead's guidelines (Markdown, as the lead wrote them), closed until opened; nothing when there are none."""
    if guidelines.strip():
        with st.expander("Guidelines", expanded=False):
            st.markdown(guidelines)


def _text(frame: pd.DataFrame, item_id: str, system: str | None = None) -> str:
    rows = frame[frame["item_id"] == item_id] if system is None else frame[(frame["item_id"] == item_id) & (frame["system"] == system)]
    column = "source" if system is None else "output"
    return str(rows[column].iloc[0]) if len(rows) else ""


SOURCE_HEIGHT = 360
"""Height (px) of the scrolling source box: with the output beside it and the buttons under the
output, the whole task fits a 1280x800 screen."""


def _source(dataset: Dataset, item_id: str, *, collapsed: bool = False) -> None:
    """The item's source in a scrolling box (``collapsed``: in an expander, closed), with its id in small print."""
    source = _text(dataset.sources, item_id) if not dataset.sources.empty else ""
    if not source:
        st.caption(f"Item {escape_markdown(item_id)}")
        return
    box = st.expander("Source / context", expanded=False) if collapsed else st.container()
    with box:
        st.caption(f"Source / context · item {escape_markdown(item_id)}")
        with st.container(height=SOURCE_HEIGHT if len(source) > 600 else "content", border=True):
            st.markdown(escape_markdown(source))


def _output(text: str, label: str) -> None:
    with st.container(border=True, height=SOURCE_HEIGHT - 120 if len(text) > 700 else "content"):
        st.markdown(f"**{label}**")
        st.markdown(escape_markdown(text) or "*(no output)*")


def _refused(error: AccessError) -> None:
    """A judgment through a link the lead withdrew since the page was drawn: nothing was stored;
    the next run opens the refusal page with this message (:func:`ui.roles.resolve` checks the link again)."""
    st.session_state[REFUSED] = error.problems[0].message


def _record_comparison(
    dataset_key: str,
    study_id: int | None,
    task: ComparisonTask,
    choice: Choice,
    left: str,
    annotator: str,
    criterion: str | None,
    link: str | None = None,
) -> None:
    try:
        record_comparison(study_store(), dataset_key, task, choice, left, annotator, study_id=study_id, criterion=criterion, link=link)
    except AccessError as error:
        _refused(error)


def _record_rating(
    dataset_key: str, study_id: int | None, task: RatingTask, score: float, annotator: str, criterion: str | None, link: str | None = None
) -> None:
    try:
        record_rating(study_store(), dataset_key, task, score, annotator, study_id=study_id, criterion=criterion, link=link)
    except AccessError as error:
        _refused(error)


def _undo(dataset_key: str, study_id: int | None, annotator: str, kind: JudgmentKind, link: str | None = None) -> None:
    try:
        undone = undo_last(study_store(), dataset_key, annotator, kind, study_id=study_id, link=link)
    except AccessError as error:
        _refused(error)
        return
    flash(f"Undid {annotator}'s judgment of item {undone.item_id}." if undone else "Nothing to undo.")


def compare_one(
    dataset: Dataset,
    choice: DataChoice,
    study_id: int | None,
    task: ComparisonTask,
    annotator: str,
    criterion: str | None = None,
    link: str | None = None,
) -> None:
    """The source, the two outputs in seeded random left/right order, the question (with the
    study's criterion), the buttons and shortcuts. ``link``: the token of the annotator link the
    page was opened with (checked again as each judgment is stored; ``None``: the lead's page)."""
    left, right = shown_sides(st.session_state[state.ANNOTATION_SEED], choice.key, task)
    _source(dataset, task.item_id, collapsed=True)  # two outputs side by side: the source opens on demand
    columns = st.columns(2)
    for column, label, system in ((columns[0], "Output A", left), (columns[1], "Output B", right)):
        with column:
            _output(_text(dataset.texts, task.item_id, system), label)
    about = "" if criterion is None else f" on {escape_markdown(criterion)}"
    st.caption(f"Which output is better{about}?")
    buttons = st.columns(5)
    for column, (option, (key, label, shortcut)) in zip(buttons, BUTTONS.items(), strict=False):
        args = (choice.key, study_id, task, option, left, annotator, criterion, link)
        column.button(label, key=key, on_click=_record_comparison, args=args, width="stretch", shortcut=shortcut)
    undo = (choice.key, study_id, annotator, "comparison", link)
    buttons[4].button("Undo last", key="pe_ann_undo", on_click=_undo, args=undo, width="stretch")


def rate_one(
    dataset: Dataset,
    choice: DataChoice,
    study_id: int | None,
    task: RatingTask,
    annotator: str,
    scale: RatingScale,
    criterion: str | None = None,
    link: str | None = None,
) -> None:
    """The source, one output, the question (with the study's criterion), and the study's scale:
    a button per level (keyboard digits) or a number. The source and the output stand side by
    side, the buttons right under the output. ``link``: as for :func:`compare_one`."""
    source_side, output_side = st.columns([1, 1]) if not dataset.sources.empty else (st.container(), st.container())
    with source_side:
        _source(dataset, task.item_id)
    with output_side:
        _output(_text(dataset.texts, task.item_id, task.system), "Output")
        what = "this output" if criterion is None else f"the {escape_markdown(criterion)} of this output"
        st.caption(f"Rate {what} from {escape_markdown(scale.describe())}.")
        if scale.levels is not None:
            _level_buttons(choice, study_id, task, annotator, scale.levels, criterion, link)
            return
        with st.form("pe.w.rate"):
            score = st.number_input("Score", scale.low, scale.high, (scale.low + scale.high) / 2, key="pe.w.score")
            if st.form_submit_button("Store the rating"):
                _record_rating(choice.key, study_id, task, float(score), annotator, criterion, link)
                st.rerun()
        st.button("Undo last", key="pe_ann_undo", on_click=_undo, args=(choice.key, study_id, annotator, "rating", link))


def _level_buttons(
    choice: DataChoice,
    study_id: int | None,
    task: RatingTask,
    annotator: str,
    levels: tuple[float, ...],
    criterion: str | None,
    link: str | None = None,
) -> None:
    """A button per level with its keyboard digit. Streamlit draws a button's shortcut beside its
    label, so a level whose digit is its own shortcut is labelled by the shortcut alone (a
    zero-width space as label): "1", not "1 1"."""
    buttons = st.columns(len(levels) + 1)
    for digit, (column, level) in enumerate(zip(buttons, levels, strict=False), start=1):
        shortcut = str(digit % 10) if len(levels) <= 10 else None
        label = f"{level:g}"
        args = (choice.key, study_id, task, level, annotator, criterion, link)
        column.button(
            ZERO_WIDTH if label == shortcut else label, key=f"pe_rate_{digit}", on_click=_record_rating, args=args,
            width="stretch", shortcut=shortcut, help=f"rate {label} (key {shortcut})" if shortcut else f"rate {label}",
        )  # fmt: skip
    undo = (choice.key, study_id, annotator, "rating", link)
    buttons[-1].button("Undo", key="pe_ann_undo", on_click=_undo, args=undo, width="stretch")


ZERO_WIDTH = "\u200b"


def _on_import(dataset_key: str, study_id: int | None, annotator: str, systems: tuple[str, ...], scale: RatingScale | None) -> None:
    upload = st.session_state.get("pe.w.annotated")
    if upload is None:
        return
    try:
        result = import_judged_requests(
            study_store(), upload.name, upload.getvalue(), dataset_key, systems=systems, scale=scale, annotator=annotator, study_id=study_id
        )
    except DataError as error:
        st.session_state["pe.import_problems"] = error.problems
        return
    flash(f"Imported {result.added} judgments from {upload.name} ({result.already_there} were already stored).")


def _with_code(text: str) -> str:
    """``text`` as Markdown: its code spans (between backticks) kept, since a code span shows its
    text as written and an escape in it would show as a backslash; the rest escaped
    (:func:`~ui.errors.escape_markdown`). An unpaired backtick: all of it escaped."""
    parts = text.split("`")
    if len(parts) % 2 == 0:
        return escape_markdown(text)
    return "`".join(part if k % 2 else escape_markdown(part) for k, part in enumerate(parts))


def request_files(
    dataset: Dataset,
    choice: DataChoice,
    study_id: int | None,
    tasks: list[Task],
    annotator: str,
    scale: RatingScale | None,
    criterion: str | None = None,
) -> None:
    """Download what is left to judge; upload it back once judged (the instructions name ``criterion``)."""
    secret = blind_key(None, choice.key, study_id)
    files = cache.request_files(choice, tuple(tasks), study_id, st.session_state[state.ANNOTATION_SEED], secret)
    how = "Download, fill in, then upload the file here. " + fill_in_instructions(scale, criterion)
    left, right = st.columns(2)
    left.download_button("Requests as CSV", files["csv"], "prefeval-requests.csv", "text/csv", key="pe.w.req_csv")
    right.download_button("Requests as JSONL", files["jsonl"], "prefeval-requests.jsonl", "application/jsonl", key="pe.w.req_jsonl")
    st.caption(_with_code(how))
    st.file_uploader(
        "Judged request file", type=["csv", "tsv", "jsonl", "json", "gz"], key="pe.w.annotated",
        on_change=_on_import, args=(choice.key, study_id, annotator, dataset.systems, scale),
    )  # fmt: skip
    problems = st.session_state.pop("pe.import_problems", None)
    if problems:
        show_problems(problems, "The judged file could not be imported")
    label_studio_files(dataset, choice, study_id, tasks, scale, criterion)


def _on_label_studio_import(dataset_key: str, study_id: int | None, systems: tuple[str, ...], scale: RatingScale | None) -> None:
    upload = st.session_state.get("pe.w.ls_export")
    if upload is None:
        return
    try:
        imported = import_label_studio_export(
            study_store(), upload.name, upload.getvalue(), dataset_key, study_id=study_id, systems=systems, scale=scale
        )
    except DataError as error:
        st.session_state["pe.ls_problems"] = error.problems
        return
    result, loaded = imported.stored, imported.loaded
    flash(
        f"Imported {result.added} judgments from the Label Studio export {upload.name} ({result.already_there} were already "
        f"stored, {result.replaced} earlier answers replaced by their edits; {loaded.unanswered} tasks not judged yet, "
        f"{loaded.skipped} annotations skipped)."
    )


def label_studio_files(
    dataset: Dataset, choice: DataChoice, study_id: int | None, tasks: list[Task], scale: RatingScale | None, criterion: str | None = None
) -> None:
    """The same requests as a Label Studio project (tasks and labeling config, its heading naming ``criterion``); its
    JSON export uploaded back."""
    st.markdown("**Label Studio**")
    seed = st.session_state[state.ANNOTATION_SEED]
    project = label_studio_project(study_store(), tasks, dataset, choice.key, scale, study_id=study_id, seed=seed, criterion=criterion)
    left, right = st.columns(2)
    left.download_button(
        "Label Studio tasks (JSON)", project.tasks_json(), "prefeval-labelstudio-tasks.json", "application/json", key="pe.w.ls_tasks"
    )
    right.download_button(
        "Label Studio labeling config (XML)", project.config, "prefeval-labelstudio-config.xml", "application/xml", key="pe.w.ls_config"
    )
    st.caption(
        "In Label Studio: create a project, paste the labeling config under Settings → Labeling Interface → Code, import the "
        "tasks file, annotate; then export the project as JSON and upload the export here."
    )
    st.file_uploader(
        "Label Studio export (JSON)", type=["json", "gz"], key="pe.w.ls_export",
        on_change=_on_label_studio_import, args=(choice.key, study_id, dataset.systems, scale),
    )  # fmt: skip
    problems = st.session_state.pop("pe.ls_problems", None)
    if problems:
        show_problems(problems, "The Label Studio export could not be imported")


def store_view(dataset: Dataset, choice: DataChoice, study: StudyRecord | None, setup: StudySetup | None) -> None:
    """What the store holds for this data (and study), its export with attribution, and agreement
    (with the metric the study uses, or another the data holds)."""
    judgments = study_judgments(choice.key, study)
    where = f"study #{study.id}" if study is not None else "this data"
    st.caption(f"{len(judgments)} judgments stored for {where} in {escape_markdown(study_store().where)}.")
    if not judgments:
        return
    study_id = None if study is None else study.id
    columns = st.columns(3)
    formats: tuple[ExportFormat, ...] = ("csv", "jsonl", "parquet")
    for column, fmt, mime in zip(columns, formats, ("text/csv", "application/jsonl", "application/octet-stream"), strict=True):
        column.download_button(
            f"All judgments as {fmt.upper()}", export_judgments(study_store(), fmt, choice.key, study_id=study_id),
            f"prefeval-judgments.{fmt}", mime, key=f"pe.w.export_{fmt}",
        )  # fmt: skip
    agreement_view(judgments, dataset, choice, setup)
    frame = pd.DataFrame([{k: getattr(j, k, None) for k in ("created_at", "annotator", "item_id", "kind")} for j in judgments[-200:]])
    st.dataframe(frame.iloc[::-1], hide_index=True, width="stretch", height=240)


def agreement_view(judgments: list[Judgment], dataset: Dataset, choice: DataChoice, setup: StudySetup | None) -> None:
    """Krippendorff's alpha (and Cohen's kappa for two annotators) per study and per annotator,
    each annotator's agreement with a metric, and each annotator's position bias."""
    metric = None
    if dataset.metric_raters:
        default = default_metric(() if setup is None else setup.metrics, dataset)
        options = list(dataset.metric_raters)
        metric = st.selectbox(
            "Agreement with the metric", options, index=options.index(default) if default in options else 0, key="pe.w.agree_metric",
            help="Each annotator's agreement with this metric: ordinal alpha on comparisons, Kendall's tau-b on ratings.",
        )  # fmt: skip
    eps_metric = 0.0 if setup is None else setup.eps_metric
    report = annotator_report(judgments, None if metric is None else cache.metric_judgments(choice, metric, eps_metric))
    if report.comparisons is None and report.ratings is None:
        st.caption("No agreement yet: one annotator so far; agreement needs two or more judging the same items.")
    for name, agreement in (("comparisons", report.comparisons), ("ratings", report.ratings)):
        if agreement is None:
            continue
        missing = why_no_agreement(agreement)
        kappa = "" if agreement.cohen_kappa is None or math.isnan(agreement.cohen_kappa) else f", Cohen's kappa {agreement.cohen_kappa:.3f}"
        alpha = f"Krippendorff's alpha {agreement.alpha:.3f}{kappa}" if missing is None else escape_markdown(missing)
        st.markdown(f"**Agreement on {name}:** {alpha}")
        st.dataframe(pd.DataFrame(agreement_rows(agreement, metric)), hide_index=True, width="stretch")
    if report.sides:
        position_view(report.sides)


def position_view(sides: tuple[PositionBias, ...]) -> None:
    """Each annotator's share of decisive comparisons won by the left output, and the test of no position bias."""
    rows = [
        {"annotator": b.annotator, "decisive judgments": b.decisive, "left output won": b.left_share, "p (no position bias)": b.p_value}
        for b in sides
    ]
    st.markdown("**Which side wins:** with no position bias the winner does not depend on the side it was shown on.")
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    st.caption(
        "Cochran–Mantel–Haenszel test over the pairs (prefeval_core/annotation/position_bias.py); a small p says the annotator "
        "tends to pick one side whatever it shows."
    )
