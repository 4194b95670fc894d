"""Request files: what to judge, handed to annotators as CSV or JSONL and read back filled in.

* **Comparisons** (:func:`request_frame`): one row per (item, pair) with both outputs and an
  empty ``label`` to fill with ``>``/``=``/``<`` (or A/B/tie, 1/0/-1) from A's point of view.
* **Ratings** (:func:`rating_request_frame`): one row per (item, system) with the output and an
  empty ``score`` to fill on the study's scale.

Those frames name the systems, A is the canonical pair's first system. What annotators are
handed is blind (:mod:`prefeval_core.blind`): :func:`blind_request_frame` and
:func:`blind_rating_request_frame` replace the names by ``request_id`` (and ``left``, which of
the pair is shown as A, in the app's seeded left/right order) and put the rows in blind order.
Reading back takes either layout: a file with system names, or a blind one, whose tasks are
found again among the data's systems (then required).

CSV exports are formula-neutralised (:mod:`prefeval_core.safe_csv`); reading back strips that
quote again. Rows left empty are not judged yet and are skipped; every other problem names the
file, row and column. Judgments read back are ``origin="import"``: their identity is their
content, so importing the same file twice stores each judgment once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final, TypeVar

import numpy as np
import pandas as pd

from prefeval_core.blind import SIDES, BlindTasks, blind_order, left_system_of, shown_side
from prefeval_core.data.formats import cell_problems, find_columns, parse_labels
from prefeval_core.data.reading import RawTable, read_table_bytes
from prefeval_core.errors import BadValueError, DataError, MissingColumnError, Problem, raise_if_errors, settings_error
from prefeval_core.outcomes import canonical_pair, oriented_code
from prefeval_core.preferences import unknown_system_problems
from prefeval_core.safe_csv import restore_cell, to_safe_csv
from prefeval_core.store.records import Comparison, Rating, utc_now
from prefeval_core.tasks import ComparisonTask, RatingTask, Task

REQUEST_COLUMNS: Final = ("item_id", "system_a", "system_b", "source", "output_a", "output_b", "label", "annotator")
"""Columns of a comparison request file."""
RATING_REQUEST_COLUMNS: Final = ("item_id", "system", "source", "output", "score", "annotator")
"""Columns of a rating request file."""
BLIND_REQUEST_COLUMNS: Final = ("request_id", "left", "item_id", "source", "output_a", "output_b", "label", "annotator")
"""Columns of a blind comparison request file (``left``: which of the canonical pair is A)."""
BLIND_RATING_REQUEST_COLUMNS: Final = ("request_id", "item_id", "source", "output", "score", "annotator")
"""Columns of a blind rating request file."""

J = TypeVar("J", Comparison, Rating)


def _texts(texts: pd.DataFrame | None) -> dict[tuple[str, str], str]:
    return {} if texts is None or texts.empty else texts.set_index(["item_id", "system"])["output"].to_dict()


def _sources(sources: pd.DataFrame | None) -> dict[str, str]:
    return {} if sources is None or sources.empty else dict(zip(sources["item_id"], sources["source"], strict=True))


def request_frame(
    tasks: pd.DataFrame, texts: pd.DataFrame | None = None, sources: pd.DataFrame | None = None, annotator: str = ""
) -> pd.DataFrame:
    """A comparison request file's rows: one per (item, pair) to judge, with texts where known.

    Args:
        tasks: ``item_id, system_a, system_b`` (any pair order; written canonically).
        texts: ``item_id, system, output`` (the dataset's texts), optional.
        sources: ``item_id, source``, optional.
        annotator: pre-filled annotator name.

    Returns:
        columns :data:`REQUEST_COLUMNS`; ``label`` is empty, to be filled with ``>``/``=``/``<``
        (or A/B/tie, 1/0/-1) from A's point of view.
    """
    canonical = [canonical_pair(str(a), str(b))[:2] for a, b in zip(tasks["system_a"], tasks["system_b"], strict=True)]
    frame = pd.DataFrame(
        {
            "item_id": tasks["item_id"].astype(str).to_numpy(),
            "system_a": [a for a, _ in canonical],
            "system_b": [b for _, b in canonical],
        }
    )
    outputs, source_of = _texts(texts), _sources(sources)
    frame["source"] = [source_of.get(i, "") for i in frame["item_id"]]
    frame["output_a"] = [outputs.get((i, a), "") for i, a in zip(frame["item_id"], frame["system_a"], strict=True)]
    frame["output_b"] = [outputs.get((i, b), "") for i, b in zip(frame["item_id"], frame["system_b"], strict=True)]
    frame["label"] = ""
    frame["annotator"] = annotator
    return frame[list(REQUEST_COLUMNS)]


def rating_request_frame(
    tasks: pd.DataFrame, texts: pd.DataFrame | None = None, sources: pd.DataFrame | None = None, annotator: str = ""
) -> pd.DataFrame:
    """A rating request file's rows: one per (item, system) to rate, with texts where known.

    Args:
        tasks: ``item_id, system``.
        texts, sources, annotator: as for :func:`request_frame`.

    Returns:
        columns :data:`RATING_REQUEST_COLUMNS`; ``score`` is empty, to be filled on the study's scale.
    """
    frame = pd.DataFrame({"item_id": tasks["item_id"].astype(str).to_numpy(), "system": tasks["system"].astype(str).to_numpy()})
    outputs, source_of = _texts(texts), _sources(sources)
    frame["source"] = [source_of.get(i, "") for i in frame["item_id"]]
    frame["output"] = [outputs.get((i, s), "") for i, s in zip(frame["item_id"], frame["system"], strict=True)]
    frame["score"] = ""
    frame["annotator"] = annotator
    return frame[list(RATING_REQUEST_COLUMNS)]


def blind_request_frame(requests: pd.DataFrame, dataset: str, *, study_id: int | None, seed: int) -> pd.DataFrame:
    """A comparison request frame (:func:`request_frame`) as annotators get it: no system
    names; A and B in the app's left/right order for ``seed``; columns :data:`BLIND_REQUEST_COLUMNS`
    in blind order. ``dataset`` (its key) and ``study_id`` make the request ids."""
    blind = BlindTasks.of(dataset, study_id, ())
    tasks = [ComparisonTask(*row) for row in requests[["item_id", "system_a", "system_b"]].itertuples(index=False)]
    sides = [shown_side(seed, dataset, task) for task in tasks]
    swapped = np.array([side == "second" for side in sides], dtype=bool)
    frame = requests.assign(
        request_id=[blind.request_id(task) for task in tasks],
        left=sides,
        output_a=np.where(swapped, requests["output_b"], requests["output_a"]),
        output_b=np.where(swapped, requests["output_a"], requests["output_b"]),
    )
    return _in_blind_order(frame[list(BLIND_REQUEST_COLUMNS)])


def blind_rating_request_frame(requests: pd.DataFrame, dataset: str, *, study_id: int | None) -> pd.DataFrame:
    """A rating request frame (:func:`rating_request_frame`) as annotators get it: no system
    names; columns :data:`BLIND_RATING_REQUEST_COLUMNS` in blind order."""
    blind = BlindTasks.of(dataset, study_id, ())
    tasks = [RatingTask(*row) for row in requests[["item_id", "system"]].itertuples(index=False)]
    frame = requests.assign(request_id=[blind.request_id(task) for task in tasks])
    return _in_blind_order(frame[list(BLIND_RATING_REQUEST_COLUMNS)])


def blind_requests(
    tasks: Sequence[Task],
    dataset: str,
    *,
    texts: pd.DataFrame | None = None,
    sources: pd.DataFrame | None = None,
    study_id: int | None = None,
    seed: int = 0,
) -> pd.DataFrame:
    """The request file annotators are handed for ``tasks`` of ``dataset`` (its key): the blind
    comparison frame if any task is a comparison, else the blind rating frame."""
    pairs = [t for t in tasks if isinstance(t, ComparisonTask)]
    if pairs:
        named = request_frame(pd.DataFrame([vars(t) for t in pairs], columns=["item_id", "system_a", "system_b"]), texts, sources)
        return blind_request_frame(named, dataset, study_id=study_id, seed=seed)
    outputs = pd.DataFrame([vars(t) for t in tasks if isinstance(t, RatingTask)], columns=["item_id", "system"])
    return blind_rating_request_frame(rating_request_frame(outputs, texts, sources), dataset, study_id=study_id)


def _in_blind_order(frame: pd.DataFrame) -> pd.DataFrame:
    order = blind_order(frame["item_id"].tolist(), frame["request_id"].tolist())
    return frame.iloc[order].reset_index(drop=True)


def export_requests_csv(requests: pd.DataFrame) -> bytes:
    """A request frame (either kind) as formula-neutralised CSV."""
    return to_safe_csv(requests)


def export_requests_jsonl(requests: pd.DataFrame) -> bytes:
    """A request frame as JSON lines (not neutralised: JSON is not opened as a spreadsheet)."""
    return requests.to_json(orient="records", lines=True, force_ascii=False).encode("utf-8")


def _read_filled(name: str, data: bytes, needed: Sequence[str]) -> tuple[RawTable, dict[str, str]]:
    """The file as read (formula quotes restored) and its columns; all of ``needed`` present."""
    raw = read_table_bytes(name, data)
    raw = RawTable(raw.name, raw.frame.map(restore_cell), raw.lines)
    cols = find_columns(raw)
    missing = [c for c in needed if c not in cols]
    if missing:
        found = ", ".join(map(repr, raw.frame.columns))
        message = "a filled-in request file needs the column '{}' (found: {})"
        raise MissingColumnError([Problem("error", "missing_column", message.format(m, found), name, column=m) for m in missing])
    return raw, cols


def _is_blind(raw: RawTable, cols: dict[str, str], named: Sequence[str], blind: Sequence[str]) -> bool:
    """Whether a filled-in file is blind (it has ``request_id``) or names the systems; either
    layout's columns all present."""
    needed = blind if "request_id" in cols and not any(c in cols for c in named) else named
    missing = [c for c in needed if c not in cols]
    if missing:
        found = ", ".join(map(repr, raw.frame.columns))
        other = "" if needed is blind else f" (in a blind file: {', '.join(map(repr, blind))})"
        message = "a filled-in request file needs the column '{}'{} (found: {})"
        problems = [Problem("error", "missing_column", message.format(m, other, found), raw.name, column=m) for m in missing]
        raise MissingColumnError(problems)
    return needed is blind


def _blind_tasks(name: str, dataset: str, study_id: int | None, systems: Sequence[str] | None) -> BlindTasks:
    if systems is None:
        raise settings_error(f"{name} is a blind request file: it is read against the data's systems, and none were given")
    return BlindTasks.of(dataset, study_id, systems)


def _blind_problem(raw: RawTable, index: int, column: str, message: str) -> Problem:
    return Problem("error", "bad_request", message, raw.name, index + 1, raw.line_of(index), column)


def _unknown_request(raw: RawTable, cols: dict[str, str], index: int, kind: str, item: str) -> Problem:
    message = (
        f"this request id is not one of a {kind} of item {item!r} among the data's systems"
        " (changed after the export, or exported for other data or another study)"
    )
    return _blind_problem(raw, index, cols["request_id"], message)


def _blind_pairs(raw: RawTable, cols: dict[str, str], rows: Sequence[int], blind: BlindTasks) -> dict[int, tuple[str, str]]:
    """``(system shown as A, system shown as B)`` of each row of a blind comparison file.

    Raises:
        DataError: a request id that is no comparison of the data, a ``left`` that is not a side.
    """
    items, requests, sides = (_column(raw, cols, c) for c in ("item_id", "request_id", "left"))
    pairs: dict[int, tuple[str, str]] = {}
    problems: list[Problem] = []
    for index in rows:
        task = blind.task_of("comparison", items[index], requests[index])
        side = sides[index]
        if not isinstance(task, ComparisonTask):
            problems.append(_unknown_request(raw, cols, index, "comparison", items[index]))
        elif side not in SIDES:
            problems.append(
                _blind_problem(raw, index, cols["left"], f"expected 'first' or 'second' (leave it as exported), found {side!r}")
            )
        else:
            left = left_system_of(task, side)
            pairs[index] = (left, task.system_b if left == task.system_a else task.system_a)
    raise_if_errors(problems)
    return pairs


def _blind_systems(raw: RawTable, cols: dict[str, str], rows: np.ndarray, blind: BlindTasks) -> list[str]:
    """The rated system of each row of a blind rating file ("" on rows not rated).

    Raises:
        DataError: a request id that is no rating of the data.
    """
    items, requests = _column(raw, cols, "item_id"), _column(raw, cols, "request_id")
    systems = [""] * len(items)
    problems: list[Problem] = []
    for index in rows:
        task = blind.task_of("rating", items[index], requests[index])
        if isinstance(task, RatingTask):
            systems[index] = task.system
        else:
            problems.append(_unknown_request(raw, cols, int(index), "rating", items[index]))
    raise_if_errors(problems)
    return systems


def _column(raw: RawTable, cols: dict[str, str], name: str) -> list[str]:
    return raw.frame[cols[name]].str.strip().tolist()


def _annotators(raw: RawTable, cols: dict[str, str], default: str) -> list[str]:
    """The ``annotator`` column where filled, else ``default``, else "upload"."""
    named = _column(raw, cols, "annotator") if "annotator" in cols else [""] * len(raw.frame)
    return [who or default or "upload" for who in named]


def _system_problems(raw: RawTable, cols: dict[str, str], columns: Sequence[str], systems: Sequence[str] | None) -> list[Problem]:
    """Unknown systems would be stored and then never used: name each one (with the dataset's systems)."""
    if systems is None:
        return []
    return [p for c in columns for p in unknown_system_problems(systems, _column(raw, cols, c), file=raw.name, column=cols[c])]


def _at_row(raw: RawTable, index: int, make: Callable[..., J], *args: object, **kwargs: object) -> J:
    """``make(*args, **kwargs)``, with a refused value reported at its row of the file."""
    try:
        return make(*args, **kwargs)
    except BadValueError as error:
        (problem,) = error.problems
        located = Problem("error", problem.kind, problem.message, raw.name, index + 1, raw.line_of(index), problem.column)
        raise BadValueError([located]) from None


def read_annotated_requests(
    name: str, data: bytes, dataset: str, *, annotator: str = "", systems: Sequence[str] | None = None, study_id: int | None = None
) -> list[Comparison]:
    """Comparisons from a comparison request file filled in by annotators (CSV, TSV, JSONL, ...).

    Rows with an empty label are skipped (not judged yet); any other label that is not one of
    the data layer's accepted labels is an error naming the row. The ``annotator`` column, where
    filled, names the annotator, else ``annotator`` (or "upload"). The left side is recorded as
    the system shown as A (the file shows A first). With ``systems`` (the dataset's systems),
    a system name not among them is an error too. A blind file (``request_id``, ``left``; module
    docstring) needs ``systems`` and the ``study_id`` it was exported for: a request id that is
    not one of their comparisons is an error naming the row.

    Raises:
        DataError: unreadable file, missing columns, bad labels, unknown systems or requests
            (each with file, row, column).
        SettingsError: a blind file without ``systems``.
    """
    raw, cols = _read_filled(name, data, ("item_id", "label"))
    blind = _is_blind(raw, cols, ("system_a", "system_b"), ("request_id", "left"))
    empty = (raw.frame[cols["label"]].str.strip() == "").to_numpy()
    # Parse with empty labels filled by a valid placeholder, so that only real bad labels are
    # reported, with their own row numbers; the placeholders are dropped again below.
    filled = raw.frame.assign(**{cols["label"]: raw.frame[cols["label"]].where(~empty, "=")})
    codes, problems, _ = parse_labels(RawTable(raw.name, filled, raw.lines), cols["label"])
    if not blind:
        problems += _system_problems(raw, cols, ("system_a", "system_b"), systems)
    raise_if_errors(problems)
    rows = [int(i) for i in np.flatnonzero(~empty)]
    if blind:
        shown = _blind_pairs(raw, cols, rows, _blind_tasks(name, dataset, study_id, systems))
    else:
        shown = dict(zip(range(len(raw.frame)), zip(_column(raw, cols, "system_a"), _column(raw, cols, "system_b"), strict=True)))
    items = _column(raw, cols, "item_id")
    who = _annotators(raw, cols, annotator)
    stamp = utc_now()
    comparisons: list[Comparison] = []
    for index in rows:
        a, b = shown[index]
        if not a or not b or a == b:
            message = "expected two different, non-empty system names"
            raise DataError.single("same_system", message, file=name, row=int(index) + 1, column=cols["system_b"])
        canon_a, canon_b, flipped = canonical_pair(a, b)
        code = int(codes[index])
        outcome = oriented_code(code, flipped)
        values = (dataset, items[index], canon_a, canon_b, outcome, who[index], a, stamp)
        comparisons.append(_at_row(raw, index, Comparison, *values, study_id=study_id, origin="import"))
    return comparisons


def read_rated_requests(
    name: str,
    data: bytes,
    dataset: str,
    *,
    annotator: str = "",
    systems: Sequence[str] | None = None,
    study_id: int | None = None,
    scale: tuple[float, float] | None = None,
) -> list[Rating]:
    """Ratings from a rating request file filled in by annotators (CSV, TSV, JSONL, ...).

    Rows with an empty score are skipped (not rated yet); a score that is not a finite number,
    or lies outside ``scale`` (inclusive bounds) where given, is an error naming the row.
    Annotators, ``systems`` and blind files (``request_id``) as for :func:`read_annotated_requests`.

    Raises:
        DataError: unreadable file, missing columns, bad scores, unknown systems or requests
            (each with file, row, column).
        SettingsError: a blind file without ``systems``.
    """
    raw, cols = _read_filled(name, data, ("item_id", "score"))
    blind = _is_blind(raw, cols, ("system",), ("request_id",))
    text = raw.frame[cols["score"]].str.strip()
    empty = (text == "").to_numpy()
    scores = pd.to_numeric(text.where(~empty, "0"), errors="coerce").to_numpy(dtype=np.float64)
    bad = ~empty & ~np.isfinite(scores)
    outside = np.zeros_like(bad) if scale is None else ~empty & ~bad & ((scores < scale[0]) | (scores > scale[1]))
    problems = cell_problems(raw, np.flatnonzero(bad), cols["score"], "bad_number", "expected a score (a finite number)")
    if scale is not None:
        expected = f"expected a score from {scale[0]:g} to {scale[1]:g}"
        problems += cell_problems(raw, np.flatnonzero(outside), cols["score"], "bad_number", expected)
    if not blind:
        problems += _system_problems(raw, cols, ("system",), systems)
    raise_if_errors(problems)
    items = _column(raw, cols, "item_id")
    rated = (
        _blind_systems(raw, cols, np.flatnonzero(~empty), _blind_tasks(name, dataset, study_id, systems))
        if blind
        else _column(raw, cols, "system")
    )
    who = _annotators(raw, cols, annotator)
    stamp = utc_now()
    return [
        _at_row(raw, int(i), Rating, dataset, items[i], rated[i], float(scores[i]), who[i], stamp, study_id=study_id, origin="import")
        for i in np.flatnonzero(~empty)
    ]
