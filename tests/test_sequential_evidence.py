"""Anytime-valid decisions: the rule on hand-made counts, and a fast simulation of the guarantee
(method.md §12) that fails if false decisions at true ties exceed gamma over whole runs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from prefeval_core.errors import SettingsError
from prefeval_core.pairs.counts import JointCounts
from prefeval_core.protocol.ideal_metric import IDEAL_MU_ROWS
from prefeval_core.sequential import Scenario, anytime_decisions, human_log_e, initial_log_numerator, simulate_runs

GAMMA = 0.05


def _allowed(runs: int) -> float:
    """gamma + 2 Monte-Carlo standard errors of a share whose true value is gamma."""
    return GAMMA + 2.0 * math.sqrt(GAMMA * (1.0 - GAMMA) / runs)


def test_human_only_decides_exactly_when_the_e_value_reaches_two_over_gamma() -> None:
    n = np.array([[0, 0, 0], [30, 3, 4], [4, 3, 30], [21, 0, 4], [22, 0, 4]])
    result = anytime_decisions(n, GAMMA)
    log_e = human_log_e(n)
    expected = np.where(log_e[:, 0] >= math.log(40), 0, np.where(log_e[:, 1] >= math.log(40), 2, 1))
    np.testing.assert_array_equal(result.decision, expected)
    np.testing.assert_array_equal(result.decision[:3], [1, 0, 2])
    np.testing.assert_allclose(result.p_values, np.minimum(1, np.exp(-log_e)))
    assert result.metric_share == 0.0 and result.log_e_metric is None


def test_with_a_metric_the_level_is_split_between_the_components() -> None:
    revealed = np.zeros((2, 4, 3), dtype=np.int64)
    revealed[0, 0, 0], revealed[0, 2, 2] = 23, 4  # human evidence for > between 40 and 80
    revealed[1, 0, 0], revealed[1, 2, 2] = 26, 4  # beyond 80
    counts = JointCounts(("m",), revealed, np.zeros((2, 4), dtype=np.int64))
    human = human_log_e(counts.n)[:, 0]
    assert math.log(40) < human[0] < math.log(80) < human[1]
    result = anytime_decisions(counts, GAMMA, log_numerator=initial_log_numerator(2), metric_share=0.5)
    assert result.metric_share == 0.5
    np.testing.assert_array_equal(result.decision, [1, 0])  # the human component needs 2 / (0.5 gamma) = 80
    default = anytime_decisions(counts, GAMMA, log_numerator=initial_log_numerator(2))  # w = 0.1: 44.4
    np.testing.assert_array_equal(default.decision, [0, 0])
    # without unrevealed items the metric can only cost: its e-value is below the human one
    assert result.log_e_metric is not None and np.all(result.log_e_metric[:, 0] < human)


def test_bad_gamma_is_a_settings_error() -> None:
    with pytest.raises(SettingsError):
        anytime_decisions(np.zeros((1, 3)), 1.0)


@pytest.mark.parametrize(("pool", "batch"), [(100, 1), (100, 10), (400, 1), (400, 10)])
@pytest.mark.parametrize("p_tie", [0.0, 0.6])
def test_false_decisions_at_true_ties_stay_below_gamma_over_whole_runs(pool: int, batch: int, p_tie: float) -> None:
    runs = 600
    rates = ((1 - p_tie) / 2, p_tie, (1 - p_tie) / 2)
    result = simulate_runs(Scenario(pool, batch, rates), runs, gamma=GAMMA, seed=pool + batch)
    assert result.share_significant <= _allowed(runs)


def test_the_uncorrected_rule_breaks_that_bound_so_the_check_has_teeth() -> None:
    runs = 600
    result = simulate_runs(Scenario(400, 1, (0.5, 0.0, 0.5)), runs, gamma=GAMMA, control="none", seed=7)
    assert result.share_significant > 2 * _allowed(runs)


@pytest.mark.parametrize("model", ["full", "known_mu"])
def test_the_metric_e_process_keeps_the_guarantee(model: str) -> None:
    runs = 300
    scenario = Scenario(100, 10, (0.35, 0.3, 0.35), metric_mu=IDEAL_MU_ROWS, metric_only=300, model=model)  # type: ignore[arg-type]
    result = simulate_runs(scenario, runs, gamma=GAMMA, seed=11)
    assert result.share_significant <= _allowed(runs)


def test_futility_never_adds_a_decision_and_saves_judgments_at_a_tie() -> None:
    scenario = Scenario(300, 10, (0.35, 0.3, 0.35))
    plain = simulate_runs(scenario, 300, seed=5)
    stopped = simulate_runs(scenario, 300, futility_rule="predictive", seed=5)
    assert np.all((stopped.decision == 1) | (stopped.decision == plain.decision))
    assert stopped.cost.mean() < 0.7 * plain.cost.mean()
