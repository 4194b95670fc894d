"""Posterior draws of one pair (``posterior_draws``) against the engine's own summaries, per route."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import beta, kstest

from prefeval_core.decision import SamplerSettings, decide_pairs, dirichlet_mean, posterior_draws
from prefeval_core.decision.draws import systematic_resample

# one pair per route of the fast sampler: (n, K, m)
CLOSED = ([30, 5, 20], np.zeros((3, 3)), [0, 0, 0])
ENUMERATION = ([8, 2, 4], [[5, 0, 1], [1, 2, 0], [2, 0, 3]], [25, 8, 20])
IMPORTANCE = ([12, 3, 6], [[8, 1, 1], [2, 1, 1], [2, 1, 4]], [300, 80, 250])
DRAWS = 20_000
GOOD_MU = np.array([[0.8, 0.25, 0.1], [0.1, 0.5, 0.1], [0.1, 0.25, 0.8]])


@pytest.mark.parametrize(
    ("counts", "route", "options"),
    [
        (CLOSED, "closed_form", {}),
        (ENUMERATION, "enumeration", {}),
        (ENUMERATION, "enumeration", {"model": "known_mu", "mu": GOOD_MU}),
        (IMPORTANCE, "importance", {}),
        (IMPORTANCE, "importance", {"model": "known_mu", "mu": GOOD_MU}),
    ],
)
def test_draws_match_the_decision_within_monte_carlo_error(counts, route, options) -> None:
    n, K, m = counts
    result = decide_pairs([n], [K], [m], seed=5, **options)
    assert result.method == (route,)
    draws = posterior_draws(n, K, m, draws=DRAWS, seed=5, **options)
    assert draws.shape == (DRAWS, 3) and np.allclose(draws.sum(axis=1), 1.0) and np.all(draws >= 0)
    theta = result.theta[0]
    # resampling (or i.i.d.) error of a fraction and a mean, plus the engine's own MC error
    theta_error = 4 * np.hypot(np.sqrt(theta * (1 - theta) / DRAWS), result.theta_mc_se[0]) + 1e-3
    assert np.mean(draws[:, 0] > draws[:, 2]) == pytest.approx(theta, abs=theta_error)
    assert draws.mean(axis=0) == pytest.approx(result.p_mean[0], abs=4 * draws.std(axis=0).max() / np.sqrt(DRAWS) + 1e-3)


def test_the_metric_moves_the_draws_away_from_the_human_only_posterior() -> None:
    n, K, m = [4, 1, 4], np.diag([4.0, 1.0, 4.0]), [60, 5, 20]  # humans split evenly; an accurate metric favours A
    full = posterior_draws(n, K, m, draws=DRAWS, seed=1)
    human = posterior_draws(n, K, m, model="human_only", draws=DRAWS, seed=1)
    assert np.mean(human[:, 0] > human[:, 2]) == pytest.approx(0.5, abs=0.02)  # symmetric Dirichlet(5, 2, 5)
    assert np.mean(full[:, 0] > full[:, 2]) > 0.9
    assert full[:, 0].std() < human[:, 0].std()  # 85 more items narrow the posterior


def test_closed_form_draws_are_dirichlet_n_plus_1() -> None:
    n, K, m = CLOSED
    draws = posterior_draws(n, K, m, draws=DRAWS, seed=2)
    alpha = np.asarray(n, dtype=float) + 1.0
    assert draws.mean(axis=0) == pytest.approx(dirichlet_mean(n), abs=0.003)
    assert kstest(draws[:, 0], beta(alpha[0], alpha.sum() - alpha[0]).cdf).pvalue > 1e-3
    human_only = posterior_draws(n, [[9, 0, 0], [0, 5, 0], [0, 0, 9]], [50, 0, 0], model="human_only", draws=DRAWS, seed=2)
    assert np.array_equal(human_only, draws)  # the human-only model ignores K and m


@pytest.mark.parametrize("counts", [CLOSED, ENUMERATION, IMPORTANCE])
def test_same_seed_same_draws_other_seed_other_draws(counts) -> None:
    first = posterior_draws(*counts, draws=500, seed=11)
    assert np.array_equal(first, posterior_draws(*counts, draws=500, seed=11))
    assert not np.array_equal(first, posterior_draws(*counts, draws=500, seed=12))


def test_importance_draws_repeat_and_are_the_engines_weighted_draws() -> None:
    draws = posterior_draws(*IMPORTANCE, draws=DRAWS, seed=5)
    assert len(np.unique(draws[:, 0])) < DRAWS  # resampled: heavy draws appear several times


@pytest.mark.slow
def test_the_nuts_fallback_gives_its_kept_draws() -> None:
    tiny = SamplerSettings.small().with_(is_draws=64, is_max_rounds=1, is_min_ess=1e9, fallback_draws=300, fallback_warmup=200)
    n, K, m = IMPORTANCE
    result = decide_pairs([n], [K], [m], seed=3, settings=tiny)
    assert result.method == ("nuts_fallback",)
    draws = posterior_draws(n, K, m, draws=1000, seed=3, settings=tiny)
    assert draws.shape == (1000, 3)
    assert np.mean(draws[:, 0] > draws[:, 2]) == pytest.approx(result.theta[0], abs=0.02)  # same chains, evenly spaced subset
    assert draws.mean(axis=0) == pytest.approx(result.p_mean[0], abs=0.01)


def test_systematic_resampling_follows_the_weights_exactly_on_a_grid() -> None:
    values = np.arange(4.0)
    chosen = systematic_resample(np.random.default_rng(0), values, np.array([0.5, 0.0, 0.25, 0.25]), 8)
    assert sorted(chosen.tolist()) == [0, 0, 0, 0, 2, 2, 3, 3]  # 8 evenly spaced positions: counts are exact here


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="draws"):
        posterior_draws([1, 1, 1], draws=0)
    with pytest.raises(ValueError, match="mu"):
        posterior_draws([1, 1, 1], model="known_mu")
    with pytest.raises(ValueError, match="model"):
        posterior_draws([1, 1, 1], model="other")  # type: ignore[arg-type]
