"""Request files: what to judge, handed to annotators as CSV or JSONL and read back filled in.

* **Comparisons** (:func:`request_frame`): one row per (item, pair) with both outputs and an
  empty ``label`` to fill with ``>``/``=``/``<`` (or A/B/tie, 1/0/-1) from A's point of view.
* **Ratings** (:func:`rating_request_frame`): one row per (item, system) with the output and an
  empty ``score`` to fill on the study's scale.

Those frames name the systems, A is the canonical pair's first system. What annotators are
handed is blind (:mod:`prefeval_core.annotation.blind`): :func:`blind_request_frame` and
:func:`blind_rating_request_frame` replace the names by an opaque token in ``request_id`` (keyed
with the study's secret; it also fixes which system is A, never a column) and add a ``digest`` of
what the row shows, and put the rows in blind order. Reading back takes a file with system names,
a blind one (its tasks found again among the data's systems, then required, with the study's
key; a row not as exported is refused), or a blind one of the older layout (unkeyed
``request_id`` and, for comparisons, ``left``).

CSV exports are formula-neutralised (:mod:`prefeval_core.data.safe_csv`); reading back strips that
quote again. Rows left empty are not judged yet and are skipped; every other problem names the
file, row and column. Judgments read back are ``origin="import"``: their identity is their
content, so importing the same file twice stores each judgment once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final, Literal, TypeVar

import numpy as np
import pandas as pd

from prefeval_core.annotation.blind import SIDES, BlindKey, BlindTasks, Side, blind_order, left_system_of, shown_side
from prefeval_core.data.formats import LABELS, cell_problems, find_columns
from prefeval_core.data.reading import RawTable, read_table_bytes
from prefeval_core.data.safe_csv import restore_cell, to_safe_csv
from prefeval_core.errors import BadValueError, DataError, MissingColumnError, Problem, raise_if_errors, settings_error
from prefeval_core.pairs.preferences import unknown_system_problems
from prefeval_core.store.records import Comparison, JudgmentKind, Rating, utc_now
from prefeval_core.vocabulary.outcomes import canonical_pair, oriented_code
from prefeval_core.vocabulary.tasks import ComparisonTask, RatingTask, Task

REQUEST_COLUMNS: Final = ("item_id", "system_a", "system_b", "source", "output_a", "output_b", "label", "annotator")
"""Columns of a comparison request file."""
RATING_REQUEST_COLUMNS: Final = ("item_id", "system", "source", "output", "score", "annotator")
"""Columns of a rating request file."""
BLIND_REQUEST_COLUMNS: Final = ("request_id", "item_id", "source", "output_a", "output_b", "label", "annotator", "digest")
"""Columns of a blind comparison request file (``request_id``: the token; ``digest``: of the row as shown)."""
BLIND_RATING_REQUEST_COLUMNS: Final = ("request_id", "item_id", "source", "output", "score", "annotator", "digest")
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


def blind_request_frame(requests: pd.DataFrame, dataset: str, *, study_id: int | None, seed: int, key: BlindKey) -> pd.DataFrame:
    """A comparison request frame (:func:`request_frame`) as annotators get it (module
    docstring): no system names, dataset or study; A and B by the keyed coin of ``seed``; a
    token and a digest per row; columns :data:`BLIND_REQUEST_COLUMNS` in blind order."""
    blind = BlindTasks.of(dataset, study_id, (), key)
    coin = key.coin_seed(seed)
    tasks = [ComparisonTask(*row) for row in requests[["item_id", "system_a", "system_b"]].itertuples(index=False)]
    sides = [shown_side(coin, dataset, task) for task in tasks]
    swapped = np.array([side == "second" for side in sides], dtype=bool)
    frame = requests.assign(
        request_id=[blind.token(task, side) for task, side in zip(tasks, sides, strict=True)],
        output_a=np.where(swapped, requests["output_b"], requests["output_a"]),
        output_b=np.where(swapped, requests["output_a"], requests["output_b"]),
    )
    return _in_blind_order(_with_digests(frame, key, ("source", "output_a", "output_b"))[list(BLIND_REQUEST_COLUMNS)])


def blind_rating_request_frame(requests: pd.DataFrame, dataset: str, *, study_id: int | None, key: BlindKey) -> pd.DataFrame:
    """A rating request frame (:func:`rating_request_frame`) as annotators get it: no system
    names, a token and a digest per row; columns :data:`BLIND_RATING_REQUEST_COLUMNS` in blind order."""
    blind = BlindTasks.of(dataset, study_id, (), key)
    tasks = [RatingTask(*row) for row in requests[["item_id", "system"]].itertuples(index=False)]
    frame = requests.assign(request_id=[blind.token(task, None) for task in tasks])
    return _in_blind_order(_with_digests(frame, key, ("source", "output"))[list(BLIND_RATING_REQUEST_COLUMNS)])


def _with_digests(frame: pd.DataFrame, key: BlindKey, shown: Sequence[str]) -> pd.DataFrame:
    rows = frame[["request_id", "item_id", *shown]].astype(str).itertuples(index=False)
    return frame.assign(digest=[key.digest(token, item, texts) for token, item, *texts in rows])


def blind_requests(
    tasks: Sequence[Task],
    dataset: str,
    *,
    key: BlindKey,
    texts: pd.DataFrame | None = None,
    sources: pd.DataFrame | None = None,
    study_id: int | None = None,
    seed: int = 0,
) -> pd.DataFrame:
    """The request file annotators are handed for ``tasks`` of ``dataset`` (its key), keyed with
    the scope's ``key``: the blind comparison frame if any task is a comparison, else the blind
    rating frame."""
    pairs = [t for t in tasks if isinstance(t, ComparisonTask)]
    if pairs:
        named = request_frame(pd.DataFrame([vars(t) for t in pairs], columns=["item_id", "system_a", "system_b"]), texts, sources)
        return blind_request_frame(named, dataset, study_id=study_id, seed=seed, key=key)
    outputs = pd.DataFrame([vars(t) for t in tasks if isinstance(t, RatingTask)], columns=["item_id", "system"])
    return blind_rating_request_frame(rating_request_frame(outputs, texts, sources), dataset, study_id=study_id, key=key)


def _in_blind_order(frame: pd.DataFrame) -> pd.DataFrame:
    order = blind_order(frame["item_id"].tolist(), frame["request_id"].tolist())
    return frame.iloc[order].reset_index(drop=True)


def export_requests_csv(requests: pd.DataFrame) -> bytes:
    """A request frame (either kind) as formula-neutralised CSV."""
    return to_safe_csv(requests)


def export_requests_jsonl(requests: pd.DataFrame) -> bytes:
    """A request frame as JSON lines (not neutralised: JSON is not opened as a spreadsheet)."""
    return requests.to_json(orient="records", lines=True, force_ascii=False).encode("utf-8")


Layout = Literal["named", "keyed", "unkeyed"]
"""A filled-in file's layout: it names the systems; blind with tokens and digests (this
prefeval's export); blind with unkeyed request ids and ``left`` (older exports)."""

