"""How a study's annotators judge: their agreement and their position bias, for the Annotate page
and ``prefeval studies agreement`` (one route for both)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from prefeval_core.agreement import Agreement, comparison_agreement, rating_agreement
from prefeval_core.position_bias import PositionBias, position_bias
from prefeval_core.store import Comparison, Judgment, Rating, Store


@dataclass(frozen=True)
class AnnotatorReport:
    """Agreement on ``comparisons`` and on ``ratings`` (``None`` where fewer than two annotators
    judged that kind) and each annotator's position bias on comparisons (``sides``)."""

    comparisons: Agreement | None
    ratings: Agreement | None
    sides: tuple[PositionBias, ...]

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
