"""The fast decision path against the NUTS reference and exact answers; edge cases; reproducibility."""

from __future__ import annotations

import numpy as np
import pytest

from prefeval_core.decision import SamplerSettings, decide_counts, decide_pairs, dirichlet_mean, human_only_theta
from prefeval_core.pairs.counts import align_outcomes, count_triples
from prefeval_core.pairs.preferences import pair_outcomes
from tests.decision_fixtures import PRECISE, flipped, golden_cases, stacked

SMALL = SamplerSettings.small()
GOOD_MU = np.array([[0.8, 0.25, 0.1], [0.1, 0.5, 0.1], [0.1, 0.25, 0.8]])


@pytest.mark.slow
@pytest.mark.golden
def test_fast_agrees_with_the_reference_on_every_golden_setting() -> None:
    cases = golden_cases()
    assert len(cases) >= 20
    full = [c for c in cases if c["mu"] is None]
    known = [c for c in cases if c["mu"] is not None]
    for group, kwargs in ((full, {}), (known, {"model": "known_mu", "mu": np.array([c["mu"] for c in known])})):
        result = decide_pairs(*stacked(group), seed=1, settings=PRECISE, **kwargs)
        for i, case in enumerate(group):
            tolerance = 4.0 * np.hypot(result.theta_mc_se[i], case["theta_ref_se"]) + 1e-4
            assert abs(result.theta[i] - case["theta_ref"]) <= tolerance, (case["name"], result.theta[i], result.method[i])
            assert result.p_mean[i] == pytest.approx(case["p_mean_ref"], abs=0.01), case["name"]
            if "theta_exact" in case and result.method[i] in ("closed_form", "enumeration"):
                assert result.theta[i] == pytest.approx(case["theta_exact"], abs=1e-12)
    methods = set(decide_pairs(*stacked(full), settings=PRECISE).method)
    assert {"closed_form", "enumeration", "importance"} <= methods


def test_routes_each_pair_to_the_cheapest_exact_method() -> None:
    n = np.array([[40, 10, 50], [4, 1, 5], [4, 1, 5]])
    K = np.zeros((3, 3, 3))
    K[:, 0, 0], K[:, 1, 1], K[:, 2, 2] = 3, 1, 4
    m = np.array([[0, 0, 0], [20, 10, 25], [3000, 1000, 4000]])
    result = decide_pairs(n, K, m, settings=SMALL)
    assert result.method[:2] == ("closed_form", "enumeration")
    assert result.method[2] in ("importance", "nuts_fallback")
    assert result.theta_mc_se[:2].tolist() == [0.0, 0.0]
    assert np.isinf(result.ess[:2]).all() and np.isnan(result.rhat[:2]).all()
    assert result.theta[0] == human_only_theta([40, 10, 50])


def test_human_only_model_ignores_the_metric() -> None:
    K = np.array([[[30, 5, 2], [6, 3, 4], [4, 2, 44]]])
    result = decide_pairs([[40, 10, 50]], K, [[500, 100, 400]], model="human_only")
    assert result.theta[0] == human_only_theta([40, 10, 50])
    assert result.p_mean[0] == pytest.approx(dirichlet_mean([40, 10, 50]))
    assert result.decision.tolist() == [1] and result.method == ("closed_form",)


def test_error_free_known_metric_with_many_items_matches_the_closed_form() -> None:
    # mu = I, 3000 metric items: importance sampling; the answer is Dirichlet(n + m + 1)
    result = decide_pairs([[3, 1, 5]], None, [[1300, 400, 1300]], model="known_mu", mu=np.eye(3), settings=PRECISE)
    assert result.method == ("importance",)
    assert result.theta[0] == pytest.approx(human_only_theta([1303, 401, 1305]), abs=4 * result.theta_mc_se[0] + 1e-4)


@pytest.mark.parametrize(
    ("name", "n", "K", "m"),
    [
        ("nothing at all", [0, 0, 0], np.zeros((3, 3)), [0, 0, 0]),
        ("no human item yet", [0, 0, 0], np.zeros((3, 3)), [400, 200, 100]),
        ("no metric item", [12, 3, 5], np.zeros((3, 3)), [0, 0, 0]),
        ("all ties", [0, 25, 0], [[0, 5, 0], [0, 15, 0], [0, 5, 0]], [80, 300, 90]),
        ("metric never says =", [20, 10, 20], [[18, 5, 2], [0, 0, 0], [2, 5, 18]], [300, 0, 200]),
        ("tens of thousands", [3000, 1000, 2000], [[2400, 250, 200], [300, 500, 200], [300, 250, 1600]], [21000, 9000, 15000]),
    ],
)
def test_edge_cases_give_valid_results(name, n, K, m) -> None:  # type: ignore[no-untyped-def]
    result = decide_pairs([n], [K], [m], settings=SMALL)
    assert 0.0 <= result.theta[0] <= 1.0, name
    assert result.p_mean[0].sum() == pytest.approx(1.0, abs=1e-6), name  # NUTS draws sum to 1 up to ~1e-9
    assert np.isfinite(result.theta_mc_se[0]) and result.theta_mc_se[0] >= 0.0, name
    assert result.decision[0] in (0, 1, 2)


def test_no_data_is_undecided_at_one_half() -> None:
    result = decide_pairs([[0, 0, 0]])
    assert result.theta.tolist() == [0.5] and result.decision.tolist() == [1]


