"""Label Studio projects: a round's requests out as tasks and a labeling config, Label Studio's JSON
export back in as judgments.

**Export.** :func:`comparison_project` and :func:`rating_project` make a
:class:`LabelStudioProject`: the labeling config (XML; paste it under *Settings -> Labeling
Interface -> Code*) and the tasks (a JSON list of ``{"data": {...}}``; import it as a file). Each
task's ``data`` holds the texts the config shows under keys of prefeval's own
(:data:`DATA_KEYS`: ``prefeval_source``, ``prefeval_output_a`` and ``prefeval_output_b``, or
``prefeval_output``; Label Studio's data manager adds fields of its own to every task, ``source``
among them, which holds the whole task as JSON) and a ``prefeval`` object: ``kind``, ``item_id``,
its opaque token ``request_id`` and the ``digest`` of what the task shows, both keyed with the
study's secret (:mod:`prefeval_core.annotation.blind`). Label Studio keeps ``data`` as it is in its export.

**Blind** (:mod:`prefeval_core.annotation.blind`). No system name, data key or study id is in the task data
(annotators who can open Label Studio's Data Manager see the data), the side shown as A comes from
the keyed coin and is named by the token only, and the tasks go out in blind order. The import
finds the task and side again from the token among the data's systems, and refuses a task whose
texts or token were changed (the digest). Files exported by prefeval before this are read as
well: their ``prefeval`` object names ``dataset``, ``study_id``, an unkeyed ``request_id`` and
``left``, or (older still) ``system_a``, ``system_b`` and ``left_system``, or ``system``.

* Comparisons (:data:`PREFERENCE`): a ``Choices`` control ``preference`` with *A better*,
  *Equal*, *B better*, *Both bad* (hotkeys a, e, b, x as in the app); *Both bad* is a tie
  labelled ``both_bad``.
* Ratings (:data:`SCORE`), on the study's scale (:mod:`prefeval_core.annotation.rating_scale`): a
  ``Rating`` control (stars) for a 1..N scale; a ``Choices`` control with one choice per level
  for another discrete scale; a ``Number`` control (min, max) for a continuous one **(choice)**.

**Import** (:func:`read_label_studio_export`) reads Label Studio's *JSON* export (a list of tasks
with ``id``, ``data`` and ``annotations``; Label Studio's task format documentation): each
annotation that is not cancelled and has a result of the prefeval control becomes a
:class:`~prefeval_core.store.Comparison` or :class:`~prefeval_core.store.Rating` with
``origin="import"`` (so importing a file twice stores each judgment once), the annotator named by
the e-mail of the user ``completed_by`` (from Label Studio's users, where the import is given them,
or where the export gives the user as an object; else ``labelstudio:<user id>``) and the time
of the answer as it stands (the annotation's ``updated_at``, else its ``created_at``) as its time,
so that an answer edited in Label Studio is newer than the one read before (the store keeps the
newest per request and annotator). Several annotations of one task by one
annotator with different answers are refused, or with ``latest_wins`` the last one updated counts
(Label Studio keeps an annotator's edits of one annotation as updates); the same answer twice is one.
Tasks without annotations are not judged yet. A task that prefeval did not export for this data
and study (no ``prefeval`` object, another dataset or study, a token or request id that is none
of theirs, a digest that does not match the texts, a system the data does not have), an answer
that is not on the config's choices or the scale, and a file that is not a JSON export are errors
naming the file, the task's row and id.
"""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final, Literal

import numpy as np
import pandas as pd

from prefeval_core.annotation.blind import SIDES, BlindKey, BlindTasks, Side, blind_order, left_system_of, shown_side
from prefeval_core.annotation.left_right import Choice, outcome_from_choice
from prefeval_core.annotation.rating_scale import RatingScale
from prefeval_core.annotation.requests import rating_request_frame, request_frame
from prefeval_core.data.reading import read_table_bytes
from prefeval_core.errors import MAX_PROBLEMS_PER_KIND, DataError, MissingColumnError, Problem, raise_if_errors
from prefeval_core.protocol.table import StudyTable
from prefeval_core.store.records import Comparison, ComparisonLabel, Judgment, JudgmentKind, Rating, utc_now
from prefeval_core.vocabulary.outcomes import canonical_pair
from prefeval_core.vocabulary.tasks import ComparisonTask, RatingTask, Task

