"""Simulated scalar studies with truly tied top systems, to measure what a question's error
control guarantees (method.md §13).

A tie is exact on every item: the tied systems' outputs are drawn from one distribution given the
item (exchangeable: the null of the paired symmetry test, and a true tie of the mean too). The
other systems are ``gap`` lower on average (or, as a ``ladder``, ``gap``, ``2 gap``, ... lower).
Scores are Likert-like: means of three 1-5 ratings (steps of 1/3), an item effect shared by all
systems plus output noise.

With ``metric_accuracy`` a, the study gets the ideal metric of method.md §10 (an outcome-level
metric drawn from a fixed mixture matrix given each item's human outcome) with the matrix
:func:`ideal_mu` (a): it reproduces the paper's ``mu_sim`` at a = 0.8.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from scipy.stats import norm

from prefeval_core.data.dataset import Dataset
from prefeval_core.decision import MuRows
from prefeval_core.errors import settings_error
from prefeval_core.protocol.ideal_metric import IDEAL_METRIC_NAME, ideal_metric_table
from prefeval_core.protocol.question_control import pool_differences
from prefeval_core.protocol.questions import question_pairs
from prefeval_core.protocol.result import protocol_result
from prefeval_core.protocol.run import replay_source, run_protocol
from prefeval_core.protocol.settings import POOL_STATISTICS, ProtocolSettings, Question
from prefeval_core.protocol.state import ProtocolState, new_state
from prefeval_core.protocol.table import StudyTable, build_study_table
from prefeval_core.vocabulary.levels import DEFAULT_GAMMA
from prefeval_core.vocabulary.outcomes import BETTER, UNDECIDED, WORSE
from prefeval_core.vocabulary.tasks import Unit

HUMAN = "human"
ITEM_SD = 0.5
"""Standard deviation of the item effect every system's score on an item shares (scale points)."""
NOISE_SD = 0.8
"""Default standard deviation of each output's own noise (scale points)."""
SCALE_LOW, SCALE_HIGH, STEPS_PER_POINT = 1.0, 5.0, 3
"""A simulated score is a mean of three 1-5 ratings: rounded to thirds, clipped to [1, 5]."""


def ideal_mu(accuracy: float) -> MuRows:
    """The ideal metric's mixture matrix (rows = metric, columns = human, order ``>, =, <``) with
    sign accuracy ``accuracy`` on decisive human outcomes: the right sign with that probability, a
    tie or the wrong sign with half the rest each; a human tie keeps the paper's column
    ``(0.25, 0.5, 0.25)`` **(choice)**. ``ideal_mu(0.8)`` is the paper's ``mu_sim``."""
    if not 0.0 <= accuracy <= 1.0:
        raise settings_error(f"a sign accuracy must be in [0, 1], got {accuracy}", field="metric_accuracy")
    rest = (1.0 - accuracy) / 2.0
    return ((accuracy, 0.25, rest), (rest, 0.5, rest), (rest, 0.25, accuracy))


def true_means(n_systems: int, n_tied: int, *, gap: float = 0.5, ladder: bool = False) -> tuple[float, ...]:
    """Each system's mean score in :func:`tied_top_study` (before rounding and clipping)."""
    return tuple(4.0 if s < n_tied else 4.0 - gap * ((s - n_tied + 1) if ladder else 1) for s in range(n_systems))


def expected_scores(means: tuple[float, ...], *, noise: float = NOISE_SD) -> tuple[float, ...]:
    """Each system's expected score in :func:`tied_top_study` (the mean statistic's estimand): its
    design mean ``means`` plus normal item effect and noise, rounded to thirds and clipped to [1, 5].
    Clipping at 5 lowers a high mean more than a lower one (4.0 and 3.5 differ by 0.452, not
    0.5), so near an equivalence margin the design's means are not the truth; the order and the
    exact ties are the same."""
    spread = float(np.hypot(ITEM_SD, noise))
    steps = np.arange(round(SCALE_LOW * STEPS_PER_POINT), round(SCALE_HIGH * STEPS_PER_POINT) + 1)  # the scores in steps
    upper = np.append((steps[:-1] + 0.5) / STEPS_PER_POINT, np.inf)  # score k/3 <=> 3x rounds to k (the ends take the tails)
    lower = np.insert(upper[:-1], 0, -np.inf)
    distinct, which = np.unique(np.asarray(means, dtype=np.float64), return_inverse=True)  # equal means: one value, ties exact
    probability = norm.cdf((upper - distinct[:, None]) / spread) - norm.cdf((lower - distinct[:, None]) / spread)
    return tuple(float(v) for v in (probability @ (steps / STEPS_PER_POINT))[which])