def test_same_seed_same_result_bit_for_bit() -> None:
    names = {"human_only_100", "good_500_500", "ties_to_a_100_1000", "useless_100_1000", "ok_10_90", "good_200_2000"}
    n, K, m = stacked([c for c in golden_cases() if c["name"] in names])
    first = decide_pairs(n, K, m, seed=7, settings=SMALL)
    again = decide_pairs(n, K, m, seed=7, settings=SMALL)
    for field in ("theta", "p_mean", "theta_mc_se", "ess", "decision"):
        assert np.array_equal(getattr(first, field), getattr(again, field), equal_nan=True), field
    other = decide_pairs(n, K, m, seed=8, settings=SMALL)
    sampled = np.array([method == "importance" for method in first.method])
    assert sampled.sum() >= 3 and not np.array_equal(first.theta[sampled], other.theta[sampled])


def test_swapping_the_pair_mirrors_the_result() -> None:
    wide = SamplerSettings().with_(enumeration_max_items=160)
    n, K, m = stacked([c for c in golden_cases() if sum(c["m"]) <= wide.enumeration_max_items])
    result = decide_pairs(n, K, m, settings=wide)
    swapped = decide_pairs(*flipped(n, K, m), settings=wide)
    assert set(result.method) == {"closed_form", "enumeration"}
    assert swapped.theta == pytest.approx(1.0 - result.theta, abs=1e-10)
    assert swapped.decision.tolist() == (2 - result.decision).tolist()


def test_known_mu_per_pair_or_shared() -> None:
    n = np.array([[5, 2, 3], [1, 1, 8]])
    m = np.array([[20, 10, 30], [50, 0, 10]])
    shared = decide_pairs(n, None, m, model="known_mu", mu=GOOD_MU)
    per_pair = decide_pairs(n, None, m, model="known_mu", mu=np.stack([GOOD_MU, GOOD_MU]))
    assert np.array_equal(shared.theta, per_pair.theta)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n": [[1, 2]]}, "shape"),
        ({"n": [[1, -2, 3]]}, "non-negative"),
        ({"n": [[1.5, 2, 3]]}, "integer"),
        ({"n": [[1, 2, 3]], "model": "known_mu"}, "needs mu"),
        ({"n": [[1, 2, 3]], "model": "known_mu", "mu": np.ones((3, 3))}, "sum"),
        ({"n": [[1, 2, 3]], "gamma": 1.5}, "gamma"),
        ({"n": [[1, 2, 3]], "sampler": "gibbs"}, "sampler"),
    ],
)
def test_invalid_input_is_refused(kwargs, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=message):
        decide_pairs(**kwargs)


@pytest.mark.golden
def test_summeval_first_round_is_decided_exactly(summeval) -> None:  # type: ignore[no-untyped-def]
    """All 120 pairs of SummEval (human:relevance vs rougeL) after revealing 10 human items per pair."""
    table = align_outcomes(pair_outcomes(summeval, "human:relevance"), pair_outcomes(summeval, "rougeL"))
    revealed = np.zeros(table.human.shape, dtype=bool)
    for pair in range(table.n_pairs):
        revealed[np.flatnonzero((table.pair_index == pair) & (table.human >= 0))[:10]] = True
    counts = count_triples(table, revealed)
    result = decide_counts(counts, seed=0, settings=SamplerSettings().with_(enumeration_max_items=100))
    assert result.n_pairs == 120
    assert set(result.method) == {"enumeration"}
    assert np.all((result.theta >= 0) & (result.theta <= 1))
    everything = decide_counts(count_triples(table, table.human >= 0), model="human_only")
    assert set(everything.method) == {"closed_form"}


def test_no_pairs_gives_empty_results() -> None:
    result = decide_pairs(np.zeros((0, 3)), np.zeros((0, 3, 3)), np.zeros((0, 3)))
    assert result.theta.shape == (0,) and result.p_mean.shape == (0, 3) and result.method == ()


@pytest.mark.parametrize(
    ("n", "K", "m", "mu"),
    [
        ([8, 2, 6], [[5, 1, 1], [1, 1, 1], [2, 0, 4]], [30, 8, 25], None),
        ([12, 4, 9], [[5, 1, 1], [1, 1, 1], [2, 0, 4]], [30, 8, 25], None),  # revealed items the metric did not rate (d > 0)
        ([0, 9, 0], [[0, 2, 0], [0, 5, 0], [0, 2, 0]], [20, 30, 15], None),  # humans all ties
        ([3, 0, 0], np.zeros((3, 3)), [35, 5, 20], None),  # no confusion counts at all
        ([5, 1, 4], None, [40, 10, 30], GOOD_MU),
    ],
)
def test_importance_agrees_with_exact_enumeration(n, K, m, mu) -> None:  # type: ignore[no-untyped-def]
    options = {} if mu is None else {"model": "known_mu", "mu": mu}
    sampled = decide_pairs([n], None if K is None else [K], [m], seed=3, settings=PRECISE.with_(enumeration_max_items=0), **options)
    exact = decide_pairs([n], None if K is None else [K], [m], seed=3, settings=PRECISE, **options)
    assert sampled.method == ("importance",) and exact.method == ("enumeration",)
    assert abs(sampled.theta[0] - exact.theta[0]) <= 4 * sampled.theta_mc_se[0] + 1e-4
    assert sampled.p_mean[0] == pytest.approx(exact.p_mean[0], abs=0.01)
