"""The spending-function test (prefeval_core.sequential.spending): exact null crossing probabilities
by brute force, the guarantee by simulation with ties, decisions, and the predictive futility."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from prefeval_core.sequential.spending import _walk, final_success_probability, spending_decisions, spent

GAMMA = 0.05


def brute_force_crossing(looks: tuple[tuple[int, int, int], ...], gamma: float) -> float:
    """P(the walk crosses some look's boundary) by enumerating every sequence of fair coins."""
    D = looks[-1][0]
    boundaries = []
    for end in range(1, len(looks) + 1):
        boundaries.append(_walk(looks[:end], gamma).boundary)
    crossed = 0
    for path in itertools.product((0, 1), repeat=D):
        for (decisive, _, _), boundary in zip(looks, boundaries, strict=True):
            s = sum(path[:decisive])
            if abs(2 * s - decisive) >= boundary:
                crossed += 1
                break
    return crossed / 2**D


@pytest.mark.parametrize(
    "looks",
    [
        ((4, 4, 16), (8, 8, 16), (12, 12, 16), (16, 16, 16)),
        ((2, 4, 20), (5, 8, 20), (9, 12, 20), (9, 16, 20), (14, 20, 20)),  # ties: some looks add no decisive outcome
        tuple((d, d, 14) for d in range(1, 15)),  # a look after every outcome
    ],
)
def test_the_null_crossing_probability_is_what_was_spent_and_at_most_gamma(looks) -> None:  # type: ignore[no-untyped-def]
    gamma = 0.2  # large enough for tiny walks to spend something
    exact = brute_force_crossing(looks, gamma)
    assert exact == pytest.approx(_walk(looks, gamma).spent, abs=1e-12)
    assert exact <= spent(looks[-1][1] / looks[-1][2], gamma) + 1e-12 <= gamma + 1e-12


def test_the_spending_function() -> None:
    assert spent(0.0, GAMMA) == 0.0 and spent(1.0, GAMMA) == pytest.approx(GAMMA)
    assert spent(0.5, GAMMA) == pytest.approx(GAMMA * np.log1p((np.e - 1) / 2))
    assert spent(2.0, GAMMA) == pytest.approx(GAMMA)


def test_decisions_follow_the_direction_and_the_boundary() -> None:
    looks = [((20, 20, 100),), ((20, 20, 100),), ((20, 20, 100),)]
    result = spending_decisions(looks, [20, 0, 12], GAMMA)
    assert result.decision.tolist() == [0, 2, 1]
    assert result.boundary[0] == result.boundary[1] <= 20 and result.spent.max() <= GAMMA
    assert spending_decisions([()], [0], GAMMA).decision.tolist() == [1]  # no look yet


@pytest.mark.slow
@pytest.mark.parametrize(("pool", "batch", "tie"), [(100, 1, 0.0), (100, 10, 0.6), (400, 10, 0.3), (400, 50, 0.0)])
def test_false_decisions_at_true_ties_stay_below_gamma(pool: int, batch: int, tie: float) -> None:
    rng = np.random.default_rng(pool + batch)
    runs = 2000
    p = (1 - tie) / 2
    outcomes = rng.choice(3, size=(runs, pool), p=[p, tie, p])
    significant = 0
    looks: list[list[tuple[int, int, int]]] = [[] for _ in range(runs)]
    running = np.arange(runs)  # the runs not yet decided, all looked at together (one call per look)
    for stop in range(batch, pool + batch, batch):
        seen = outcomes[running, : min(stop, pool)]
        decisive, better = np.sum(seen != 1, axis=1), np.sum(seen == 0, axis=1)
        for row, run in enumerate(running):
            looks[run].append((int(decisive[row]), seen.shape[1], pool))
        decided = spending_decisions([tuple(looks[run]) for run in running], better, GAMMA).decision != 1
        significant += int(decided.sum())
        running = running[~decided]
    share = significant / runs
    assert share <= GAMMA + 2 * np.sqrt(GAMMA * (1 - GAMMA) / runs)


def test_predictive_success_exact_and_normal_agree_and_match_simulation() -> None:
    n = np.array([[30, 10, 20], [25, 5, 25], [5, 0, 0]], dtype=float)
    exact = final_success_probability(n, [100, 100, 100], GAMMA)
    rng = np.random.default_rng(1)
    for row, probability in zip(n, exact, strict=True):
        p = rng.dirichlet(row + 1, size=20_000)
        future = np.array([rng.multinomial(100, q) for q in p])
        better, worse = row[0] + future[:, 0], row[2] + future[:, 2]
        simulated = np.mean(np.abs(better - worse) >= 1.959964 * np.sqrt(better + worse))
        assert probability == pytest.approx(simulated, abs=0.015)
    from prefeval_core.sequential.spending import _normal_success

    approximate = _normal_success(n, np.full(3, 100.0), 1.959964)
    np.testing.assert_allclose(approximate, exact, atol=0.06)
    assert final_success_probability(np.array([[10, 0, 10]]), [0], GAMMA)[0] == 0.0  # nothing left, not significant now


def brute_force_metric_success(revealed: np.ndarray, remaining: np.ndarray, gamma: float) -> float:
    """The metric-informed predictive by enumerating every future count vector of every pattern
    (scipy's Dirichlet-multinomial, independent of the module's grid and convolution)."""
    from scipy.stats import dirichlet_multinomial, norm

    n = revealed.sum(axis=0).astype(float)
    alpha = revealed + 3.0 * (n + 1.0) / (n.sum() + 3.0)
    per_pattern = []
    for c, R in enumerate(remaining):
        vectors = [(x, R - x - y, y) for x in range(R + 1) for y in range(R + 1 - x)]
        per_pattern.append([(v, float(dirichlet_multinomial.pmf(v, alpha[c], R))) for v in vectors])
    z = norm.ppf(1 - gamma / 2)
    total = 0.0
    for combination in itertools.product(*per_pattern):
        better = n[0] + sum(v[0] for v, _ in combination)
        worse = n[2] + sum(v[2] for v, _ in combination)
        if better + worse > 0 and abs(better - worse) >= z * np.sqrt(better + worse):
            total += float(np.prod([p for _, p in combination]))
    return total


@pytest.mark.parametrize(
    ("revealed", "remaining"),
    [
        ([[4, 1, 1], [2, 5, 2], [1, 1, 3], [1, 0, 1]], [3, 2, 4, 1]),
        ([[6, 0, 0], [0, 0, 0], [0, 0, 5], [0, 2, 0]], [0, 5, 0, 3]),  # a pattern never revealed: the shrinkage prior alone
        ([[2, 3, 2], [0, 0, 0], [0, 0, 0], [0, 0, 0]], [4, 0, 0, 0]),
    ],
)
def test_metric_predictive_is_the_exact_sum_over_every_future(revealed, remaining) -> None:  # type: ignore[no-untyped-def]
    from prefeval_core.sequential.spending import metric_success_probability

    K, R = np.array(revealed), np.array(remaining)
    exact = metric_success_probability(K[None], R[None], GAMMA)[0]
    assert exact == pytest.approx(brute_force_metric_success(K, R, GAMMA), abs=1e-9)


def test_metric_predictive_normal_route_agrees_and_an_informative_metric_sharpens_it() -> None:
    from prefeval_core.sequential.spending import EXACT_REMAINING, metric_success_probability

    rng = np.random.default_rng(3)
    K = rng.integers(0, 12, size=(20, 4, 3))
    R = rng.multinomial(EXACT_REMAINING, [0.3, 0.3, 0.3, 0.1], size=20)
    exact = metric_success_probability(K, R, GAMMA)
    R_over = R.copy()
    R_over[:, 0] += 1  # one item more: the normal route
    approximate = metric_success_probability(K, R_over, GAMMA)
    np.testing.assert_allclose(approximate, exact, atol=0.08)
    # A near tie whose remaining items the metric splits evenly into clear '>' and clear '<':
    # the metric predicts a balanced future, so the pair is less likely to end significant.
    informative = np.array([[[10, 1, 1], [2, 10, 2], [1, 1, 10], [0, 0, 0]]])
    balanced = np.array([[20, 20, 20, 0]])
    with_metric = metric_success_probability(informative, balanced, GAMMA)[0]
    without = final_success_probability(informative.sum(axis=1), [60], GAMMA)[0]
    assert with_metric < 0.6 * without


@pytest.mark.slow
def test_metric_informed_futility_keeps_the_error_bound_and_saves_judgments_at_ties() -> None:
    from prefeval_core.protocol.ideal_metric import IDEAL_MU_ROWS
    from prefeval_core.sequential.simulation import Scenario, simulate_runs

    runs = 1000
    rates = (0.35, 0.3, 0.35)
    human = simulate_runs(Scenario(300, 10, rates), runs, control="spending", futility_rule="predictive", seed=11)
    metric = simulate_runs(Scenario(300, 10, rates, metric_mu=IDEAL_MU_ROWS, model="full"), runs, control="spending",
                           futility_rule="predictive", seed=11)  # fmt: skip
    bound = GAMMA + 2 * np.sqrt(GAMMA * (1 - GAMMA) / runs)
    assert np.mean(metric.decision != 1) <= bound
    assert metric.cost.mean() < human.cost.mean()