_BOTH_BAD: Final = frozenset({"both bad", "both_bad", "both-bad"})
"""Labels of the A/B screen's "both bad" (a tie whose outputs were both bad)."""
_ACCEPTED_LABELS: Final = "'>' (A better), '=' (tie), '<' (B better), A / tie / B, 1 / 0 / -1, or 'both bad'"


def _read_filled(name: str, data: bytes, needed: Sequence[str]) -> tuple[RawTable, dict[str, str]]:
    """The file as read (formula quotes restored) and its columns; all of ``needed`` present."""
    raw = read_table_bytes(name, data)
    raw = RawTable(raw.name, raw.frame.map(restore_cell), raw.lines)
    cols = find_columns(raw) | find_columns(raw, {c: (c,) for c in ("digest", "output_a", "output_b")})
    _require(raw, cols, needed, "")
    return raw, cols


def _require(raw: RawTable, cols: dict[str, str], needed: Sequence[str], hint: str) -> None:
    missing = [c for c in needed if c not in cols]
    if missing:
        found = ", ".join(map(repr, raw.frame.columns))
        message = "a filled-in request file needs the column '{}'{} (found: {})"
        problems = [Problem("error", "missing_column", message.format(m, hint, found), raw.name, column=m) for m in missing]
        raise MissingColumnError(problems)


