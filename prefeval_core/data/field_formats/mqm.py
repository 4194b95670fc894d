"""WMT MQM error annotations, scored per segment and rater (Freitag et al., TACL 2021).

**File** (google/wmt-mqm-human-evaluation, e.g. ``ted/ende/mqm_ted_ende.tsv``): tab-separated,
one row per error, columns ``system, doc, doc_id, seg_id, rater, source, target, category,
severity`` (and an ignored ``comment``/``note``/``metadata``). ``doc_id`` is the segment's number
within its document and ``seg_id`` its global number; MQM Viewer's names ``docSegId`` and
``globalSegId`` are read too. A segment a rater found no error in has one row with category and
severity ``No-error`` (``no-error`` in newstest2020). Error spans are marked ``<v>...</v>`` in
``source`` and ``target``; the texts are stored without the marks. Rows with an empty rater,
category and severity carry only metadata (MQM Viewer) and are skipped. Google writes these
files unquoted, and a tab-separated file with these columns is read so
(:func:`~prefeval_core.data.headers.unquoted_header`): a ``"`` in a text is a character, also
at its start (news quotes speech); a tab or a line break cannot occur inside a field.

**Items**: ``seg_id`` (without one, ``doc:doc_id``). **Weights** of one error, as Google's
scorer and MQM Viewer apply them (names compared case-insensitively, ``_`` and spaces read as
``-`` in severities):

=========================================  ======
Major (and Critical, as MQM Viewer reads it)   5
Minor                                          1
Minor with category ``Fluency/Punctuation``    0.1
category ``Non-translation`` (any severity)    25, once per segment
Neutral, ``No-error``                          0
=========================================  ======

**Score** of a (segment, system) by one rater: the negated sum of its errors' weights (higher is
better, as ``shared/data/wmt*_mqm``); a segment marked Non-translation scores -25 whatever
else the rater marked on it **(choice)**: the category means the segment was too garbled to
mark single errors (Freitag et al.), and with at most five errors per segment (5 x Major = 25)
it is the worst score a segment can get. Any other severity is an error naming the row. Each
rater becomes ``human:mqm:<rater>`` (each score one judgment) and ``human:mqm`` is their mean
per (segment, system) (:func:`prefeval_core.vocabulary.combine.mean_scores`), as the repository's
``avg_seg_scores`` files. Sums are exact (weights are counted in tenths).
"""

from __future__ import annotations

import re
from typing import Final

import numpy as np
import pandas as pd

from prefeval_core.data.formats import (
    ParsedTable,
    cell_problems,
    column_problems,
    empty_name_problems,
    find_columns,
    missing_column_problems,
)
from prefeval_core.data.headers import mqm_columns, normal_name
from prefeval_core.data.reading import RawTable
from prefeval_core.errors import Problem
from prefeval_core.vocabulary.combine import mean_scores

MQM_RATER: Final = "human:mqm"
"""The mean of the raters; each rater is ``human:mqm:<rater>``."""
SEVERITY_TENTHS: Final[dict[str, int]] = {"major": 50, "critical": 50, "minor": 10, "neutral": 0, "no-error": 0}
"""Weight of an error by its severity, in tenths of a point (exceptions: :data:`PUNCTUATION_TENTHS`,
:data:`NON_TRANSLATION_TENTHS`)."""
PUNCTUATION_TENTHS: Final = 1
"""A Minor ``Fluency/Punctuation`` error (0.1)."""
NON_TRANSLATION_TENTHS: Final = 250
"""A segment marked ``Non-translation`` (25), counted once per segment and rater."""

_COLUMNS: Final[dict[str, tuple[str, ...]]] = {
    "system": ("system",),
    "doc": ("doc",),
    "doc_seg_id": ("doc_id", "doc_seg_id", "docsegid"),
    "seg_id": ("seg_id", "global_seg_id", "globalsegid"),
    "rater": ("rater",),
    "source": ("source",),
    "target": ("target",),
    "category": ("category",),
    "severity": ("severity",),
}
_MARKS: Final = re.compile(r"</?v>")
_NON_TRANSLATION: Final = re.compile(r"non[-_ ]?translation")
_SEVERITIES_SHOWN: Final = "Major, Minor, Neutral, Critical or No-error"


def detect(raw: RawTable) -> bool:
    """Whether ``raw`` has the columns of an MQM error file (``system, rater``, a ``category`` or
    ``severity``, a ``source`` or ``target``, and no score: a ratings file has one)."""
    return mqm_columns({normal_name(c) for c in raw.frame.columns})


