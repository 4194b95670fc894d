"""Posterior win-rate densities from exact Dirichlet parameters or from posterior samples."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import betainc

from prefeval_core.diagnostics.win_rate import win_rate_densities


def test_exact_dirichlet_marginals_and_theta() -> None:
    alpha = np.array([8.0, 3.0, 2.0])
    d = win_rate_densities(alpha=alpha, seed=0)
    step = d.rate_grid[1] - d.rate_grid[0]
    np.testing.assert_allclose(d.rate_density.sum(axis=1) * step, 1.0, atol=0.01)
    # Beta(8, 5) has its mode at 7/11
    assert d.rate_grid[np.argmax(d.rate_density[0])] == pytest.approx(7 / 11, abs=0.01)
    assert d.theta == pytest.approx(float(betainc(2.0, 8.0, 0.5)))
    np.testing.assert_allclose(d.mean, alpha / alpha.sum())
    diff_step = d.difference_grid[1] - d.difference_grid[0]
    assert d.difference_density.sum() * diff_step == pytest.approx(1.0)
    assert d.source == "dirichlet"


def test_samples_and_exact_agree_and_seed_repeats() -> None:
    alpha = np.array([20.0, 5.0, 12.0])
    exact = win_rate_densities(alpha=alpha, seed=1)
    samples = np.random.default_rng(7).dirichlet(alpha, size=50_000)
    sampled = win_rate_densities(samples=samples)
    assert sampled.theta == pytest.approx(exact.theta, abs=0.01)
    np.testing.assert_allclose(sampled.mean, exact.mean, atol=0.005)
    np.testing.assert_allclose(sampled.rate_density, exact.rate_density, atol=0.6)
    again = win_rate_densities(alpha=alpha, seed=1)
    np.testing.assert_array_equal(again.difference_density, exact.difference_density)


def test_given_theta_overrides_and_bad_input_is_rejected() -> None:
    assert win_rate_densities(alpha=[1, 1, 1], theta=0.9).theta == 0.9
    with pytest.raises(ValueError, match="exactly one"):
        win_rate_densities()
    with pytest.raises(ValueError, match="exactly one"):
        win_rate_densities(alpha=[1, 1, 1], samples=np.full((2, 3), 1 / 3))
    with pytest.raises(ValueError, match="shape"):
        win_rate_densities(samples=np.ones((4, 2)))
    with pytest.raises(ValueError, match="> 0"):
        win_rate_densities(alpha=[0, 1, 1])
