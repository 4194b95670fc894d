"""Decisions that stay right however often the protocol looks (method.md §12).

``ErrorControl``: ``"none"`` is the paper's rule (the decision function of method.md §4 at every
look, :func:`prefeval_core.decision.decision_from_theta`); ``"anytime"`` decides with e-processes
(:func:`anytime_decisions`), so that for every pair with ``p> = p<`` the probability that the
run *ever* declares it significant is at most ``gamma``, whatever the batch, the pool, the
number of rounds or the reason a run stops.

The rule. Each component j of J is an e-process per direction: the human-only one
(:mod:`prefeval_core.sequential.human`) always, and for a metric model the metric-assisted one
(:mod:`prefeval_core.sequential.metric`). Decide ``>`` when some component has
``E_j,> >= 2J / gamma`` (and no component reaches it for ``<``), ``<`` symmetrically. By Ville's
inequality each component crosses falsely with probability at most ``gamma / 2J`` per
direction, and by the union bound a pair at a true tie is ever decided with probability at most
``gamma``. The union bound is used instead of the average of the e-processes because the two are
martingales for different filtrations (the human one for the human outcomes alone; the metric one
also knows every metric outcome from the start, under which the next human outcome is not a fair
coin), and an average is only an e-process within one filtration. Where one component carries all
the evidence the two rules need the same ``2J / gamma``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from prefeval_core.counts import JointCounts
from prefeval_core.errors import settings_error
from prefeval_core.outcomes import BETTER, TIE, WORSE
from prefeval_core.sequential.human import human_log_e
from prefeval_core.sequential.metric import metric_log_e

FloatArray = npt.NDArray[np.float64]

ErrorControl = Literal["none", "anytime"]
"""``none``: the paper's per-look rule (more false decisions the more often one looks);
``anytime``: e-processes, at most ``gamma`` false decisions per pair with ``p> = p<`` over the whole run."""
ERROR_CONTROLS: tuple[ErrorControl, ...] = ("none", "anytime")


@dataclass(frozen=True)
class EvidenceResult:
    """Anytime-valid evidence and decisions of P pairs; axis -1 of (P, 2) arrays is the
    direction: 0 = ``>`` (A better; against ``p> <= p<``), 1 = ``<`` (B better; against ``p> >= p<``).

    Attributes:
        log_e_human: (P, 2) log e-values of the human-only e-process.
        log_e_metric: (P, 2) log e-values of the metric e-process (certified lower bounds), or
            ``None`` for human only.
        log_evidence: (P, 2) ``log(max_j E_j / J)``; a direction is significant when it is at
            least ``log(2 / gamma)``. ``min(1, exp(-log_evidence))`` is an anytime-valid one-sided
            p-value: under the direction's null it is ever below ``a`` with probability at most ``a``.
        decision: (P,) int8 outcome codes: 0 ``>``, 2 ``<``, 1 undecided.
        gamma: the level: at most ``gamma`` false decisions per pair at a true tie, per run.
    """

    log_e_human: FloatArray
    log_e_metric: FloatArray | None
    log_evidence: FloatArray
    decision: npt.NDArray[np.int8]
    gamma: float

    @property
    def p_values(self) -> FloatArray:
        """(P, 2) anytime-valid one-sided p-values ``min(1, 1 / evidence)``."""
        return np.asarray(np.minimum(1.0, np.exp(-self.log_evidence)), dtype=np.float64)

    @property
    def components(self) -> int:
        """J: 1 for human only, 2 with a metric."""
        return 1 if self.log_e_metric is None else 2


def check_gamma(gamma: float) -> None:
    """:class:`~prefeval_core.errors.SettingsError` unless ``0 < gamma < 1``."""
    if not 0.0 < gamma < 1.0:
        raise settings_error(f"gamma must be in (0, 1), got {gamma}", field="gamma")


def log_threshold(gamma: float, components: int) -> float:
    """``log(2 J / gamma)``: what one component's e-value must reach for a decision."""
    check_gamma(gamma)
    return float(np.log(2.0 * components / gamma))


def anytime_decisions(
    counts: JointCounts | npt.ArrayLike,
    gamma: float,
    *,
    log_numerator: npt.ArrayLike | None = None,
    mu: npt.ArrayLike | None = None,
) -> EvidenceResult:
    """Anytime-valid decisions of P pairs (module docstring).

    Args:
        counts: :class:`~prefeval_core.counts.JointCounts` of the pairs, or for human only their
            human outcome counts ``n`` (P, 3), order ``>, =, <``.
        gamma: level (default of the protocol 0.05).
        log_numerator: (P, 2) running sums of the metric e-process
            (:func:`~prefeval_core.sequential.metric.update_log_numerator`); ``None`` for human only.
            Needs ``counts`` as JointCounts.
        mu: known mixture matrix for the metric model with ``mu`` known (3, 3) or (P, 3, 3),
            rows = metric, columns = human; ``None`` for the full model.
    """
    check_gamma(gamma)
    if log_numerator is not None and not isinstance(counts, JointCounts):
        raise ValueError("the metric e-process needs JointCounts")
    n = counts.n if isinstance(counts, JointCounts) else np.asarray(counts, dtype=np.float64)
    if n.ndim != 2 or n.shape[1] != 3 or np.any(n < 0):
        raise ValueError(f"human counts must be (P, 3) and non-negative, got shape {n.shape}")
    human = human_log_e(n)
    metric = None
    components = 1
    if log_numerator is not None:
        assert isinstance(counts, JointCounts)
        components = 2
        metric = metric_log_e(counts, log_numerator, mu, log_threshold=log_threshold(gamma, components))
    best = human if metric is None else np.maximum(human, metric)
    evidence = best - np.log(components)
    significant = evidence >= np.log(2.0 / gamma)
    decision = np.full(n.shape[0], TIE, dtype=np.int8)
    decision[significant[:, 0] & ~significant[:, 1]] = BETTER
    decision[significant[:, 1] & ~significant[:, 0]] = WORSE
    return EvidenceResult(log_e_human=human, log_e_metric=metric, log_evidence=evidence, decision=decision, gamma=gamma)