def parse_mqm(raw: RawTable) -> tuple[ParsedTable, ...]:
    """The MQM scores of ``raw`` (module docstring) as a ratings table, with the outputs
    (``target``) as texts and the ``source`` as sources where the file has them."""
    cols = find_columns(raw, _COLUMNS)
    keys = ["seg_id"] if "seg_id" in cols else ["doc", "doc_seg_id"]
    problems = missing_column_problems(raw, "WMT MQM", ["system", "rater", "category", "severity", *keys], _COLUMNS)
    problems += column_problems(raw, _COLUMNS)
    if any(p.severity == "error" for p in problems):
        return (ParsedTable(raw.name, "ratings", pd.DataFrame(), tuple(problems), ()),)
    frame = raw.frame
    metadata_only = np.logical_and.reduce([(frame[cols[c]].str.strip() == "").to_numpy() for c in ("rater", "category", "severity")])
    rows = np.flatnonzero(~metadata_only)
    named = RawTable(raw.name, frame.iloc[rows].reset_index(drop=True), None if raw.lines is None else raw.lines[rows])
    problems += empty_name_problems(named, [cols[c] for c in ("system", "rater", *keys)])
    tenths, non_translation, severity_problems = _weights(named, cols)
    problems += severity_problems
    if any(p.severity == "error" for p in problems):
        return (ParsedTable(raw.name, "ratings", pd.DataFrame(), tuple(problems), ()),)
    items = _items(named, cols, keys)
    errors = pd.DataFrame(
        {
            "item_id": items,
            "system": named.frame[cols["system"]].str.strip().to_numpy(),
            "rater": named.frame[cols["rater"]].str.strip().to_numpy(),
            "tenths": tenths,
            "non_translation": non_translation,
        }
    )
    segments = errors.groupby(["item_id", "system", "rater"], sort=False).agg(
        tenths=("tenths", "sum"), non_translation=("non_translation", "any"), rows=("tenths", "size")
    )
    penalty = np.where(segments["non_translation"], NON_TRANSLATION_TENTHS, segments["tenths"])
    per_rater = segments.reset_index()[["item_id", "system", "rater"]].assign(score=-penalty / 10.0)
    per_rater["rater"] = MQM_RATER + ":" + per_rater["rater"]
    mean = mean_scores(per_rater, ["item_id", "system"]).assign(rater=MQM_RATER)
    ratings = pd.concat([mean[["item_id", "system", "rater", "score"]], per_rater], ignore_index=True)
    notes = (_note(raw.name, errors, segments, int(metadata_only.sum())),)
    tables = [ParsedTable(raw.name, "ratings", ratings, tuple(problems), notes)]
    if "target" in cols:
        texts = pd.DataFrame({"item_id": items, "system": errors["system"], "output": _unmarked(named.frame[cols["target"]])})
        tables.append(ParsedTable(raw.name, "texts", texts.drop_duplicates(["item_id", "system"]), (), ()))
    if "source" in cols:
        sources = pd.DataFrame({"item_id": items, "source": _unmarked(named.frame[cols["source"]])})
        tables.append(ParsedTable(raw.name, "sources", sources.drop_duplicates("item_id"), (), ()))
    return tuple(tables)


def _weights(raw: RawTable, cols: dict[str, str]) -> tuple[np.ndarray, np.ndarray, list[Problem]]:
    """Per row: the error's weight in tenths (int64), whether it marks a Non-translation, and
    an error per row whose severity is not one of :data:`SEVERITY_TENTHS`."""
    severity = raw.frame[cols["severity"]].str.strip().str.lower().str.replace(r"[\s_]+", "-", regex=True)
    category = raw.frame[cols["category"]].str.strip().str.lower().str.replace(r"\s*/\s*", "/", regex=True)
    known = severity.isin(list(SEVERITY_TENTHS)).to_numpy()
    expected = f"expected an MQM severity: {_SEVERITIES_SHOWN}"
    problems = cell_problems(raw, np.flatnonzero(~known), cols["severity"], "bad_label", expected)
    tenths = severity.map(SEVERITY_TENTHS).fillna(0).to_numpy(dtype=np.int64, copy=True)
    punctuation = ((severity == "minor") & category.str.startswith("fluency/punctuation")).to_numpy()
    tenths[punctuation] = PUNCTUATION_TENTHS
    non_translation = (category.str.contains(_NON_TRANSLATION) & (severity != "no-error")).to_numpy()
    return tenths, non_translation, problems


def _items(raw: RawTable, cols: dict[str, str], keys: list[str]) -> np.ndarray:
    if keys == ["seg_id"]:
        return raw.frame[cols["seg_id"]].str.strip().to_numpy()
    return (raw.frame[cols["doc"]].str.strip() + ":" + raw.frame[cols["doc_seg_id"]].str.strip()).to_numpy()


def _unmarked(texts: pd.Series) -> np.ndarray:
    """Texts without MQM's ``<v>``/``</v>`` error-span marks."""
    return texts.str.replace(_MARKS, "", regex=True).to_numpy()


def _note(name: str, errors: pd.DataFrame, segments: pd.DataFrame, metadata_rows: int) -> str:
    raters = errors["rater"].nunique()
    scored = segments.reset_index()[["item_id", "system"]].drop_duplicates()
    mixed = int((segments["non_translation"] & (segments["rows"] > 1)).sum())
    note = (
        f"{name}: MQM error annotations, {len(errors):,} rows; {len(scored):,} (segment, system) pairs scored by {raters} "
        f"rater(s) as '{MQM_RATER}:<rater>' (minus the error weights: Major 5, Minor 1, Minor Fluency/Punctuation 0.1, "
        f"Non-translation 25 per segment, Neutral 0) and their mean '{MQM_RATER}'"
    )
    if mixed:
        note += f"; {mixed:,} segment(s) marked Non-translation also had other rows, scored -25"
    if metadata_rows:
        note += f"; {metadata_rows:,} metadata-only rows skipped"
    return note


read = parse_mqm
"""The registry's reader: :func:`parse_mqm`."""
