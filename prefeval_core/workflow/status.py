"""Where a protocol run stands, in numbers and words (:class:`StudyStatus`): light enough for the
command line's replay, which draws nothing."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from prefeval_core.protocol import ERROR_CONTROL_RULES, ProtocolSettings, ProtocolState, is_finished, pairs_that_matter, stop_reason
from prefeval_core.protocol.questions import question_pairs
from prefeval_core.protocol.settings import CLT_STATISTICS
from prefeval_core.protocol.stop import cost_to_settle, futile_pairs
from prefeval_core.vocabulary.outcomes import TIE
from prefeval_core.vocabulary.words import first_upper
from prefeval_core.workflow.answers import answer_words

STOP_WORDS = {
    "running": "running",
    "answered": "the question is answered",
    "futile": "the pairs left were stopped as futile: their evidence is unlikely to reach the threshold before their items run out",
    "exhausted": "no judgment left can decide the pairs left (their items are used up, or all of them could not make a pair significant)",
    "budget": "the budget is spent",
    "max_rounds": "the round limit is reached",
}


@dataclass(frozen=True)
class StudyStatus:
    """A run at a glance.

    Attributes:
        round: completed rounds.
        unit: what one judgment is; cost_used / budget in that unit.
        decided, pairs: pairs with a significant decision / pairs of the question.
        undecided: pairs of the question with neither a direction nor an equivalence.
        equivalent: pairs decided equivalent within the margin δ (``None`` without one).
        matter: pairs whose judgments can still change the answer.
        finished, stop_reason: whether the run is over and why (see :data:`STOP_WORDS`).
        answer: the answer in names (:func:`~prefeval_core.workflow.answers.answer_words`).
        futile_pairs: pairs that still matter but were stopped as futile; futility: β of that rule (None: off).
        cost_to_settle: the most that judging those pairs to the end of their items could still cost (the
            exact refutation as items run out can decide them: the stop gives that up; 0 without such pairs).
        ruled_out, systems: a tier question's (top-k) systems shown not to be among the best k, of all
            systems (``None`` for the other questions): under question-level control the answer is
            settled by excluding systems, often before any single pair is decided.
    """

    round: int
    unit: str
    cost_used: int
    budget: int
    decided: int
    pairs: int
    undecided: int
    matter: int
    finished: bool
    stop_reason: str
    answer: str
    futile_pairs: tuple[tuple[str, str], ...] = ()
    futility: float | None = None
    ruled_out: int | None = None
    systems: int = 0
    equivalent: int | None = None
    cost_to_settle: int = 0

    @property
    def ruled_out_words(self) -> str | None:
        """``11 of 16 systems ruled out`` for a tier question, ``None`` for the others."""
        return None if self.ruled_out is None else f"{self.ruled_out} of {self.systems} systems ruled out"

    @property
    def equivalent_words(self) -> str | None:
        """``12 equivalent`` with a margin, ``None`` without one."""
        return None if self.equivalent is None else f"{self.equivalent} equivalent"

    @property
    def progress_words(self) -> str:
        """``7 of 120 pairs decided``, with a margin ``, 12 equivalent``, and for a tier question
        ``; 11 of 16 systems ruled out``."""
        words = f"{self.decided} of {self.pairs} pairs decided" + ("" if self.equivalent_words is None else f", {self.equivalent_words}")
        return words if self.ruled_out_words is None else f"{words}; {self.ruled_out_words}"

    @property
    def stop_words(self) -> str:
        """Why the run stopped, in words; a futility stop names its level β and its pairs."""
        if self.stop_reason != "futile":
            return STOP_WORDS[self.stop_reason]
        pairs = ", ".join(f"{a} vs {b}" for a, b in self.futile_pairs)
        level = "" if self.futility is None else f" (β = {self.futility:g})"
        rest = (
            f"; judging them to the end of their items would cost at most {self.cost_to_settle:,} more {self.unit}"
            if self.cost_to_settle
            else ""
        )
        return f"stopped as futile{level}: the evidence on {pairs} is unlikely to reach the threshold before their items run out{rest}"


def study_status(state: ProtocolState) -> StudyStatus:
    """The run's :class:`StudyStatus`."""
    table, settings = state.table, state.settings
    asked = question_pairs(settings.question, table.systems, table.pair_systems)
    decided = int(np.sum(state.decisions[asked] != TIE))
    equivalent = state.status.equivalent[asked]
    finished = is_finished(state)
    return StudyStatus(
        round=state.round,
        unit=table.unit,
        cost_used=state.cost_used,
        budget=settings.budget,
        decided=decided,
        pairs=int(asked.sum()),
        undecided=int(np.sum((state.decisions[asked] == TIE) & ~equivalent)),
        matter=int(pairs_that_matter(state).sum()),
        finished=finished,
        stop_reason=stop_reason(state),
        answer=answer_words(state),
        futile_pairs=futile_pairs(state),
        futility=settings.futility,
        ruled_out=int((~state.members).sum()) if settings.question.entry.tier else None,
        systems=len(table.systems),
        equivalent=None if settings.delta is None else int(equivalent.sum()),
        cost_to_settle=cost_to_settle(state),
    )


def judge_role(settings: ProtocolSettings) -> str | None:
    """How the judge (the study's metrics) enters the decisions under ``settings``, in words; ``None``
    for a run without one. A study with metrics under a rule that decides from the human judgments
    alone (the default ``pool_mean``) says so: the metric is then shown in figures but enters no decision."""
    if not settings.metrics or settings.model == "human_only":
        return None
    if settings.error_control == "none":
        return "without error control the judge's outcomes enter the posterior that decides each pair (the paper's model)."
    if settings.statistic in CLT_STATISTICS:
        return (
            f"under {settings.error_control} error control the {settings.statistic} statistic takes the judge's differences (of its "
            "scores, where it has scores) into each pair's test as a control variate, so it saves judgments by removing the "
            "part of the human differences' spread it predicts (the guarantee is asymptotic, method.md §13)."
        )
    if settings.model == "known_mu" and settings.error_control == "anytime":
        return f"under {settings.error_control} error control the judge's e-process may decide beside the human one (a share of γ)."
    if not ERROR_CONTROL_RULES[settings.error_control].per_pair:
        return (
            f"under {settings.error_control} error control with the {settings.statistic} statistic the decisions and the stops "
            "come from the human judgments alone: the judge does not enter. The pool_mean_clt statistic takes it into each "
            "pair's test as a control variate (an asymptotic guarantee, method.md §13)."
        )
    return (
        f"under {settings.error_control} error control the decisions come from the human judgments alone; the judge only "
        "predicts which pairs are futile, so it saves judgments only by stopping those pairs sooner"
        + ("" if settings.futility is not None else " — and the futility rule is off")
        + "."
    )


def judge_sentence(metrics: Sequence[str], role: str) -> str:
    """``the judge (rougeL, bleu): <role>``: the line ``replay`` and ``studies show`` print and the
    Protocol page shows (:func:`judge_role` gives ``role``)."""
    return f"the judge ({', '.join(metrics)}): {role}"


NO_JUDGE_WORDS = "No judge in the decision model: human judgments only."
"""What the page and the report say of a run without a judge in its decision model."""


def judge_words(settings: ProtocolSettings) -> str:
    """How the judge enters the decisions, as a sentence of its own (:func:`judge_sentence`), or
    :data:`NO_JUDGE_WORDS`: what the Protocol page and the report say where no run without the judge
    was measured (a live study, or a replay still going on)."""
    role = judge_role(settings)
    return NO_JUDGE_WORDS if role is None else first_upper(judge_sentence(settings.metrics, role))