def tied_top_study(
    n_systems: int, n_tied: int, n_items: int, *, gap: float = 0.5, noise: float = NOISE_SD, ladder: bool = False, seed: int = 0
) -> Dataset:
    """A study of ``n_systems`` systems (``s00``, ``s01``, ...) on ``n_items`` items whose first
    ``n_tied`` systems are exactly tied at the top (module docstring); ``n_tied = n_systems``:
    every system tied (the global null)."""
    rng = np.random.default_rng(seed)
    item_effect = rng.normal(0.0, ITEM_SD, n_items)

    def scores(mean: float) -> np.ndarray:
        raw = mean + item_effect + rng.normal(0.0, noise, n_items)
        return np.clip(np.round(raw * STEPS_PER_POINT) / STEPS_PER_POINT, SCALE_LOW, SCALE_HIGH)

    columns = [scores(mean) for mean in true_means(n_systems, n_tied, gap=gap, ladder=ladder)]
    rows = [(f"i{i:04d}", f"s{s:02d}", HUMAN, float(columns[s][i])) for s in range(n_systems) for i in range(n_items)]
    ratings = pd.DataFrame(rows, columns=["item_id", "system", "rater", "score"])
    empty = pd.DataFrame()
    return Dataset(name="simulated", ratings=ratings, preferences=_no_preferences(), texts=empty, sources=empty, references=empty)


def _no_preferences() -> pd.DataFrame:
    return pd.DataFrame({"item_id": [], "system_a": [], "system_b": [], "rater": [], "outcome": []})


def with_ideal_metric(data: Dataset, accuracy: float, seed: int) -> StudyTable:
    """The ratings table of a simulated study with the ideal metric of sign accuracy ``accuracy``
    (:func:`ideal_mu`; metric name ``"ideal"``), drawn with ``seed``."""
    table = build_study_table(data, HUMAN, (IDEAL_METRIC_NAME,), seed=seed)
    metric = ideal_metric_table(table.pair_table(None), seed=seed, mu=np.array(ideal_mu(accuracy))).metric
    return replace(table, metrics=metric[:, None])


