"""Interpreting raw tables as ratings, preferences, texts, sources or references.

Canonical frames produced here (all names are ``str``):

* ratings: ``item_id, system, rater, score`` (``float64``, higher is better), one row per
  (item, system, rater); several annotators of one rater are averaged (method.md §2).
* preferences: ``item_id, system_a, system_b, rater, outcome`` with ``system_a < system_b``
  (canonical order) and ``outcome`` an ``int8`` code 0/1/2 for ``>``/``=``/``<``.
* texts: ``item_id, system, output``; sources: ``item_id, source``; references:
  ``item_id, ref_index, reference``. Texts and sources may carry a ``prompt_id`` that links
  several items to one source (PandaLM).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

import numpy as np
import pandas as pd

from prefeval_core.data.reading import RawTable
from prefeval_core.errors import MAX_PROBLEMS_PER_KIND, Problem
from prefeval_core.outcomes import SYMBOLS

TableKind = Literal["ratings", "wide_ratings", "preferences", "texts", "sources", "references", "ignored"]

_ALIASES: Final[dict[str, tuple[str, ...]]] = {
    "item_id": ("item_id", "item", "segment_id", "seg_id", "doc_id"),
    "system": ("system", "model", "sys"),
    "rater": ("rater", "metric"),
    "score": ("score", "value", "rating"),
    "annotator": ("annotator", "annotator_id", "worker"),
    "system_a": ("system_a", "model_a", "sys_a"),
    "system_b": ("system_b", "model_b", "sys_b"),
    "label": ("label", "preference", "winner"),
    "output": ("output", "hypothesis", "translation", "summary", "response"),
    "reference": ("reference", "ref"),
    "source": ("source", "src"),
    "prompt_id": ("prompt_id",),
    "ref_index": ("ref_index",),
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


def _normal(column: str) -> str:
    return column.strip().lower().replace(" ", "_").replace("-", "_")


def find_columns(raw: RawTable) -> dict[str, str]:
    """Map canonical column names to the file's own column names (case-insensitive, aliases)."""
    present = {_normal(c): c for c in raw.frame.columns}
    found: dict[str, str] = {}
    for canonical, aliases in _ALIASES.items():
        for alias in aliases:
            if alias in present:
                found[canonical] = present[alias]
                break
    return found


def detect_kind(raw: RawTable) -> TableKind:
    """Guess what a file holds from its name and columns."""
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


