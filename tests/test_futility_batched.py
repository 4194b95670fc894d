"""The batched futility computations give what the pair-by-pair ones gave (issue 22 item 6)."""

from __future__ import annotations

import numpy as np
from scipy.signal import fftconvolve

from prefeval_core.sequential.futility import _dirichlet_rows
from prefeval_core.sequential.spending import (
    EXACT_REMAINING,
    _future_pmf,
    _significant_mass,
    metric_success_probability,
)

GAMMA = 0.05
Z = 1.959963984540054


def _pair_by_pair(K: np.ndarray, left: np.ndarray) -> np.ndarray:
    """The exact part as it was: each pair's patterns convolved one after the other."""
    n = K.sum(axis=1)
    alpha = K + 3.0 * (n + 1.0)[:, None, :] / (n.sum(axis=1, keepdims=True)[:, None, :] + 3.0)
    out = np.full(len(K), np.nan)
    for pair in np.flatnonzero(left.sum(axis=1) <= EXACT_REMAINING):
        pmf = np.ones((1, 1))
        for group in np.flatnonzero(left[pair]):
            pmf = np.clip(fftconvolve(pmf, _future_pmf(alpha[pair, group][None], int(left[pair, group]))[0]), 0.0, None)
        out[pair] = _significant_mass(n[pair][None], pmf[None], Z)[0]
    return out


def test_batched_metric_futility_equals_the_pair_by_pair_convolution() -> None:
    rng = np.random.default_rng(3)
    P = 300
    K = rng.integers(0, 6, size=(P, 4, 3)).astype(np.float64)
    left = np.zeros((P, 4), dtype=np.int64)
    left[:, :3] = rng.multinomial(60, [0.4, 0.2, 0.4], size=P)
    left[::7] = rng.integers(0, 5, size=(len(left[::7]), 4))
    left[::11] = 0
    left[5] = [200, 0, 0, 3]  # beyond EXACT_REMAINING: the normal approximation, as before
    batched = metric_success_probability(K, left, GAMMA)
    reference = _pair_by_pair(K, left)
    exact = ~np.isnan(reference)
    assert exact.sum() > 250 and not exact[5]
    np.testing.assert_allclose(batched[exact], reference[exact], rtol=0, atol=1e-13)
    assert np.array_equal(batched[exact] < GAMMA, reference[exact] < GAMMA)


def test_dirichlet_rows_are_numpys_dirichlet_row_by_row() -> None:
    alpha = np.random.default_rng(1).uniform(1.0, 30.0, size=(40, 9))
    one, many = np.random.default_rng(5), np.random.default_rng(5)
    expected = np.stack([one.dirichlet(row, size=32) for row in alpha])
    assert np.array_equal(_dirichlet_rows(many, alpha, 32), expected)
    assert one.random() == many.random()  # the stream goes on from the same state
