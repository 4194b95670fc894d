"""Simulated scalar studies with truly tied top systems, to measure what a question's error
control guarantees (method.md §13).

A tie is exact on every item: the tied systems' outputs are drawn from one distribution given the
item (exchangeable: the null of the paired symmetry test, and a true tie of the mean too). The
other systems are ``gap`` lower on average. Scores are Likert-like: means of three 1-5 ratings
(steps of 1/3), an item effect shared by all systems plus output noise.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from prefeval_core.data.dataset import Dataset
from prefeval_core.protocol.questions import question_pairs
from prefeval_core.protocol.result import protocol_result
from prefeval_core.protocol.run import replay_source, run_protocol
from prefeval_core.protocol.settings import ProtocolSettings, Question
from prefeval_core.protocol.state import ProtocolState, new_state
from prefeval_core.protocol.table import build_study_table
from prefeval_core.vocabulary.levels import DEFAULT_GAMMA
from prefeval_core.vocabulary.outcomes import BETTER, UNDECIDED, WORSE

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
    for state in _replays(n_systems, n_tied, n_items, 0.5, question, error_control, statistic, batch, gamma, runs, seed):
        failures += int(_failed(state, n_tied, question))
        costs.append(protocol_result(state).cost_fraction)
    share = failures / runs
    return QuestionRuns(runs, share, float(np.sqrt(max(share * (1 - share), 1e-12) / runs)), float(np.mean(costs)))


@dataclass(frozen=True)
class DiscoveryRuns:
    """Runs of one simulated pairwise setting (all-pairs or baseline), every pair counted.

    Attributes:
        runs: number of runs.
        fdr: the false discovery rate: the mean over runs of false directional decisions / decisions
            (0 in a run without any); ``fdr_standard_error`` its Monte-Carlo standard error.
        any_false: the share of runs with at least one false directional decision (the FWER).
        power: the mean share of the truly different pairs decided in their true direction.
        cost: the mean cost fraction.
    """

    runs: int
    fdr: float
    fdr_standard_error: float
    any_false: float
    power: float
    cost: float


def simulate_discoveries(
    *,
    n_systems: int,
    n_tied: int,
    n_items: int,
    gap: float = 0.5,
    question: Question | None = None,
    error_control: str = "fdr",
    statistic: str = "mean",
    batch: int = 10,
    gamma: float = DEFAULT_GAMMA,
    runs: int = 100,
    seed: int = 0,
) -> DiscoveryRuns:
    """Replay ``runs`` simulated studies (:func:`tied_top_study`: the ``n_tied`` top systems tie,
    the others tie ``gap`` lower; seeds ``seed``, ``seed + 1``, ...) and count every pair's
    asked pair's directional decision against the true means (default question: all-pairs)."""
    asked = question or Question()
    truth = np.where(np.arange(n_systems) < n_tied, 0.0, -gap)
    shares, any_false, power, costs = [], 0, [], []
    for state in _replays(n_systems, n_tied, n_items, gap, asked, error_control, statistic, batch, gamma, runs, seed):
        table = state.table
        kept = question_pairs(asked, table.systems, table.pair_systems)
        a, b = table.pair_systems[kept, 0], table.pair_systems[kept, 1]
        sign = np.sign(truth[a] - truth[b])
        said = np.select([state.decisions[kept] == BETTER, state.decisions[kept] == WORSE], [1.0, -1.0], 0.0)
        false = (said != 0) & (said != sign)
        decided = int((said != 0).sum())
        shares.append(false.sum() / max(decided, 1))
        any_false += int(false.any())
        power.append(float(((said == sign) & (sign != 0)).sum() / max(int((sign != 0).sum()), 1)))
        costs.append(protocol_result(state).cost_fraction)
    return DiscoveryRuns(
        runs=runs,
        fdr=float(np.mean(shares)),
        fdr_standard_error=float(np.std(shares) / np.sqrt(runs)),
        any_false=any_false / runs,
        power=float(np.mean(power)),
        cost=float(np.mean(costs)),
    )


def _replays(
    n_systems: int,
    n_tied: int,
    n_items: int,
    gap: float,
    question: Question,
    error_control: str,
    statistic: str,
    batch: int,
    gamma: float,
    runs: int,
    seed: int,
) -> Iterator[ProtocolState]:
    """The finished replays of ``runs`` simulated studies (seeds ``seed``, ``seed + 1``, ...),
    human only, the futility level β = γ under error control."""
    for run in range(runs):
        data = tied_top_study(n_systems, n_tied, n_items, gap=gap, seed=seed + run)
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
        yield run_protocol(new_state(table, settings), replay_source(table))


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
