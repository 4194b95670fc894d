"""Decisions that stay right however often the protocol looks (method.md §12).

``ErrorControl``: ``"none"`` is the paper's rule (the decision function of method.md §4 at every
look, :func:`prefeval_core.decision.decision_from_theta`); ``"anytime"`` decides with e-processes
(:func:`anytime_decisions`), so that for every pair with ``p> = p<`` the probability that the
run *ever* declares it significant is at most ``gamma``, whatever the batch, the pool, the
number of rounds or the reason a run stops.

The rule. The human-only e-process (:mod:`prefeval_core.sequential.human`) decides alone for
the human-only model. For a metric model the metric-assisted one
(:mod:`prefeval_core.sequential.metric`) joins it, and the level is split: the human component
decides ``>`` when ``E_human,> >= 2 / ((1 - w) gamma)``, the metric component when
``E_metric,> >= 2 / (w gamma)``, with ``w`` = ``metric_share``; ``<`` symmetrically (and a pair
whose components point in opposite directions stays undecided). By Ville's inequality and the
union bound a pair at a true tie is ever decided with probability at most
``(1 - w) gamma + w gamma = gamma``. The union bound is used instead of an average of the
e-processes because the two are martingales for different filtrations (the human one for the
human outcomes alone; the metric one also knows every metric outcome from the start, under which
the next human outcome is not a fair coin), and an average is only an e-process within one.

``w`` defaults to ``METRIC_SHARE`` = 0.1 **(choice)**: the metric e-process pays a regret of tens
of nats for what it must learn (about ``log M`` for the metric's outcome rates, about
``(d/2) log n`` for the d = 6 free parameters of ``P(h | c)``), so where it wins it wins by far more
than the ``log(1/w) = 2.3`` nats its share costs, while the human component, which decides most
pairs, loses only ``-log(1 - w) = 0.1`` nats. Measured in ``bench/bench_error_control.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from prefeval_core.errors import settings_error
from prefeval_core.pairs.counts import JointCounts
from prefeval_core.sequential.human import MIXTURE_CONCENTRATION, human_log_e
from prefeval_core.sequential.metric import metric_log_e
from prefeval_core.vocabulary.controls import ErrorControl as ErrorControl
from prefeval_core.vocabulary.outcomes import BETTER, TIE, WORSE

FloatArray = npt.NDArray[np.float64]

METRIC_SHARE = 0.1
"""``w``: the part of ``gamma`` given to the metric e-process in a metric model (module docstring)."""


@dataclass(frozen=True)
class EvidenceResult:
    """Anytime-valid evidence and decisions of P pairs; axis -1 of (P, 2) arrays is the
    direction: 0 = ``>`` (A better; against ``p> <= p<``), 1 = ``<`` (B better; against ``p> >= p<``).

    Attributes:
        log_e_human: (P, 2) log e-values of the human-only e-process.
        log_e_metric: (P, 2) log e-values of the metric e-process (certified lower bounds), or
            ``None`` for human only.
        log_evidence: (P, 2) ``log max((1 - w) E_human, w E_metric)``; a direction is significant
            when it is at least ``log(2 / gamma)``. ``min(1, exp(-log_evidence))`` is an anytime-valid one-sided
            p-value: under the direction's null it is ever below ``a`` with probability at most ``a``.
        decision: (P,) int8 outcome codes: 0 ``>``, 2 ``<``, 1 undecided.
        gamma: the level: at most ``gamma`` false decisions per pair at a true tie, per run.
        metric_share: ``w``, the part of ``gamma`` spent on the metric component (0 for human only).
    """

    log_e_human: FloatArray
    log_e_metric: FloatArray | None
    log_evidence: FloatArray
    decision: npt.NDArray[np.int8]
    gamma: float
    metric_share: float

    @property
    def p_values(self) -> FloatArray:
        """(P, 2) anytime-valid one-sided p-values ``min(1, 1 / evidence)``."""
        return np.asarray(np.minimum(1.0, np.exp(-self.log_evidence)), dtype=np.float64)


def check_gamma(gamma: float) -> None:
    """:class:`~prefeval_core.errors.SettingsError` unless ``0 < gamma < 1``."""
    if not 0.0 < gamma < 1.0:
        raise settings_error(f"gamma must be in (0, 1), got {gamma}", field="gamma")


def check_concentration(concentration: float) -> None:
    """:class:`~prefeval_core.errors.SettingsError` unless the mixture's ``concentration > 0``."""
    if not concentration > 0:
        raise settings_error(f"concentration must be > 0, got {concentration}", field="concentration")


