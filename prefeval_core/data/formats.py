"""Interpreting raw tables as ratings, preferences, texts, sources or references.

Canonical frames produced here (all names are ``str``):

* ratings: ``item_id, system, rater, score`` (``float64``, higher is better), one row per
  (item, system, rater); several annotators of one rater are averaged (method.md §2), and a human
  rater's annotators are also kept as raters ``<rater>:<annotator>`` (``human::<annotator>``).
* preferences: ``item_id, system_a, system_b, rater, outcome`` with ``system_a < system_b``
  (canonical order) and ``outcome`` an ``int8`` code 0/1/2 for ``>``/``=``/``<``.
* texts: ``item_id, system, output``; sources: ``item_id, source``; references:
  ``item_id, ref_index, reference``. Texts and sources may carry a ``prompt_id`` that links
  several items to one source (PandaLM).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Final, Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pa_compute
from pydantic import AfterValidator

from prefeval_core.data.annotators import annotator_rater_names, keeps_annotators
from prefeval_core.data.field_formats import input_kinds
from prefeval_core.data.headers import SCORE_NAMES, normal_name
from prefeval_core.data.kinds import FieldKind as FieldKind
from prefeval_core.data.kinds import TableKind as TableKind
from prefeval_core.data.limits import MAX_SCORE
from prefeval_core.data.reading import RawTable
from prefeval_core.errors import MAX_PROBLEMS_PER_KIND, Problem
from prefeval_core.vocabulary.combine import majority_outcomes
from prefeval_core.vocabulary.outcomes import SYMBOLS, flip_codes

KEPT_ANNOTATORS: Final = "each annotator of a human rater is kept as '<rater>:<annotator>' ('human::<annotator>' for 'human')"
"""The note on a file with an ``annotator`` column."""


def _known_kind(kind: str) -> str:
    """``kind`` if it is a table kind or a registered field format (validation of a declared kind)."""
    known = input_kinds()
    if kind not in known:
        raise ValueError(f"unknown file kind; expected one of {', '.join(known)}")
    return kind


InputKind = Annotated[str, AfterValidator(_known_kind)]
"""What a file may hold (detected, or declared with ``--kind`` / the Data page's mapping): a
:data:`TableKind` or a :data:`FieldKind` (:func:`prefeval_core.data.field_formats.input_kinds`
lists them; schemas validate a declared kind against that list)."""

_ALIASES: Final[dict[str, tuple[str, ...]]] = {
    "item_id": ("item_id", "item", "segment_id", "seg_id", "doc_id"),
    "system": ("system", "model", "sys"),
    "rater": ("rater", "metric"),
    "score": SCORE_NAMES,
    "annotator": ("annotator", "annotator_id", "worker"),
    "system_a": ("system_a", "model_a", "sys_a"),
    "system_b": ("system_b", "model_b", "sys_b"),
    "label": ("label", "preference", "winner"),
    "output": ("output", "hypothesis", "translation", "summary", "response"),
    "reference": ("reference", "ref"),
    "source": ("source", "src"),
    "prompt_id": ("prompt_id",),
    "ref_index": ("ref_index",),
    "request_id": ("request_id",),
    "left": ("left",),
}
_STEM_KINDS: Final[dict[str, TableKind]] = {
    "ratings": "ratings",
    "scores": "ratings",
    "preferences": "preferences",
    "texts": "texts",
    "outputs": "texts",
    "sources": "sources",
    "references": "references",
    "segments": "ignored",
}
LABELS: Final[dict[str, tuple[int, str]]] = {
    ">": (0, "symbols"),
    "=": (1, "symbols"),
    "<": (2, "symbols"),
    "a": (0, "letters"),
    "b": (2, "letters"),
    "tie": (1, "letters"),
    "1": (0, "numbers"),
    "+1": (0, "numbers"),
    "0": (1, "numbers"),
    "-1": (2, "numbers"),
}
"""Accepted preference labels (lower-cased) with their outcome code and scheme name."""


@dataclass(frozen=True)
class ParsedTable:
    """One input file interpreted.

    Attributes:
        name: file name used in messages.
        kind: what the file holds.
        frame: the canonical frame for ``kind`` (see the module docstring).
        problems: errors and warnings found in this file.
        notes: how the file was understood (kind, columns, label scheme), for the report.
    """

    name: str
    kind: TableKind
    frame: pd.DataFrame
    problems: tuple[Problem, ...]
    notes: tuple[str, ...]


def find_columns(raw: RawTable, aliases: Mapping[str, tuple[str, ...]] = _ALIASES) -> dict[str, str]:
    """Map canonical column names to the file's own column names (case-insensitive, spaces and
    hyphens read as underscores; each canonical name's ``aliases`` tried in order)."""
    present = {normal_name(c): c for c in raw.frame.columns}
    found: dict[str, str] = {}
    for canonical, names in aliases.items():
        for alias in names:
            if alias in present:
                found[canonical] = present[alias]
                break
    return found


def column_problems(raw: RawTable, aliases: Mapping[str, tuple[str, ...]] = _ALIASES) -> list[Problem]:
    """Columns that would be read ambiguously (as the canonical names of ``aliases``).

    Error: two columns that both read as the same alias (``Score`` and ``score``), since only
    one of them would be used. Warning: two different aliases of one column (``score`` and
    ``value``), naming the one that is read.
    """
    by_normal: dict[str, list[str]] = {}
    for column in raw.frame.columns:
        by_normal.setdefault(normal_name(column), []).append(column)
    problems: list[Problem] = []
    for canonical, candidates in aliases.items():
        present = [a for a in candidates if a in by_normal]
        for alias in present:
            if len(by_normal[alias]) > 1:
                names = ", ".join(map(repr, by_normal[alias]))
                message = f"the columns {names} are all read as '{canonical}'; rename or drop all but one"
                problems.append(Problem("error", "malformed", message, raw.name, column=by_normal[alias][0]))
        if len(present) > 1:
            names = ", ".join(repr(by_normal[a][0]) for a in present)
            read = by_normal[present[0]][0]
            message = f"the columns {names} could each be '{canonical}'; '{read}' is read as '{canonical}'"
            problems.append(Problem("warning", "ambiguous_column", message, raw.name, column=read))
    return problems


def detect_table_kind(raw: RawTable) -> TableKind:
    """Guess which plain table a file is from its name and columns."""
    cols = find_columns(raw)
    has = cols.keys()
    if {"system_a", "system_b", "label"} <= has:
        return "preferences"
    if {"system", "rater", "score"} <= has:
        return "ratings"
    if {"system", "output"} <= has:
        return "texts"
    stem = Path(raw.name.removesuffix(".gz")).stem.lower()
    if stem in _STEM_KINDS and _STEM_KINDS[stem] in ("sources", "references", "ignored"):
        return _STEM_KINDS[stem]
    if "system" in has:
        return "wide_ratings"
    if "reference" in has and "source" not in has:
        return "references"
    if "item_id" in has or "prompt_id" in has:
        return "sources"
    return "ignored"


def missing_column_problems(
    raw: RawTable, kind: str, needed: Sequence[str], aliases: Mapping[str, tuple[str, ...]] = _ALIASES
) -> list[Problem]:
    """An error per column of ``needed`` (canonical names) that ``raw`` lacks, naming what it has."""
    cols = find_columns(raw, aliases)
    missing = [c for c in needed if c not in cols]
    if not missing:
        return []
    return [
        Problem(
            "error",
            "missing_column",
            f"a {kind} file needs the column '{m}' (found: {', '.join(map(repr, raw.frame.columns))})",
            file=raw.name,
            column=m,
        )
        for m in missing
    ]


def cell_problems(
    raw: RawTable, rows: np.ndarray, column: str, kind: str, describe: str, severity: Literal["error", "warning"] = "error"
) -> list[Problem]:
    """One problem per offending row (0-based ``rows``), capped with a summary line."""
    problems: list[Problem] = []
    shown = rows[:MAX_PROBLEMS_PER_KIND]
    values = raw.frame[column].iloc[shown].tolist()
    for index, value in zip(shown, values, strict=True):
        problems.append(
            Problem(
                severity,
                kind,
                f"{describe}, found {_shown(value)}",
                file=raw.name,
                row=int(index) + 1,
                line=raw.line_of(int(index)),
                column=column,
            )
        )
    if len(rows) > MAX_PROBLEMS_PER_KIND:
        problems.append(
            Problem(severity, kind, f"... and {len(rows) - MAX_PROBLEMS_PER_KIND:,} more rows like these", raw.name, column=column)
        )
    return problems


def _shown(value: object, limit: int = 80) -> str:
    """A cell's value for a message: quoted and escaped (``repr``), long values shortened."""
    text = str(value)
    return repr(text) if len(text) <= limit else f"{text[:limit]!r}... ({len(text):,} characters)"


def empty_name_problems(raw: RawTable, columns: Sequence[str]) -> list[Problem]:
    """An error per row of ``raw`` whose cell in one of ``columns`` (the file's names) is blank."""
    problems: list[Problem] = []
    for column in columns:
        empty = np.flatnonzero((raw.frame[column].str.strip() == "").to_numpy())
        problems += cell_problems(raw, empty, column, "empty_name", "expected a non-empty name")
    return problems


def _numbers(text: pd.Series) -> np.ndarray:
    """Text cells as float64, NaN where a cell is not a number."""
    try:  # pyarrow's parser is ~15x faster; it refuses the whole column if one cell is not a number
        return np.array(pa_compute.cast(pa.array(text), pa.float64()).to_numpy(), dtype=np.float64)  # a writable copy
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64, copy=True)


