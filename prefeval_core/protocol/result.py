"""A run compared with the full human evaluation (method.md §6, §12).

Per question:

* every question: the error types of its pairs against the human reference (§6: the
  decision function on all human judgments of the pair, human only; §13: the run's statistic's
  reference), the mean KLD, the paper's pair-outcome fraction ("Ann."), and the cost in the study's
  unit (§12);
* each pair's **verdict** (:func:`pair_verdicts`), the one definition every view of a run counts
  and draws "against the full evaluation" by: its error type; while the run goes on, an undecided
  pair is *open* (no error yet: it can still be decided) — an omission only once the run has ended;
  a tier question's pair that names no system of its answer or of the full evaluation's tier is not
  scored (it cannot change the answer);
* the kind's answer against the full evaluation's, where its registry entry compares them
  (``compare``; top-k: the members and sure members, the reference tier by the same rule on the
  reference decisions, exact match, false exclusions (reference members left out: the serious
  error) and extras (members the reference does not have));
* ``baseline``: the error types are over the baseline pairs only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from prefeval_core.diagnostics.comparison import (
    ERROR_TYPES,
    OPEN,
    Comparison,
    annotation_fraction,
    compare_with_reference,
    human_reference_outcomes,
    mean_differences,
    paired_t_outcomes,
    pool_mean_outcomes,
)
from prefeval_core.pairs.counts import count_triples
from prefeval_core.protocol.question_control import full_differences, pool_differences, revealed_means
from prefeval_core.protocol.questions import AnswerComparison, Decided, question_pairs
from prefeval_core.protocol.questions_top_k import TopKComparison
from prefeval_core.protocol.settings import POOL_STATISTICS, Question
from prefeval_core.protocol.state import ProtocolState
from prefeval_core.protocol.steps import is_finished, stop_reason
from prefeval_core.vocabulary.outcomes import TIE
from prefeval_core.vocabulary.tasks import Unit

NOT_SCORED: Final = ""
"""The verdict of a tier question's pair that names no system of the run's answer or of the full
evaluation's tier: it cannot change the answer, so it is no error (a decision there is just "decided")."""


def pair_verdicts(
    error_types: npt.NDArray[np.str_],
    outcomes: npt.NDArray[np.int8],
    equivalent: npt.NDArray[np.bool_],
    *,
    finished: bool,
    counted: npt.NDArray[np.bool_] | None = None,
) -> npt.NDArray[np.str_]:
    """(P,) each pair's verdict against the full evaluation: its error type (method.md §6), except

    * :data:`~prefeval_core.diagnostics.comparison.OPEN` for a pair with neither a direction nor an
      equivalence while the run goes on (``finished`` false): it is no error yet, and no decision;
    * :data:`NOT_SCORED` for a pair outside ``counted`` (a tier question's pairs that can change its
      answer, :meth:`~prefeval_core.protocol.questions.AnswerComparison.scored`; ``None``: all count).
    """
    verdicts = np.asarray(error_types).astype(f"<U{max(19, len(OPEN))}")
    if not finished:
        verdicts[(np.asarray(outcomes) == TIE) & ~np.asarray(equivalent, dtype=bool)] = OPEN
    if counted is not None:
        verdicts[~np.asarray(counted, dtype=bool)] = NOT_SCORED
    return verdicts


@dataclass(frozen=True)
class ProtocolResult:
    """A run against the full human evaluation, for the pairs of its question (in table order).

    Attributes:
        question: what was asked.
        pairs: canonical ``(system_a, system_b)`` of the question's pairs.
        outcomes: (P,) final decisions (1 = undecided).
        theta: (P,) latest ``P(p> > p<)``; NaN for a pair never decided on.
        human_used: (P,) human pair outcomes revealed per pair (the paper's unit).
        human_available: (P,) human pair outcomes the data holds per pair (that can be revealed).
        comparison: outcomes and posterior means against the human reference.
        annotation_fraction: ``sum(human_used) / sum(human_available)`` (the paper's "Ann.").
        unit: what one judgment is (``ratings`` or ``comparisons``).
        cost_used, cost_available: judgments revealed / that the question could have used (the
            data's judgments of its pairs or of their systems), in that unit.
        cost_fraction: ``cost_used / cost_available``.
        rounds: completed rounds.
        stop_reason: see :func:`~prefeval_core.protocol.steps.stop_reason`.
        answer: the kind's answer against the full evaluation's (its entry's ``compare``); ``None``
            for a kind answered by its pairs alone.
        equivalent: (P,) pairs decided equivalent within the margin δ (none without one).
        false_equivalent: (P,) of those, the pairs whose mean difference on the full evaluation (the
            statistic's estimand: the pool's own for the pool statistics) is δ or more apart.
        mean_difference: (P,) the mean A − B of the differences revealed
            (:func:`~prefeval_core.protocol.question_control.revealed_means`; NaN: none).
        reference_mean: (P,) the same on the full evaluation (:func:`reference_means`).
        finished: whether the run has ended (until then an undecided pair is open, not an omission).
        verdicts: (P,) each pair's verdict (:func:`pair_verdicts`): what every view counts and draws.
    """

    question: Question
    pairs: tuple[tuple[str, str], ...]
    outcomes: npt.NDArray[np.int8]
    theta: npt.NDArray[np.float64]
    human_used: npt.NDArray[np.int64]
    human_available: npt.NDArray[np.int64]
    comparison: Comparison
    annotation_fraction: float
    unit: Unit
    cost_used: int
    cost_available: int
    cost_fraction: float
    rounds: int
    stop_reason: str
    answer: AnswerComparison | None
    equivalent: npt.NDArray[np.bool_]
    false_equivalent: npt.NDArray[np.bool_]
    mean_difference: npt.NDArray[np.float64]
    reference_mean: npt.NDArray[np.float64]
    finished: bool
    verdicts: npt.NDArray[np.str_]

    @property
    def scored(self) -> npt.NDArray[np.bool_]:
        """(P,) the pairs whose error type counts: neither open nor outside a tier question's answer."""
        return np.isin(self.verdicts, ERROR_TYPES)

    def tally(self) -> dict[str, int]:
        """Pairs per verdict, every error type (``ERROR_TYPES`` order) and then :data:`OPEN`, zeros
        included; pairs not scored are left out."""
        return {kind: int(np.sum(self.verdicts == kind)) for kind in (*ERROR_TYPES, OPEN)}

    @property
    def correct_share(self) -> float:
        """The share of the scored pairs that agree with the full evaluation (either correct kind); NaN with none."""
        tally, scored = self.tally(), int(self.scored.sum())
        return (tally["correct_significant"] + tally["correct_undecided"]) / scored if scored else float("nan")

    @property
    def top_k(self) -> TopKComparison | None:
        """The answer compared, for a top-k question (to read its tiers); else ``None``."""
        return self.answer if isinstance(self.answer, TopKComparison) else None


