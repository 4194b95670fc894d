"""Human annotations made in the app: the on-disk store, left/right order, request files.

* **Store**: one SQLite file ``annotations.sqlite`` in the data folder (``$PREFEVAL_DATA_DIR``,
  default ``./prefeval_data``). Each annotation is one row written (and committed) the moment
  it is made, so a browser reload or an app restart loses nothing. Undo marks the row as
  undone (``undone_at``) instead of deleting it, so the store keeps a full audit trail.
* **Outcomes** are stored in canonical pair order (``system_a < system_b``) with the codes of
  method.md §1: 0 ``>`` (A better), 1 ``=``, 2 ``<`` (B better). The side the annotator saw
  each system on is recorded (``left_system``); the displayed choice (left / equal / right)
  is turned back into the canonical outcome before storing.
* **Left/right order** is a seeded coin flip per (dataset, item, pair): random to the
  annotator, reproducible for the project (:func:`left_right`).
* **Request files**: the items and pairs to annotate, as CSV or JSONL with an empty
  ``label`` column for annotators; CSV goes through :mod:`prefeval_core.safe_csv` so that
  spreadsheets do not run cells as formulas (OWASP "CSV injection"). Re-import
  (:func:`read_annotated_requests`) strips that quote again and reads labels with the data
  layer's :func:`~prefeval_core.data.formats.parse_labels`.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final, Literal

import numpy as np
import pandas as pd

from prefeval_core.data.formats import find_columns, parse_labels
from prefeval_core.data.reading import RawTable, read_table_bytes
from prefeval_core.errors import DataError, MissingColumnError, Problem, raise_if_errors
from prefeval_core.outcomes import BETTER, TIE, WORSE, canonical_pair
from prefeval_core.preferences import unknown_system_problems
from prefeval_core.protocol import Annotation as ProtocolAnnotation
from prefeval_core.protocol import ProtocolState, next_request
from prefeval_core.safe_csv import neutralise_cell, restore_cell, to_safe_csv  # noqa: F401  (pages and tests import them from here)

DATA_DIR_ENV: Final = "PREFEVAL_DATA_DIR"
"""Environment variable naming the local data folder (tests point it at a temporary folder)."""
STORE_FILE: Final = "annotations.sqlite"

Choice = Literal["left", "equal", "right"]
"""What the annotator clicked: the output shown on the left is better, no preference, the right one."""

ANNOTATION_COLUMNS: Final = (
    "id", "dataset", "item_id", "system_a", "system_b", "outcome", "annotator", "left_system", "created_at", "undone_at"
)  # fmt: skip
REQUEST_COLUMNS: Final = ("item_id", "system_a", "system_b", "source", "output_a", "output_b", "label", "annotator")

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS annotations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    dataset TEXT NOT NULL,
    item_id TEXT NOT NULL,
    system_a TEXT NOT NULL,
    system_b TEXT NOT NULL,
    outcome INTEGER NOT NULL CHECK (outcome IN (0, 1, 2)),
    annotator TEXT NOT NULL,
    left_system TEXT NOT NULL,
    created_at TEXT NOT NULL,
    undone_at TEXT,
    CHECK (system_a < system_b),
    CHECK (left_system IN (system_a, system_b))
);
CREATE INDEX IF NOT EXISTS annotations_dataset ON annotations (dataset, undone_at);
"""


@dataclass(frozen=True)
class Annotation:
    """One human judgement of one pair on one item.

    Attributes:
        dataset: key of the dataset the item belongs to (e.g. ``sample:summeval``).
        item_id: the item.
        system_a, system_b: the pair in canonical order (``system_a < system_b``).
        outcome: 0 ``>`` (A better), 1 ``=``, 2 ``<`` (B better), canonical order.
        annotator: who judged (free text, as typed).
        left_system: the system whose output was shown on the left (``system_a`` or ``system_b``).
        created_at: UTC time stamp, ISO 8601.
        id: row id in the store (``None`` before storing).
        undone_at: when it was undone, or ``None`` while it counts.
    """

    dataset: str
    item_id: str
    system_a: str
    system_b: str
    outcome: int
    annotator: str
    left_system: str
    created_at: str
    id: int | None = None
    undone_at: str | None = None


