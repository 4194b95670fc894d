"""Position bias: the Cochran–Mantel–Haenszel p-value against statsmodels, its error rate at no
bias by simulation (randomised sides, pairs of unequal quality), its power, and per annotator
from stored comparisons."""

from __future__ import annotations

import math

import numpy as np
import pytest
from statsmodels.stats.contingency_tables import StratifiedTable

from prefeval_core.annotation.left_right import left_right, make_comparison
from prefeval_core.annotation.position_bias import mantel_haenszel_p_value, position_bias

GAMMA = 0.05


@pytest.mark.parametrize("seed", range(6))
def test_the_p_value_is_statsmodels_cochran_mantel_haenszel(seed: int) -> None:
    rng = np.random.default_rng(seed)
    tables = rng.integers(1, 30, size=(int(rng.integers(1, 12)), 2, 2))
    reference = StratifiedTable(tables.transpose(1, 2, 0).astype(float)).test_null_odds(correction=False).pvalue
    assert mantel_haenszel_p_value(tables) == pytest.approx(reference, rel=1e-10, abs=1e-14)


def test_strata_without_information_drop_out() -> None:
    informative = np.array([[[9, 3], [4, 8]], [[5, 5], [2, 9]]])
    fixed_side = np.array([[[12, 3], [0, 0]]])  # B never shown on the left: says nothing about sides
    single = np.array([[[1, 0], [0, 0]]])
    both = np.concatenate([informative, fixed_side, single])
    assert mantel_haenszel_p_value(both) == pytest.approx(mantel_haenszel_p_value(informative), rel=1e-12)
    assert math.isnan(mantel_haenszel_p_value(fixed_side)) and math.isnan(mantel_haenszel_p_value(np.zeros((0, 2, 2))))


def simulated_tables(rng: np.random.Generator, pairs: int, items: int, bias: float) -> np.ndarray:
    """One annotator: ``pairs`` pairs of unequal quality, ``items`` decisive judgments each, a fair
    coin for the side; the left output's chance of winning raised by ``bias``."""
    quality = rng.uniform(0.1, 0.9, size=(pairs, 1))  # P(A wins) without bias
    a_left = rng.random((pairs, items)) < 0.5
    p_a = np.clip(np.where(a_left, quality + bias, quality - bias), 0, 1)
    a_won = rng.random((pairs, items)) < p_a
    tables = np.zeros((pairs, 2, 2), dtype=np.int64)
    for row, side in enumerate((a_left, ~a_left)):
        tables[:, row, 0] = (side & a_won).sum(axis=1)
        tables[:, row, 1] = (side & ~a_won).sum(axis=1)
    return tables


def rejection_rate(bias: float, runs: int, pairs: int = 6, items: int = 20, seed: int = 0) -> float:
    rng = np.random.default_rng(seed)
    p_values = np.array([mantel_haenszel_p_value(simulated_tables(rng, pairs, items, bias)) for _ in range(runs)])
    return float(np.mean(p_values <= GAMMA))


def test_no_bias_is_flagged_at_most_gamma_of_the_time() -> None:
    runs = 4000
    rate = rejection_rate(0.0, runs)
    se = math.sqrt(GAMMA * (1 - GAMMA) / runs)
    assert rate <= GAMMA + 2 * se  # 0.0569 at 4,000 runs
    assert rate >= GAMMA - 4 * se  # and not a test that never speaks


def test_a_left_bias_of_ten_points_is_found_most_of_the_time() -> None:
    # 120 decisive judgments: a plain binomial test of 0.6 against 0.5 has power 0.59 (normal approximation)
    assert rejection_rate(0.10, 1000, seed=1) >= 0.59


def test_per_annotator_from_stored_comparisons() -> None:
    rng = np.random.default_rng(3)
    systems = ("M0", "M1", "M2", "M3")
    quality = {"M0": 0.0, "M1": 1.0, "M2": 2.0, "M3": 3.0}
    judgments = []
    for k in range(60):
        for a, b in (("M0", "M1"), ("M1", "M2"), ("M2", "M3"), ("M0", "M3")):
            left, right = left_right(5, "d", f"i{k}", a, b)
            fair = "left" if quality[left] + rng.normal(0, 1.5) > quality[right] + rng.normal(0, 1.5) else "right"
            judgments.append(make_comparison("d", f"i{k}", a, b, fair, "fair", left))
            judgments.append(make_comparison("d", f"i{k}", a, b, "left" if rng.random() < 0.8 else "right", "lefty", left))
            if k % 3 == 0:
                judgments.append(make_comparison("d", f"i{k}", a, b, "equal", "lefty", left))  # a later tie replaces it
    fixed = [make_comparison("d", f"i{k}", "M0", "M3", "right", "fixed", "M0") for k in range(30)]  # M3 always right, always wins
    by_name = {bias.annotator: bias for bias in position_bias([*judgments, *fixed])}
    assert set(by_name) == {"fair", "fixed", "lefty"} and set(systems)
    assert by_name["fair"].decisive == 240 and by_name["fair"].p_value > 0.01
    assert by_name["lefty"].decisive == 240 - 80 and by_name["lefty"].left_share > 0.7 and by_name["lefty"].p_value < 1e-6
    assert by_name["fixed"].left_share == 0.0 and math.isnan(by_name["fixed"].p_value)