def _missing_columns(raw: RawTable, kind: str, needed: Sequence[str]) -> list[Problem]:
    cols = find_columns(raw)
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
    values = raw.frame[column].to_numpy()
    for index in rows[:MAX_PROBLEMS_PER_KIND]:
        problems.append(
            Problem(
                severity,
                kind,
                f"{describe}, found {values[index]!r}",
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


def _empty_names(raw: RawTable, columns: Sequence[str]) -> list[Problem]:
    problems: list[Problem] = []
    for column in columns:
        empty = np.flatnonzero(raw.frame[column].str.strip().to_numpy() == "")
        problems += cell_problems(raw, empty, column, "empty_name", "expected a non-empty name")
    return problems


def _parse_scores(raw: RawTable, column: str) -> tuple[np.ndarray, list[Problem]]:
    """Scores as float64 (NaN where empty), with an error per cell that is not a finite number."""
    text = raw.frame[column].str.strip()
    scores = pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64, copy=True)
    empty = (text == "").to_numpy() | text.str.lower().isin(["nan", "na", "null", "none"]).to_numpy()
    bad = np.flatnonzero((np.isnan(scores) & ~empty) | np.isinf(scores))
    problems = cell_problems(raw, bad, column, "bad_number", "expected a number (a score; higher is better)")
    missing = np.flatnonzero(empty)
    if len(missing):
        problems.append(
            Problem(
                "warning",
                "missing_score",
                f"{len(missing):,} empty scores were skipped (first at row {missing[0] + 1})",
                raw.name,
                column=column,
            )
        )
    scores[bad] = np.nan
    return scores, problems


def _dedupe(
    frame: pd.DataFrame, raw: RawTable, keys: list[str], value: str, value_column: str, what: str
) -> tuple[pd.DataFrame, list[Problem]]:
    """Drop exact duplicate rows (warning); report keys repeated with different values (error)."""
    problems: list[Problem] = []
    repeated = frame.duplicated(keys, keep=False)
    if not repeated.any():
        return frame, problems
    groups = frame[repeated].groupby(keys, sort=False)[value].nunique()
    conflicting = groups[groups > 1]
    if len(conflicting):
        clash = frame[repeated].set_index(keys).loc[conflicting.index]
        rows = np.sort(clash["_row"].to_numpy())
        problems += cell_problems(
            raw, rows, value_column, "duplicate", f"the same {what} appears more than once with different values; keep one row"
        )
    exact = int(frame.duplicated([*keys, value]).sum())
    if exact:
        problems.append(Problem("warning", "duplicate_rows", f"{exact:,} exact duplicate rows were dropped", raw.name))
    return frame.drop_duplicates([*keys, value]), problems


def parse_long_ratings(raw: RawTable) -> ParsedTable:
    """Long scalar ratings: ``item_id, system, rater, score`` and optional ``annotator``."""
    problems = _missing_columns(raw, "ratings", ["item_id", "system", "rater", "score"])
    if problems:
        return ParsedTable(raw.name, "ratings", _empty_ratings(), tuple(problems), ())
    cols = find_columns(raw)
    return _ratings_frame(
        raw, cols, cols["rater"], raw.frame[cols["rater"]].str.strip().to_numpy(), cols["score"], np.arange(len(raw.frame))
    )


def parse_wide_ratings(raw: RawTable, rater_columns: Sequence[str] | None = None) -> ParsedTable:
    """Wide scalar ratings: ``item_id, system`` and one column per rater.

    ``rater_columns`` names the rater columns; by default every column other than the keys
    (and ``annotator``/text columns) is a rater, and the notes say which were taken.
    """
    problems = _missing_columns(raw, "wide ratings", ["item_id", "system"])
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
    parts: list[ParsedTable] = []
    rows = np.arange(len(raw.frame))
    for column in rater_columns:
        parts.append(_ratings_frame(raw, cols, column, np.full(len(raw.frame), column, dtype=object), column, rows))
    frame = pd.concat([p.frame for p in parts], ignore_index=True)
    problems = [problem for p in parts for problem in p.problems]
    note = f"{raw.name}: wide ratings; rater columns: {', '.join(rater_columns)}"
    return ParsedTable(raw.name, "wide_ratings", frame, tuple(problems), (note,))


def _empty_ratings() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=str) for c in ("item_id", "system", "rater")} | {"score": pd.Series(dtype=float)})


def _ratings_frame(
    raw: RawTable, cols: dict[str, str], rater_column: str, raters: np.ndarray, score_column: str, rows: np.ndarray
) -> ParsedTable:
    problems = _empty_names(raw, [cols["item_id"], cols["system"]] + ([rater_column] if rater_column == cols.get("rater") else []))
    scores, score_problems = _parse_scores(raw, score_column)
    problems += score_problems
    frame = pd.DataFrame(
        {
            "item_id": raw.frame[cols["item_id"]].str.strip().to_numpy(),
            "system": raw.frame[cols["system"]].str.strip().to_numpy(),
            "rater": raters,
            "score": scores,
            "annotator": raw.frame[cols["annotator"]].str.strip().to_numpy() if "annotator" in cols else "",
            "_row": rows,
        }
    )
    frame = frame[~np.isnan(scores)]
    frame, duplicate_problems = _dedupe(
        frame, raw, ["item_id", "system", "rater", "annotator"], "score", score_column, "(item, system, rater)"
    )
    problems += duplicate_problems
    notes: list[str] = []
    if "annotator" in cols:
        notes.append(f"{raw.name}: scores of several annotators of one rater are averaged")
    averaged = frame.groupby(["item_id", "system", "rater"], as_index=False, sort=False)["score"].mean()
    return ParsedTable(raw.name, "ratings", averaged, tuple(problems), tuple(notes))


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
    problems = _missing_columns(raw, "preferences", ["item_id", "system_a", "system_b", "rater", "label"])
    if problems:
        return ParsedTable(raw.name, "preferences", _empty_preferences(), tuple(problems), ())
    cols = find_columns(raw)
    problems = _empty_names(raw, [cols[c] for c in ("item_id", "system_a", "system_b", "rater")])
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
            "outcome": np.where(flip & (codes >= 0), 2 - codes, codes).astype(np.int8),
            "annotator": raw.frame[cols["annotator"]].str.strip().to_numpy() if "annotator" in cols else "",
            "_row": np.arange(len(raw.frame)),
        }
    )
    frame = frame[(frame["outcome"] >= 0) & (frame["system_a"] != frame["system_b"])]
    keys = ["item_id", "system_a", "system_b", "rater", "annotator"]
    frame, duplicate_problems = _dedupe(frame, raw, keys, "outcome", cols["label"], "(item, system pair, rater)")
    problems += duplicate_problems
    votes = (1 - frame["outcome"].astype(np.int64)).rename("vote")  # v(outcome): +1, 0, -1
    majority = frame.assign(vote=votes).groupby(keys[:-1], as_index=False, sort=False)["vote"].sum()
    majority["outcome"] = (1 - np.sign(majority["vote"])).astype(np.int8)
    notes = (note,) + ((f"{raw.name}: several annotators per pair are combined by majority",) if "annotator" in cols else ())
    return ParsedTable(raw.name, "preferences", majority.drop(columns="vote"), tuple(problems), notes)


