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
    for run in outcomes:
        looks: list[tuple[int, int, int]] = []
        for stop in range(batch, pool + batch, batch):
            seen = run[: min(stop, pool)]
            looks.append((int(np.sum(seen != 1)), len(seen), pool))
            if spending_decisions([tuple(looks)], [int(np.sum(seen == 0))], GAMMA).decision[0] != 1:
                significant += 1
                break
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