def _parse_scores(raw: RawTable, columns: Sequence[str]) -> tuple[np.ndarray, list[Problem]]:
    """Scores of each of ``columns`` as float64, shape ``(len(columns), rows)`` (NaN where a
    cell is empty), with an error per cell that is not a finite number. All columns are
    parsed as one (a wide file may have a thousand rater columns)."""
    n_rows = len(raw.frame)
    text = pd.concat([raw.frame[c] for c in columns], ignore_index=True).str.strip()
    scores = _numbers(text)
    empty = (text == "").to_numpy() | text.str.lower().isin(["nan", "na", "null", "none"]).to_numpy()
    bad = (np.isnan(scores) & ~empty) | np.isinf(scores)
    with np.errstate(invalid="ignore"):
        huge = np.abs(scores) > MAX_SCORE
    huge &= ~bad
    scores[bad | huge] = np.nan
    problems: list[Problem] = []
    for k in np.unique(np.flatnonzero(bad | huge | empty) // max(n_rows, 1)):
        column, block = columns[k], slice(k * n_rows, (k + 1) * n_rows)
        problems += cell_problems(raw, np.flatnonzero(bad[block]), column, "bad_number", "expected a number (a score; higher is better)")
        too_large = f"expected a score of at most {MAX_SCORE:g} in size"
        problems += cell_problems(raw, np.flatnonzero(huge[block]), column, "bad_number", too_large)
        missing = np.flatnonzero(empty[block])
        if len(missing):
            message = f"{len(missing):,} empty or missing (NaN, NA, null) scores were skipped (first at row {missing[0] + 1})"
            problems.append(Problem("warning", "missing_score", message, raw.name, column=column))
    return scores.reshape(len(columns), n_rows), problems


def _dedupe(
    frame: pd.DataFrame, raw: RawTable, keys: list[str], value: str, value_columns: Sequence[str], what: str
) -> tuple[pd.DataFrame, list[Problem]]:
    """Drop exact duplicate rows (warning); report keys repeated with different values (error).

    ``frame`` has the columns ``keys``, ``value``, ``_row`` (0-based row of ``raw``) and
    ``_block`` (index into ``value_columns``: the file column each value was read from).
    """
    problems: list[Problem] = []
    repeated = frame.duplicated(keys, keep=False)
    if not repeated.any():
        return frame, problems
    candidates = frame[repeated]
    values = candidates.groupby(keys, sort=False)[value].transform("nunique")
    clash = candidates[(values > 1).to_numpy()]
    for block, group in clash.groupby("_block", sort=True):
        rows = np.sort(group["_row"].to_numpy())
        describe = f"the same {what} appears more than once with different values; keep one row"
        problems += cell_problems(raw, rows, value_columns[int(block)], "duplicate", describe)
    exact = int(frame.duplicated([*keys, value]).sum())
    if exact:
        problems.append(Problem("warning", "duplicate_rows", f"{exact:,} rows that repeat another one's judgment were dropped", raw.name))
    return frame.drop_duplicates([*keys, value]), problems


def _codes(raw: RawTable, column: str | None) -> tuple[np.ndarray, pd.Index]:
    """The stripped names of a column as int32 codes (half the memory of int64; a table has
    far fewer than 2**31 rows) and the distinct names (one empty name for an absent column)."""
    if column is None:
        return np.zeros(len(raw.frame), dtype=np.int32), pd.Index([""], dtype="str")
    codes, names = pd.factorize(raw.frame[column].str.strip())
    return codes.astype(np.int32), names


def parse_long_ratings(raw: RawTable) -> ParsedTable:
    """Long scalar ratings: ``item_id, system, rater, score`` and optional ``annotator``."""
    problems = missing_column_problems(raw, "ratings", ["item_id", "system", "rater", "score"])
    if problems:
        return ParsedTable(raw.name, "ratings", _empty_ratings(), tuple(problems), ())
    cols = find_columns(raw)
    problems = empty_name_problems(raw, [cols["item_id"], cols["system"], cols["rater"]])
    scores, score_problems = _parse_scores(raw, [cols["score"]])
    raters, rater_names = _codes(raw, cols["rater"])
    return _ratings_table(raw, cols, [(raters, scores[0])], rater_names, [cols["score"]], problems + score_problems, ())


def parse_wide_ratings(raw: RawTable, rater_columns: Sequence[str] | None = None) -> ParsedTable:
    """Wide scalar ratings: ``item_id, system`` and one column per rater.

    ``rater_columns`` names the rater columns; by default every column other than the keys
    (and ``annotator``/text columns) is a rater, and the notes say which were taken.
    """
    problems = missing_column_problems(raw, "wide ratings", ["item_id", "system"])
    if problems:
        return ParsedTable(raw.name, "wide_ratings", _empty_ratings(), tuple(problems), ())
    cols = find_columns(raw)
    keys = {cols[k] for k in ("item_id", "system", "annotator", "output", "source", "reference", "prompt_id") if k in cols}
    if rater_columns is None:
        rater_columns = [c for c in raw.frame.columns if c not in keys]
    unknown = [c for c in rater_columns if c not in raw.frame.columns]
    if unknown or not rater_columns:
        message = f"rater column(s) {unknown} not in the file" if unknown else "no rater columns were found"
        return ParsedTable(
            raw.name,
            "wide_ratings",
            _empty_ratings(),
            (Problem("error", "missing_column", message + f" (found: {list(raw.frame.columns)})", raw.name),),
            (),
        )
    rater_columns = list(dict.fromkeys(rater_columns))
    problems = empty_name_problems(raw, [cols["item_id"], cols["system"]])
    scores, score_problems = _parse_scores(raw, rater_columns)
    problems += score_problems
    blocks = [(np.full(len(raw.frame), index, dtype=np.int32), scores[index]) for index in range(len(rater_columns))]
    note = f"{raw.name}: wide ratings; rater columns: {', '.join(rater_columns)}"
    table = _ratings_table(raw, cols, blocks, pd.Index(rater_columns, dtype="str"), rater_columns, problems, (note,))
    return replace(table, kind="wide_ratings")


def _empty_ratings() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=str) for c in ("item_id", "system", "rater")} | {"score": pd.Series(dtype=float)})


