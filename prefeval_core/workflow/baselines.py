"""A protocol run next to the strongest baselines at equal cost: on exactly the human
judgments the run revealed, prefeval's engine (human only, full model), PPI++, the classical CLT
interval and Bradley–Terry (:mod:`prefeval_core.baselines`), and the run's own decisions, each
against the full human evaluation. Replay studies only: it needs the full evaluation.

"Against the full human evaluation" means what it means in every other view of the run
(:func:`~prefeval_core.protocol.result.protocol_result`): the reference is the run's own (its
statistic's, method.md §6 and §13: under the default ``pool_mean`` the sign of each pair's mean
difference over its items), and the run's row counts its verdicts — a pair it has not decided
while it goes on is *open*, not an omission. The baselines look once at everything revealed, so
every pair they leave undecided is final. A tier question (top-k) is scored by its tier, as the
Pairs tab and the answer are: each method's tier is the question's rule applied once to its decisions.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd

from prefeval_core.baselines import MethodComparison, compare_methods
from prefeval_core.diagnostics.comparison import ERROR_TYPES, OPEN, error_types
from prefeval_core.protocol import ProtocolState
from prefeval_core.protocol.questions import Decided, question_pairs
from prefeval_core.protocol.questions_top_k import TopKComparison
from prefeval_core.protocol.result import ProtocolResult, protocol_result, reference_outcomes
from prefeval_core.vocabulary.outcomes import UNDECIDED
from prefeval_core.vocabulary.words import listing

FRAME_COLUMNS = ("method", "decided", "correct", "inversion", "omission", "insertion", "open")
"""The columns of a question answered by its pairs (all-pairs, baseline): pairs per verdict."""
TIER_COLUMNS = ("method", "decided", "tier", "tier members left out", "extras", "exact match")
"""The columns of a tier question (top-k): its tier against the full evaluation's."""
RUN = "prefeval protocol (this run)"


def baselines_at(state: ProtocolState, *, n_resamples: int = 200) -> MethodComparison:
    """Every baseline on the judgments ``state`` revealed (seeded by the run's seed)."""
    table = state.table
    rounds, _ = state.row_reveals
    pairs = table.pair_table(0 if table.k else None)
    revealed = (rounds > 0) & (pairs.human >= 0)
    codes = table.metrics if table.k else None
    names = table.metric_raters or None
    return compare_methods(
        pairs, revealed, state.settings.gamma, state.settings.seed, metric_codes=codes, metric_names=names, n_resamples=n_resamples
    )


def baselines_frame(state: ProtocolState, comparison: MethodComparison, result: ProtocolResult | None = None) -> pd.DataFrame:
    """One row per method, the run's own first, against the run's reference (module docstring): a
    question answered by its pairs counts pairs per verdict (:data:`FRAME_COLUMNS`; ``correct``
    both kinds); a tier question compares each method's tier with the full evaluation's
    (:data:`TIER_COLUMNS`). ``result``: the run's :func:`~prefeval_core.protocol.result.protocol_result`
    where the caller has it."""
    result = protocol_result(state) if result is None else result
    table = state.table
    reference = reference_outcomes(state)
    if isinstance(result.answer, TopKComparison):
        rows = [_tier_row(RUN, state.decisions, result.answer)]
        for method in comparison.methods:
            rows.append(_tier_row(method.name, method.decision, _one_look_tier(state, method.decision, reference)))
        return pd.DataFrame(rows, columns=list(TIER_COLUMNS))
    asked = question_pairs(state.settings.question, table.systems, table.pair_systems)
    rows = [_row(RUN, result.outcomes, result.tally())]
    for method in comparison.methods:
        types = error_types(method.decision[asked], reference[asked])
        rows.append(_row(method.name, method.decision[asked], {t: int(np.sum(types == t)) for t in ERROR_TYPES}))
    return pd.DataFrame(rows, columns=list(FRAME_COLUMNS))


def _row(name: str, decision: npt.NDArray[np.int8], tally: dict[str, int]) -> list[object]:
    correct = tally["correct_significant"] + tally["correct_undecided"]
    decided = int(np.sum(decision != UNDECIDED))
    return [name, decided, correct, tally["inversion"], tally["omission"], tally["insertion"], tally.get(OPEN, 0)]


def _one_look_tier(state: ProtocolState, decisions: npt.NDArray[np.int8], reference: npt.NDArray[np.int8]) -> TopKComparison:
    """The tier a method's decisions give by the question's rule applied once (as the full
    evaluation's tier is), against the full evaluation's."""
    table, question = state.table, state.settings.question
    entry = question.entry
    assert entry.members is not None and entry.compare is not None, "a tier question has members and a comparison"
    members = entry.members(question, np.ones(len(table.systems), dtype=bool), decisions, table.pair_systems)
    found = entry.compare(Decided(table.systems, table.pair_systems, decisions, members, question, True), reference)
    assert isinstance(found, TopKComparison)
    return found


def _tier_row(name: str, decision: npt.NDArray[np.int8], tier: TopKComparison) -> list[object]:
    return [name, int(np.sum(decision != UNDECIDED)), listing(tier.answer.members), tier.false_exclusions, tier.extras, tier.exact_match]