def _layout(raw: RawTable, cols: dict[str, str], named: Sequence[str], unkeyed: Sequence[str]) -> Layout:
    """The layout of a filled-in file (:data:`Layout`; an older blind file has ``request_id``
    and ``unkeyed`` but no ``digest``), its columns all present; a message names only columns
    of the layout the file has."""
    if any(c in cols for c in named) or "request_id" not in cols:
        hint = "" if any(c in cols for c in named) else " (a blind file keeps 'request_id' and 'digest' as exported)"
        _require(raw, cols, named, hint)
        return "named"
    if "digest" not in cols and all(c in cols for c in unkeyed):
        return "unkeyed"
    _require(raw, cols, ("digest",), " (leave the exported columns as they are)")
    return "keyed"


def _blind_tasks(name: str, dataset: str, study_id: int | None, systems: Sequence[str] | None, key: BlindKey | None) -> BlindTasks:
    if systems is None:
        raise settings_error(f"{name} is a blind request file: it is read against the data's systems, and none were given")
    return BlindTasks.of(dataset, study_id, systems, key)


def _blind_problem(raw: RawTable, index: int, column: str, message: str) -> Problem:
    return Problem("error", "bad_request", message, raw.name, index + 1, raw.line_of(index), column)


def _unknown_request(raw: RawTable, cols: dict[str, str], index: int, kind: str, item: str) -> Problem:
    message = (
        f"this request id is not one of a {kind} of item {item!r} exported for this study"
        " (changed after the export, or exported for other data or another study)"
    )
    return _blind_problem(raw, index, cols["request_id"], message)


def _keyed_tasks(
    raw: RawTable, cols: dict[str, str], rows: Sequence[int], blind: BlindTasks, kind: JudgmentKind, shown: Sequence[str]
) -> dict[int, tuple[Task, Side | None]]:
    """The task and side of each row of a keyed file, its digest checked.

    Raises:
        DataError: a token that is no request of the scope, a row not as exported (each naming
            the file, row and column), or a keyed file read without the scope's key.
    """
    if blind.key is None:
        raise settings_error(f"{raw.name} is a keyed blind request file: it is read with the study's key, and none was given")
    items, tokens, digests = (_column(raw, cols, c) for c in ("item_id", "request_id", "digest"))
    texts = [raw.frame[cols[c]].tolist() if c in cols else [""] * len(items) for c in shown]
    found: dict[int, tuple[Task, Side | None]] = {}
    problems: list[Problem] = []
    for index in rows:
        task = blind.find(kind, items[index], tokens[index])
        row_texts = [column[index] for column in texts]
        if task is None:
            problems.append(_unknown_request(raw, cols, index, kind, items[index]))
        elif not blind.key.matches(digests[index], tokens[index], items[index], row_texts):
            problems.append(_changed_row(raw, cols, index, blind.key, (tokens[index], items[index], digests[index]), row_texts))
        else:
            found[index] = task
    raise_if_errors(problems)
    return found


def _changed_row(raw: RawTable, cols: dict[str, str], index: int, key: BlindKey, row: tuple[str, str, str], texts: list[str]) -> Problem:
    token, item, digest = row
    if len(texts) == 3 and key.matches(digest, token, item, [texts[0], texts[2], texts[1]]):
        return _blind_problem(raw, index, cols["output_a"], "output A and output B were swapped after the export; leave them as exported")
    message = (
        "this row is not as exported: its request id, item, source or output was changed, or rows were mixed"
        " (the digest does not match); export the requests again"
    )
    return _blind_problem(raw, index, cols["digest"], message)


