"""Every diagnostic of one metric against one human rater, and its stable JSON form.

Brings together method.md §7 (confusion matrices, Favi-Score with posterior, per-system
scores, sign accuracies), §8 (significance DAGs) and §9 (segment-level Kendall tau-b, only
when both raters give scalar scores).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from prefeval_core.data.dataset import Dataset
from prefeval_core.diagnostics.confusion import PairConfusions, confusion_matrices
from prefeval_core.diagnostics.favi import FaviPosterior, SystemFavi, error_counts, favi_posterior, favi_scores, system_favi
from prefeval_core.diagnostics.kendall import KendallResult, kendall_tau
from prefeval_core.diagnostics.sign_accuracy import SignAccuracy, sign_accuracy
from prefeval_core.diagnostics.significance import SignificanceDags, significance_dags
from prefeval_core.pairs.counts import PairTable, align_outcomes
from prefeval_core.pairs.preferences import pair_outcomes
from prefeval_core.vocabulary.levels import DEFAULT_GAMMA


@dataclass(frozen=True)
class MetricReport:
    """Diagnostics of one metric against one human rater.

    Attributes:
        confusions: confusion matrix of every pair (rows = metric, columns = human).
        errors: (P,) errors (off-diagonal items) per pair.
        favi: (P,) Favi-Score per pair, positive favours ``system_a``; NaN where no error.
        favi_posterior: posterior of each pair's Favi-Score (``Dirichlet(K + 1)``).
        systems: per system, its scores against every other, oriented so positive favours it.
        sign: sample- and system-level sign accuracy.
        mean_abs_favi: mean of ``|F|`` over the pairs where ``F`` is defined (NaN if none).
        std_abs_favi: standard deviation of ``|F|`` over the same pairs (the paper's spread).
        kendall: segment-level Kendall tau-b, ``None`` unless both raters are scalar.
        dags: human, naive-metric (and protocol) significance DAGs.
        eps: tie threshold applied to the metric's scores (the human's are used with 0).
        seed: seed of the Favi posterior.
    """

    confusions: PairConfusions
    errors: npt.NDArray[np.int64]
    favi: npt.NDArray[np.float64]
    favi_posterior: FaviPosterior
    systems: dict[str, SystemFavi]
    sign: SignAccuracy
    mean_abs_favi: float
    std_abs_favi: float
    kendall: KendallResult | None
    dags: SignificanceDags
    eps: float
    seed: int

    @property
    def human(self) -> str:
        return self.confusions.human_rater

    @property
    def metric(self) -> str:
        return self.confusions.metric_rater

    @property
    def pairs(self) -> tuple[tuple[str, str], ...]:
        return self.confusions.pairs


def metric_report_from_table(
    table: PairTable,
    *,
    kendall: KendallResult | None = None,
    gamma: float = DEFAULT_GAMMA,
    seed: int = 0,
    samples: int = 4000,
    level: float = 0.95,
    protocol_outcomes: npt.ArrayLike | None = None,
    eps: float = 0.0,
) -> MetricReport:
    """All diagnostics from aligned outcomes (``table`` must have a metric).

    Only pairs with at least one item rated by both raters are diagnosed (``joint_only``);
    their human reference and naive outcomes still use all items of each rater.

    Args:
        table: human and metric outcomes per pair and item.
        kendall: a precomputed Kendall tau result to carry along (scalar raters only).
        gamma: significance level of the DAGs' decisions.
        seed, samples, level: the Favi posterior's seed, draws per pair, and interval mass.
        protocol_outcomes: outcome code per diagnosed pair (``report.pairs``) from a protocol run.
        eps: the metric's tie threshold, recorded only.
    """
    confusions = confusion_matrices(table, joint_only=True)
    errors = error_counts(confusions.K)
    favi = favi_scores(confusions.K)
    defined = np.abs(favi[~np.isnan(favi)])
    return MetricReport(
        confusions=confusions,
        errors=errors,
        favi=favi,
        favi_posterior=favi_posterior(confusions.K, seed=seed, samples=samples, level=level),
        systems=system_favi(confusions.pairs, favi, errors),
        sign=sign_accuracy(confusions.K),
        mean_abs_favi=float(defined.mean()) if defined.size else math.nan,
        std_abs_favi=float(defined.std()) if defined.size else math.nan,
        kendall=kendall,
        dags=significance_dags(confusions, gamma=gamma, protocol_outcomes=protocol_outcomes),
        eps=eps,
        seed=seed,
    )


def metric_report(
    dataset: Dataset,
    human: str,
    metric: str,
    *,
    eps: float = 0.0,
    gamma: float = DEFAULT_GAMMA,
    seed: int = 0,
    samples: int = 4000,
    level: float = 0.95,
    protocol_outcomes: npt.ArrayLike | None = None,
) -> MetricReport:
    """All diagnostics of ``metric`` against ``human`` on ``dataset``.

    The tie threshold ``eps`` applies to the metric's scalar scores **(choice)**: the human's
    ties are kept as rated (``eps = 0``). Kendall tau-b is computed when both raters are scalar.

    Raises:
        UnknownNameError: a rater is not in the data.
        CoverageError: the raters share no pair or segment.
    """
    table = align_outcomes(pair_outcomes(dataset, human), pair_outcomes(dataset, metric, eps=eps))
    both_scalar = dataset.rater_kind(human) == "scalar" and dataset.rater_kind(metric) == "scalar"
    return metric_report_from_table(
        table,
        kendall=kendall_tau(dataset, human, metric) if both_scalar else None,
        gamma=gamma,
        seed=seed,
        samples=samples,
        level=level,
        protocol_outcomes=protocol_outcomes,
        eps=eps,
    )


def _number(value: float) -> float | None:
    """A float for JSON, ``None`` for NaN (JSON has no NaN)."""
    return None if math.isnan(value) else float(value)


def report_json(report: MetricReport) -> dict[str, Any]:
    """The stable JSON form of the ``diagnose`` command.

    ``{"pairs": [{"system_a", "system_b", "confusion", "favi", "favi_interval", "errors",
    "items"}, ...], "systems": {name: [oriented favi, ...]}, "metric": {"sample_sign_accuracy",
    "system_sign_accuracy", "mean_abs_favi", "kendall_tau", "kendall_tau_grouped",
    "segments"}}``. ``confusion`` rows = metric, columns = human, order ``>``, ``=``, ``<``;
    ``favi`` is ``null`` where there is no error; ``favi_interval`` is the posterior's
    equal-tailed credible interval (defined for every pair); the Kendall fields are ``null``
    unless both raters are scalar. A system's list leaves out pairs without an error.
    """
    pairs = [
        {
            "system_a": a,
            "system_b": b,
            "confusion": report.confusions.K[index].astype(int).tolist(),
            "favi": _number(report.favi[index]),
            "favi_interval": [float(v) for v in report.favi_posterior.interval[index]],
            "errors": int(report.errors[index]),
            "items": int(report.confusions.items[index]),
        }
        for index, (a, b) in enumerate(report.pairs)
    ]
    kendall = report.kendall
    return {
        "pairs": pairs,
        "systems": {name: list(entry.scores) for name, entry in report.systems.items()},
        "metric": {
            "sample_sign_accuracy": _number(report.sign.sample),
            "system_sign_accuracy": _number(report.sign.system),
            "mean_abs_favi": _number(report.mean_abs_favi),
            "kendall_tau": None if kendall is None else _number(kendall.tau),
            "kendall_tau_grouped": None if kendall is None else _number(kendall.tau_grouped),
            "segments": None if kendall is None else kendall.segments,
        },
    }
