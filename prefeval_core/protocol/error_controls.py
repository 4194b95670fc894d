"""The error-control rules and their registry (method.md §12, §13).

:data:`ERROR_CONTROL_RULES` maps a rule's name (``settings.error_control``) to its
:class:`ErrorControlRule`: the words the form and the captions use, whether its guarantee is per
pair, whether it has a futility stop, and the function that decides a round under it
(:func:`~prefeval_core.protocol.steps.decide_round` calls it). The CLI's ``--error-control``
choices and the Protocol form's picker list the registry; :data:`~prefeval_core.sequential.evidence.ErrorControl`
names the built-in rules for the type checker, and a test keeps the two equal. **A new rule is a
module with its round function and one line here.**
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal, cast

from prefeval_core.lazy import imported_on_call

if TYPE_CHECKING:
    from prefeval_core.decision import SamplerSettings
    from prefeval_core.protocol.question_control import DecidedRound
    from prefeval_core.protocol.settings import ProtocolSettings
    from prefeval_core.protocol.state import ProtocolState

RoundRule = Callable[["ProtocolState", int, "SamplerSettings | None"], "DecidedRound"]
"""``(state, round number, sampler settings) -> DecidedRound``: the open round decided."""


def _round_function(path: str) -> RoundRule:
    """The round function at ``module:function``, imported when a round is decided (so that the
    rules' words, a command's ``--help``, load no engine)."""
    return cast(RoundRule, imported_on_call(f"prefeval_core.protocol.{path}"))


_PAIRS_ROUND: Final = _round_function("decide:decide_pairs_round")
"""The per-pair rules' and the paper's round: each pair decided on its own evidence."""


@dataclass(frozen=True)
class ErrorControlRule:
    """One error-control rule.

    Attributes:
        name: what ``--error-control`` and saved settings call it.
        label: the rule in a few words, for a list of choices.
        words: the rule in a sentence, for every caption that shows decisions.
        per_pair: whether its guarantee is per pair (labelled as such wherever it is offered).
        futility: whether it has a futility stop (the paper's rule has none).
        decide: decides a round under it.
    """

    name: str
    label: str
    words: str
    per_pair: bool
    futility: bool
    decide: RoundRule


ERROR_CONTROL_RULES: dict[str, ErrorControlRule] = {
    rule.name: rule
    for rule in (
        ErrorControlRule(
            "spending",
            "per pair: spending over the pool (γ over the whole run)",
            "spending (an exact group-sequential test of the human outcomes, γ spent over the pool)",
            per_pair=True,
            futility=True,
            decide=_PAIRS_ROUND,
        ),
        ErrorControlRule(
            "anytime",
            "per pair: anytime-valid e-values (γ over any looks)",
            "anytime-valid e-values (γ over any number of looks)",
            per_pair=True,
            futility=True,
            decide=_PAIRS_ROUND,
        ),
        ErrorControlRule(
            "question",
            "the whole answer: γ over all looks and all pairs",
            "question-level (the whole answer protected: Holm, the partitioning principle or closed testing over the question's pairs,"
            " γ over all looks)",
            per_pair=False,
            futility=True,
            decide=_round_function("question_control:decide_question_round"),
        ),
        ErrorControlRule(
            "fdr",
            "all-pairs / baseline: false discovery rate ≤ γ (e-BH)",
            "false discovery rate (e-BH over the question's pairs: the expected share of false directional decisions ≤ γ)",
            per_pair=False,
            futility=True,
            decide=_round_function("fdr_control:decide_fdr_round"),
        ),
        ErrorControlRule(
            "none",
            "none (the paper: γ at every look)",
            "none (the paper: θ against γ/2 and 1 − γ/2 at every look)",
            per_pair=False,
            futility=False,
            decide=_PAIRS_ROUND,
        ),
    )
}
"""Every error-control rule by name, in the order they are offered. Tests add one with ``monkeypatch.setitem``."""


ThetaSource = Literal["model", "human_only", "normal"]
"""Where a round's θ comes from: the decision model (metrics included), the exact human-only
posterior of the outcome counts, or the normal approximation ``Φ(mean / s.e.)`` of P(Δ > 0) for a
score statistic."""


def theta_source(settings: ProtocolSettings) -> ThetaSource:
    """The :data:`ThetaSource` of a run's θ: the per-pair rules and the paper's use the model only where
    θ decides or allocates (:func:`~prefeval_core.protocol.decide.theta_from_model`); the rules over the
    question show the human-only posterior (``sign``) or the normal approximation (score statistics)."""
    from prefeval_core.protocol.decide import theta_from_model  # the engine, only where a round's θ is shown

    if ERROR_CONTROL_RULES[settings.error_control].decide is not _PAIRS_ROUND:
        return "human_only" if settings.statistic == "sign" else "normal"
    return "model" if theta_from_model(settings) else "human_only"


def control_words() -> dict[str, str]:
    """Every registered rule and its label, in the order offered."""
    return {name: rule.label for name, rule in ERROR_CONTROL_RULES.items()}