def check_metric_share(metric_share: float) -> None:
    """:class:`~prefeval_core.errors.SettingsError` unless ``0 < metric_share < 1``."""
    if not 0.0 < metric_share < 1.0:
        raise settings_error(f"metric_share must be in (0, 1), got {metric_share}", field="metric_share")


def log_thresholds(gamma: float, metric_share: float | None) -> tuple[float, float]:
    """What the human and the metric e-values must reach for a decision: ``log(2 / ((1 - w) gamma))``
    and ``log(2 / (w gamma))``; human only (``metric_share`` ``None``): ``log(2 / gamma)`` and ``inf``."""
    check_gamma(gamma)
    if metric_share is None:
        return float(np.log(2.0 / gamma)), float("inf")
    check_metric_share(metric_share)
    return float(np.log(2.0 / ((1.0 - metric_share) * gamma))), float(np.log(2.0 / (metric_share * gamma)))


def anytime_decisions(
    counts: JointCounts | npt.ArrayLike,
    gamma: float,
    *,
    log_numerator: npt.ArrayLike | None = None,
    mu: npt.ArrayLike | None = None,
    metric_share: float = METRIC_SHARE,
    concentration: float = MIXTURE_CONCENTRATION,
) -> EvidenceResult:
    """Anytime-valid decisions of P pairs (module docstring).

    Args:
        counts: :class:`~prefeval_core.pairs.counts.JointCounts` of the pairs, or for human only their
            human outcome counts ``n`` (P, 3), order ``>, =, <``.
        gamma: level (the default of a study is :data:`~prefeval_core.vocabulary.levels.DEFAULT_GAMMA`).
        log_numerator: (P, 2) running sums of the metric e-process
            (:func:`~prefeval_core.sequential.metric.update_log_numerator`); ``None`` for human only.
            Needs ``counts`` as JointCounts.
        mu: known mixture matrix for the metric model with ``mu`` known (3, 3) or (P, 3, 3),
            rows = metric, columns = human; ``None`` for the full model.
        metric_share: ``w``, the part of ``gamma`` spent on the metric component (module docstring).
        concentration: ``c`` of the human e-process's ``Beta(c, c)`` mixture
            (:mod:`prefeval_core.sequential.human`; 1 is the decision engine's prior).
    """
    check_gamma(gamma)
    check_concentration(concentration)
    if log_numerator is not None and not isinstance(counts, JointCounts):
        raise settings_error("the metric e-process needs JointCounts")
    n = counts.n if isinstance(counts, JointCounts) else np.asarray(counts, dtype=np.float64)
    if n.ndim != 2 or n.shape[1] != 3 or np.any(n < 0):
        raise settings_error(f"human counts must be (P, 3) and non-negative, got shape {n.shape}")
    human = human_log_e(n, concentration)
    if log_numerator is None:
        metric, share, evidence = None, 0.0, human
    else:
        assert isinstance(counts, JointCounts)
        metric_threshold = log_thresholds(gamma, metric_share)[1]
        metric = metric_log_e(counts, log_numerator, mu, log_threshold=metric_threshold)
        share = metric_share
        evidence = np.maximum(human + np.log1p(-share), metric + np.log(share))
    significant = evidence >= np.log(2.0 / gamma)
    decision = np.full(n.shape[0], TIE, dtype=np.int8)
    decision[significant[:, 0] & ~significant[:, 1]] = BETTER
    decision[significant[:, 1] & ~significant[:, 0]] = WORSE
    return EvidenceResult(log_e_human=human, log_e_metric=metric, log_evidence=evidence, decision=decision, gamma=gamma, metric_share=share)
