"""How a study's annotators judge: their agreement and their position bias, for the Annotate page
and ``prefeval studies agreement`` (one route for both)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Final

import pandas as pd

from prefeval_core.agreement import Agreement, comparison_agreement, rating_agreement
from prefeval_core.position_bias import PositionBias, position_bias
from prefeval_core.store import Comparison, Judgment, Rating, Store

POSITION_FLAG: Final = 0.05
"""The p-value below which a summary names an annotator as favouring one side."""


@dataclass(frozen=True)
class AnnotatorReport:
    """Agreement on ``comparisons`` and on ``ratings`` (``None`` where fewer than two annotators
    judged that kind) and each annotator's position bias on comparisons (``sides``)."""

    comparisons: Agreement | None
    ratings: Agreement | None
    sides: tuple[PositionBias, ...]

    def to_frame(self) -> pd.DataFrame:
        """One row per annotator and kind: ``kind, annotator, judgments, with_others`` (alpha with
        the others combined) and, for comparisons, ``decisive, left_share, position_p``."""
        sides = {s.annotator: s for s in self.sides}
        rows = [
            {"kind": kind, "annotator": a.annotator, "judgments": a.judgments, "with_others": a.with_others}
            | ({"decisive": sides[a.annotator].decisive, "left_share": sides[a.annotator].left_share,
                "position_p": sides[a.annotator].p_value} if kind == "comparison" else {})
            for kind, agreement in (("comparison", self.comparisons), ("rating", self.ratings)) if agreement is not None
            for a in agreement.per_annotator
        ]  # fmt: skip
        alone = [
            {"kind": "comparison", "annotator": s.annotator, "decisive": s.decisive, "left_share": s.left_share, "position_p": s.p_value}
            for s in self.sides
            if self.comparisons is None
        ]
        columns = ["kind", "annotator", "judgments", "with_others", "decisive", "left_share", "position_p"]
        return pd.DataFrame(rows + alone, columns=columns)

    def __repr__(self) -> str:
        parts = [f"alpha on {name} {a.alpha:.3f} ({len(a.annotators)} annotators)" for name, a in self._agreements()]
        flagged = [s.annotator for s in self.sides if s.p_value < POSITION_FLAG]
        parts.append(f"position bias at p < {POSITION_FLAG}: {', '.join(flagged) or 'nobody'}" if self.sides else "no comparisons")
        return f"<Annotators: {'; '.join(parts)}>"

    def _agreements(self) -> list[tuple[str, Agreement]]:
        return [(name, a) for name, a in (("comparisons", self.comparisons), ("ratings", self.ratings)) if a is not None]

    def as_json(self) -> dict[str, Any]:
        """The report as JSON values (NaN, an undefined statistic, as ``null``)."""
        return {
            "comparisons": None if self.comparisons is None else _finite(asdict(self.comparisons)),
            "ratings": None if self.ratings is None else _finite(asdict(self.ratings)),
            "position_bias": [_finite(asdict(s) | {"left_share": s.left_share}) for s in self.sides],
        }


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def study_judgments(store: Store, dataset_key: str, study_id: int | None) -> list[Judgment]:
    """The judgments stored for a study (or, with ``study_id`` None, for the data), both kinds."""
    return [*store.comparisons(dataset_key, study_id=study_id), *store.ratings(dataset_key, study_id=study_id)]


def annotator_report(judgments: Sequence[Judgment]) -> AnnotatorReport:
    """Agreement and position bias of the annotators of ``judgments`` (latest per annotator and task)."""
    comparisons = [j for j in judgments if isinstance(j, Comparison)]
    ratings = [j for j in judgments if isinstance(j, Rating)]
    return AnnotatorReport(
        comparisons=comparison_agreement(comparisons) if len({j.annotator for j in comparisons}) >= 2 else None,
        ratings=rating_agreement(ratings) if len({j.annotator for j in ratings}) >= 2 else None,
        sides=position_bias(comparisons) if comparisons else (),
    )