def default_data_dir() -> Path:
    """``$PREFEVAL_DATA_DIR`` if set, else ``./prefeval_data`` (git-ignored)."""
    return Path(os.environ.get(DATA_DIR_ENV) or "prefeval_data")


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def left_right(seed: int, dataset: str, item_id: str, system_a: str, system_b: str) -> tuple[str, str]:
    """``(left_system, right_system)`` for showing a pair on an item.

    A coin flip seeded by ``seed`` and the (dataset, item, pair) identity: each item gets its
    own random side, the same on every rerun and restart. The pair may be given in any order.
    """
    a, b, _ = canonical_pair(system_a, system_b)
    digest = hashlib.sha256(f"{dataset}\x1f{item_id}\x1f{a}\x1f{b}".encode()).digest()
    rng = np.random.default_rng([seed, int.from_bytes(digest[:8], "little")])
    return (b, a) if rng.random() < 0.5 else (a, b)


def outcome_from_choice(choice: Choice, left_system: str, system_a: str, system_b: str) -> int:
    """The canonical outcome code of a displayed choice (undoes the left/right shuffle)."""
    a, b, _ = canonical_pair(system_a, system_b)
    if left_system not in (a, b):
        raise ValueError(f"left_system {left_system!r} is not one of the pair ({a}, {b})")
    if choice == "equal":
        return TIE
    winner = left_system if choice == "left" else (b if left_system == a else a)
    return BETTER if winner == a else WORSE


def make_annotation(
    dataset: str, item_id: str, system_a: str, system_b: str, choice: Choice, annotator: str, left_system: str
) -> Annotation:
    """An :class:`Annotation` from what the annotator saw and clicked, time-stamped now."""
    a, b, _ = canonical_pair(system_a, system_b)
    outcome = outcome_from_choice(choice, left_system, a, b)
    return Annotation(dataset, item_id, a, b, outcome, annotator.strip() or "anonymous", left_system, utc_now())


@dataclass(frozen=True)
class AnnotationStore:
    """The SQLite file of annotations. Every call opens its own short connection (no shared
    state between app sessions); SQLite's locking serialises concurrent writers."""

    path: Path

    @classmethod
    def open(cls, data_dir: Path | str | None = None) -> AnnotationStore:
        """The store in ``data_dir`` (default :func:`default_data_dir`), created if absent."""
        folder = Path(data_dir) if data_dir is not None else default_data_dir()
        folder.mkdir(parents=True, exist_ok=True)
        store = cls(folder / STORE_FILE)
        with store._connect() as conn:
            conn.executescript(_SCHEMA)
        return store

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        with closing(sqlite3.connect(self.path, timeout=10.0)) as conn, conn:  # inner `conn` commits or rolls back
            yield conn

    def add(self, annotation: Annotation) -> Annotation:
        """Write one annotation now (committed before returning); returns it with its id."""
        row = asdict(annotation)
        row.pop("id")
        with self._connect() as conn:
            cursor = conn.execute(f"INSERT INTO annotations ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", tuple(row.values()))
            new_id = cursor.lastrowid
        return Annotation(**{**asdict(annotation), "id": new_id})

    def add_many(self, annotations: Sequence[Annotation]) -> int:
        """Write several annotations in one transaction, skipping exact copies of stored ones
        (same dataset, item, pair, annotator and time stamp); returns how many were new."""
        existing = {_identity(a) for a in self.annotations(include_undone=True)}
        new = [a for a in annotations if _identity(a) not in existing]
        with self._connect() as conn:
            for annotation in new:
                row = asdict(annotation)
                row.pop("id")
                conn.execute(f"INSERT INTO annotations ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", tuple(row.values()))
        return len(new)

    def undo_last(self, dataset: str, annotator: str | None = None) -> Annotation | None:
        """Mark the newest annotation of ``dataset`` (by ``annotator`` if given) as undone; returns it."""
        query = "SELECT * FROM annotations WHERE dataset = ? AND undone_at IS NULL"
        params: list[str] = [dataset]
        if annotator is not None:
            query += " AND annotator = ?"
            params.append(annotator)
        with self._connect() as conn:
            conn.row_factory = sqlite3.Row
            row = conn.execute(query + " ORDER BY id DESC LIMIT 1", params).fetchone()
            if row is None:
                return None
            now = utc_now()
            conn.execute("UPDATE annotations SET undone_at = ? WHERE id = ?", (now, row["id"]))
        return Annotation(**{**dict(row), "undone_at": now})

    def annotations(self, dataset: str | None = None, *, include_undone: bool = False) -> list[Annotation]:
        """Stored annotations, oldest first; only those that count unless ``include_undone``."""
        query = "SELECT * FROM annotations WHERE 1 = 1"
        params: list[str] = []
        if dataset is not None:
            query += " AND dataset = ?"
            params.append(dataset)
        if not include_undone:
            query += " AND undone_at IS NULL"
        with self._connect() as conn:
            conn.row_factory = sqlite3.Row
            rows = conn.execute(query + " ORDER BY id", params).fetchall()
        return [Annotation(**dict(row)) for row in rows]

    def frame(self, dataset: str | None = None, *, include_undone: bool = False) -> pd.DataFrame:
        """:meth:`annotations` as a frame with :data:`ANNOTATION_COLUMNS`."""
        return annotations_frame(self.annotations(dataset, include_undone=include_undone))


