"""Benchmark and agreement figures of the decision engine (issue 3; results in bench/README.md).

    .venv/bin/python bench/bench_decision.py agreement      # fast vs the golden NUTS reference
    .venv/bin/python bench/bench_decision.py speed          # SummEval 120 pairs + the hard regime, vs NUTS

Speed figures are ratios measured in the same run: the reference (NumPyro NUTS, paper settings,
one pair per call, compiled once and reused) on a few pairs, extrapolated per pair, against
the fast path on all 120 pairs in one call. Timings on a shared 2-core machine vary with load.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from prefeval_core.runtime import configure_jax  # noqa: E402

configure_jax(x64=True, host_devices=5)

import numpy as np  # noqa: E402

from prefeval_core.counts import CountTriples, align_outcomes, count_triples  # noqa: E402
from prefeval_core.data.dataset import load_dataset  # noqa: E402
from prefeval_core.decision import SamplerSettings, decide_pairs  # noqa: E402
from prefeval_core.decision.reference import nuts_posterior  # noqa: E402
from prefeval_core.preferences import pair_outcomes  # noqa: E402
from tests.decision_fixtures import PRECISE, golden_cases, stacked  # noqa: E402

GOOD = np.array([[0.8, 0.25, 0.1], [0.1, 0.5, 0.1], [0.1, 0.25, 0.8]])


def agreement(settings: SamplerSettings, label: str, seed: int) -> None:
    cases = golden_cases()
    rows = []
    for known in (False, True):
        group = [c for c in cases if (c["mu"] is not None) == known]
        kwargs = {"model": "known_mu", "mu": np.array([c["mu"] for c in group])} if known else {}
        start = time.perf_counter()
        result = decide_pairs(*stacked(group), seed=seed, settings=settings, **kwargs)
        seconds = time.perf_counter() - start
        for i, c in enumerate(group):
            diff = abs(result.theta[i] - c["theta_ref"])
            rows.append((c, result.theta[i], result.theta_mc_se[i], result.method[i], diff, int(result.decision[i])))
        print(f"<!-- {label}: {len(group)} settings ({'known mu' if known else 'full/human only'}) in {seconds:.1f} s -->")
    print(f"\n### Agreement, fast path with {label} settings (seed {seed})\n")
    print(
        "| setting | humans | metric-only | theta_ref ± MC s.e. | theta_fast ± MC s.e. | method "
        "| abs diff | diff / ref s.e. | z (both s.e.) |"
    )
    print("|---|---:|---:|---|---|---|---:|---:|---:|")
    worst = (0.0, "")
    for c, theta, se, method, diff, _ in rows:
        ref_se = c["theta_ref_se"]
        ratio = diff / ref_se if ref_se > 0 else float("nan")
        z = diff / np.hypot(se, ref_se) if np.hypot(se, ref_se) > 0 else float("nan")
        print(
            f"| {c['name']} | {sum(c['n'])} | {sum(c['m'])} | {c['theta_ref']:.4f} ± {ref_se:.4f} | {theta:.4f} ± {se:.4f} | {method} "
            f"| {diff:.4f} | {ratio:.1f} | {z:.1f} |"
        )
        worst = max(worst, (diff, c["name"]))
    same = sum(1 for c, *_, d in rows if d == _decision(c["theta_ref"]))
    print(f"\nmax |theta_fast - theta_ref| = {worst[0]:.4f} ({worst[1]}); same decision as the reference on {same} of {len(rows)} settings")


def _decision(theta: float, gamma: float = 0.05) -> int:
    return 0 if theta > 1 - gamma / 2 else 2 if theta < gamma / 2 else 1


def summeval_counts(revealed_per_pair: int, seed: int) -> CountTriples:
    """SummEval, human:relevance vs rougeL, with ``revealed_per_pair`` human items per pair revealed in a seeded random order."""
    ds = load_dataset(ROOT.parent / "shared" / "data" / "summeval")
    table = align_outcomes(pair_outcomes(ds, "human:relevance"), pair_outcomes(ds, "rougeL"))
    rng = np.random.default_rng(seed)
    revealed = np.zeros(table.human.shape, dtype=bool)
    for pair in range(table.n_pairs):
        rows = np.flatnonzero((table.pair_index == pair) & (table.human >= 0))
        revealed[rng.permutation(rows)[:revealed_per_pair]] = True
    return count_triples(table, revealed)


def hard_counts(pairs: int, humans: int, metric_only: int, seed: int) -> CountTriples:
    """Synthetic pairs: p ~ Dirichlet(2, 1, 2) per pair, the ideal metric of method.md §10, counts drawn."""
    rng = np.random.default_rng(seed)
    n = np.zeros((pairs, 3), dtype=np.int64)
    K = np.zeros((pairs, 3, 3), dtype=np.int64)
    m = np.zeros((pairs, 3), dtype=np.int64)
    for i in range(pairs):
        p = rng.dirichlet([2.0, 1.0, 2.0])
        n[i] = rng.multinomial(humans, p)
        for h in range(3):
            K[i, :, h] = rng.multinomial(n[i, h], GOOD[:, h])
        m[i] = rng.multinomial(metric_only, GOOD @ p)
    return CountTriples(n, K, m)


def time_fast(counts: CountTriples, repeats: int, settings: SamplerSettings) -> tuple[float, float, tuple[str, ...]]:
    start = time.perf_counter()
    result = decide_pairs(counts.n, counts.K, counts.m, seed=0, settings=settings)
    first = time.perf_counter() - start
    steady = []
    for r in range(repeats):
        start = time.perf_counter()
        decide_pairs(counts.n, counts.K, counts.m, seed=r + 1, settings=settings)
        steady.append(time.perf_counter() - start)
    return first, statistics.median(steady), result.method


def time_reference(counts: CountTriples, pairs: list[int]) -> tuple[float, float]:
    """Seconds of the first reference call (with compilation) and the median of the others (per pair)."""
    times = []
    for i in pairs:
        start = time.perf_counter()
        nuts_posterior(counts.n[i : i + 1], counts.K[i : i + 1], counts.m[i : i + 1], seed=i, settings=SamplerSettings.paper())
        times.append(time.perf_counter() - start)
        print(f"<!-- reference pair {i}: {times[-1]:.1f} s -->", flush=True)
    return times[0], statistics.median(times[1:]) if len(times) > 1 else times[0]


def speed(reference_pairs: int, repeats: int) -> None:
    settings = SamplerSettings()
    print("\n### Speed (all times in seconds; same run)\n")
    print(
        "| workload | pairs | fast first call | fast steady state | methods "
        "| reference per pair (first / steady) | reference, all pairs one by one | ratio reference / fast |"
    )
    print("|---|---:|---:|---:|---|---|---:|---:|")
    workloads = [
        ("SummEval relevance vs rougeL, 10 human items revealed per pair (90 metric-only)", summeval_counts(10, 0)),
        ("SummEval, 30 revealed per pair (70 metric-only)", summeval_counts(30, 0)),
        ("SummEval, all 100 revealed (no metric-only item)", summeval_counts(100, 0)),
        ("hard regime: 20 human, 10,900 metric-only per pair", hard_counts(120, 20, 10900, 0)),
    ]
    for label, counts in workloads:
        first, steady, methods = time_fast(counts, repeats, settings)
        tally = ", ".join(f"{name} {methods.count(name)}" for name in sorted(set(methods)))
        sample = [int(i) for i in np.linspace(0, len(methods) - 1, reference_pairs).round()]
        ref_first, ref_steady = time_reference(counts, sample)
        total_ref = ref_first + ref_steady * (len(methods) - 1)
        print(
            f"| {label} | {len(methods)} | {first:.3f} | {steady:.3f} | {tally} | {ref_first:.1f} / {ref_steady:.1f} "
            f"| {total_ref:.0f} (extrapolated from {reference_pairs}) | {total_ref / steady:.0f}x |",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("part", choices=("agreement", "speed", "all"))
    parser.add_argument("--reference-pairs", type=int, default=3, help="reference pairs timed per workload")
    parser.add_argument("--repeats", type=int, default=3, help="steady-state repeats of the fast call")
    args = parser.parse_args()
    if args.part in ("agreement", "all"):
        agreement(SamplerSettings(), "default (decision-mode early stop)", seed=1)
        agreement(PRECISE, "PRECISE (tests/decision_fixtures.py: rounds until s.e. <= 0.003)", seed=1)
        fine = SamplerSettings().with_(is_max_rounds=48, is_target_se=0.002, is_decision_z=float("inf"))
        agreement(fine, "reference-grade (rounds until s.e. <= 0.002, at most 48)", seed=1)
    if args.part in ("speed", "all"):
        speed(args.reference_pairs, args.repeats)


if __name__ == "__main__":
    main()