PREFERENCE: Final = "preference"
"""Name of the comparison config's ``Choices`` control."""
SCORE: Final = "score"
"""Name of the rating config's control (``Rating``, ``Choices`` or ``Number``)."""
CHOICE_LABELS: Final[dict[Choice, str]] = {"left": "A better", "equal": "Equal", "right": "B better", "both_bad": "Both bad"}
"""The comparison config's choices (A is the output shown on the left)."""
_HOTKEYS: Final[dict[Choice, str]] = {"left": "a", "equal": "e", "right": "b", "both_bad": "x"}
RatingControl = Literal["rating", "choices", "number"]
"""How a rating config asks for the score: stars (1..N), one choice per level, or a number."""
ANNOTATOR_PREFIX: Final = "labelstudio:"
DATA_KEYS: Final = {
    "source": "prefeval_source",
    "output_a": "prefeval_output_a",
    "output_b": "prefeval_output_b",
    "output": "prefeval_output",
}
"""The task data key of each text shown (none of Label Studio's own fields, such as ``source``)."""


@dataclass(frozen=True)
class LabelStudioProject:
    """A round's requests as a Label Studio project: ``config`` (labeling config XML) and
    ``tasks`` (each ``{"data": {...}}``, module docstring)."""

    config: str
    tasks: tuple[dict[str, Any], ...]

    def tasks_json(self) -> bytes:
        """The tasks as the JSON file Label Studio imports."""
        return json.dumps(list(self.tasks), ensure_ascii=False, indent=1).encode("utf-8")


def _task(key: BlindKey, blind: BlindTasks, task: Task, side: Side | None, texts: dict[str, str]) -> dict[str, Any]:
    """One Label Studio task: the texts under :data:`DATA_KEYS`, the token and the digest."""
    token = blind.token(task, side)
    digest = key.digest(token, task.item_id, list(texts.values()))
    meta = {"kind": "comparison" if side is not None else "rating", "item_id": task.item_id, "request_id": token, "digest": digest}
    return {"data": {DATA_KEYS[k]: v for k, v in texts.items()} | {"prefeval": meta}}


def comparison_project(
    tasks: Sequence[ComparisonTask],
    dataset: str,
    *,
    key: BlindKey,
    texts: pd.DataFrame | None = None,
    sources: pd.DataFrame | None = None,
    study_id: int | None = None,
    seed: int = 0,
    criterion: str | None = None,
) -> LabelStudioProject:
    """The comparisons ``tasks`` of ``dataset`` (its key) as a Label Studio project keyed with
    the scope's ``key``, outputs in the keyed left/right order of ``seed``; the question asks
    about ``criterion`` (e.g. "relevance") where given."""
    blind = BlindTasks.of(dataset, study_id, (), key)
    coin = key.coin_seed(seed)
    frame = pd.DataFrame([vars(t) for t in tasks], columns=["item_id", "system_a", "system_b"])
    rows = request_frame(frame, texts, sources)
    data: list[dict[str, Any]] = []
    columns = ["item_id", "system_a", "system_b", "source", "output_a", "output_b"]
    for item, a, b, source, output_a, output_b in rows[columns].itertuples(index=False):
        task = ComparisonTask(item, a, b)
        side = shown_side(coin, dataset, task)
        shown = (output_a, output_b) if side == "first" else (output_b, output_a)
        data.append(_task(key, blind, task, side, {"source": source, "output_a": shown[0], "output_b": shown[1]}))
    return LabelStudioProject(_comparison_config(criterion), _in_blind_order(data))