def _ratings_table(
    raw: RawTable,
    cols: dict[str, str],
    blocks: Sequence[tuple[np.ndarray, np.ndarray]],
    rater_names: pd.Index,
    score_columns: Sequence[str],
    problems: list[Problem],
    notes: tuple[str, ...],
) -> ParsedTable:
    """The canonical ratings frame from ``blocks`` of (rater code, score) per row of ``raw``
    (one block for a long file, one per rater column for a wide one; ``score_columns[k]`` is
    the column block ``k`` was read from). Rows without a score are dropped. Keys are handled
    as integer codes (memory and time scale with the rows, not with the names' lengths), and
    names are put back at the end."""
    items, item_names = _codes(raw, cols["item_id"])
    systems, system_names = _codes(raw, cols["system"])
    annotators, annotator_names = _codes(raw, cols.get("annotator"))
    kept = [np.flatnonzero(~np.isnan(scores)) for _, scores in blocks]
    rows = np.concatenate(kept)
    codes = {
        "item_id": items[rows],
        "system": systems[rows],
        "rater": np.concatenate([raters[keep] for (raters, _), keep in zip(blocks, kept, strict=True)]),
        "annotator": annotators[rows],
    }
    sizes = {"item_id": len(item_names), "system": len(system_names), "rater": len(rater_names), "annotator": len(annotator_names)}
    score = np.concatenate([scores[keep] for (_, scores), keep in zip(blocks, kept, strict=True)])
    duplicate_problems: list[Problem] = []
    if _has_repeats(_joint_codes(codes, sizes)):
        frame = pd.DataFrame(codes | {"score": score, "_row": rows, "_block": np.repeat(np.arange(len(kept)), [len(k) for k in kept])})
        frame, duplicate_problems = _dedupe(frame, raw, list(codes), "score", score_columns, "(item, system, rater)")
        codes, score = {c: frame[c].to_numpy() for c in codes}, frame["score"].to_numpy()
    kept_annotators = _empty_ratings()
    if "annotator" in cols:
        notes = (*notes, f"{raw.name}: scores of several annotators of one rater are averaged")
        kept_annotators = _annotator_ratings(codes, score, item_names, system_names, rater_names, annotator_names)
        if len(kept_annotators):
            notes = (*notes, f"{raw.name}: {KEPT_ANNOTATORS}")
    if "annotator" in cols or duplicate_problems:  # several scores per (item, system, rater): their mean
        key = _joint_codes({c: codes[c] for c in ("item_id", "system", "rater")}, sizes)
        means = pd.Series(score).groupby(key, sort=False).mean()
        first = pd.Series(np.arange(len(key))).groupby(key, sort=False).first().to_numpy()
        codes, score = {c: codes[c][first] for c in codes}, means.to_numpy(dtype=np.float64)
    ratings = pd.DataFrame(
        {
            "item_id": _names(item_names, codes["item_id"]),
            "system": _names(system_names, codes["system"]),
            "rater": _names(rater_names, codes["rater"]),
            "score": score,
        }
    )
    if len(kept_annotators):
        ratings = pd.concat([ratings, kept_annotators], ignore_index=True)
    return ParsedTable(raw.name, "ratings", ratings, tuple(problems + duplicate_problems), notes)


