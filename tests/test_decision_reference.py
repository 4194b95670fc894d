"""The reference sampler (NumPyro NUTS) run live, against exact answers and the golden file."""

from __future__ import annotations

import numpy as np
import pytest

from prefeval_core.decision import SamplerSettings, decide_pairs, enumerate_posterior
from prefeval_core.decision.reference import summarise_draws
from tests.decision_fixtures import golden_cases

# about 30 s on 2 busy cores: 2 chains x (500 warm-up + 2000 draws), one pair
LIVE = SamplerSettings().with_(nuts_chains=2, nuts_warmup=500, nuts_draws=2000)


@pytest.mark.slow
def test_live_nuts_agrees_with_the_exact_answer_and_the_golden_reference() -> None:
    case = next(c for c in golden_cases() if c["name"] == "ok_10_90")
    result = decide_pairs([case["n"]], [case["K"]], [case["m"]], sampler="nuts", seed=3, settings=LIVE)
    exact = enumerate_posterior(case["n"], case["K"], case["m"]).theta
    assert result.method == ("nuts",) and result.sampler == "nuts"
    assert 0.0 < result.theta_mc_se[0] < 0.02 and result.ess[0] > 300
    assert result.rhat[0] == pytest.approx(1.0, abs=0.02)
    assert abs(result.theta[0] - exact) <= 4 * result.theta_mc_se[0]
    assert abs(result.theta[0] - case["theta_ref"]) <= 4 * np.hypot(result.theta_mc_se[0], case["theta_ref_se"])
    assert result.settings.sampler_settings.nuts_chains == 2 and result.settings.as_dict()["nuts_draws"] == 2000


def test_summaries_of_draws_by_hand() -> None:
    # 2 chains x 4 draws of one pair: p> > p< in 6 of 8 draws
    above, below = [0.6, 0.1, 0.3], [0.2, 0.1, 0.7]
    chain = np.array([above, above, below, above])[:, None, :]
    draws = np.stack([chain, chain[::-1]])  # (2, 4, 1, 3)
    summary = summarise_draws(draws, [0], "sequential")
    assert summary.theta.tolist() == [0.75]
    assert summary.p_mean[0] == pytest.approx(np.mean([above] * 6 + [below] * 2, axis=0))
    constant = summarise_draws(np.stack([np.array([above] * 4)[:, None, :]] * 2), [0], "sequential")
    assert constant.theta.tolist() == [1.0] and constant.theta_mc_se.tolist() == [0.0] and np.isnan(constant.ess[0])
