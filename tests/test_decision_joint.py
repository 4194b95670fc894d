"""Several metrics in one posterior (docs/model.md): exact reductions, brute-force checks of the
importance and data-augmentation routes, agreement with NUTS (small cases and the golden settings),
contributions and draws."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import betainc, gammaln

from prefeval_core.decision import (
    SamplerSettings,
    decide_counts,
    decide_joint,
    decision_from_theta,
    human_only_theta,
    joint_importance,
    joint_posterior_draws,
    metric_contributions,
)
from prefeval_core.decision.joint_data import joint_inputs
from prefeval_core.decision.joint_fast import joint_gibbs
from prefeval_core.errors import SettingsError
from prefeval_core.pairs.counts import JointCounts, joint_counts, pattern_codes

GOLDEN = Path(__file__).resolve().parent / "golden" / "joint_reference.json"
# the golden test's sizes: sampling until s.e. <= 0.004 (no early stop on certain decisions), a short NUTS
# fallback with the default 4 chains (the pairs it gets are those whose Gibbs chains, started from relabelled
# draws, disagree: several humps, where 2 NUTS chains can both sit in one and report a tiny s.e.)
PRECISE = SamplerSettings().with_(
    is_target_se=0.004, is_decision_z=float("inf"), gibbs_max_iterations=12000, fallback_chains=4, fallback_warmup=500, fallback_draws=2500
)


def _random_counts(rng: np.random.Generator, k: int, pairs: int, rows: int, reveal: float) -> JointCounts:
    pair_index = np.sort(rng.integers(0, pairs, rows))
    human = rng.integers(-1, 3, rows)
    metrics = rng.integers(-1, 3, (rows, k))
    revealed = (human >= 0) & (rng.random(rows) < reveal)
    return joint_counts(tuple(f"m{j}" for j in range(k)), pair_index, human, metrics, revealed, pairs)


@pytest.mark.property
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), rows=st.sampled_from([30, 200, 900]))
def test_one_metric_is_exactly_decide_counts(seed: int, rows: int) -> None:
    counts = _random_counts(np.random.default_rng(seed), 1, 4, rows, 0.4)
    joint = decide_joint(counts, seed=seed)
    single = decide_counts(counts.triples(0), seed=seed)
    assert joint.method == single.method
    for field in ("theta", "p_mean", "theta_mc_se", "decision"):
        assert np.array_equal(getattr(joint, field), getattr(single, field), equal_nan=True), field
    assert joint.settings.metrics == ("m0",) and single.settings.metrics is None


def test_exact_reductions_human_only_and_a_single_informing_metric() -> None:
    revealed = np.zeros((3, 16, 3), dtype=np.int64)
    revealed[:, 0 + 4 * 0, 0] = [6, 2, 1]  # both metrics said '>' where the human did
    revealed[:, 2 + 4 * 2, 2] = [3, 1, 5]
    revealed[:, 1 + 4 * 1, 1] = 2
    unrevealed = np.zeros((3, 16), dtype=np.int64)
    unrevealed[1, 0 + 4 * 3] = 40  # pair 1: only metric 0 rated its unrevealed items ('>')
    unrevealed[1, 2 + 4 * 3] = 10
    unrevealed[2, 0 + 4 * 0] = 30  # pair 2: both metrics
    unrevealed[2, 2 + 4 * 1] = 5
    unrevealed[:, 15] = 7  # no metric outcome: informs nothing
    counts = JointCounts(("a", "b"), revealed, unrevealed)
    result = decide_joint(counts, seed=4, settings=SamplerSettings.small())
    assert result.method[0] == "closed_form" and result.theta[0] == human_only_theta(counts.n[0])
    assert result.method[1] == "enumeration"
    alone = decide_counts(counts.subset(np.array([1])).triples(0))
    assert result.theta[1] == pytest.approx(alone.theta[0], abs=1e-14)
    assert result.method[2] == "joint_importance"
    human = decide_joint(counts, model="human_only")
    assert set(human.method) == {"closed_form"} and np.array_equal(human.theta, human_only_theta(counts.n))


def _brute_force_theta(counts: JointCounts) -> float:
    """theta of one pair by summing the collapsed posterior P(L | data) over every latent table L."""
    inputs = joint_inputs(counts)
    n, K, u, patterns = inputs.n[0], inputs.K[0], inputs.u[0].astype(int), inputs.patterns
    k = K.shape[0]
    splits = [[(a, b, total - a - b) for a in range(total + 1) for b in range(total + 1 - a)] for total in u]
    log_w, thetas = [], []
    for choice in itertools.product(*splits):
        L = np.array(choice, dtype=float)  # (J, h)
        S = L.sum(axis=0)
        term = np.sum(gammaln(u + 1.0)) - np.sum(gammaln(L + 1.0))
        term += np.sum(gammaln(n + 1.0 + S)) - gammaln(np.sum(n + 1.0 + S))
        for j in range(k):
            Lj = np.stack([L[patterns[:, j] == c].sum(axis=0) for c in range(3)])  # (c, h)
            alpha = K[j] + 1.0 + Lj
            term += np.sum(gammaln(alpha)) - np.sum(gammaln(alpha.sum(axis=0)))
        log_w.append(term)
        thetas.append(betainc(n[2] + 1.0 + S[2], n[0] + 1.0 + S[0], 0.5))
    w = np.exp(np.asarray(log_w) - max(log_w))
    return float(w @ np.asarray(thetas) / w.sum())


def _small_counts() -> JointCounts:
    revealed = np.zeros((1, 16, 3), dtype=np.int64)
    revealed[0, 0, 0], revealed[0, 10, 2], revealed[0, 5, 1], revealed[0, 2, 0], revealed[0, 8, 2] = 3, 2, 1, 1, 1
    unrevealed = np.zeros((1, 16), dtype=np.int64)
    unrevealed[0, [0, 10, 2, 8, 3 + 4 * 0]] = [3, 2, 2, 1, 2]  # the last: only metric 0 rated it
    return JointCounts(("a", "b"), revealed, unrevealed)


@pytest.mark.parametrize("seed", [0, 1])
def test_importance_route_agrees_with_a_brute_force_sum(seed: int) -> None:
    counts = _small_counts()
    exact = _brute_force_theta(counts)
    result = decide_joint(counts, seed=seed, settings=SamplerSettings().with_(is_target_se=0.003, is_decision_z=float("inf")))
    assert result.method == ("joint_importance",)
    assert abs(result.theta[0] - exact) <= 4 * result.theta_mc_se[0] + 1e-3, (result.theta[0], exact, result.theta_mc_se[0])


def _missing_mixtures(monkeypatch: pytest.MonkeyPatch, misses: int) -> list[int]:
    """Make the first ``misses`` proposal mixtures of ``joint_importance`` miss the posterior (every
    component piled near a corner of each simplex); the kept sweeps of every mixture built, in order."""
    built: list[int] = []
    real = joint_importance._mixture_target

    def mixture_target(inputs, rng, kept):  # type: ignore[no-untyped-def]
        target = real(inputs, rng, kept)
        built.append(kept)
        if len(built) > misses:
            return target
        corner = np.ones_like(target.components)
        corner[..., 0] = 2000.0
        return joint_importance.JointTarget.build(target.alpha, inputs.u, inputs.patterns, corner)

    monkeypatch.setattr(joint_importance, "_mixture_target", mixture_target)
    return built


def test_a_pair_whose_larger_mixture_misses_gets_one_more_before_data_augmentation(monkeypatch: pytest.MonkeyPatch) -> None:
    counts = _small_counts()
    exact = _brute_force_theta(counts)
    precise = SamplerSettings().with_(is_target_se=0.003, is_decision_z=float("inf"))
    built = _missing_mixtures(monkeypatch, misses=2)
    result = decide_joint(counts, seed=0, settings=precise)
    wide = joint_importance.WIDE_KEPT
    assert built == [joint_importance.EXPLORE_KEPT, wide, wide]  # the first mixture, then two larger ones
    assert result.method == ("joint_importance",)
    assert abs(result.theta[0] - exact) <= 4 * result.theta_mc_se[0] + 1e-3, (result.theta[0], exact, result.theta_mc_se[0])
    built = _missing_mixtures(monkeypatch, misses=3)
    assert decide_joint(counts, seed=0, settings=precise).method == ("joint_gibbs",)  # every mixture missed
    assert len(built) == 1 + joint_importance.WIDE_ATTEMPTS


def test_gibbs_chains_do_not_stop_inside_one_hump_on_a_golden_setting() -> None:
    """``k3_strong_ok_20_500`` alone: with the former default of 4 chains, seeds 2, 4 and 5 stopped
    early at z = 2.6, 5.8 and 2.9 against the NUTS reference (the split R-hat of 4 chains passed
    while they sat in one hump); with the default chains each is within 3 combined s.e."""
    (case,) = [c for c in _golden() if c["name"] == "k3_strong_ok_20_500"]
    counts = JointCounts(("m0", "m1", "m2"), np.array([case["revealed"]]), np.array([case["unrevealed"]]))
    for seed in (2, 4, 5):
        out = joint_gibbs(joint_inputs(counts), seed=seed, gamma=0.05, settings=PRECISE)
        assert out.settled[0]
        z = (out.theta[0] - case["theta_ref"]) / np.hypot(out.theta_mc_se[0], case["theta_ref_se"])
        assert abs(z) <= 3.0, (seed, out.theta[0], case["theta_ref"], z)


@pytest.mark.parametrize("seed", [0, 1])
def test_data_augmentation_agrees_with_a_brute_force_sum(seed: int) -> None:
    counts = _small_counts()
    exact = _brute_force_theta(counts)
    precise = SamplerSettings().with_(is_target_se=0.003, is_decision_z=float("inf"))
    summary = joint_gibbs(joint_inputs(counts), seed=seed, gamma=0.05, settings=precise)
    assert summary.settled[0]
    assert abs(summary.theta[0] - exact) <= 4 * summary.theta_mc_se[0] + 1e-3, (summary.theta[0], exact, summary.theta_mc_se[0])


def _exact_posterior_draws(counts: JointCounts, rng: np.random.Generator, draws: int) -> tuple[np.ndarray, np.ndarray, float, float]:
    """``draws`` exact posterior draws of ``p`` (draws, 3) and mu's columns (draws, k, h, c) of one
    pair: the latent table ``L`` from its collapsed posterior (summed over every table, as
    :func:`_brute_force_theta`), then ``p | L`` and ``mu | L``; with the exact ``E[p_>]`` and theta."""
    inputs = joint_inputs(counts)
    n, K, u, patterns = inputs.n[0], inputs.K[0], inputs.u[0].astype(int), inputs.patterns
    k = K.shape[0]
    splits = [[(a, b, total - a - b) for a in range(total + 1) for b in range(total + 1 - a)] for total in u]
    tables = np.array(list(itertools.product(*splits)), dtype=float)  # (T, J, h)
    per_metric = np.stack([np.stack([tables[:, patterns[:, j] == c].sum(axis=1) for c in range(3)], axis=1) for j in range(k)], axis=1)
    S = tables.sum(axis=1)  # (T, h)
    alpha = K[None] + 1.0 + per_metric  # (T, k, c, h)
    log_w = np.sum(gammaln(u + 1.0)) - gammaln(tables + 1.0).sum(axis=(1, 2))
    log_w += gammaln(n + 1.0 + S).sum(axis=1) - gammaln((n + 1.0 + S).sum(axis=1))
    log_w += (gammaln(alpha).sum(axis=2) - gammaln(alpha.sum(axis=2))).sum(axis=(1, 2))
    w = np.exp(log_w - log_w.max())
    w /= w.sum()
    p_alpha = n + 1.0 + S
    exact_p = float(w @ (p_alpha[:, 0] / p_alpha.sum(axis=1)))
    exact_theta = float(w @ betainc(p_alpha[:, 2], p_alpha[:, 0], 0.5))
    pick = rng.choice(len(w), draws, p=w)
    p = rng.standard_gamma(p_alpha[pick])
    columns = rng.standard_gamma(np.swapaxes(alpha[pick], -1, -2))  # (draws, k, h, c)
    return p / p.sum(axis=1, keepdims=True), columns / columns.sum(axis=-1, keepdims=True), exact_p, exact_theta


def _few_revealed_counts() -> JointCounts:
    """:func:`_small_counts` with three revealed items only: the relabelled humps carry real mass."""
    small = _small_counts()
    revealed = np.zeros_like(small.revealed)
    revealed[0, 0, 0], revealed[0, 5, 1] = 2, 1
    return JointCounts(small.metrics, revealed, small.unrevealed)


def _chains_at_exact_draws(counts: JointCounts, seed: int, chains: int):  # type: ignore[no-untyped-def]
    """A sweep of one pair and ``chains`` chains started at exact posterior draws (:func:`_exact_posterior_draws`);
    with the starting ``p`` and the exact ``E[p_>]`` and theta."""
    from prefeval_core.decision.joint_fast import _start, _State

    rng = np.random.default_rng(seed)
    p, columns, exact_p, exact_theta = _exact_posterior_draws(counts, rng, chains)
    sweep, _ = _start(joint_inputs(counts), np.arange(1), rng, chains)
    return rng, sweep, _State(p[None], columns[None]), p, exact_p, exact_theta


def _assert_still_exact(moved_p: np.ndarray, exact_p: float, exact_theta: float) -> None:
    """The mean of ``p_>`` and ``P(p_> > p_<)`` of independent chains within 4 s.e. of the exact values."""
    chains = len(moved_p)
    se = moved_p[:, 0].std() / np.sqrt(chains)
    assert abs(moved_p[:, 0].mean() - exact_p) <= 4 * se, (moved_p[:, 0].mean(), exact_p, se)
    above = (moved_p[:, 0] > moved_p[:, 2]).mean()
    assert abs(above - exact_theta) <= 4 * np.sqrt(exact_theta * (1 - exact_theta) / chains), (above, exact_theta)


@pytest.mark.parametrize("make", [_small_counts, _few_revealed_counts])
def test_collapsed_moves_leave_the_brute_force_posterior_invariant(make) -> None:  # type: ignore[no-untyped-def]
    """The relabelling and ``p``-shift moves alone, iterated from exact posterior draws, keep them
    exact: the mean of ``p_>`` and ``P(p_> > p_<)`` of 4,000 independent chains match the sums."""
    counts = make()
    chains = 4000
    rng, sweep, state, _, exact_p, exact_theta = _chains_at_exact_draws(counts, 11, chains)
    root = np.broadcast_to(0.8 * np.eye(2), (1, chains, 2, 2))
    accepted = np.zeros((1, chains))
    relabelled = np.zeros((1, chains))
    for _ in range(25):
        relabelled += sweep.relabel(rng, state)[0]
        accepted += sweep.shift(rng, state, root, 4)[0]
    assert accepted.mean() / 25 > 0.2 and relabelled.sum() > 100  # the moves did move the chains
    _assert_still_exact(state.p[0], exact_p, exact_theta)
    assert abs(exact_theta - _brute_force_theta(counts)) < 1e-12


@pytest.mark.parametrize("make", [_small_counts, _few_revealed_counts])
def test_the_ridge_move_leaves_the_brute_force_posterior_invariant(make) -> None:  # type: ignore[no-untyped-def]
    """The ridge move alone (two metrics' joint law with the truth times a matrix with unit row
    sums), iterated from exact posterior draws, keeps them exact: a wrong Jacobian moves the mean of
    ``p_>`` and ``P(p_> > p_<)`` of 4,000 independent chains away from the sums."""
    chains = 4000
    rng, sweep, state, start_p, exact_p, exact_theta = _chains_at_exact_draws(make(), 12, chains)
    accepted = np.zeros((1, chains))
    for _ in range(25):
        accepted += sweep.ridge(rng, state, np.full((1, chains), 0.1), 4)
    assert accepted.mean() / 25 > 0.1 and np.abs(state.p[0] - start_p).mean() > 0.04  # the move did move the chains
    _assert_still_exact(state.p[0], exact_p, exact_theta)


def test_the_ridge_moves_jacobian_matches_finite_differences() -> None:
    """``|det T| prod_h (p_h / p'_h)^2`` against the determinant of the map's 14 x 14 Jacobian in the
    simplices' coordinates (``p_0, p_1`` and the first two entries of each column of ``mu_a``, ``mu_b``),
    by central differences, for random states and matrices ``T`` with unit row sums."""
    from prefeval_core.decision.joint_fast import ridge_log_jacobian, ridge_transform

    rng = np.random.default_rng(5)

    def full(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        p = np.append(x[:2], 1 - x[:2].sum())[None, None]
        free = x[2:].reshape(2, 3, 2)  # (metric, h, c = 0, 1)
        columns = np.concatenate([free, 1 - free.sum(axis=-1, keepdims=True)], axis=-1)[None, None]
        return p, columns

    def coordinates(p: np.ndarray, columns: np.ndarray) -> np.ndarray:
        return np.concatenate([p[0, 0, :2], columns[0, 0, :, :, :2].ravel()])

    checked = 0
    while checked < 5:
        p0 = rng.dirichlet(np.full(3, 5.0))
        columns0 = rng.dirichlet(np.full(3, 5.0), size=(2, 3))
        z = rng.standard_normal((3, 3))
        E = 0.15 * (z - z.mean(axis=1, keepdims=True))
        T = np.linalg.solve(np.eye(3) - E, np.eye(3) + E)[None, None]
        T_inverse = np.linalg.inv(T)
        new_p, new_columns = ridge_transform(p0[None, None], columns0[None, None], T, T_inverse)
        if (new_p <= 0).any() or (new_columns <= 0).any():
            continue  # the move leaves the simplices here: rejected, no Jacobian needed
        checked += 1
        x = coordinates(p0[None, None], columns0[None, None])
        h = 1e-6
        jacobian = np.empty((14, 14))
        for i in range(14):
            step = np.zeros(14)
            step[i] = h
            plus, minus = (coordinates(*ridge_transform(*full(x + s), T, T_inverse)) for s in (step, -step))
            jacobian[:, i] = (plus - minus) / (2 * h)
        expected = ridge_log_jacobian(p0[None, None], new_p, T)[0, 0]
        assert np.log(abs(np.linalg.det(jacobian))) == pytest.approx(expected, abs=1e-6)


def test_importance_route_is_deterministic() -> None:
    counts = _informative_counts(7, 3, 100, 15, pairs=3)
    small = SamplerSettings.small()
    first = decide_joint(counts, seed=3, settings=small)
    assert set(first.method) == {"joint_importance"}
    again = decide_joint(counts, seed=3, settings=small)
    assert np.array_equal(first.theta, again.theta) and np.array_equal(first.theta_mc_se, again.theta_mc_se)
    assert not np.array_equal(first.theta, decide_joint(counts, seed=4, settings=small).theta)


def _golden() -> list[dict]:  # type: ignore[type-arg]
    return json.loads(GOLDEN.read_text())["cases"]


def _golden_counts(cases: list[dict], k: int) -> JointCounts:  # type: ignore[type-arg]
    group = [c for c in cases if c["k"] == k]
    return JointCounts(
        tuple(f"m{j}" for j in range(k)),
        np.array([c["revealed"] for c in group], dtype=np.int64),
        np.array([c["unrevealed"] for c in group], dtype=np.int64),
    )


def _informative_counts(seed: int, k: int, items: int, revealed: int, pairs: int = 1) -> JointCounts:
    """``pairs`` pairs of ``items`` items: truth ~ (0.5, 0.2, 0.3), each metric right 70% of the time
    (else uniform), the first ``revealed`` human outcomes of each pair revealed."""
    rng = np.random.default_rng(seed)
    rows = pairs * items
    truth = rng.choice(3, rows, p=[0.5, 0.2, 0.3])
    metrics = np.stack([np.where(rng.random(rows) < 0.7, truth, rng.integers(0, 3, rows)) for _ in range(k)], axis=1)
    shown = np.tile(np.arange(items) < revealed, pairs)
    return joint_counts(tuple(f"m{j}" for j in range(k)), np.repeat(np.arange(pairs), items), truth, metrics, shown, pairs)


@pytest.mark.slow
@pytest.mark.parametrize(("seed", "k", "items", "revealed"), [(0, 2, 90, 30), (1, 3, 100, 10), (2, 3, 200, 40)])
def test_importance_route_agrees_with_nuts_on_small_cases(seed: int, k: int, items: int, revealed: int) -> None:
    """theta of the route against a NUTS run of the same pair, within both Monte-Carlo errors."""
    counts = _informative_counts(seed, k, items, revealed)
    result = decide_joint(counts, seed=2, settings=PRECISE)
    assert result.method == ("joint_importance",)
    nuts = decide_joint(counts, sampler="nuts", seed=2, settings=PRECISE.with_(nuts_chains=2, nuts_warmup=500, nuts_draws=5000))
    both = np.hypot(result.theta_mc_se[0], nuts.theta_mc_se[0])
    assert abs(result.theta[0] - nuts.theta[0]) <= 4.0 * both + 1e-3, (result.theta[0], nuts.theta[0], both)
    assert np.abs(result.p_mean[0] - nuts.p_mean[0]).max() < 0.02


@pytest.mark.slow
@pytest.mark.golden
@pytest.mark.parametrize("k", [2, 3])  # one call per number of metrics: the two can run on different workers
def test_fast_routes_agree_with_the_nuts_reference_on_every_golden_setting(k: int) -> None:
    # Passes at seed 1, not at every seed: at seeds 2, 3 and 6 `joint_importance` accepts an estimate of
    # k2_ok_ok_10_200 4.5-8.6 combined s.e. too high (the route's known overconfidence, docs/model.md §6;
    # bench/bench_decision.py joint-calibration measures it on SummEval). Do not paper over it with another seed.
    cases = _golden()
    assert len(cases) >= 20 and {c["k"] for c in cases} == {2, 3}
    group = [c for c in cases if c["k"] == k]
    result = decide_joint(_golden_counts(cases, k), seed=1, settings=PRECISE)
    for i, case in enumerate(group):
        combined = np.hypot(result.theta_mc_se[i], case["theta_ref_se"])
        assert abs(result.theta[i] - case["theta_ref"]) <= 4.0 * combined + 1e-4, (case["name"], result.theta[i], result.method[i])
        near = min(abs(case["theta_ref"] - t) for t in (0.025, 0.975)) <= 4.0 * combined
        if not near:
            assert result.decision[i] == decision_from_theta(case["theta_ref"], 0.05), case["name"]


def test_contributions_of_a_useful_and_a_useless_metric() -> None:
    rng = np.random.default_rng(3)
    rows, pairs = 2000, 2
    pair_index = np.repeat(np.arange(pairs), rows // pairs)
    truth = rng.choice(3, rows, p=[0.55, 0.1, 0.35])
    good = np.where(rng.random(rows) < 0.85, truth, rng.integers(0, 3, rows))  # agrees with the truth 90% of the time
    noise = rng.integers(0, 3, rows)  # says nothing
    revealed = rng.random(rows) < 0.1
    counts = joint_counts(("good", "noise"), pair_index, truth, np.stack([good, noise], axis=1), revealed, pairs)
    small = SamplerSettings.small()
    c = metric_contributions(counts, seed=0, settings=small)
    assert c.metrics == ("good", "noise") and c.theta_without.shape == (2, 2) and c.theta_alone.shape == (2, 2)
    assert np.array_equal(c.theta_human, human_only_theta(counts.n))
    assert np.array_equal(c.theta_all, decide_joint(counts, seed=0, settings=small).theta)
    assert np.array_equal(c.theta_without[:, 0], decide_joint(counts.without(0), seed=0, settings=small).theta)
    assert np.array_equal(c.theta_alone[:, 1], decide_counts(counts.triples(1), seed=0, settings=small).theta)
    # a metric independent of the truth says nothing: alone it leaves theta where the humans put it
    assert np.abs(c.theta_alone[:, 1] - c.theta_human).max() < 0.03
    assert c.decision(c.theta_all).dtype == np.int8


def test_joint_draws_follow_the_decision() -> None:
    cases = _golden()
    case = next(c for c in cases if c["name"] == "k2_ok_weak_100_1000")
    counts = JointCounts(("a", "b"), np.array([case["revealed"]]), np.array([case["unrevealed"]]))
    result = decide_joint(counts, seed=2, settings=SamplerSettings.small())
    draws = joint_posterior_draws(counts, 0, seed=2, draws=8000, settings=SamplerSettings.small())
    assert draws.shape == (8000, 3) and np.allclose(draws.sum(axis=1), 1.0)
    assert np.mean(draws[:, 0] > draws[:, 2]) == pytest.approx(result.theta[0], abs=4 * result.theta_mc_se[0] + 0.02)
    again = joint_posterior_draws(counts, 0, seed=2, draws=8000, settings=SamplerSettings.small())
    assert np.array_equal(draws, again)


def test_joint_draws_of_the_importance_route_follow_the_decision() -> None:
    counts = _informative_counts(3, 3, 120, 20)
    small = SamplerSettings.small()
    result = decide_joint(counts, seed=5, settings=small)
    assert result.method == ("joint_importance",)
    draws = joint_posterior_draws(counts, 0, seed=5, draws=6000, settings=small)
    assert draws.shape == (6000, 3) and np.allclose(draws.sum(axis=1), 1.0)
    assert np.mean(draws[:, 0] > draws[:, 2]) == pytest.approx(result.theta[0], abs=4 * result.theta_mc_se[0] + 0.03)
    assert np.array_equal(draws, joint_posterior_draws(counts, 0, seed=5, draws=6000, settings=small))


def test_without_removes_one_metric_from_every_pattern() -> None:
    counts = _random_counts(np.random.default_rng(5), 3, 3, 500, 0.5)
    for j in range(3):
        rest = counts.without(j)
        assert rest.metrics == tuple(m for i, m in enumerate(counts.metrics) if i != j)
        assert rest.revealed.sum() == counts.revealed.sum() and rest.unrevealed.sum() == counts.unrevealed.sum()
        for i, other in enumerate(i for i in range(3) if i != j):
            assert np.array_equal(rest.triples(i).K, counts.triples(other).K)
    assert pattern_codes(2).shape == (16, 2)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"model": "known_mu"}, "known mu"), ({"gamma": 0.0}, "gamma"), ({"seed": -1}, "seed"), ({"sampler": "gibbs"}, "sampler")],
)
def test_bad_options_are_settings_errors(kwargs, message) -> None:  # type: ignore[no-untyped-def]
    counts = _random_counts(np.random.default_rng(0), 2, 2, 50, 0.5)
    with pytest.raises(SettingsError, match=message):
        decide_joint(counts, **kwargs)


def test_negative_counts_are_refused() -> None:
    counts = _random_counts(np.random.default_rng(0), 2, 2, 50, 0.5)
    bad = JointCounts(counts.metrics, counts.revealed, counts.unrevealed - 100)
    with pytest.raises(SettingsError, match="non-negative"):
        decide_joint(bad)
