"""How much human annotators agree: per study, and per annotator with the others and with the metric.

The **units** are tasks: an (item, canonical pair) for comparisons, an (item, system) for
ratings. Each annotator's latest judgment of a task counts (undone ones do not), as in the
combination of :mod:`prefeval_core.store.frames`.

* **Krippendorff's alpha** (the ``krippendorff`` package) over all annotators and units, units
  judged by one annotator only left out by the statistic itself: for comparisons, **ordinal**
  alpha of the outcome values ``v(>) = +1, v(=) = 0, v(<) = -1`` (canonical pair order, so a
  unit's sign is fixed by the sorted system names); for ratings, **interval** alpha of the
  scores. 1 is perfect agreement, 0 agreement at chance, negative systematic disagreement;
  undefined (NaN) without a unit judged twice or when only one value occurs.
* **Cohen's kappa** (unweighted, the categories being the outcome codes or the score values),
  when the study has exactly two annotators, on the units both judged: ``(p_o - p_e) / (1 - p_e)``
  with ``p_o`` the share of units they agree on and ``p_e = sum_c p1(c) p2(c)`` from each
  annotator's own category shares; undefined (NaN) when ``p_e = 1``.
* **Per annotator**: alpha (the same level) between the annotator and the **others combined**
  (the others' majority for comparisons, their mean for ratings, :mod:`prefeval_core.vocabulary.combine`)
  on the units both have; and agreement with the **metric** on the units both have: ordinal
  alpha between the annotator's and the metric's outcome values for comparisons, Kendall's
  tau-b between the annotator's and the metric's scores for ratings (a metric's scale is not the
  annotators', so an interval alpha would compare units of measure, not judgments).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

import krippendorff
import numpy as np
import pandas as pd

from prefeval_core.diagnostics.kendall import tau_b
from prefeval_core.errors import settings_error
from prefeval_core.store.frames import COMPARISON_TASK, RATING_TASK, latest_answers
from prefeval_core.store.records import Comparison, JudgmentKind, Rating
from prefeval_core.vocabulary.combine import majority_outcomes, mean_scores

AlphaLevel = Literal["ordinal", "interval"]
"""Krippendorff's level of measurement: ordinal for comparisons (values v), interval for ratings."""
MetricMeasure = Literal["alpha_ordinal", "kendall_tau_b"]
"""How an annotator's agreement with the metric is measured (comparisons, ratings)."""

_VALUE: Final = "value"


def krippendorff_alpha(values: np.ndarray, level: AlphaLevel) -> float:
    """Krippendorff's alpha of a (coders x units) matrix with NaN where a coder gave no value;
    NaN when undefined (no unit with two values, or a single value throughout)."""
    observed = values[~np.isnan(values)]
    pairable = int(((~np.isnan(values)).sum(axis=0) >= 2).sum())
    if pairable == 0 or np.unique(observed).size < 2:
        return math.nan
    return float(krippendorff.alpha(reliability_data=values, level_of_measurement=level))


def cohen_kappa(first: Sequence[float] | np.ndarray, second: Sequence[float] | np.ndarray) -> float:
    """Unweighted Cohen's kappa of two aligned label vectors (no missing values); NaN when
    undefined (no units, or chance agreement ``p_e = 1``: both used one and the same category)."""
    x, y = np.asarray(first), np.asarray(second)
    if x.shape != y.shape or x.ndim != 1:
        raise settings_error(f"cohen_kappa needs two 1-d vectors of one length, got shapes {x.shape} and {y.shape}")
    if x.size == 0:
        return math.nan
    categories = np.union1d(x, y)
    p_observed = float(np.mean(x == y))
    p_chance = float(sum(np.mean(x == c) * np.mean(y == c) for c in categories))
    return math.nan if p_chance == 1.0 else (p_observed - p_chance) / (1.0 - p_chance)


@dataclass(frozen=True)
class AnnotatorAgreement:
    """One annotator's agreement.

    Attributes:
        annotator: the name.
        judgments: units the annotator judged.
        with_others: alpha between the annotator and the others combined (NaN if undefined).
        shared_with_others: units judged by the annotator and at least one other.
        with_metric: agreement with the metric (:class:`Agreement.metric_measure`), NaN without
            a metric or when undefined.
        shared_with_metric: units judged by the annotator that the metric also judged.
    """

    annotator: str
    judgments: int
    with_others: float
    shared_with_others: int
    with_metric: float
    shared_with_metric: int


@dataclass(frozen=True)
class Agreement:
    """Agreement among the annotators of a set of judgments (a study, a dataset).

    Attributes:
        kind: comparisons or ratings.
        level: Krippendorff's level used (ordinal for comparisons, interval for ratings).
        metric_measure: how agreement with the metric is measured.
        annotators: the annotators, sorted.
        units: units judged by anyone.
        shared_units: units judged by at least two annotators (those alpha uses).
        alpha: Krippendorff's alpha over all annotators (NaN if undefined).
        cohen_kappa: Cohen's kappa with exactly two annotators, else ``None`` (NaN if undefined).
        per_annotator: each annotator's agreement, in the order of :attr:`annotators`.
    """

    kind: JudgmentKind
    level: AlphaLevel
    metric_measure: MetricMeasure
    annotators: tuple[str, ...]
    units: int
    shared_units: int
    alpha: float
    cohen_kappa: float | None
    per_annotator: tuple[AnnotatorAgreement, ...]