def rating_project(
    tasks: Sequence[RatingTask],
    dataset: str,
    scale: RatingScale,
    *,
    key: BlindKey,
    texts: pd.DataFrame | None = None,
    sources: pd.DataFrame | None = None,
    study_id: int | None = None,
    criterion: str | None = None,
) -> LabelStudioProject:
    """The ratings ``tasks`` of ``dataset`` (its key) as a Label Studio project on ``scale``,
    keyed with the scope's ``key``; the heading asks about ``criterion`` where given."""
    blind = BlindTasks.of(dataset, study_id, (), key)
    frame = pd.DataFrame([vars(t) for t in tasks], columns=["item_id", "system"])
    rows = rating_request_frame(frame, texts, sources)
    data = [
        _task(key, blind, RatingTask(item, system), None, {"source": source, "output": output})
        for item, system, source, output in rows[["item_id", "system", "source", "output"]].itertuples(index=False)
    ]
    return LabelStudioProject(_rating_config(scale, criterion), _in_blind_order(data))


def _in_blind_order(tasks: list[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    metas = [task["data"]["prefeval"] for task in tasks]
    order = blind_order([m["item_id"] for m in metas], [m["request_id"] for m in metas])
    return tuple(tasks[k] for k in order)


def rating_control(scale: RatingScale) -> RatingControl:
    """Stars for a 1..N scale (N <= 10), one choice per level for another discrete scale, else a number."""
    if scale.levels is None:
        return "number"
    return "rating" if scale.low == 1 and len(scale.levels) <= 10 else "choices"


def _view(*children: ET.Element, style: str | None = None) -> ET.Element:
    view = ET.Element("View", {"style": style} if style else {})
    view.extend(children)
    return view


def _element(tag: str, **attributes: str) -> ET.Element:
    return ET.Element(tag, attributes)


def _xml(root: ET.Element) -> str:
    ET.indent(root)
    return ET.tostring(root, encoding="unicode") + "\n"


def labeling_config(scale: RatingScale | None, criterion: str | None) -> str:
    """The labeling config of a comparison study (``scale`` None) or of ratings on ``scale``, asking about ``criterion``."""
    return _comparison_config(criterion) if scale is None else _rating_config(scale, criterion)


def _source_view() -> ET.Element:
    return _view(_element("Header", value="Source"), _element("Text", name="source", value="$" + DATA_KEYS["source"]))


def _comparison_config(criterion: str | None) -> str:
    choices = _element("Choices", name=PREFERENCE, toName="output_a", choice="single-radio", required="true", showInline="true")
    choices.extend(_element("Choice", value=label, hotkey=_HOTKEYS[c]) for c, label in CHOICE_LABELS.items())
    column = "flex: 1; padding: 0.5em; border: 1px solid #ddd"
    outputs = _view(
        _view(_element("Header", value="Output A"), _element("Text", name="output_a", value="$" + DATA_KEYS["output_a"]), style=column),
        _view(_element("Header", value="Output B"), _element("Text", name="output_b", value="$" + DATA_KEYS["output_b"]), style=column),
        style="display: flex; gap: 1em",
    )
    question = f"Which output is better in {criterion}?" if criterion else "Which output is better?"
    return _xml(_view(_source_view(), outputs, _element("Header", value=question), choices))


def _rating_config(scale: RatingScale, criterion: str | None) -> str:
    control = rating_control(scale)
    if control == "rating":
        assert scale.levels is not None
        score = _element("Rating", name=SCORE, toName="output", maxRating=str(len(scale.levels)), required="true")
    elif control == "choices":
        assert scale.levels is not None
        score = _element("Choices", name=SCORE, toName="output", choice="single-radio", required="true", showInline="true")
        for level in scale.levels:  # a level that is one digit is its own hotkey
            text = f"{level:g}"
            score.append(_element("Choice", value=text, hotkey=text) if len(text) == 1 else _element("Choice", value=text))
    else:
        score = _element("Number", name=SCORE, toName="output", min=f"{scale.low:g}", max=f"{scale.high:g}", step="0.1", required="true")
    output = _view(_element("Header", value="Output"), _element("Text", name="output", value="$" + DATA_KEYS["output"]))
    heading = f"Rate the {criterion} of this output from {_range(scale)}" if criterion else f"Rate the output: {scale.describe()}"
    return _xml(_view(_source_view(), output, _element("Header", value=heading), score))


def _range(scale: RatingScale) -> str:
    return f"{scale.low:g} (worst) to {scale.high:g} (best)"


# --- import ------------------------------------------------------------------------------


def study_tasks(table: StudyTable) -> frozenset[Task]:
    """Every task a study on ``table`` can request (its pool): the tasks an import for the study may answer."""
    if table.grid is not None:
        systems, items = np.nonzero(table.grid.requestable)
        return frozenset(RatingTask(table.items[i], table.systems[s]) for s, i in zip(systems, items, strict=True))
    rows = np.flatnonzero(table.requestable)
    return frozenset(ComparisonTask(table.items[table.row_item[r]], *table.pairs[table.row_pair[r]]) for r in rows)


def tasks_in_project(
    task_data: Iterable[Any], dataset: str, *, systems: Collection[str], study_id: int | None, key: BlindKey
) -> frozenset[Task]:
    """The tasks of this study (``dataset``, ``study_id``, keyed with ``key``) that a project
    already holds, from the ``data`` of its tasks (either side shown as A); tasks of anything
    else (another study, store or tool) are left out."""
    blind = BlindTasks.of(dataset, study_id, systems, key)
    found: set[Task] = set()
    for data in task_data:
        meta = data.get("prefeval") if isinstance(data, dict) else None
        if isinstance(meta, dict) and meta.get("kind") in ("comparison", "rating") and isinstance(meta.get("item_id"), str):
            hit = blind.find(meta["kind"], meta["item_id"], meta.get("request_id"))
            if hit is not None:
                found.add(hit[0])
    return frozenset(found)


@dataclass(frozen=True)
class LabelStudioImport:
    """What a Label Studio export held: the ``judgments`` (ready for the store's ``add_many``),
    the ``tasks`` in the file, those not judged yet (``unanswered``) and the annotations
    ``skipped`` (cancelled, without a prefeval result, or replaced by the same annotator's later one)."""

    judgments: tuple[Judgment, ...]
    tasks: int
    unanswered: int
    skipped: int


@dataclass(frozen=True)
class _Context:
    """What an import checks each task against (the arguments of :func:`read_label_studio_export`)."""

    blind: BlindTasks
    scale: RatingScale | None
    known: frozenset[Task] | None
    latest_wins: bool
    users: Mapping[str, str]


class _TaskError(ValueError):
    """What is wrong with one task (turned into a problem naming the file, row and task id)."""

    def __init__(self, message: str, column: str = "data"):
        super().__init__(message)
        self.column = column


def read_label_studio_export(
    name: str,
    data: bytes,
    dataset: str,
    *,
    systems: Collection[str],
    study_id: int | None = None,
    scale: RatingScale | None = None,
    known: Collection[Task] | None = None,
    key: BlindKey | None = None,
    latest_wins: bool = False,
    users: Mapping[str, str] | None = None,
) -> LabelStudioImport:
    """The judgments in Label Studio's JSON export ``data`` of a project prefeval exported
    (module docstring) for ``dataset`` (its key) and ``study_id``.

    Args:
        systems: the dataset's systems: a task is found again among them by its request id
            (one of an older export that names another system is refused).
        scale: the study's rating scale (ratings outside it, or off its levels, are refused);
            needed for rating tasks.
        known: the tasks that may be answered (e.g. :func:`study_tasks`, or only the open
            request); ``None``: any task prefeval exported for this data and study.
        key: the scope's key the tasks were exported with (needed for tasks of this prefeval's
            exports; older exports are read without it).
        latest_wins: of two different answers to one task by one annotator, the one updated
            last counts; without it they are refused (which would count?).
        users: the e-mail of each Label Studio user id (its users API): the annotator's name.

    Raises:
        DataError: not a JSON export, or any task or answer that cannot be taken (each problem
            names the file, the task's row and id).
    """
    raw = read_table_bytes(name, data)
    missing = [c for c in ("data", "annotations") if c not in raw.frame.columns]
    if missing:
        keys = ", ".join(map(repr, raw.frame.columns))
        message = "a Label Studio export needs the key '{}' in every task (export the project as JSON, not JSON-MIN or CSV; found: {})"
        raise MissingColumnError([Problem("error", "missing_column", message.format(m, keys), name, column=m) for m in missing])
    blind = BlindTasks.of(dataset, study_id, systems, key)
    context = _Context(blind, scale, None if known is None else frozenset(known), latest_wins, users or {})
    ids = raw.frame["id"].tolist() if "id" in raw.frame.columns else [""] * len(raw.frame)
    problems: list[Problem] = []
    judgments: list[Judgment] = []
    unanswered = skipped = 0
    for row, (task_id, data_cell, annotations_cell) in enumerate(
        zip(ids, raw.frame["data"], raw.frame["annotations"], strict=True), start=1
    ):
        try:
            taken, dropped = _task_judgments(context, data_cell, annotations_cell)
        except _TaskError as error:
            where = f"task {task_id}: " if task_id else ""
            problems.append(Problem("error", "bad_task", where + str(error), name, row, raw.line_of(row - 1), error.column))
            continue
        judgments += taken
        unanswered += not taken and not dropped
        skipped += dropped
    if len(problems) > MAX_PROBLEMS_PER_KIND:
        more = f"... and {len(problems) - MAX_PROBLEMS_PER_KIND:,} more tasks like these"
        problems = [*problems[:MAX_PROBLEMS_PER_KIND], Problem("error", "bad_task", more, name)]
    raise_if_errors(problems)
    return LabelStudioImport(tuple(judgments), len(raw.frame), unanswered, skipped)


def _json(cell: str, what: str, column: str) -> Any:
    try:
        return json.loads(cell) if cell.strip() else None
    except ValueError:
        raise _TaskError(f"its {what} is not JSON", column) from None


def _task_judgments(context: _Context, data_cell: str, annotations_cell: str) -> tuple[list[Judgment], int]:
    """The judgments of one task and the count of annotations skipped."""
    data = _json(data_cell, "data", "data")
    meta = data.get("prefeval") if isinstance(data, dict) else None
    if not isinstance(meta, dict):
        raise _TaskError("this task was not exported by prefeval (its data has no 'prefeval' object); export the requests again")
    task, left = _exported_task(context, meta, data)
    annotations = _json(annotations_cell, "annotations", "annotations") or []
    if not isinstance(annotations, list):
        raise _TaskError("expected a list of annotations", "annotations")
    latest: dict[str, tuple[str, Judgment, float | Choice]] = {}
    skipped = 0
    for annotation in annotations:
        if not isinstance(annotation, dict):
            raise _TaskError("expected each annotation to be an object", "annotations")
        if annotation.get("was_cancelled") is True:
            skipped += 1
            continue
        answer = _answer(context, task, annotation.get("result"))
        if answer is None:
            skipped += 1
            continue
        annotator = _annotator(annotation.get("completed_by"), context.users)
        created = _time(annotation.get("created_at"))
        updated = _time(annotation.get("updated_at")) or created
        judgment = _judgment(context, task, left, answer, annotator, updated or utc_now())
        if annotator in latest:
            if latest[annotator][2] != answer and not context.latest_wins:
                raise _TaskError(
                    f"two different answers by {annotator}; keep one in Label Studio (or import with --latest-wins)", "annotations"
                )
            skipped += 1
            if latest[annotator][0] > (updated or ""):
                continue
        latest[annotator] = (updated or "", judgment, answer)
    return [judgment for _, judgment, _ in latest.values()], skipped


def _text(meta: dict[str, Any], key: str) -> str:
    value = meta.get(key)
    if not isinstance(value, str) or not value:
        raise _TaskError(f"its 'prefeval' object has no '{key}'; export the requests again")
    return value


def _study_name(study_id: object) -> str:
    return "no study" if study_id is None else f"study #{study_id}"


def _exported_task(context: _Context, meta: dict[str, Any], data: dict[str, Any]) -> tuple[Task, str | None]:
    """The task a prefeval object describes, checked against the data, the study and its token
    (or older request id), and the system shown as A (``None`` for a rating)."""
    item = _text(meta, "item_id")
    kind = meta.get("kind")
    if kind not in ("comparison", "rating"):
        raise _TaskError(f"its 'prefeval' object has the kind {kind!r}; expected 'comparison' or 'rating'")
    if "digest" in meta:
        task, left = _keyed_task(context, meta, data, kind, item)
    else:
        if meta.get("dataset") != context.blind.dataset:
            raise _TaskError(f"exported for the data '{meta.get('dataset')}', not for '{context.blind.dataset}'")
        if meta.get("study_id") != context.blind.study_id:
            raise _TaskError(f"exported for {_study_name(meta.get('study_id'))}, not for {_study_name(context.blind.study_id)}")
        found = (
            _named_task(context, meta, kind, item) if _names_systems(meta) else context.blind.task_of(kind, item, meta.get("request_id"))
        )
        if found is None:
            raise _TaskError(
                f"its request id is not one of a {kind} of item {item} among the data's systems"
                " (changed after the export, or exported for other data); export the requests again"
            )
        task = found
        left = _left_system(task, meta) if isinstance(task, ComparisonTask) else None
    if context.known is not None and task not in context.known:
        raise _TaskError(f"item {item} of {', '.join(task.systems)} is not among the requests this import accepts")
    return task, left


def _keyed_task(context: _Context, meta: dict[str, Any], data: dict[str, Any], kind: JudgmentKind, item: str) -> tuple[Task, str | None]:
    """The task and the system shown as A of a task keyed with the study's secret; its digest checked."""
    key = context.blind.key
    if key is None:
        raise _TaskError("this task was exported with the study's key, and the import was given none")
    token = meta.get("request_id")
    found = context.blind.find(kind, item, token)
    if found is None:
        raise _TaskError(
            f"its request id is not one of a {kind} of item {item} exported for this study"
            " (changed after the export, or exported for other data or another study); export the requests again"
        )
    task, side = found
    shown = [data.get(DATA_KEYS[k], "") for k in (("source", "output_a", "output_b") if kind == "comparison" else ("source", "output"))]
    if not all(isinstance(text, str) for text in shown) or not key.matches(str(meta.get("digest")), str(token), item, shown):
        raise _TaskError("its texts or its 'prefeval' object were changed after the export (the digest does not match); export again")
    return task, None if side is None or not isinstance(task, ComparisonTask) else left_system_of(task, side)


def _names_systems(meta: dict[str, Any]) -> bool:
    """Whether a ``prefeval`` object is of an export before blinding (it names the systems)."""
    return any(key in meta for key in ("system_a", "system_b", "left_system", "system"))


def _named_task(context: _Context, meta: dict[str, Any], kind: JudgmentKind, item: str) -> Task:
    """The task an export before blinding names, checked against its request id and the data."""
    task: Task
    if kind == "comparison":
        a, b, left = _text(meta, "system_a"), _text(meta, "system_b"), _text(meta, "left_system")
        if canonical_pair(a, b)[:2] != (a, b) or a == b or left not in (a, b):
            raise _TaskError(f"its pair ({a}, {b}) with {left} on the left is not a canonical pair; export the requests again")
        task = ComparisonTask(item, a, b)
    else:
        task = RatingTask(item, _text(meta, "system"))
    if meta.get("request_id") != context.blind.request_id(task):
        raise _TaskError("its 'prefeval' object was changed after the export (the request id does not match the item and systems)")
    unknown = [s for s in task.systems if s not in context.blind.systems]
    if unknown:
        raise _TaskError(f"the system {unknown[0]!r} is not in the data")
    return task


def _left_system(task: ComparisonTask, meta: dict[str, Any]) -> str:
    """The system shown as A: ``left`` says which of the canonical pair (an older export names it)."""
    if "left_system" in meta:
        return _text(meta, "left_system")
    side = meta.get("left")
    if side not in SIDES:
        raise _TaskError(f"its 'prefeval' object has left = {side!r}; expected 'first' or 'second'; export the requests again")
    return left_system_of(task, side)


def _answer(context: _Context, task: Task, result: Any) -> float | Choice | None:
    """The answer in an annotation's result: a choice (comparisons) or a score (ratings);
    ``None`` when the result has no entry of the prefeval control."""
    if not isinstance(result, list):
        raise _TaskError("expected the annotation's result to be a list", "annotations")
    control = PREFERENCE if isinstance(task, ComparisonTask) else SCORE
    entries = [r for r in result if isinstance(r, dict) and r.get("from_name") == control]
    if not entries:
        if result:
            names = sorted({str(r.get("from_name")) for r in result if isinstance(r, dict)})
            raise _TaskError(
                f"the annotation has results of {', '.join(names)} but none of '{control}' (another labeling config?)", "annotations"
            )
        return None
    value = entries[-1].get("value")
    if not isinstance(value, dict):
        raise _TaskError(f"expected the result of '{control}' to hold a value object", "annotations")
    if isinstance(task, ComparisonTask):
        return _choice(value)
    return _score(context.scale, value)


def _choice(value: dict[str, Any]) -> Choice:
    chosen = value.get("choices")
    by_label = {label: choice for choice, label in CHOICE_LABELS.items()}
    if not isinstance(chosen, list) or len(chosen) != 1 or chosen[0] not in by_label:
        expected = ", ".join(CHOICE_LABELS.values())
        raise _TaskError(f"expected one of the choices {expected}, found {chosen!r}", "annotations")
    return by_label[chosen[0]]


def _score(scale: RatingScale | None, value: dict[str, Any]) -> float:
    if scale is None:
        raise _TaskError("a rating task needs the study's rating scale to be read", "annotations")
    raw: Any
    if "rating" in value:
        raw = value["rating"]
    elif "number" in value:
        raw = value["number"]
    elif isinstance(value.get("choices"), list) and len(value["choices"]) == 1:
        raw = value["choices"][0]
    else:
        raise _TaskError(f"expected a rating, number or one choice in the result, found {value!r}", "annotations")
    try:
        score = float(raw) if not isinstance(raw, bool) else math.nan
    except (TypeError, ValueError):
        score = math.nan
    on_scale = math.isfinite(score) and (score in scale.levels if scale.levels is not None else scale.low <= score <= scale.high)
    if not on_scale:
        raise _TaskError(f"expected a score from {scale.describe()}, found {raw!r}", "annotations")
    return score


def _annotator(completed_by: Any, users: Mapping[str, str]) -> str:
    """The user's e-mail (from ``users``, or where the export gives the user as an object), else
    ``labelstudio:<user id>``."""
    if isinstance(completed_by, dict):
        email = completed_by.get("email")
        if isinstance(email, str) and email.strip():
            return email.strip()
        completed_by = completed_by.get("id")
    if isinstance(completed_by, int | str) and not isinstance(completed_by, bool) and str(completed_by).strip():
        user = str(completed_by).strip()
        email = users.get(user, "").strip()
        return email or f"{ANNOTATOR_PREFIX}{user}"
    return ANNOTATOR_PREFIX + "unknown"


def _time(value: Any) -> str | None:
    """An ISO 8601 time stamp as the store's UTC with milliseconds (``None`` if absent); a time
    without a zone is taken as UTC."""
    if value is None or value == "":
        return None
    try:
        moment = datetime.fromisoformat(str(value))
    except ValueError:
        raise _TaskError(f"expected an ISO 8601 time, found {value!r}", "annotations") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")


def _judgment(context: _Context, task: Task, left: str | None, answer: float | Choice, annotator: str, created: str) -> Judgment:
    request = context.blind.request_id(task)
    try:
        if isinstance(task, ComparisonTask):
            assert isinstance(answer, str) and left is not None
            outcome = outcome_from_choice(answer, left, task.system_a, task.system_b)
            label: ComparisonLabel | None = "both_bad" if answer == "both_bad" else None
            return Comparison(
                context.blind.dataset, task.item_id, task.system_a, task.system_b, outcome, annotator, left, created, label,
                study_id=context.blind.study_id, request_id=request, origin="import",
            )  # fmt: skip
        assert isinstance(answer, float)
        return Rating(
            context.blind.dataset,
            task.item_id,
            task.system,
            answer,
            annotator,
            created,
            study_id=context.blind.study_id,
            request_id=request,
            origin="import",
        )
    except DataError as error:
        raise _TaskError("; ".join(p.message for p in error.problems)) from None
