"""All judgments with their attribution, as CSV (formula-neutralised), JSON lines or Parquet.

One row per judgment, both kinds in one table: ``kind`` says which; a comparison leaves
``system`` and ``score`` empty, a rating leaves the pair, ``outcome``, ``label`` and
``left_system`` empty. Undone judgments stay in the export with their ``undone_at``.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from typing import Final, Literal

import pandas as pd

from prefeval_core.data.safe_csv import to_safe_csv
from prefeval_core.store.records import Judgment, judgment_values

ExportFormat = Literal["csv", "jsonl", "parquet"]
"""The export's file format."""

EXPORT_COLUMNS: Final = (
    "kind", "id", "dataset", "study_id", "request_id", "item_id", "system", "system_a", "system_b", "outcome", "label",
    "score", "annotator", "left_system", "origin", "created_at", "undone_at", "identity", "criterion",
)  # fmt: skip
_TYPES: Final = {"id": "Int64", "study_id": "Int64", "outcome": "Int8", "score": "float64"}


def export_frame(judgments: Sequence[Judgment]) -> pd.DataFrame:
    """The judgments as one frame with :data:`EXPORT_COLUMNS` (whole-number columns nullable)."""
    frame = pd.DataFrame([judgment_values(j) | {"kind": j.kind} for j in judgments], columns=list(EXPORT_COLUMNS))
    return frame.astype(_TYPES)


def export_judgments(judgments: Sequence[Judgment], fmt: ExportFormat) -> bytes:
    """The judgments as a file: CSV (UTF-8, formula-neutralised), JSON lines (each judgment's
    own fields and ``kind``, text as it is) or Parquet."""
    if fmt == "jsonl":
        return "".join(json.dumps(judgment_values(j) | {"kind": j.kind}, ensure_ascii=False) + "\n" for j in judgments).encode()
    frame = export_frame(judgments)
    if fmt == "csv":
        return to_safe_csv(frame)
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return buffer.getvalue()
