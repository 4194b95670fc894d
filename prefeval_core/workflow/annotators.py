"""How a study's annotators judge: their agreement (with each other and with a metric) and their
position bias, for the Annotate page, ``prefeval studies agreement`` and ``pe.annotators`` (one
route for all three).

The metric is compared on its own terms: its pair outcomes (method.md §2, with the study's tie
threshold) against comparisons, its scores against ratings (Kendall's tau-b; a pairwise judge
has no scores, so no rating agreement with it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Final

import pandas as pd

from prefeval_core.annotation.agreement import Agreement, comparison_agreement, rating_agreement
from prefeval_core.annotation.position_bias import PositionBias, position_bias
from prefeval_core.data.dataset import Dataset
from prefeval_core.errors import CoverageError
from prefeval_core.pairs.preferences import pair_outcomes, require_rater
from prefeval_core.store import Comparison, Judgment, Rating, Store
from prefeval_core.workflow.studies import Study

POSITION_FLAG: Final = 0.05
"""The p-value below which a summary names an annotator as favouring one side."""


@dataclass(frozen=True)
class AnnotatorReport:
    """Agreement on ``comparisons`` and on ``ratings`` (``None`` where fewer than two annotators
    judged that kind; each annotator's ``with_metric`` against ``metric``, NaN without one) and
    each annotator's position bias on comparisons (``sides``)."""

    comparisons: Agreement | None
    ratings: Agreement | None
    sides: tuple[PositionBias, ...]
    metric: str | None = None

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
            "metric": self.metric,
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


@dataclass(frozen=True)
class MetricJudgments:
    """What annotators are compared with: the metric ``name``, its pair ``outcomes``
    (``system_a, system_b, item_id, outcome``; ``None`` when it judges no pair) and its
    ``scores`` (``item_id, system, score``; ``None`` for a pairwise judge)."""

    name: str
    outcomes: pd.DataFrame | None
    scores: pd.DataFrame | None


def metric_judgments(dataset: Dataset, metric: str, eps_metric: float = 0.0) -> MetricJudgments:
    """``metric``'s judgments in ``dataset`` (``eps_metric``: its tie threshold), computed once
    for any number of reports (the Annotate page caches them).

    Raises:
        UnknownNameError: ``metric`` is not a rater of ``dataset``.
    """
    require_rater(dataset, metric)
    try:
        outcomes: pd.DataFrame | None = pair_outcomes(dataset, metric, eps_metric).frame
    except CoverageError:  # the metric judges no pair: nothing to agree with (with_metric stays NaN)
        outcomes = None
    scalar = dataset.rater_kind(metric) == "scalar"
    scores = dataset.ratings.loc[dataset.ratings["rater"] == metric, ["item_id", "system", "score"]] if scalar else None
    return MetricJudgments(metric, outcomes, scores)


def annotator_report(judgments: Sequence[Judgment], metric: MetricJudgments | None = None) -> AnnotatorReport:
    """Agreement and position bias of the annotators of ``judgments`` (latest per annotator and
    task); with ``metric``, each annotator's agreement with it too."""
    comparisons = [j for j in judgments if isinstance(j, Comparison)]
    ratings = [j for j in judgments if isinstance(j, Rating)]
    outcomes, scores = (None, None) if metric is None else (metric.outcomes, metric.scores)
    return AnnotatorReport(
        comparisons=comparison_agreement(comparisons, outcomes) if len({j.annotator for j in comparisons}) >= 2 else None,
        ratings=rating_agreement(ratings, scores) if len({j.annotator for j in ratings}) >= 2 else None,
        sides=position_bias(comparisons) if comparisons else (),
        metric=None if metric is None else metric.name,
    )


def default_metric(study_metrics: Sequence[str], dataset: Dataset) -> str | None:
    """The metric annotators are compared with: the study's first metric the data holds (not the
    simulated ``ideal``), else the data's first metric, else ``None``."""
    chosen = [m for m in study_metrics if m in dataset.metric_raters]
    return chosen[0] if chosen else next(iter(dataset.metric_raters), None)


def study_annotators(store: Store, study: Study, dataset: Dataset, metric: str | None = None) -> AnnotatorReport:
    """The report of a recorded ``study`` on its ``dataset``: its judgments in ``store``, compared
    with ``metric`` (default :func:`default_metric`) at the study's metric tie threshold.

    Raises:
        UnknownNameError: ``metric`` is not a rater of the data.
    """
    judgments = study_judgments(store, study.data.key, study.id)
    chosen = metric or default_metric(study.setup.metrics, dataset)
    return annotator_report(judgments, None if chosen is None else metric_judgments(dataset, chosen, study.setup.eps_metric))


def why_no_agreement(agreement: Agreement) -> str | None:
    """Why Krippendorff's alpha is missing (NaN), in words; ``None`` when it is a number."""
    if not math.isnan(agreement.alpha):
        return None
    if agreement.shared_units == 0:
        return (
            f"no agreement yet: each of the {agreement.units} items has one judgment, and agreement needs items judged by two "
            "or more annotators (set judgments per item to 2 or more)"
        )
    shared = agreement.shared_units
    return f"no agreement: on the {shared} items judged twice or more every judgment is the same, and alpha needs some variation"


def agreement_rows(agreement: Agreement, metric: str | None) -> list[dict[str, object]]:
    """One row per annotator for a table: numbers where defined, else the reason (never a bare NaN)."""

    def value(number: float, shared: int, what: str) -> object:
        if not math.isnan(number):
            return round(number, 3)
        return f"n/a: no item shared with {what}" if shared == 0 else "n/a: no variation on shared items"

    rows: list[dict[str, object]] = []
    for each in agreement.per_annotator:
        row: dict[str, object] = {
            "annotator": each.annotator,
            "judgments": each.judgments,
            "alpha with the others": value(each.with_others, each.shared_with_others, "another annotator"),
            "items shared with others": each.shared_with_others,
        }
        if metric is not None:
            row[f"agreement with {metric}"] = value(each.with_metric, each.shared_with_metric, "the metric")
        rows.append(row)
    return rows