def _pivot(answers: pd.DataFrame, task: tuple[str, ...]) -> pd.DataFrame:
    """annotators x units of :data:`_VALUE` (NaN where not judged), annotators sorted."""
    return answers.pivot(index="annotator", columns=list(task), values=_VALUE).sort_index().astype(np.float64)


def _agreement(kind: JudgmentKind, answers: pd.DataFrame, metric: pd.DataFrame | None, task: tuple[str, ...]) -> Agreement:
    level: AlphaLevel = "ordinal" if kind == "comparison" else "interval"
    matrix = _pivot(answers, task)
    values = matrix.to_numpy()
    judged = ~np.isnan(values)
    kappa = None
    if len(matrix) == 2:
        both = judged.all(axis=0)
        kappa = cohen_kappa(values[0, both], values[1, both])
    per_annotator = tuple(_annotator_agreement(kind, level, str(who), answers, metric, task) for who in matrix.index)
    return Agreement(
        kind=kind,
        level=level,
        metric_measure="alpha_ordinal" if kind == "comparison" else "kendall_tau_b",
        annotators=tuple(str(a) for a in matrix.index),
        units=int(values.shape[1]),
        shared_units=int((judged.sum(axis=0) >= 2).sum()),
        alpha=krippendorff_alpha(values, level),
        cohen_kappa=kappa,
        per_annotator=per_annotator,
    )


def _others_combined(kind: JudgmentKind, others: pd.DataFrame, task: tuple[str, ...]) -> pd.DataFrame:
    if kind == "comparison":
        combined = majority_outcomes(others, task)
        return combined.assign(**{_VALUE: 1.0 - combined["outcome"]})[[*task, _VALUE]]
    return mean_scores(others, task, column=_VALUE)


def _annotator_agreement(
    kind: JudgmentKind, level: AlphaLevel, who: str, answers: pd.DataFrame, metric: pd.DataFrame | None, task: tuple[str, ...]
) -> AnnotatorAgreement:
    mine = answers[answers["annotator"] == who]
    others = _others_combined(kind, answers[answers["annotator"] != who], task)
    shared = mine.merge(others, on=list(task), suffixes=("", "_others"))
    with_others = krippendorff_alpha(shared[[_VALUE, f"{_VALUE}_others"]].to_numpy(dtype=np.float64).T, level)
    with_metric, shared_metric = math.nan, 0
    if metric is not None:
        paired = mine.merge(metric, on=list(task), suffixes=("", "_metric"))
        shared_metric = len(paired)
        mine_values, metric_values = paired[_VALUE].to_numpy(np.float64), paired[f"{_VALUE}_metric"].to_numpy(np.float64)
        if kind == "comparison":
            with_metric = krippendorff_alpha(np.vstack([mine_values, metric_values]), "ordinal")
        else:
            with_metric = tau_b(mine_values, metric_values)
    return AnnotatorAgreement(who, len(mine), with_others, len(shared), with_metric, shared_metric)


def comparison_agreement(comparisons: Sequence[Comparison], metric: pd.DataFrame | None = None) -> Agreement:
    """Agreement of the annotators of ``comparisons`` (ordinal alpha of ``v``).

    Args:
        comparisons: the judgments (e.g. one study's); the latest per annotator and task counts.
        metric: the metric's outcomes ``system_a, system_b, item_id, outcome`` (canonical
            pairs, codes 0/1/2, as :func:`~prefeval_core.pairs.preferences.pair_outcomes` gives), optional.
    """
    answers = latest_answers(comparisons, "comparison")
    answers = answers.assign(**{_VALUE: 1.0 - answers["outcome"].astype(np.float64)})
    metric_values = None
    if metric is not None:
        metric_values = metric.assign(**{_VALUE: 1.0 - metric["outcome"].astype(np.float64)})[[*COMPARISON_TASK, _VALUE]]
    return _agreement("comparison", answers, metric_values, COMPARISON_TASK)


def rating_agreement(ratings: Sequence[Rating], metric: pd.DataFrame | None = None) -> Agreement:
    """Agreement of the annotators of ``ratings`` (interval alpha of the scores).

    Args:
        ratings: the judgments (e.g. one study's); the latest per annotator and task counts.
        metric: the metric's scores ``item_id, system, score``, optional.
    """
    answers = latest_answers(ratings, "rating").rename(columns={"score": _VALUE})
    metric_values = None if metric is None else metric.rename(columns={"score": _VALUE})[[*RATING_TASK, _VALUE]]
    return _agreement("rating", answers, metric_values, RATING_TASK)
