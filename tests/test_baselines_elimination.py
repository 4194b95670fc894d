"""Successive elimination for the best system (prefeval_core.baselines.elimination): exact cases,
its union bound, and its error rate at a true tie by simulation; the ideal metric of a given sign
accuracy in the simulated studies (prefeval_core.protocol.simulation)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import t as student_t

from prefeval_core.baselines import successive_elimination
from prefeval_core.baselines.elimination import lower_bound
from prefeval_core.errors import SettingsError
from prefeval_core.protocol.ideal_metric import IDEAL_MU_ROWS
from prefeval_core.protocol.settings import Question
from prefeval_core.protocol.simulation import ideal_mu, simulate_question, tied_top_study, with_ideal_metric

GAMMA = 0.05


def test_a_clearly_worse_system_leaves_at_the_first_look_and_the_run_stops() -> None:
    scores = np.vstack([np.full(40, 5.0), np.full(40, 1.0), np.r_[np.full(20, 4.0), np.full(20, 2.0)]])
    run = successive_elimination(scores, np.full(scores.shape, 3), batch=10, gamma=GAMMA, score_range=4.0)
    # look 1: both others are below the leader on every item (sd 0 for the first, 1.0 constant for the
    # second): their bounds are the mean differences, 4 and 1, both above 0
    assert run.members.tolist() == [True, False, False]
    assert run.looks == 1
    assert run.cost == 3 * 10 * 3
    assert run.level == pytest.approx(GAMMA / (4 * 3 * 2))


def test_missing_scores_cost_nothing_and_a_tie_is_kept() -> None:
    scores = np.array([[1.0, 2.0, np.nan, 3.0], [1.0, 2.0, 5.0, 3.0]])
    run = successive_elimination(scores, np.ones((2, 4), dtype=int), batch=2, gamma=GAMMA, score_range=4.0)
    assert run.members.all()
    assert run.cost == 7
    assert run.looks == 2


def test_the_bounds_are_the_stated_formulas() -> None:
    d = np.array([0.5, 1.0, 1.5, 2.0])
    t = d.mean() - student_t.ppf(1 - 0.01, 3) * d.std(ddof=1) / 2.0
    assert lower_bound(d, 0.01, 4.0, "t") == pytest.approx(t)
    assert lower_bound(d, 0.01, 4.0, "hoeffding") == pytest.approx(d.mean() - 8.0 * math.sqrt(math.log(100) / 8))
    assert lower_bound(d[:1], 0.01, 4.0, "t") == -math.inf


@pytest.mark.parametrize("kwargs", [{"batch": 0}, {"gamma": 1.0}, {"score_range": 0.0}, {"bound": "wald"}])
def test_bad_settings_raise(kwargs: dict[str, object]) -> None:
    settings: dict[str, object] = {"batch": 5, "gamma": GAMMA, "score_range": 4.0, "bound": "t", **kwargs}
    with pytest.raises(SettingsError):
        successive_elimination(np.zeros((2, 10)), np.ones((2, 10), dtype=int), **settings)  # type: ignore[arg-type]


@pytest.mark.parametrize("bound", ["t", "hoeffding"])
def test_tied_best_systems_are_excluded_in_at_most_gamma_of_the_runs(bound: str) -> None:
    """Three exchangeable best systems and two 0.5 lower (Likert-like, as the simulated studies),
    looks every 5 items over 60: the share of runs that eliminate a best one stays <= γ + 2 s.e."""
    runs, failures = 300, 0
    rng = np.random.default_rng(18)
    means = np.array([4.0, 4.0, 4.0, 3.5, 3.5])[:, None]
    for _ in range(runs):
        raw = means + rng.normal(0.0, 0.5, 60) + rng.normal(0.0, 0.8, (5, 60))
        scores = np.clip(np.round(raw * 3) / 3, 1.0, 5.0)
        run = successive_elimination(scores, np.ones(scores.shape, dtype=int), batch=5, gamma=GAMMA, score_range=4.0, bound=bound)  # type: ignore[arg-type]
        failures += int(not run.members[:3].all())
    assert failures / runs <= GAMMA + 2 * math.sqrt(GAMMA * (1 - GAMMA) / runs)


def test_ideal_mu_is_the_papers_at_accuracy_0_8_and_has_that_sign_accuracy() -> None:
    assert ideal_mu(0.8) == pytest.approx(np.array(IDEAL_MU_ROWS))
    assert np.allclose(np.array(ideal_mu(0.6)).sum(axis=0), 1.0)
    with pytest.raises(SettingsError):
        ideal_mu(1.2)
    table = with_ideal_metric(tied_top_study(6, 2, 200, seed=1), 0.7, seed=1)
    decisive = table.human != 1
    assert np.mean(table.metrics[decisive, 0] == table.human[decisive]) == pytest.approx(0.7, abs=0.02)


def test_the_metric_does_not_change_a_question_level_run() -> None:
    """Under ``question`` the mean statistic decides from the human differences alone (method.md §13)."""
    common = {"n_systems": 5, "n_tied": 2, "n_items": 30, "question": Question(), "runs": 3, "seed": 7, "ladder": True}
    human = simulate_question(**common)  # type: ignore[arg-type]
    metric = simulate_question(**common, metric_accuracy=0.9)  # type: ignore[arg-type]
    assert metric.cost == human.cost
    assert metric.errors == human.errors
