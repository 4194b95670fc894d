"""Bradley–Terry with bootstrap intervals (prefeval_core/baselines/bradley_terry.py): exact small cases."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from prefeval_core.baselines import bradley_terry_decisions
from prefeval_core.errors import SettingsError
from tests.baselines_fixtures import EQ, GT, LT, comparisons, pair_table


def test_two_systems_gap_is_the_log_ratio_of_wins_with_ties_as_half_wins() -> None:
    # With two systems the MLE is s_A / s_B = wins_A / wins_B (ties add half a win to each side).
    table = pair_table([("A", "B")], [comparisons(12, 4, 6)])
    result = bradley_terry_decisions(table, np.ones(22, dtype=bool), n_resamples=50)
    assert result.estimate[0] == pytest.approx(np.log(14 / 8), abs=1e-8)
    assert result.log_strength[0] - result.log_strength[1] == pytest.approx(np.log(14 / 8), abs=1e-8)
    assert result.comparisons.tolist() == [22]


def test_hand_made_tournament_matches_an_independent_maximum_likelihood_fit() -> None:
    # A-B 7:3 with 2 ties, A-C 5:5, B-C 2:6 with 4 ties, B-D 6:2, C-D 3:4: the log-likelihood
    # sum_ij W_ij log(s_i / (s_i + s_j)) (W: wins plus half the ties) maximised by scipy.
    pairs = [("A", "B"), ("A", "C"), ("B", "C"), ("B", "D"), ("C", "D")]
    counts = [(7, 2, 3), (5, 0, 5), (2, 4, 6), (6, 0, 2), (3, 0, 4)]
    table = pair_table(pairs, [comparisons(*c) for c in counts])
    index = {"A": 0, "B": 1, "C": 2, "D": 3}
    wins = np.zeros((4, 4))
    for (a, b), (a_wins, ties, b_wins) in zip(pairs, counts):
        wins[index[a], index[b]] += a_wins + ties / 2
        wins[index[b], index[a]] += b_wins + ties / 2

    def negative_log_likelihood(theta: np.ndarray) -> float:
        gap = theta[:, None] - theta[None, :]
        return float(np.sum(wins * np.logaddexp(0.0, -gap)))

    optimum = minimize(negative_log_likelihood, np.zeros(4), method="BFGS", options={"gtol": 1e-10}).x
    result = bradley_terry_decisions(table, np.ones(len(table.human), dtype=bool), n_resamples=20)
    expected = [optimum[index[a]] - optimum[index[b]] for a, b in pairs]
    assert result.estimate == pytest.approx(expected, abs=1e-6)
    assert result.systems == ("A", "B", "C", "D")


def test_a_symmetric_design_is_undecided_with_zero_gaps() -> None:
    # Every pair of a 3-cycle split evenly: all strengths equal, every interval straddles 0.
    pairs = [("A", "B"), ("A", "C"), ("B", "C")]
    table = pair_table(pairs, [comparisons(5, 2, 5)] * 3)
    result = bradley_terry_decisions(table, np.ones(36, dtype=bool), n_resamples=300, seed=3)
    assert result.estimate == pytest.approx([0.0, 0.0, 0.0], abs=1e-8)
    assert np.all(result.low < 0) and np.all(result.high > 0)
    assert result.decision.tolist() == [EQ, EQ, EQ]


def test_a_clear_winner_is_decided_and_the_other_direction_too() -> None:
    table = pair_table([("A", "B"), ("B", "C")], [comparisons(30, 2, 4), comparisons(4, 2, 30)])
    for resample in ("items", "comparisons"):
        result = bradley_terry_decisions(table, np.ones(72, dtype=bool), n_resamples=300, resample=resample)
        assert result.decision.tolist() == [GT, LT]
        assert result.low[0] > 0 and result.high[1] < 0


def test_seeds_reproduce_and_differ() -> None:
    table = pair_table([("A", "B"), ("A", "C"), ("B", "C")], [comparisons(8, 2, 5), comparisons(6, 1, 6), comparisons(3, 3, 7)])
    revealed = np.ones(len(table.human), dtype=bool)
    first = bradley_terry_decisions(table, revealed, seed=11, n_resamples=200)
    again = bradley_terry_decisions(table, revealed, seed=11, n_resamples=200)
    other = bradley_terry_decisions(table, revealed, seed=12, n_resamples=200)
    assert np.array_equal(first.low, again.low) and np.array_equal(first.high, again.high)
    assert not np.array_equal(first.low, other.low)
    assert np.array_equal(first.estimate, other.estimate)  # the point fit does not depend on the seed


def test_only_revealed_rows_count() -> None:
    table = pair_table([("A", "B")], [comparisons(12, 4, 6) + comparisons(0, 0, 30)])
    result = bradley_terry_decisions(table, np.arange(52) < 22, n_resamples=20)
    assert result.estimate[0] == pytest.approx(np.log(14 / 8), abs=1e-8)


def test_without_a_finite_fit_gaps_are_infinite_or_unidentified() -> None:
    # A beat B every time (no counter-evidence: the MLE gap is +inf); C-D never met A or B.
    table = pair_table([("A", "B"), ("C", "D"), ("A", "C")], [comparisons(6, 0, 0), comparisons(3, 1, 3), [GT, GT]])
    revealed = np.r_[np.ones(13, dtype=bool), False, False]
    result = bradley_terry_decisions(table, revealed, n_resamples=100)
    assert result.estimate[0] == np.inf and result.low[0] == np.inf
    assert result.decision.tolist() == [GT, EQ, EQ]
    assert result.estimate[1] == pytest.approx(0.0, abs=1e-8)
    assert np.isnan(result.estimate[2]) and np.isnan(result.low[2])


def test_nothing_revealed_decides_nothing() -> None:
    table = pair_table([("A", "B"), ("A", "C")], [comparisons(3, 0, 0), comparisons(0, 0, 3)])
    result = bradley_terry_decisions(table, np.zeros(6, dtype=bool), n_resamples=10)
    assert result.decision.tolist() == [EQ, EQ]
    assert np.isnan(result.low).all()


def test_item_resampling_moves_an_items_comparisons_together() -> None:
    # Two pairs on the same 20 items; the item bootstrap gives both pairs' comparisons of an item
    # one weight, so their gaps move together; resampling comparisons breaks that link.
    human = comparisons(12, 2, 6)
    table = pair_table([("A", "B"), ("C", "D")], [human, human])
    revealed = np.ones(40, dtype=bool)
    items = bradley_terry_decisions(table, revealed, n_resamples=200, resample="items")
    rows = bradley_terry_decisions(table, revealed, n_resamples=200, resample="comparisons")
    assert (items.low[0], items.high[0]) == pytest.approx((items.low[1], items.high[1]))
    assert (rows.low[0], rows.high[0]) != pytest.approx((rows.low[1], rows.high[1]))


def test_bad_settings_are_typed_errors() -> None:
    table = pair_table([("A", "B")], [[GT, LT]])
    with pytest.raises(SettingsError, match="resample"):
        bradley_terry_decisions(table, np.ones(2, dtype=bool), resample="rows")  # type: ignore[arg-type]
    with pytest.raises(SettingsError, match="n_resamples"):
        bradley_terry_decisions(table, np.ones(2, dtype=bool), n_resamples=0)
    with pytest.raises(SettingsError, match="gamma"):
        bradley_terry_decisions(table, np.ones(2, dtype=bool), gamma=0.0)
