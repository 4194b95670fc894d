"""Simulated scalar studies with truly tied top systems, to measure what a question's error
control guarantees (method.md §13).

A tie is exact on every item: the tied systems' outputs are drawn from one distribution given the
item (exchangeable: the null of the paired symmetry test, and a true tie of the mean too). The
other systems are ``gap`` lower on average. Scores are Likert-like: means of three 1-5 ratings
(steps of 1/3), an item effect shared by all systems plus output noise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from prefeval_core.data.dataset import Dataset
from prefeval_core.protocol.result import protocol_result
from prefeval_core.protocol.run import replay_source, run_protocol
from prefeval_core.protocol.settings import ProtocolSettings, Question
from prefeval_core.protocol.state import ProtocolState, new_state
from prefeval_core.protocol.table import build_study_table
from prefeval_core.vocabulary.levels import DEFAULT_GAMMA
from prefeval_core.vocabulary.outcomes import UNDECIDED

HUMAN = "human"


def tied_top_study(n_systems: int, n_tied: int, n_items: int, *, gap: float = 0.5, noise: float = 0.8, seed: int = 0) -> Dataset:
    """A study of ``n_systems`` systems (``s00``, ``s01``, ...) on ``n_items`` items whose first
    ``n_tied`` systems are exactly tied at the top (module docstring); ``n_tied = n_systems``:
    every system tied (the global null)."""
    rng = np.random.default_rng(seed)
    item_effect = rng.normal(0.0, 0.5, n_items)

    def scores(mean: float) -> np.ndarray:
        raw = mean + item_effect + rng.normal(0.0, noise, n_items)
        return np.clip(np.round(raw * 3) / 3, 1.0, 5.0)

    columns = [scores(4.0 if s < n_tied else 4.0 - gap) for s in range(n_systems)]
    rows = [(f"i{i:04d}", f"s{s:02d}", HUMAN, float(columns[s][i])) for s in range(n_systems) for i in range(n_items)]
    ratings = pd.DataFrame(rows, columns=["item_id", "system", "rater", "score"])
    empty = pd.DataFrame()
    return Dataset(name="simulated", ratings=ratings, preferences=_no_preferences(), texts=empty, sources=empty, references=empty)


def _no_preferences() -> pd.DataFrame:
    return pd.DataFrame({"item_id": [], "system_a": [], "system_b": [], "rater": [], "outcome": []})


@dataclass(frozen=True)
class QuestionRuns:
    """Runs of one simulated setting: ``errors`` the share of runs with a false exclusion of a
    tied top member (top-k) or any false directional decision (all-pairs), its Monte-Carlo
    standard error, and the mean cost fraction."""

    runs: int
    errors: float
    standard_error: float
    cost: float


def simulate_question(
    *,
    n_systems: int,
    n_tied: int,
    n_items: int,
    question: Question,
    error_control: str = "question",
    statistic: str = "mean",
    batch: int = 10,
    gamma: float = DEFAULT_GAMMA,
    runs: int = 100,
    seed: int = 0,
) -> QuestionRuns:
    """Replay ``runs`` simulated studies (seeds ``seed``, ``seed + 1``, ...) with the given rule."""
    failures, costs = 0, []
    for run in range(runs):
        data = tied_top_study(n_systems, n_tied, n_items, seed=seed + run)
        table = build_study_table(data, HUMAN)
        settings = ProtocolSettings(
            budget=table.cost_available(),
            batch=batch,
            gamma=gamma,
            model="human_only",
            seed=seed + run,
            question=question,
            unit="ratings",
            error_control=error_control,  # type: ignore[arg-type]
            statistic=statistic,  # type: ignore[arg-type]
            futility=None if error_control == "none" else gamma,
        )
        state = run_protocol(new_state(table, settings), replay_source(table))
        failures += int(_failed(state, n_tied, question))
        costs.append(protocol_result(state).cost_fraction)
    share = failures / runs
    return QuestionRuns(runs, share, float(np.sqrt(max(share * (1 - share), 1e-12) / runs)), float(np.mean(costs)))


def _failed(state: ProtocolState, n_tied: int, question: Question) -> bool:
    """A false exclusion of a true top-k member, or a false directional decision (between two
    tied systems, or a lower system declared better than a top one)."""
    systems = state.table.systems
    tied = {f"s{s:02d}" for s in range(n_tied)}
    if question.entry.tier:
        if n_tied < question.k:  # the tier is then the tied systems and every lower one: not simulated here
            return False
        kept = {s for s, member in zip(systems, state.members, strict=True) if member}
        return not tied <= kept
    a, b = state.table.pair_systems[:, 0], state.table.pair_systems[:, 1]
    in_tier = np.array([s in tied for s in systems])
    decisions = state.decisions
    tied_decided = in_tier[a] & in_tier[b] & (decisions != UNDECIDED)  # true ties: any direction is false
    lower_wins = (~in_tier[a] & in_tier[b] & (decisions == 0)) | (in_tier[a] & ~in_tier[b] & (decisions == 2))
    return bool((tied_decided | lower_wins).any())