def _identity(annotation: Annotation) -> tuple[str, ...]:
    return (annotation.dataset, annotation.item_id, annotation.system_a, annotation.system_b, annotation.annotator, annotation.created_at)


def annotations_frame(annotations: Sequence[Annotation]) -> pd.DataFrame:
    """Annotations as a frame with :data:`ANNOTATION_COLUMNS` (``outcome`` as ``int8`` codes)."""
    frame = pd.DataFrame([asdict(a) for a in annotations], columns=list(ANNOTATION_COLUMNS))
    return frame.astype({"outcome": np.int8})


def human_outcomes(annotations: Sequence[Annotation]) -> pd.DataFrame:
    """One human outcome per (item, pair) from the annotations that count.

    An annotator's latest judgement of an (item, pair) replaces their earlier ones; several
    annotators are combined by majority, the sign of the sum of ``v`` (as the data layer does
    for preference files, **(choice)**).

    Returns:
        ``system_a, system_b, item_id, outcome`` (``int8`` codes), sorted by pair and item.
    """
    columns = ["system_a", "system_b", "item_id", "outcome"]
    if not annotations:
        return pd.DataFrame({c: pd.Series(dtype=np.int8 if c == "outcome" else object) for c in columns})
    frame = annotations_frame([a for a in annotations if a.undone_at is None]).sort_values("id", kind="stable")
    latest = frame.drop_duplicates(["item_id", "system_a", "system_b", "annotator"], keep="last")
    votes = latest.assign(vote=1 - latest["outcome"].astype(np.int64))  # v(outcome): +1, 0, -1
    majority = votes.groupby(["system_a", "system_b", "item_id"], as_index=False)["vote"].sum()
    majority["outcome"] = (1 - np.sign(majority["vote"])).astype(np.int8)
    return majority[columns].sort_values(columns[:3], kind="stable").reset_index(drop=True)


def export_annotations_csv(annotations: Sequence[Annotation]) -> bytes:
    """The annotations as CSV (formula-neutralised), e.g. for the store's download button."""
    return to_safe_csv(annotations_frame(annotations))


def export_annotations_jsonl(annotations: Sequence[Annotation]) -> bytes:
    return "".join(json.dumps(asdict(a), ensure_ascii=False) + "\n" for a in annotations).encode()


# --- request files ----------------------------------------------------------------------


