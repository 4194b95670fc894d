"""The metric e-process: exact martingale checks by enumerating every data set of a small pair."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from prefeval_core.pairs.counts import JointCounts, joint_counts, pattern_index
from prefeval_core.sequential.metric import (
    initial_log_numerator,
    log_x0_factor,
    metric_data,
    metric_log_e,
    update_log_numerator,
    vote_counts,
)
from prefeval_core.sequential.mle import MetricData, log_likelihood

IDEAL = np.array([[0.8, 0.25, 0.1], [0.1, 0.5, 0.1], [0.1, 0.25, 0.8]])
NO_METRIC = 3


def _enumerate(p0: np.ndarray, mu0: np.ndarray, metric_rated: tuple[bool, ...]):
    """Every data set of a pair whose items (in reveal order) the metric rated or not, with its
    probability under (p0, mu0): lists of (metric pattern, human outcome) per item."""
    choices = [[(c, h) for c in range(3) for h in range(3)] if rated else [(NO_METRIC, h) for h in range(3)] for rated in metric_rated]
    data, probability = [], []
    for items in itertools.product(*choices):
        chance = math.prod(p0[h] * (mu0[c, h] if c != NO_METRIC else 1.0) for c, h in items)
        if chance > 0:  # impossible data sets do not count (and have likelihood 0)
            data.append(items)
            probability.append(chance)
    return data, np.array(probability)


def _counts_after(data: list, revealed: int) -> JointCounts:
    P = len(data)
    rev = np.zeros((P, 4, 3), dtype=np.int64)
    unrev = np.zeros((P, 4), dtype=np.int64)
    for i, items in enumerate(data):
        for j, (c, h) in enumerate(items):
            if j < revealed:
                rev[i, c, h] += 1
            else:
                unrev[i, c] += 1
    return JointCounts(("m",), rev, unrev)


@pytest.mark.parametrize(
    ("p0", "mu0", "known"),
    [
        (np.array([0.3, 0.4, 0.3]), IDEAL, False),
        (np.array([0.5, 0.0, 0.5]), np.array([[0.6, 0.3, 0.5], [0.1, 0.4, 0.1], [0.3, 0.3, 0.4]]), False),
        (np.array([0.2, 0.2, 0.6]), IDEAL, False),  # strictly inside the null of ">"
        (np.array([0.3, 0.4, 0.3]), IDEAL, True),
        (np.array([0.35, 0.3, 0.35]), np.array([[0.9, 0.2, 0.0], [0.1, 0.6, 0.1], [0.0, 0.2, 0.9]]), True),  # mu with zeros
    ],
)
def test_numerator_over_the_true_likelihood_has_mean_one_and_the_e_process_at_most_one(
    p0: np.ndarray, mu0: np.ndarray, known: bool
) -> None:
    rated = (True, True, False, True)
    data, probability = _enumerate(p0, mu0, rated)
    assert probability.sum() == pytest.approx(1.0)
    mu = mu0 if known else None
    pi0 = np.broadcast_to(mu0 * p0[None, :], (len(data), 3, 3))
    counts = _counts_after(data, 0)
    numerator = initial_log_numerator(len(data))
    x0 = log_x0_factor(metric_data(counts))
    for revealed in range(len(rated) + 1):
        if revealed:
            later = _counts_after(data, revealed)
            numerator = update_log_numerator(counts, later, numerator, mu)
            counts = later
        ratio = np.exp(x0[:, None] + numerator - log_likelihood(metric_data(counts), pi0)[:, None])
        mean = probability @ ratio
        if np.all(p0 > 0):  # a test martingale under theta0 ...
            assert mean == pytest.approx([1.0, 1.0], rel=1e-9)
        else:  # ... or, where theta0 rules some data out, the numerator's mass there is lost
            assert np.all(mean <= 1.0 + 1e-9)
        e = np.exp(metric_log_e(counts, numerator, mu))
        if p0[0] <= p0[2]:
            assert probability @ e[:, 0] <= 1.0 + 1e-9
        if p0[0] >= p0[2]:
            assert probability @ e[:, 1] <= 1.0 + 1e-9


def test_x0_factor_is_a_probability_distribution_over_sequences() -> None:
    M = 6
    total = 0.0
    for a in range(M + 1):
        for b in range(M + 1 - a):
            c = M - a - b
            data = MetricData(np.zeros((1, 3, 3)), np.zeros((1, 3)), np.array([[a, b, c]], dtype=np.float64))
            sequences = math.factorial(M) // (math.factorial(a) * math.factorial(b) * math.factorial(c))
            total += sequences * math.exp(log_x0_factor(data)[0])
    assert total == pytest.approx(1.0, rel=1e-12)


def test_vote_reduces_several_metrics_to_the_sign_of_their_summed_values() -> None:
    # two metrics; items: (>, >), (>, <), (<, missing), (missing, missing), (=, <)
    codes = np.array([[0, 0], [0, 2], [2, -1], [-1, -1], [1, 2]])
    patterns = pattern_index(codes)
    revealed = np.zeros((1, 16, 3), dtype=np.int64)
    unrevealed = np.zeros((1, 16), dtype=np.int64)
    revealed[0, patterns[0], 0] = 1  # human said > on item 0
    revealed[0, patterns[3], 1] = 1  # human said = on item 3
    for pattern in patterns[[1, 2, 4]]:
        unrevealed[0, pattern] += 1
    voted = vote_counts(JointCounts(("x", "y"), revealed, unrevealed))
    assert voted.k == 1
    np.testing.assert_array_equal(voted.revealed[0], [[1, 0, 0], [0, 0, 0], [0, 0, 0], [0, 1, 0]])
    np.testing.assert_array_equal(voted.unrevealed[0], [0, 1, 2, 0])  # (>,<) -> =, (<,-) -> <, (=,<) -> <


def test_an_update_that_does_not_extend_the_counts_is_refused() -> None:
    before = JointCounts(("m",), np.zeros((1, 4, 3), dtype=np.int64), np.array([[3, 1, 1, 0]]))
    other_items = JointCounts(("m",), np.zeros((1, 4, 3), dtype=np.int64), np.array([[2, 1, 1, 0]]))
    with pytest.raises(ValueError, match="extend"):
        update_log_numerator(before, other_items, initial_log_numerator(1))
    revealed = np.zeros((1, 4, 3), dtype=np.int64)
    revealed[0, 0, 0] = 1
    after = JointCounts(("m",), revealed, np.array([[2, 1, 1, 0]]))
    moved = update_log_numerator(before, after, initial_log_numerator(1))
    assert np.all(moved < 0)  # log of predictive probabilities
    with pytest.raises(ValueError, match="extend"):
        update_log_numerator(after, before, moved)


def test_several_metrics_run_as_their_vote() -> None:
    rng = np.random.default_rng(4)
    codes = rng.integers(-1, 3, size=(60, 2))
    human = rng.integers(0, 3, size=60)
    pair = np.zeros(60, dtype=np.int64)

    def counts(revealed: int) -> JointCounts:
        return joint_counts(("x", "y"), pair, human, codes, np.arange(60) < revealed, 1)

    numerator = update_log_numerator(counts(0), counts(20), initial_log_numerator(1))
    voted = update_log_numerator(vote_counts(counts(0)), vote_counts(counts(20)), initial_log_numerator(1))
    np.testing.assert_allclose(numerator, voted)
    np.testing.assert_allclose(metric_log_e(counts(20), numerator), metric_log_e(vote_counts(counts(20)), voted))
    with pytest.raises(ValueError, match="one metric"):
        metric_log_e(counts(20), numerator, IDEAL)