def _unkeyed_pairs(raw: RawTable, cols: dict[str, str], rows: Sequence[int], blind: BlindTasks) -> dict[int, tuple[str, str]]:
    """``(system shown as A, system shown as B)`` of each row of an older blind comparison file.

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
            pairs[index] = _shown_pair(task, side)
    raise_if_errors(problems)
    return pairs


def _unkeyed_ratings(raw: RawTable, cols: dict[str, str], rows: Sequence[int], blind: BlindTasks) -> dict[int, tuple[Task, None]]:
    """The task of each row of an older blind rating file.

    Raises:
        DataError: a request id that is no rating of the data.
    """
    items, requests = _column(raw, cols, "item_id"), _column(raw, cols, "request_id")
    found: dict[int, tuple[Task, None]] = {}
    problems: list[Problem] = []
    for index in rows:
        task = blind.task_of("rating", items[index], requests[index])
        if task is None:
            problems.append(_unknown_request(raw, cols, index, "rating", items[index]))
        else:
            found[index] = (task, None)
    raise_if_errors(problems)
    return found


def _shown_pair(task: ComparisonTask, side: Side) -> tuple[str, str]:
    left = left_system_of(task, side)
    return left, task.system_b if left == task.system_a else task.system_a


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


def _labels(raw: RawTable, column: str, empty: np.ndarray) -> tuple[list[int], list[bool], list[Problem]]:
    """Outcome codes (from A's point of view) and "both bad" marks of a label column; rows left
    empty get a tie (they are skipped); a label not accepted is a problem naming its row."""
    text = raw.frame[column].str.strip().str.lower().str.replace(r"^([+-]?\d+)\.0+$", r"\1", regex=True).tolist()
    codes: list[int] = []
    both_bad: list[bool] = []
    bad: list[int] = []
    for index, label in enumerate(text):
        bad_label = label in _BOTH_BAD
        code = 1 if empty[index] or bad_label else LABELS.get(label, (-1, ""))[0]
        if code < 0:
            bad.append(index)
        codes.append(code)
        both_bad.append(bad_label and not empty[index])
    problems = cell_problems(raw, np.asarray(bad, dtype=np.int64), column, "bad_label", f"expected a label: {_ACCEPTED_LABELS}")
    return codes, both_bad, problems


def _answered_once(
    raw: RawTable, column: str, judgments: Sequence[J], rows: Sequence[int], answers: Sequence[object], *, latest_wins: bool
) -> list[J]:
    """One judgment per annotator and request: two different answers in the file are refused
    (which would count?), or with ``latest_wins`` the later row counts; the same answer twice is
    one judgment.

    Raises:
        DataError: naming each later row that contradicts an earlier one (without ``latest_wins``).
    """
    first: dict[tuple[str, Task], tuple[int, object]] = {}
    kept: dict[tuple[str, Task], J] = {}
    problems: list[Problem] = []
    for judgment, index, answer in zip(judgments, rows, answers, strict=True):
        key = (judgment.annotator, judgment.task)
        earlier = first.setdefault(key, (index, answer))
        if earlier[1] != answer and not latest_wins:
            message = (
                f"a different answer to the request of row {earlier[0] + 1} by the same annotator;"
                " keep one of the two (or import with --latest-wins)"
            )
            problems.append(Problem("error", "conflicting_answers", message, raw.name, index + 1, raw.line_of(index), column))
        kept[key] = judgment
    raise_if_errors(problems)
    return list(kept.values())


def _at_row(raw: RawTable, index: int, make: Callable[..., J], *args: object, **kwargs: object) -> J:
    """``make(*args, **kwargs)``, with a refused value reported at its row of the file."""
    try:
        return make(*args, **kwargs)
    except BadValueError as error:
        (problem,) = error.problems
        located = Problem("error", problem.kind, problem.message, raw.name, index + 1, raw.line_of(index), problem.column)
        raise BadValueError([located]) from None


def read_annotated_requests(
    name: str,
    data: bytes,
    dataset: str,
    *,
    annotator: str = "",
    systems: Sequence[str] | None = None,
    study_id: int | None = None,
    key: BlindKey | None = None,
    latest_wins: bool = False,
) -> list[Comparison]:
    """Comparisons from a comparison request file filled in by annotators (CSV, TSV, JSONL, ...).

    Rows with an empty label are skipped (not judged yet); any other label that is not one of
    :data:`~prefeval_core.data.formats.LABELS` or "both bad" (a tie whose outputs were both bad,
    as on the A/B screen) is an error naming the row. The ``annotator`` column, where filled,
    names the annotator, else ``annotator`` (or "upload"). The left side is recorded as the
    system shown as A. With ``systems`` (the dataset's systems), a system name not among them
    is an error too. A blind file (module docstring) needs ``systems`` and the ``study_id`` it
    was exported for, and a keyed one the scope's ``key``: a token that is not one of their
    requests, or a row whose digest does not match, is an error naming the row. One annotator
    answering one request twice in the file, differently, is an error naming the later row
    (``latest_wins``: the later row counts).

    Raises:
        DataError: unreadable file, missing columns, bad labels, unknown systems or requests,
            rows not as exported, conflicting answers (each with file, row, column).
        SettingsError: a blind file without ``systems``, a keyed one without ``key``.
    """
    raw, cols = _read_filled(name, data, ("item_id", "label"))
    layout = _layout(raw, cols, ("system_a", "system_b"), ("left",))
    empty = (raw.frame[cols["label"]].str.strip() == "").to_numpy()
    codes, both_bad, problems = _labels(raw, cols["label"], empty)
    if layout == "named":
        problems += _system_problems(raw, cols, ("system_a", "system_b"), systems)
    raise_if_errors(problems)
    rows = [int(i) for i in np.flatnonzero(~empty)]
    shown: dict[int, tuple[str, str]]
    if layout == "keyed":
        blind = _blind_tasks(name, dataset, study_id, systems, key)
        found = _keyed_tasks(raw, cols, rows, blind, "comparison", ("source", "output_a", "output_b"))
        shown = {i: _shown_pair(task, side) for i, (task, side) in found.items() if isinstance(task, ComparisonTask) and side is not None}
    elif layout == "unkeyed":
        shown = _unkeyed_pairs(raw, cols, rows, _blind_tasks(name, dataset, study_id, systems, key))
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
        outcome = oriented_code(codes[index], flipped)
        values = (dataset, items[index], canon_a, canon_b, outcome, who[index], a, stamp, "both_bad" if both_bad[index] else None)
        comparisons.append(_at_row(raw, index, Comparison, *values, study_id=study_id, origin="import"))
    answers = [(c.outcome, c.label) for c in comparisons]
    return _answered_once(raw, cols["label"], comparisons, rows, answers, latest_wins=latest_wins)


def read_rated_requests(
    name: str,
    data: bytes,
    dataset: str,
    *,
    annotator: str = "",
    systems: Sequence[str] | None = None,
    study_id: int | None = None,
    scale: tuple[float, float] | None = None,
    key: BlindKey | None = None,
    latest_wins: bool = False,
) -> list[Rating]:
    """Ratings from a rating request file filled in by annotators (CSV, TSV, JSONL, ...).

    Rows with an empty score are skipped (not rated yet); a score that is not a finite number,
    or lies outside ``scale`` (inclusive bounds) where given, is an error naming the row.
    Annotators, ``systems``, blind files and conflicting answers as for :func:`read_annotated_requests`.

    Raises:
        DataError: unreadable file, missing columns, bad scores, unknown systems or requests,
            rows not as exported, conflicting scores (each with file, row, column).
        SettingsError: a blind file without ``systems``, a keyed one without ``key``.
    """
    raw, cols = _read_filled(name, data, ("item_id", "score"))
    layout = _layout(raw, cols, ("system",), ())
    text = raw.frame[cols["score"]].str.strip()
    empty = (text == "").to_numpy()
    scores = pd.to_numeric(text.where(~empty, "0"), errors="coerce").to_numpy(dtype=np.float64)
    bad = ~empty & ~np.isfinite(scores)
    outside = np.zeros_like(bad) if scale is None else ~empty & ~bad & ((scores < scale[0]) | (scores > scale[1]))
    problems = cell_problems(raw, np.flatnonzero(bad), cols["score"], "bad_number", "expected a score (a finite number)")
    if scale is not None:
        expected = f"expected a score from {scale[0]:g} to {scale[1]:g}"
        problems += cell_problems(raw, np.flatnonzero(outside), cols["score"], "bad_number", expected)
    if layout == "named":
        problems += _system_problems(raw, cols, ("system",), systems)
    raise_if_errors(problems)
    rows = [int(i) for i in np.flatnonzero(~empty)]
    items = _column(raw, cols, "item_id")
    if layout == "named":
        rated = _column(raw, cols, "system")
    else:
        blind = _blind_tasks(name, dataset, study_id, systems, key)
        found = (
            _keyed_tasks(raw, cols, rows, blind, "rating", ("source", "output"))
            if layout == "keyed"
            else _unkeyed_ratings(raw, cols, rows, blind)
        )
        rated = [""] * len(items)
        for index, (task, _) in found.items():
            rated[index] = task.systems[0]
    who = _annotators(raw, cols, annotator)
    stamp = utc_now()
    ratings = [
        _at_row(raw, i, Rating, dataset, items[i], rated[i], float(scores[i]), who[i], stamp, study_id=study_id, origin="import")
        for i in rows
    ]
    return _answered_once(raw, cols["score"], ratings, rows, [r.score for r in ratings], latest_wins=latest_wins)