def _annotator_ratings(
    codes: dict[str, np.ndarray],
    score: np.ndarray,
    item_names: pd.Index,
    system_names: pd.Index,
    rater_names: pd.Index,
    annotator_names: pd.Index,
) -> pd.DataFrame:
    """The named annotators' own scores of the human raters as raters of their own
    (:func:`~prefeval_core.data.annotators.annotator_rater_names`): each is one rating the study
    paid, and their mean is the rater's score (:func:`~prefeval_core.data.annotators.annotator_scores`)."""
    humans = keeps_annotators(pd.Series(rater_names, dtype="str")).to_numpy(dtype=bool)
    named = np.array([str(a) != "" for a in annotator_names], dtype=bool)
    if not len(humans) or not len(named):
        return _empty_ratings()
    rows = np.flatnonzero(humans[codes["rater"]] & (codes["annotator"] >= 0) & named[np.maximum(codes["annotator"], 0)])
    sub = annotator_rater_names(_names(rater_names, codes["rater"][rows]), _names(annotator_names, codes["annotator"][rows]))
    return pd.DataFrame(
        {
            "item_id": _names(item_names, codes["item_id"][rows]),
            "system": _names(system_names, codes["system"][rows]),
            "rater": sub,
            "score": score[rows],
        }
    )


