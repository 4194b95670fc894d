"""A protocol run next to the strongest baselines at equal cost: on exactly the human
judgments the run revealed, prefeval's engine (human only, full model), PPI++, the classical CLT
interval and Bradley–Terry (:mod:`prefeval_core.baselines`), and the run's own decisions, each
against the full human evaluation (method.md §6). Replay studies only: it needs the full evaluation."""

from __future__ import annotations

import numpy as np
import pandas as pd

from prefeval_core.baselines import MethodComparison, compare_methods
from prefeval_core.diagnostics.comparison import ERROR_TYPES, error_types
from prefeval_core.protocol import ProtocolState
from prefeval_core.protocol.questions import question_pairs
from prefeval_core.vocabulary.outcomes import UNDECIDED

FRAME_COLUMNS = ("method", "decided", "correct", "inversion", "omission", "insertion")


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


def baselines_frame(state: ProtocolState, comparison: MethodComparison) -> pd.DataFrame:
    """One row per method, the run's own decisions first: pairs of the question decided, and pairs per error type."""
    table = state.table
    asked = question_pairs(state.settings.question, table.systems, table.pair_systems)
    own = error_types(state.decisions, comparison.reference)
    rows = [_row("prefeval protocol (this run)", state.decisions[asked], own[asked])]
    rows += [_row(m.name, m.decision[asked], m.error_types[asked]) for m in comparison.methods]
    return pd.DataFrame(rows, columns=list(FRAME_COLUMNS))


def _row(name: str, decision: np.ndarray, types: np.ndarray) -> list[object]:
    counts = {t: int(np.sum(types == t)) for t in ERROR_TYPES}
    correct = counts["correct_significant"] + counts["correct_undecided"]
    return [name, int(np.sum(decision != UNDECIDED)), correct, counts["inversion"], counts["omission"], counts["insertion"]]