@dataclass(frozen=True)
class QuestionRuns:
    """Runs of one simulated setting: ``errors`` the share of runs with a false exclusion of a
    tied top member (top-k), any false directional decision (all-pairs) or a false equivalence,
    its Monte-Carlo standard error, the mean cost fraction and the mean number of pairs decided
    equivalent per run."""

    runs: int
    errors: float
    standard_error: float
    cost: float
    equivalent: float = 0.0


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
    ladder: bool = False,
    metric_accuracy: float | None = None,
    delta: float | None = None,
    unit: Unit = "ratings",
) -> QuestionRuns:
    """Replay ``runs`` simulated studies (seeds ``seed``, ``seed + 1``, ...) with the given rule;
    with ``metric_accuracy``, the ideal metric of that sign accuracy is in the model (``known_mu``:
    under ``spending`` it informs the futility stop, method.md §12); with an equivalence margin
    ``delta``, a pair decided equivalent whose true difference is at least δ is an error too. With
    ``unit="comparisons"`` the same studies are judged as comparisons (a comparison's outcome is
    the sign of the two scores' difference, each pair in its own seeded order, one paid judgment
    each): the pool statistics' truth is then each pair's pool net win rate."""
    failures, costs, equivalent = 0, [], 0
    means = expected_scores(true_means(n_systems, n_tied, ladder=ladder))
    replays = _replays(n_systems, n_tied, n_items, question, error_control, statistic, batch, gamma, runs, seed,
                       ladder=ladder, metric_accuracy=metric_accuracy, delta=delta, unit=unit)  # fmt: skip
    for state in replays:
        failures += int(_failed(state, means, question))
        costs.append(protocol_result(state).cost_fraction)
        equivalent += int(state.status.equivalent.sum())
    share = failures / runs
    standard_error = float(np.sqrt(max(share * (1 - share), 1e-12) / runs))
    return QuestionRuns(runs, share, standard_error, float(np.mean(costs)), equivalent / runs)


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
    truth = np.array(expected_scores(true_means(n_systems, n_tied, gap=gap)))
    shares, any_false, power, costs = [], 0, [], []
    for state in _replays(n_systems, n_tied, n_items, asked, error_control, statistic, batch, gamma, runs, seed, gap=gap):
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
    question: Question,
    error_control: str,
    statistic: str,
    batch: int,
    gamma: float,
    runs: int,
    seed: int,
    *,
    gap: float = 0.5,
    ladder: bool = False,
    metric_accuracy: float | None = None,
    delta: float | None = None,
    unit: Unit = "ratings",
) -> Iterator[ProtocolState]:
    """The finished replays of ``runs`` simulated studies (:func:`tied_top_study`, seeds ``seed``,
    ``seed + 1``, ...), human only or with the ideal metric of sign accuracy ``metric_accuracy``
    in the model (``known_mu``), the futility level β = γ under error control."""
    for run in range(runs):
        data = tied_top_study(n_systems, n_tied, n_items, gap=gap, ladder=ladder, seed=seed + run)
        table = (
            build_study_table(data, HUMAN, unit=unit) if metric_accuracy is None else with_ideal_metric(data, metric_accuracy, seed + run)
        )
        settings = ProtocolSettings(
            budget=table.cost_available(),
            batch=batch,
            gamma=gamma,
            model="human_only" if metric_accuracy is None else "known_mu",
            mu=None if metric_accuracy is None else ideal_mu(metric_accuracy),
            metrics=() if metric_accuracy is None else (IDEAL_METRIC_NAME,),
            seed=seed + run,
            question=question,
            unit=unit,
            error_control=error_control,  # type: ignore[arg-type]
            statistic=statistic,  # type: ignore[arg-type]
            futility=None if error_control == "none" else gamma,
            delta=delta,
        )
        yield run_protocol(new_state(table, settings), replay_source(table))


def _failed(state: ProtocolState, means: tuple[float, ...], question: Question) -> bool:
    """A false exclusion of a true top-k member, or a false directional decision (between two
    systems of equal true mean, which are exchangeable on every item, or against the true order),
    or a false equivalence (a pair decided equivalent whose true difference is at least δ).
    The truth is the systems' expected scores ``means`` (:func:`expected_scores`), or for the pool
    statistics the simulated pool's own mean difference (or mean outcome) per pair (their
    estimand: every simulated item has every system's score)."""
    table = state.table
    a, b = table.pair_systems[:, 0], table.pair_systems[:, 1]
    if state.settings.statistic in POOL_STATISTICS:
        true_difference = np.round(np.nanmean(pool_differences(table, state.settings.statistic), axis=1), 9)
    else:
        true = np.array([means[int(s[1:])] for s in table.systems])
        true_difference = true[a] - true[b]
    delta = state.settings.delta
    if delta is not None and (state.status.equivalent & (np.abs(true_difference) >= delta)).any():
        return True  # a false equivalence
    if question.entry.tier:
        S = len(table.systems)
        beaten_by = np.bincount(b[true_difference > 0], minlength=S) + np.bincount(a[true_difference < 0], minlength=S)
        member = beaten_by < question.k  # fewer than k systems truly better
        return bool((member & ~state.members).any())
    decisions = state.decisions
    tied_decided = (true_difference == 0) & (decisions != UNDECIDED)  # true ties: any direction is false
    wrong_way = ((true_difference < 0) & (decisions == BETTER)) | ((true_difference > 0) & (decisions == WORSE))
    return bool((tied_decided | wrong_way).any())