def _joint_codes(codes: dict[str, np.ndarray], sizes: dict[str, int]) -> np.ndarray:
    """One int64 per row, equal for two rows exactly when all their ``codes`` are equal."""
    if math.prod(sizes[c] for c in codes) < 2**62:
        joint = np.zeros(len(next(iter(codes.values()))), dtype=np.int64)
        for column, values in codes.items():
            joint *= sizes[column]
            joint += values
        return joint
    return pd.DataFrame(codes).groupby(list(codes), sort=False).ngroup().to_numpy(dtype=np.int64)


def _has_repeats(keys: np.ndarray) -> bool:
    ordered = np.sort(keys)
    return bool((ordered[1:] == ordered[:-1]).any())


def _names(names: pd.Index, codes: np.ndarray) -> pd.Series:
    return pd.Series(names.take(codes), dtype="str")


def parse_labels(raw: RawTable, column: str) -> tuple[np.ndarray, list[Problem], str]:
    """Outcome codes of a label column, the problems, and a note on how labels were read."""
    text = raw.frame[column].str.strip().str.lower()
    # Parquet or JSON numbers arrive as "1.0"; read them as whole numbers.
    text = text.str.replace(r"^([+-]?\d+)\.0+$", r"\1", regex=True)
    lookup = {k: v[0] for k, v in LABELS.items()}
    codes = text.map(lookup)
    bad = np.flatnonzero(codes.isna().to_numpy())
    accepted = "'>', '=', '<' or A/B/tie or 1/0/-1 (A = system_a better)"
    problems = cell_problems(raw, bad, column, "bad_label", f"expected a preference label: {accepted}")
    seen = sorted(set(text[codes.notna()]), key=lambda v: LABELS[v][0])
    meaning = ", ".join(f"'{v}' as {SYMBOLS[LABELS[v][0]]}" for v in seen)
    schemes = sorted({LABELS[v][1] for v in seen})
    note = f"{raw.name}: labels in column '{column}' read as {meaning} ({' and '.join(schemes)}; '>' = system_a better)"
    return codes.fillna(-1).to_numpy(dtype=np.int8), problems, note