def request_frame(
    tasks: pd.DataFrame, texts: pd.DataFrame | None = None, sources: pd.DataFrame | None = None, annotator: str = ""
) -> pd.DataFrame:
    """A request file's rows: one per (item, pair) to annotate, with texts where known.

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
    outputs = {} if texts is None or texts.empty else texts.set_index(["item_id", "system"])["output"].to_dict()
    source_of = {} if sources is None or sources.empty else dict(zip(sources["item_id"], sources["source"], strict=True))
    frame["source"] = [source_of.get(i, "") for i in frame["item_id"]]
    frame["output_a"] = [outputs.get((i, a), "") for i, a in zip(frame["item_id"], frame["system_a"], strict=True)]
    frame["output_b"] = [outputs.get((i, b), "") for i, b in zip(frame["item_id"], frame["system_b"], strict=True)]
    frame["label"] = ""
    frame["annotator"] = annotator
    return frame[list(REQUEST_COLUMNS)]


def export_requests_csv(requests: pd.DataFrame) -> bytes:
    """A request frame (:func:`request_frame`) as formula-neutralised CSV."""
    return to_safe_csv(requests)


def export_requests_jsonl(requests: pd.DataFrame) -> bytes:
    """A request frame as JSON lines (not neutralised: JSON is not opened as a spreadsheet)."""
    return requests.to_json(orient="records", lines=True, force_ascii=False).encode("utf-8")


def read_annotated_requests(
    name: str, data: bytes, dataset: str, *, annotator: str = "", systems: Sequence[str] | None = None
) -> list[Annotation]:
    """Annotations from a request file filled in by annotators (CSV, TSV, JSONL, JSON, ...).

    Rows with an empty label are skipped (not annotated yet); any other label that is not
    one of the data layer's accepted labels is an error naming the row. The ``annotator``
    column, where filled, names the annotator, else ``annotator`` (or "upload"). The left
    side is recorded as ``system_a`` (the file shows A first).

    With ``systems`` (the dataset's systems), a system name not among them is an error too.

    Raises:
        DataError: unreadable file, missing columns, bad labels, unknown systems (each with
            file, row, column).
    """
    raw = read_table_bytes(name, data)
    frame = raw.frame.map(restore_cell)
    raw = RawTable(raw.name, frame, raw.lines)
    cols = find_columns(raw)
    missing = [c for c in ("item_id", "system_a", "system_b", "label") if c not in cols]
    if missing:
        found = ", ".join(map(repr, raw.frame.columns))
        message = "an annotated request file needs the column '{}' (found: {})"
        raise MissingColumnError([Problem("error", "missing_column", message.format(m, found), name, column=m) for m in missing])
    empty = (raw.frame[cols["label"]].str.strip() == "").to_numpy()
    # Parse with empty labels filled by a valid placeholder, so that only real bad labels are
    # reported, with their own row numbers; the placeholders are dropped again below.
    filled = raw.frame.assign(**{cols["label"]: raw.frame[cols["label"]].where(~empty, "=")})
    codes, problems, _ = parse_labels(RawTable(raw.name, filled, raw.lines), cols["label"])
    if systems is not None:  # annotations of systems the dataset does not have would be lost silently
        for side in ("system_a", "system_b"):
            names = raw.frame[cols[side]].str.strip().tolist()
            problems += unknown_system_problems(systems, names, file=name, column=cols[side])
    raise_if_errors(problems)
    codes[empty] = -1
    who = raw.frame[cols["annotator"]].str.strip() if "annotator" in cols else pd.Series([""] * len(raw.frame))
    stamp = utc_now()
    annotations: list[Annotation] = []
    for index in np.flatnonzero(codes >= 0):
        a, b = raw.frame[cols["system_a"]].iloc[index].strip(), raw.frame[cols["system_b"]].iloc[index].strip()
        if not a or not b or a == b:
            message = "expected two different, non-empty system names"
            raise DataError.single("same_system", message, file=name, row=int(index) + 1, column=cols["system_b"])
        canon_a, canon_b, flipped = canonical_pair(a, b)
        code = int(codes[index])
        annotations.append(
            Annotation(
                dataset=dataset,
                item_id=raw.frame[cols["item_id"]].iloc[index].strip(),
                system_a=canon_a,
                system_b=canon_b,
                outcome=2 - code if flipped else code,
                annotator=who.iloc[index] or annotator or "upload",
                left_system=a,
                created_at=stamp,
            )
        )
    return annotations


def protocol_annotations(annotations: Sequence[Annotation], state: ProtocolState) -> list[ProtocolAnnotation]:
    """The stored human outcomes the protocol has not seen yet, ready for
    :func:`~prefeval_core.protocol.steps.apply_annotations` ("feed the annotations in").

    Outcomes are combined per (item, pair) by :func:`human_outcomes`. Kept: pairs of the
    protocol, items not revealed yet; the items the protocol currently requests come first,
    then the others (pair order, item order); at most the budget left **(choice)**, so feeding
    never fails for going over budget.
    """
    revealed = {(p.system_a, p.system_b): p.revealed_items for p in state.pairs}
    requested = {(r.system_a, r.system_b, r.item_id): k for k, r in enumerate(next_request(state).items)}
    outcomes = human_outcomes(annotations)
    fresh = [
        (requested.get((a, b, item), len(requested)), a, b, item, int(code))
        for a, b, item, code in outcomes[["system_a", "system_b", "item_id", "outcome"]].itertuples(index=False)
        if (a, b) in revealed and item not in revealed[(a, b)]
    ]
    fresh.sort(key=lambda row: row[0])  # stable: pair and item order kept within each group
    return [ProtocolAnnotation(item, a, b, code) for _, a, b, item, code in fresh[: max(state.budget_left, 0)]]
