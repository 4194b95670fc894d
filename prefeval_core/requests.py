"""Request files: what to judge, handed to annotators as CSV or JSONL and read back filled in.

* **Comparisons** (:func:`request_frame`): one row per (item, pair) with both outputs and an
  empty ``label`` to fill with ``>``/``=``/``<`` (or A/B/tie, 1/0/-1) from A's point of view.
* **Ratings** (:func:`rating_request_frame`): one row per (item, system) with the output and an
  empty ``score`` to fill on the study's scale.

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

from prefeval_core.data.formats import cell_problems, find_columns, parse_labels
from prefeval_core.data.reading import RawTable, read_table_bytes
from prefeval_core.errors import BadValueError, DataError, MissingColumnError, Problem, raise_if_errors
from prefeval_core.outcomes import canonical_pair, oriented_code
from prefeval_core.preferences import unknown_system_problems
from prefeval_core.safe_csv import restore_cell, to_safe_csv
from prefeval_core.store.records import Comparison, Rating, utc_now

REQUEST_COLUMNS: Final = ("item_id", "system_a", "system_b", "source", "output_a", "output_b", "label", "annotator")
"""Columns of a comparison request file."""
RATING_REQUEST_COLUMNS: Final = ("item_id", "system", "source", "output", "score", "annotator")
"""Columns of a rating request file."""

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
    the file's ``system_a`` (the file shows A first). With ``systems`` (the dataset's systems),
    a system name not among them is an error too.

    Raises:
        DataError: unreadable file, missing columns, bad labels, unknown systems (each with
            file, row, column).
    """
    raw, cols = _read_filled(name, data, ("item_id", "system_a", "system_b", "label"))
    empty = (raw.frame[cols["label"]].str.strip() == "").to_numpy()
    # Parse with empty labels filled by a valid placeholder, so that only real bad labels are
    # reported, with their own row numbers; the placeholders are dropped again below.
    filled = raw.frame.assign(**{cols["label"]: raw.frame[cols["label"]].where(~empty, "=")})
    codes, problems, _ = parse_labels(RawTable(raw.name, filled, raw.lines), cols["label"])
    problems += _system_problems(raw, cols, ("system_a", "system_b"), systems)
    raise_if_errors(problems)
    items, first, second = (_column(raw, cols, c) for c in ("item_id", "system_a", "system_b"))
    who = _annotators(raw, cols, annotator)
    stamp = utc_now()
    comparisons: list[Comparison] = []
    for index in np.flatnonzero(~empty):
        a, b = first[index], second[index]
        if not a or not b or a == b:
            message = "expected two different, non-empty system names"
            raise DataError.single("same_system", message, file=name, row=int(index) + 1, column=cols["system_b"])
        canon_a, canon_b, flipped = canonical_pair(a, b)
        code = int(codes[index])
        outcome = oriented_code(code, flipped)
        values = (dataset, items[index], canon_a, canon_b, outcome, who[index], a, stamp)
        comparisons.append(_at_row(raw, int(index), Comparison, *values, study_id=study_id, origin="import"))
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
    Annotators and ``systems`` as for :func:`read_annotated_requests`.

    Raises:
        DataError: unreadable file, missing columns, bad scores, unknown systems (each with
            file, row, column).
    """
    raw, cols = _read_filled(name, data, ("item_id", "system", "score"))
    text = raw.frame[cols["score"]].str.strip()
    empty = (text == "").to_numpy()
    scores = pd.to_numeric(text.where(~empty, "0"), errors="coerce").to_numpy(dtype=np.float64)
    bad = ~empty & ~np.isfinite(scores)
    outside = np.zeros_like(bad) if scale is None else ~empty & ~bad & ((scores < scale[0]) | (scores > scale[1]))
    problems = cell_problems(raw, np.flatnonzero(bad), cols["score"], "bad_number", "expected a score (a finite number)")
    if scale is not None:
        expected = f"expected a score from {scale[0]:g} to {scale[1]:g}"
        problems += cell_problems(raw, np.flatnonzero(outside), cols["score"], "bad_number", expected)
    problems += _system_problems(raw, cols, ("system",), systems)
    raise_if_errors(problems)
    items, rated = _column(raw, cols, "item_id"), _column(raw, cols, "system")
    who = _annotators(raw, cols, annotator)
    stamp = utc_now()
    return [
        _at_row(raw, int(i), Rating, dataset, items[i], rated[i], float(scores[i]), who[i], stamp, study_id=study_id, origin="import")
        for i in np.flatnonzero(~empty)
    ]