def parse_preferences(raw: RawTable) -> ParsedTable:
    """Pairwise preferences: ``item_id, system_a, system_b, rater, label`` (optional ``annotator``).

    Pairs are turned to canonical order (flipping the outcome). Several annotators of one
    rater on the same item and pair are combined by majority: the sign of the sum of their
    values ``v`` **(choice)**.
    """
    problems = missing_column_problems(raw, "preferences", ["item_id", "system_a", "system_b", "rater", "label"])
    if problems:
        return ParsedTable(raw.name, "preferences", _empty_preferences(), tuple(problems), ())
    cols = find_columns(raw)
    problems = empty_name_problems(raw, [cols[c] for c in ("item_id", "system_a", "system_b", "rater")])
    codes, label_problems, note = parse_labels(raw, cols["label"])
    problems += label_problems
    a = raw.frame[cols["system_a"]].str.strip().to_numpy()
    b = raw.frame[cols["system_b"]].str.strip().to_numpy()
    same = np.flatnonzero((a == b) & (a != ""))
    problems += cell_problems(raw, same, cols["system_b"], "same_system", "expected two different systems in a pair")
    flip = a > b
    frame = pd.DataFrame(
        {
            "item_id": raw.frame[cols["item_id"]].str.strip().to_numpy(),
            "system_a": np.where(flip, b, a),
            "system_b": np.where(flip, a, b),
            "rater": raw.frame[cols["rater"]].str.strip().to_numpy(),
            "outcome": np.where(flip, flip_codes(codes.astype(np.int8)), codes).astype(np.int8),
            "annotator": raw.frame[cols["annotator"]].str.strip().to_numpy() if "annotator" in cols else "",
            "_row": np.arange(len(raw.frame)),
            "_block": 0,
        }
    )
    frame = frame[(frame["outcome"] >= 0) & (frame["system_a"] != frame["system_b"])]
    keys = ["item_id", "system_a", "system_b", "rater", "annotator"]
    frame, duplicate_problems = _dedupe(frame, raw, keys, "outcome", [cols["label"]], "(item, system pair, rater)")
    problems += duplicate_problems
    majority = majority_outcomes(frame, keys[:-1])
    notes = (note,) + ((f"{raw.name}: several annotators per pair are combined by majority",) if "annotator" in cols else ())
    named = frame[(frame["annotator"] != "") & frame["annotator"].notna() & keeps_annotators(frame["rater"])]
    named = named[named.groupby(keys[:-1], sort=False)["annotator"].transform("size") > 1]
    if len(named):  # the annotators of a comparison several judged kept too: every comparison the study paid is counted
        sub = annotator_rater_names(named["rater"], named["annotator"])
        majority = pd.concat([majority, named.assign(rater=sub)[majority.columns]], ignore_index=True)
        notes = (*notes, f"{raw.name}: {KEPT_ANNOTATORS}")
    return ParsedTable(raw.name, "preferences", majority, tuple(problems), notes)