def protocol_result(state: ProtocolState) -> ProtocolResult:
    """Compare the state's decisions with the full human evaluation its table holds."""
    table = state.table
    settings = state.settings
    question = settings.question
    keep = question_pairs(question, table.systems, table.pair_systems)
    n_all = count_triples(table.pair_table(None), table.human >= 0).n
    reference_all = reference_outcomes(state)
    status = state.status
    used = state.pair_outcomes_used()[keep]
    available = table.human_available()[keep]
    cost_available = table.cost_available(keep)
    means = reference_means(state)  # once: the JSON's reference means and the false equivalences
    pairs = tuple(pair for pair, kept in zip(table.pairs, keep, strict=True) if kept)
    comparison = compare_with_reference(
        status.decision[keep], status.p_mean[keep], n_all[keep], settings.gamma, reference=reference_all[keep]
    )
    answer = None if question.entry.compare is None else question.entry.compare(decided(state), reference_all)
    finished = is_finished(state)
    verdicts = pair_verdicts(
        comparison.error_types, status.decision[keep], status.equivalent[keep], finished=finished,
        counted=None if answer is None else answer.scored(pairs),
    )  # fmt: skip
    return ProtocolResult(
        question=question,
        pairs=pairs,
        outcomes=status.decision[keep],
        theta=status.theta[keep],
        human_used=used,
        human_available=available,
        comparison=comparison,
        annotation_fraction=annotation_fraction(int(used.sum()), int(available.sum())),
        unit=table.unit,
        cost_used=state.cost_used,
        cost_available=cost_available,
        cost_fraction=state.cost_used / cost_available if cost_available else float("nan"),
        rounds=state.round,
        stop_reason=stop_reason(state),
        answer=answer,
        equivalent=status.equivalent[keep],
        false_equivalent=false_equivalences(state, means)[keep],
        mean_difference=revealed_means(state)[keep],
        reference_mean=means[keep],
        finished=finished,
        verdicts=verdicts,
    )


def false_equivalences(state: ProtocolState, means: npt.NDArray[np.float64] | None = None) -> npt.NDArray[np.bool_]:
    """(P,) pairs decided equivalent whose full-evaluation mean difference (:func:`reference_means`,
    or ``means`` where the caller has it) is at least δ in size: the equivalence the guarantee
    bounds, checked against the data."""
    equivalent, delta = state.status.equivalent, state.settings.delta
    if delta is None or not equivalent.any():
        return np.zeros_like(equivalent)
    return equivalent & (np.abs(reference_means(state) if means is None else means) >= delta)


def reference_means(state: ProtocolState) -> npt.NDArray[np.float64]:
    """(P,) each pair's mean difference on the full evaluation, the estimand of the run's statistic:
    the pool's differences for the pool statistics (outcomes for the outcome statistics), all
    differences otherwise (score differences, or +1 / 0 / -1 per comparison); 0 with none."""
    table, statistic = state.table, state.settings.statistic
    return mean_differences(pool_differences(table, statistic) if statistic in POOL_STATISTICS else full_differences(table))


def reference_outcomes(state: ProtocolState) -> npt.NDArray[np.int8]:
    """(P,) the full human evaluation's decision per pair, by the run's statistic at the
    fixed-sample level γ: the exact human-only rule on all outcome counts (``sign``, method.md §6)
    or the paired t-test on all differences (``mean``, method.md §13); for the pool statistics the sign
    of the pool's mean difference (or mean outcome) itself (the estimand; nothing is left to test on a known pool)."""
    table, gamma = state.table, state.settings.gamma
    if state.settings.statistic == "mean":
        return paired_t_outcomes(full_differences(table), gamma)
    if state.settings.statistic in POOL_STATISTICS:
        return pool_mean_outcomes(pool_differences(table, state.settings.statistic))
    return human_reference_outcomes(count_triples(table.pair_table(None), table.human >= 0).n, gamma)


def decided(state: ProtocolState) -> Decided:
    """The :class:`~prefeval_core.protocol.questions.Decided` of a run's current state."""
    table = state.table
    return Decided(
        table.systems,
        table.pair_systems,
        state.decisions,
        state.members,
        state.settings.question,
        is_finished(state),
        state.status.equivalent,
    )