def _empty_preferences() -> pd.DataFrame:
    frame = pd.DataFrame({c: pd.Series(dtype=str) for c in ("item_id", "system_a", "system_b", "rater")})
    return frame.assign(outcome=pd.Series(dtype=np.int8))


def parse_texts(raw: RawTable) -> ParsedTable:
    """System outputs: ``item_id, system, output`` (optional ``prompt_id``)."""
    problems = _missing_columns(raw, "texts", ["item_id", "system", "output"])
    if problems:
        return ParsedTable(raw.name, "texts", pd.DataFrame(columns=["item_id", "system", "output"]), tuple(problems), ())
    cols = find_columns(raw)
    problems = _empty_names(raw, [cols["item_id"], cols["system"]])
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
        text_columns = [c for c in raw.frame.columns if c not in used]
        rows = raw.frame[text_columns].itertuples(index=False)
        source = pd.Series(["\n\n".join(f"{c}: {v}" for c, v in zip(text_columns, row) if v.strip()) for row in rows])
    frame = pd.DataFrame({key: raw.frame[cols[key]].str.strip().to_numpy(), "source": source.to_numpy()})
    if "reference" in cols:
        frame["reference"] = raw.frame[cols["reference"]].to_numpy()
    return ParsedTable(raw.name, "sources", frame.drop_duplicates(key, keep="last"), (), (f"{raw.name}: sources keyed by {key}",))


def parse_references(raw: RawTable) -> ParsedTable:
    """References: ``item_id, reference`` and optional ``ref_index`` (several per item)."""
    problems = _missing_columns(raw, "references", ["item_id", "reference"])
    if problems:
        return ParsedTable(raw.name, "references", pd.DataFrame(columns=["item_id", "ref_index", "reference"]), tuple(problems), ())
    cols = find_columns(raw)
    frame = pd.DataFrame(
        {"item_id": raw.frame[cols["item_id"]].str.strip().to_numpy(), "reference": raw.frame[cols["reference"]].to_numpy()}
    )
    frame["ref_index"] = (
        pd.to_numeric(raw.frame[cols["ref_index"]], errors="coerce").fillna(0).astype(int).to_numpy()
        if "ref_index" in cols
        else frame.groupby("item_id").cumcount().to_numpy()
    )
    return ParsedTable(raw.name, "references", frame[["item_id", "ref_index", "reference"]], (), (f"{raw.name}: references",))


def parse_table(raw: RawTable, kind: TableKind | None = None, rater_columns: Sequence[str] | None = None) -> ParsedTable:
    """Interpret ``raw`` as ``kind`` (detected when ``None``)."""
    kind = kind or detect_kind(raw)
    if kind == "ratings":
        return parse_long_ratings(raw)
    if kind == "wide_ratings":
        return parse_wide_ratings(raw, rater_columns)
    if kind == "preferences":
        return parse_preferences(raw)
    if kind == "texts":
        return parse_texts(raw)
    if kind == "sources":
        return parse_sources(raw)
    if kind == "references":
        return parse_references(raw)
    note = "not a ratings, preferences, texts, sources or references file; ignored"
    return ParsedTable(raw.name, "ignored", pd.DataFrame(), (Problem("warning", "ignored_file", note, raw.name),), ())