def _empty_preferences() -> pd.DataFrame:
    frame = pd.DataFrame({c: pd.Series(dtype=str) for c in ("item_id", "system_a", "system_b", "rater")})
    return frame.assign(outcome=pd.Series(dtype=np.int8))


def parse_texts(raw: RawTable) -> ParsedTable:
    """System outputs: ``item_id, system, output`` (optional ``prompt_id``)."""
    problems = missing_column_problems(raw, "texts", ["item_id", "system", "output"])
    if problems:
        return ParsedTable(raw.name, "texts", pd.DataFrame(columns=["item_id", "system", "output"]), tuple(problems), ())
    cols = find_columns(raw)
    problems = empty_name_problems(raw, [cols["item_id"], cols["system"]])
    frame = pd.DataFrame({c: raw.frame[cols[c]].to_numpy() for c in ("item_id", "system", "output")})
    frame["item_id"] = frame["item_id"].str.strip()
    frame["system"] = frame["system"].str.strip()
    if "prompt_id" in cols:
        frame["prompt_id"] = raw.frame[cols["prompt_id"]].str.strip().to_numpy()
    frame = frame.drop_duplicates(["item_id", "system"], keep="last")
    return ParsedTable(raw.name, "texts", frame, tuple(problems), (f"{raw.name}: system outputs",))


def parse_sources(raw: RawTable) -> ParsedTable:
    """Sources or contexts, keyed by ``item_id`` or ``prompt_id``.

    The ``source`` column is taken as it is; without one, the other text columns are joined
    as ``column: text`` paragraphs (e.g. PandaLM's ``instruction`` and ``input``). A
    ``reference`` column, where present, also gives references.
    """
    cols = find_columns(raw)
    key = "item_id" if "item_id" in cols else "prompt_id" if "prompt_id" in cols else None
    if key is None:
        problem = Problem(
            "error", "missing_column", "a sources file needs the column 'item_id' (or 'prompt_id')", raw.name, column="item_id"
        )
        return ParsedTable(raw.name, "sources", pd.DataFrame(columns=["item_id", "source"]), (problem,), ())
    if "source" in cols:
        source = raw.frame[cols["source"]]
    else:
        used = {cols[k] for k in cols}
        source = _labelled_paragraphs(raw.frame[[c for c in raw.frame.columns if c not in used]])
    frame = pd.DataFrame({key: raw.frame[cols[key]].str.strip().to_numpy(), "source": source.to_numpy()})
    if "reference" in cols:
        frame["reference"] = raw.frame[cols["reference"]].to_numpy()
    return ParsedTable(raw.name, "sources", frame.drop_duplicates(key, keep="last"), (), (f"{raw.name}: sources keyed by {key}",))


def _labelled_paragraphs(columns: pd.DataFrame) -> pd.Series:
    """Per row, ``column: text`` for each non-blank cell, joined by blank lines (vectorised)."""
    joined = pd.Series("", index=columns.index, dtype="str")
    for column in columns.columns:
        cells = columns[column]
        part = (f"{column}: " + cells).where(cells.str.strip() != "", "")
        joined = joined.where(part == "", joined.where(joined == "", joined + "\n\n") + part)
    return joined


def parse_references(raw: RawTable) -> ParsedTable:
    """References: ``item_id, reference`` and optional ``ref_index`` (several per item)."""
    problems = missing_column_problems(raw, "references", ["item_id", "reference"])
    if problems:
        return ParsedTable(raw.name, "references", pd.DataFrame(columns=["item_id", "ref_index", "reference"]), tuple(problems), ())
    cols = find_columns(raw)
    frame = pd.DataFrame(
        {"item_id": raw.frame[cols["item_id"]].str.strip().to_numpy(), "reference": raw.frame[cols["reference"]].to_numpy()}
    )
    problems = []
    if "ref_index" in cols:
        frame["ref_index"], problems = _reference_indices(raw, cols["ref_index"])
    else:
        frame["ref_index"] = frame.groupby("item_id").cumcount().to_numpy()
    notes = (f"{raw.name}: references",)
    return ParsedTable(raw.name, "references", frame[["item_id", "ref_index", "reference"]], tuple(problems), notes)


def _reference_indices(raw: RawTable, column: str) -> tuple[np.ndarray, list[Problem]]:
    """A ``ref_index`` column: whole numbers 0 <= i < 2**31 (empty cells are 0)."""
    text = raw.frame[column].str.strip()
    numbers = _numbers(text)
    empty = (text == "").to_numpy()
    whole = (numbers >= 0) & (numbers < 2**31) & (np.floor(numbers) == numbers)  # False for NaN and inf
    bad = np.flatnonzero(~empty & ~whole)
    problems = cell_problems(raw, bad, column, "bad_number", "expected a whole number 0, 1, 2, ... (the reference's index)")
    return np.where(whole, numbers, 0).astype(np.int64), problems


def parse_table(raw: RawTable, kind: TableKind | None = None, rater_columns: Sequence[str] | None = None) -> ParsedTable:
    """Interpret ``raw`` as the plain table ``kind`` (detected when ``None``), after checking
    that no two columns are read as the same one (:func:`column_problems`). A field's own
    formats are read by :func:`prefeval_core.data.dataset.parse_tables`."""
    kind = kind or detect_table_kind(raw)
    if kind == "ignored":
        return _parse_kind(raw, kind, rater_columns)
    ambiguous = column_problems(raw)
    if any(p.severity == "error" for p in ambiguous):
        return ParsedTable(raw.name, kind, pd.DataFrame(), tuple(ambiguous), ())
    table = _parse_kind(raw, kind, rater_columns)
    return replace(table, problems=tuple(ambiguous) + table.problems)


def _parse_kind(raw: RawTable, kind: TableKind, rater_columns: Sequence[str] | None) -> ParsedTable:
    if kind == "wide_ratings":
        return parse_wide_ratings(raw, rater_columns)
    parser = _TABLE_PARSERS.get(kind)
    if parser is not None:
        return parser(raw)
    note = "not a ratings, preferences, texts, sources or references file; ignored"
    return ParsedTable(raw.name, "ignored", pd.DataFrame(), (Problem("warning", "ignored_file", note, raw.name),), ())


_TABLE_PARSERS: Final[Mapping[str, Callable[[RawTable], ParsedTable]]] = {
    "ratings": parse_long_ratings,
    "preferences": parse_preferences,
    "texts": parse_texts,
    "sources": parse_sources,
    "references": parse_references,
}
"""The reader of each plain table kind but ``wide_ratings`` (which takes its rater columns) and
``ignored``. A field's own formats are in :data:`prefeval_core.data.field_formats.FIELD_FORMATS`."""
