"""Benchmark and agreement figures of the decision engine (results in bench/README.md).

    .venv/bin/python bench/bench_decision.py agreement        # one metric: fast vs the golden NUTS reference
    .venv/bin/python bench/bench_decision.py joint-agreement  # several metrics: fast vs the golden NUTS reference
    .venv/bin/python bench/bench_decision.py speed            # the speed targets, each against NUTS in the same run
    .venv/bin/python bench/bench_decision.py joint-speed --roots ../main .  # several metrics on SummEval: two trees, long-Gibbs reference
    .venv/bin/python bench/bench_decision.py joint-calibration --repeats 6  # several metrics: are the route's s.e. honest? (~10 min)
    .venv/bin/python bench/bench_decision.py rng              # NumPy vs JAX random variates on this machine

Speed figures are ratios measured in the same run: the reference (NumPyro NUTS, paper settings,
one pair per call, compiled once and reused) timed on a few pairs of the workload and
extrapolated per pair, against the fast path on the whole workload. Wall and CPU (process) time
are both printed with the load average: the machine has 2 cores shared with other jobs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import cast

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from prefeval_core.runtime import configure_jax  # noqa: E402

configure_jax(x64=True, host_devices=5)

import json  # noqa: E402

import numpy as np  # noqa: E402
from decision_workloads import (  # noqa: E402
    hard_counts,
    many_systems_study,
    replay_decisions,
    summeval_counts,
    summeval_joint_counts,
    wmt20_study,
)

from prefeval_core.decision import DecisionResult, SamplerSettings, decide_counts, decide_joint, decide_pairs, decision_from_theta  # noqa: E402
from prefeval_core.decision.decide import Columns  # noqa: E402
from prefeval_core.decision.joint import fill_joint_gibbs  # noqa: E402
from prefeval_core.decision.joint_data import joint_inputs  # noqa: E402
from prefeval_core.decision.joint_fast import GibbsSummary, joint_gibbs  # noqa: E402
from prefeval_core.decision.options import DecisionSettings  # noqa: E402
from prefeval_core.decision.reference import nuts_posterior  # noqa: E402
from prefeval_core.pairs.counts import CountTriples, JointCounts  # noqa: E402
from tests.decision_fixtures import PRECISE, golden_cases, stacked  # noqa: E402

COMMAND = ".venv/bin/python bench/bench_decision.py"


def load() -> str:
    return "load average " + " / ".join(f"{v:.1f}" for v in os.getloadavg())


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
    print(f"\n### Agreement, one metric, fast path with {label} settings (seed {seed}; `{COMMAND} agreement`)\n")
    _agreement_table([(c["name"], sum(c["n"]), sum(c["m"]), c["theta_ref"], c["theta_ref_se"], t, se, m, d) for c, t, se, m, _, d in rows])


def _agreement_table(rows: list[tuple[str, int, int, float, float, float, float, str, int]]) -> None:
    print("| setting | humans | metric-only | theta_ref ± MC s.e. | theta_fast ± MC s.e. | route | abs diff | diff / ref s.e. | z |")
    print("|---|---:|---:|---|---|---|---:|---:|---:|")
    worst, worst_ratio, worst_z, same = (0.0, ""), 0.0, 0.0, 0
    for name, humans, metric_only, ref, ref_se, theta, se, method, decision in rows:
        diff = abs(theta - ref)
        ratio = diff / ref_se if ref_se > 0 else float("nan")
        both = float(np.hypot(se, ref_se))
        z = diff / both if both > 0 else float("nan")
        print(
            f"| {name} | {humans} | {metric_only} | {ref:.4f} ± {ref_se:.4f} | {theta:.4f} ± {se:.4f} | {method} "
            f"| {diff:.4f} | {ratio:.1f} | {z:.1f} |"
        )
        worst = max(worst, (diff, name))
        worst_ratio = max(worst_ratio, ratio if np.isfinite(ratio) else 0.0)
        worst_z = max(worst_z, z if np.isfinite(z) else 0.0)
        same += decision == int(decision_from_theta(ref, 0.05))
    print(
        f"\nmax |theta_fast - theta_ref| = {worst[0]:.4f} ({worst[1]}); largest in reference s.e. {worst_ratio:.1f}; "
        f"largest z {worst_z:.1f}; same decision as the reference on {same} of {len(rows)} settings"
    )


def joint_agreement(settings: SamplerSettings, label: str, seed: int) -> None:
    cases = json.loads((ROOT / "tests" / "golden" / "joint_reference.json").read_text())["cases"]
    rows = []
    for k in sorted({c["k"] for c in cases}):
        group = [c for c in cases if c["k"] == k]
        counts = JointCounts(
            tuple(f"m{j}" for j in range(k)),
            np.array([c["revealed"] for c in group], dtype=np.int64),
            np.array([c["unrevealed"] for c in group], dtype=np.int64),
        )
        start = time.perf_counter()
        result = decide_joint(counts, seed=seed, settings=settings)
        print(f"<!-- {label}: {len(group)} settings with k = {k} in {time.perf_counter() - start:.1f} s ({load()}) -->")
        for i, c in enumerate(group):
            humans, unrevealed = int(np.sum(c["revealed"])), int(np.sum(c["unrevealed"]))
            rows.append(
                (
                    c["name"],
                    humans,
                    unrevealed,
                    c["theta_ref"],
                    c["theta_ref_se"],
                    float(result.theta[i]),
                    float(result.theta_mc_se[i]),
                    result.method[i],
                    int(result.decision[i]),
                )
            )
    print(f"\n### Agreement, several metrics, with {label} settings (seed {seed}; `{COMMAND} joint-agreement`)\n")
    _agreement_table(rows)


def time_reference(counts: CountTriples, pairs: list[int]) -> tuple[float, float]:
    """Seconds of the first reference call (with compilation) and the median of the others (per pair)."""
    times = []
    for i in pairs:
        start = time.perf_counter()
        nuts_posterior(counts.n[i : i + 1], counts.K[i : i + 1], counts.m[i : i + 1], seed=i, settings=SamplerSettings.paper())
        times.append(time.perf_counter() - start)
        print(f"<!-- reference pair {i}: {times[-1]:.1f} s -->", flush=True)
    return times[0], statistics.median(times[1:]) if len(times) > 1 else times[0]


def timed(call: Callable[[], object]) -> tuple[float, float, object]:
    """Wall and CPU seconds of ``call()`` and its value."""
    wall, cpu = time.perf_counter(), time.process_time()
    value = call()
    return time.perf_counter() - wall, time.process_time() - cpu, value


def speed(reference_pairs: int, repeats: int) -> None:
    print(f"\n### Speed (seconds; same run; `{COMMAND} speed`; {load()} at the start)\n")
    print("| workload | pairs | fast: wall (CPU) | routes | reference per pair (first / steady) | reference, all pairs | ratio |")
    print("|---|---:|---|---|---|---:|---:|")
    rounds = [
        ("SummEval relevance vs rougeL, 10 human items revealed per pair (90 metric-only)", summeval_counts(10, 0)),
        ("SummEval, 30 revealed per pair (70 metric-only)", summeval_counts(30, 0)),
        ("hard regime: 20 human, 10,900 metric-only per pair", hard_counts(120, 20, 10900, 0)),
    ]
    for extra in (0, 400):
        study = many_systems_study(100, 100, extra, 0)
        label = (
            f"100 systems (4,950 pairs), 100 items per pair{f' + {extra} metric-only' if extra else ''}: one round (10 revealed per pair)"
        )
        rounds.append((label, study.counts(np.full(study.n_pairs, 10))))
    for label, counts in rounds:
        runs = [timed(lambda r=r, c=counts: decide_counts(c, seed=r)) for r in range(repeats)]
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        methods = runs[0][2].method  # type: ignore[attr-defined]
        tally = ", ".join(f"{name} {count}" for name, count in sorted(Counter(methods).items()))
        sample = [int(i) for i in np.linspace(0, len(methods) - 1, reference_pairs).round()]
        ref_first, ref_steady = time_reference(counts, sample)
        total_ref = ref_first + ref_steady * (len(methods) - 1)
        print(
            f"| {label} | {len(methods)} | {wall:.2f} ({cpu:.2f}) | {tally} | {ref_first:.1f} / {ref_steady:.1f} "
            f"| {total_ref:.0f} | {total_ref / wall:.0f}x |",
            flush=True,
        )
    replay_speed(reference_pairs)
    print(f"\n<!-- {load()} at the end -->")


def replay_speed(reference_pairs: int) -> None:
    """The engine's share of full replays (N = 10), synthetic and WMT20 en-de, against NUTS per pair."""
    print(f"\n### Replay: the engine's share of a full replay (N = 10; `{COMMAND} speed`)\n")
    print(
        "| study | engine calls | pair decisions | engine: wall (CPU) | longest call | reference per pair | reference, all pairs | ratio |"
    )
    print("|---|---:|---:|---|---:|---:|---:|---:|")
    studies = [
        ("synthetic: 10 systems (45 pairs), 500 human + 500 metric-only items per pair", many_systems_study(10, 500, 500, 0)),
        ("WMT20 en-de, MQM vs YiSi-2, half of each pair's human outcomes withheld", wmt20_study("YiSi-2", 0.5, 0)),
    ]
    for label, study in studies:
        seen: list[CountTriples] = []

        def decide(counts: CountTriples, round_number: int, seen: list[CountTriples] = seen) -> object:
            seen.append(counts)
            return decide_counts(counts, seed=round_number, pair_ids=np.arange(counts.n.shape[0]))

        cpu = time.process_time()
        timing = replay_decisions(study, decide)  # type: ignore[arg-type]
        cpu = time.process_time() - cpu
        picks = [seen[int(i)] for i in np.linspace(0, len(seen) - 1, reference_pairs).round()]
        sample = CountTriples(np.stack([c.n[0] for c in picks]), np.stack([c.K[0] for c in picks]), np.stack([c.m[0] for c in picks]))
        first, steady = time_reference(sample, list(range(len(picks))))
        decisions = sum(timing.pairs_per_call)
        total_ref = first + steady * (decisions - 1)
        print(
            f"| {label} ({study.describe()}) | {timing.calls} | {decisions} | {timing.engine_seconds:.2f} ({cpu:.2f} for the whole loop) "
            f"| {max(timing.call_seconds):.2f} | {steady:.1f} | {total_ref:.0f} | {total_ref / timing.engine_seconds:.0f}x |",
            flush=True,
        )


JOINT_METRICS = ("rougeL", "bleu", "chrF")
# the reference: data augmentation with 16 chains until its standard error is at most 0.002 and R-hat <= 1.005
# (20,000 iterations at most; a pair that does not get there is flagged in the table's comment)
LONG_GIBBS = SamplerSettings().with_(
    gibbs_chains=16, gibbs_max_iterations=20000, is_target_se=0.002, is_decision_z=float("inf"), gibbs_max_rhat=1.005
)


_JOINT_CALLS = """
import json, sys, time
import numpy as np
sys.path.insert(0, sys.argv[1])
import prefeval_core
assert prefeval_core.__file__.startswith(sys.argv[5]), prefeval_core.__file__
from decision_workloads import summeval_joint_counts
from prefeval_core.decision import decide_joint
counts = summeval_joint_counts(tuple(sys.argv[2].split(",")), 10, 0)
counts = counts.subset(np.arange(min(int(sys.argv[3]), counts.n_pairs)))
calls = []
for seed in range(int(sys.argv[4])):
    wall, cpu = time.perf_counter(), time.process_time()
    result = decide_joint(counts, seed=seed)
    calls.append((time.perf_counter() - wall, time.process_time() - cpu))
    if seed == 0:
        first = {name: np.asarray(getattr(result, name)).tolist() for name in ("theta", "theta_mc_se", "decision", "method")}
print(json.dumps({"calls": calls, "first": first}))
"""


def joint_calls_in(root: Path, pairs: int, repeats: int) -> tuple[list[tuple[float, float]], dict[str, list[object]]]:
    """``decide_joint`` with seeds 0..repeats-1 on the joint-speed workload (built by this tree's
    ``decision_workloads``), run by the code of the source tree ``root`` in a fresh process: (wall,
    CPU) seconds per call and the first call's columns."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    command = [sys.executable, "-c", _JOINT_CALLS, str(ROOT / "bench"), ",".join(JOINT_METRICS), str(pairs), str(repeats), str(root)]
    done = subprocess.run(command, env=env, cwd=root, capture_output=True, text=True, check=True)
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    return [tuple(c) for c in answer["calls"]], answer["first"]


def joint_speed(pairs: int, repeats: int, reference: bool, roots: list[Path], old_route: bool) -> None:
    """``decide_joint`` on SummEval with three metrics (10 revealed per pair), as the code of each
    source tree in ``roots`` runs it (fresh processes, one after the other), optionally against the
    route ``joint_importance`` replaced (``joint_gibbs`` on every pair, NUTS fallback for unsettled
    ones) in this process, all against a long data-augmentation run."""
    counts = summeval_joint_counts(JOINT_METRICS, 10, 0)
    counts = counts.subset(np.arange(min(pairs, counts.n_pairs)))
    P = counts.n_pairs
    settings = SamplerSettings()

    def before(seed: int) -> object:
        columns = Columns.empty(P)
        fill_joint_gibbs(columns, np.arange(P), joint_inputs(counts), seed, 0.05, settings)
        return columns.result(DecisionSettings("full", "fast", 0.05, seed, settings, counts.metrics))

    print(f"\n### Several metrics in one posterior: SummEval {' + '.join(JOINT_METRICS)}, 10 revealed, {P} pairs")
    roots_text = " ".join(str(r) for r in roots)
    print(f"(`{COMMAND} joint-speed --joint-pairs {pairs} --repeats {repeats} --roots {roots_text}`; {load()} at the start)\n")
    runs: dict[str, tuple[list[tuple[float, float]], dict[str, list[object]]]] = {}
    for root in roots:
        runs[f"`decide_joint`, {root}"] = joint_calls_in(root, pairs, repeats)
    if old_route:
        wall, cpu, value = timed(lambda: before(0))
        old = cast(DecisionResult, value)
        runs["`joint_gibbs` + NUTS fallback (this tree)"] = (
            [(wall, cpu)],
            {
                "theta": old.theta.tolist(),
                "theta_mc_se": old.theta_mc_se.tolist(),
                "decision": old.decision.tolist(),
                "method": list(old.method),
            },
        )
    truth: GibbsSummary | None = None
    if reference:
        wall, cpu, value = timed(lambda: joint_gibbs(joint_inputs(counts), seed=11, gamma=0.05, settings=LONG_GIBBS))
        truth = cast(GibbsSummary, value)
        print(
            f"<!-- long Gibbs reference: {wall:.0f} s wall, {cpu:.0f} s CPU; {int(np.sum(~truth.settled))} pairs unsettled; "
            f"max R-hat {np.nanmax(truth.rhat):.3f}, max s.e. {np.nanmax(truth.theta_mc_se):.4f} -->"
        )
    settled = np.ones(P, bool) if truth is None else truth.settled
    print(f"Agreement over the {int(settled.sum())} pairs whose long Gibbs run settled (the others' chains disagree: several humps).\n")
    header = "| route | wall s per call (median) | CPU s per call (median) | CPU s per call (each) | routes"
    print(header + " | max abs Δθ vs long Gibbs | max z | same decision |")
    print("|---|---:|---:|---|---|---:|---:|---:|")
    for label, (calls, first) in runs.items():
        wall = statistics.median(c[0] for c in calls)
        cpu = statistics.median(c[1] for c in calls)
        each = ", ".join(f"{c[1]:.2f}" for c in calls)
        tally = ", ".join(f"{name} {count}" for name, count in sorted(Counter(cast(list[str], first["method"])).items()))
        agreement = "| – | – | –"
        if truth is not None:
            theta, se = np.asarray(first["theta"], dtype=float), np.asarray(first["theta_mc_se"], dtype=float)
            diff = np.where(settled, np.abs(theta - truth.theta), 0.0)
            z = diff / np.hypot(se, truth.theta_mc_se)
            same = int(np.sum((np.asarray(first["decision"]) == decision_from_theta(truth.theta, 0.05))[settled]))
            agreement = f"| {diff.max():.4f} (pair {int(diff.argmax())}) | {np.nanmax(z):.1f} | {same} of {int(settled.sum())}"
        print(f"| {label} | {wall:.2f} | {cpu:.2f} | {each} | {tally} {agreement} |", flush=True)
    print(f"\n<!-- {load()} at the end -->")


CALIBRATION_METRICS = (("rougeL", "bleu"), JOINT_METRICS)


def joint_calibration(seeds: int, nuts_pairs: int = 4) -> None:
    """Whether the several-metric route's Monte-Carlo standard errors are honest: ``decide_joint``
    (default settings) at seeds ``0..seeds-1`` against a long data-augmentation run on every
    SummEval pair (10 revealed per pair, the first round's state), two and three metrics. With
    honest errors ``z = (theta - theta_ref) / hypot(se, se_ref)`` has mean square 1 and mean 0; a
    second long run (another seed) against the first shows the reference's own calibration. Pairs
    whose reference theta is within 0.005 of 0 or 1 are left out of z (their errors are ~1e-10,
    where a rounding difference gives any z, and no decision is near). *Towards the extreme*: the
    mean of z signed towards the nearer of 0 and 1 (positive: estimates too sure). *Decisions differing*:
    pairs decided otherwise than the reference where the reference is more than 3 of its standard
    errors from both thresholds (elsewhere a Monte-Carlo coin decides either way). Then an independent
    sampler arbitrates: NUTS (4 chains x 10,000 draws) on the ``nuts_pairs`` pairs where seed 0's
    estimate and the reference disagree most."""
    print(f"\n### Calibration of the several-metric route's standard errors (`{COMMAND} joint-calibration --repeats {seeds}`; {load()})\n")
    print("| metrics | pairs | compared | mean z² (each seed) | towards the extreme | share \\|z\\| > 3 | max \\|z\\| | routes ", end="")
    print("| decisions differing (reference clear) |")
    print("|---|---:|---|---|---:|---:|---:|---|---:|")
    arbitrated: list[str] = []
    for metrics in CALIBRATION_METRICS:
        counts = summeval_joint_counts(metrics, 10, 0)
        inputs = joint_inputs(counts)
        long_runs = [joint_gibbs(inputs, seed=seed, gamma=0.05, settings=LONG_GIBBS) for seed in (11, 12)]
        truth = long_runs[0]
        good = truth.settled & long_runs[1].settled
        clear = np.minimum(np.abs(truth.theta - 0.025), np.abs(truth.theta - 0.975)) > 3 * truth.theta_mc_se
        inner = good & (np.abs(truth.theta - 0.5) < 0.495)
        towards = np.sign(truth.theta - 0.5)
        reference = decision_from_theta(truth.theta, 0.05)
        rows: dict[str, list[tuple[np.ndarray, int, Counter[str]]]] = {"second long Gibbs run": [], "`decide_joint`, default settings": []}
        z = (long_runs[1].theta - truth.theta) / np.hypot(long_runs[1].theta_mc_se, truth.theta_mc_se) * towards
        differing = int(np.sum((decision_from_theta(long_runs[1].theta, 0.05) != reference) & clear & good))
        rows["second long Gibbs run"].append((z[inner], differing, Counter({"joint_gibbs": int(good.sum())})))
        for seed in range(seeds):
            result = decide_joint(counts, seed=seed)
            z = (result.theta - truth.theta) / np.hypot(result.theta_mc_se, truth.theta_mc_se) * towards
            if seed == 0:
                arbitrated += _arbitrated(counts, result, truth, np.flatnonzero(inner)[np.argsort(-np.abs(z[inner]))[:nuts_pairs]])
            differing = int(np.sum((result.decision != reference) & clear & good))
            rows["`decide_joint`, default settings"].append((z[inner], differing, Counter(np.asarray(result.method)[good].tolist())))
        for label, runs in rows.items():
            every = np.concatenate([r[0] for r in runs])
            each = ", ".join(f"{np.mean(r[0] ** 2):.2f}" for r in runs)
            tally = sum((r[2] for r in runs), Counter())
            routes = ", ".join(f"{name} {count}" for name, count in sorted(tally.items()))
            far = np.mean(np.abs(every) > 3)
            print(
                f"| {' + '.join(metrics)} | {counts.n_pairs} ({int(good.sum())} settled, {int(inner.sum())} in z) | {label} | {each} "
                f"| {every.mean():+.2f} | {far:.3f} | {np.abs(every).max():.1f} | {routes} "
                f"| {sum(r[1] for r in runs)} of {int((clear & good).sum()) * len(runs)} |",
                flush=True,
            )
    print("\n| metrics | pair | `decide_joint` seed 0 | long Gibbs | NUTS |\n|---|---:|---|---|---|")
    print("\n".join(arbitrated))


def _arbitrated(counts: JointCounts, result: DecisionResult, truth: GibbsSummary, pairs: np.ndarray) -> list[str]:
    """Table rows: θ ± s.e. of ``pairs`` by the fast route, the long Gibbs run and NUTS (4 x 10,000)."""
    nuts_settings = SamplerSettings().with_(nuts_chains=4, nuts_warmup=1000, nuts_draws=10000)
    rows = []
    for i in pairs:
        nuts = decide_joint(counts.subset(np.array([i])), sampler="nuts", seed=3, settings=nuts_settings)
        cells = [f"{result.theta[i]:.4f} ± {result.theta_mc_se[i]:.4f}", f"{truth.theta[i]:.4f} ± {truth.theta_mc_se[i]:.4f}"]
        cells.append(f"{nuts.theta[0]:.4f} ± {nuts.theta_mc_se[0]:.4f}")
        rows.append(f"| {' + '.join(counts.metrics)} | {i} | " + " | ".join(cells) + " |")
    return rows


def rng_speed() -> None:
    """NumPy (PCG64) against JAX's CPU generator, per float64 variate, same run."""
    import jax

    size = 2**20
    rng = np.random.default_rng(0)
    key = jax.random.PRNGKey(0)
    print(f"\n### Random variates, ns per float64 variate ({size} at a time; `{COMMAND} rng`; {load()})\n")
    print("| variate | NumPy | JAX (jit, CPU) |")
    print("|---|---:|---:|")
    jitted = {
        "uniform": jax.jit(lambda k: jax.random.uniform(k, (size,))),
        "normal": jax.jit(lambda k: jax.random.normal(k, (size,))),
        "gamma(1.5)": jax.jit(lambda k: jax.random.gamma(k, 1.5, (size,))),
    }
    numpy_calls = {
        "uniform": lambda: rng.random(size),
        "normal": lambda: rng.standard_normal(size),
        "gamma(1.5)": lambda: rng.standard_gamma(1.5, size),
    }
    for name, call in numpy_calls.items():
        jitted[name](key).block_until_ready()
        numpy_s = min(timed(call)[0] for _ in range(5))
        jax_s = min(timed(lambda f=jitted[name]: f(key).block_until_ready())[0] for _ in range(5))
        print(f"| {name} | {numpy_s / size * 1e9:.1f} | {jax_s / size * 1e9:.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("part", choices=("agreement", "joint-agreement", "joint-speed", "joint-calibration", "speed", "rng", "all"))
    parser.add_argument("--joint-pairs", type=int, default=66, help="joint-speed: the first this many SummEval pairs")
    parser.add_argument("--no-reference", action="store_true", help="joint-speed: skip the long Gibbs reference")
    parser.add_argument(
        "--roots",
        nargs="+",
        type=Path,
        default=[ROOT],
        help="joint-speed: source trees whose decide_joint is timed (e.g. a checkout of main, then .)",
    )
    parser.add_argument("--old-route", action="store_true", help="joint-speed: also time joint_gibbs + NUTS fallback on every pair")
    parser.add_argument("--reference-pairs", type=int, default=3, help="reference pairs timed per workload")
    parser.add_argument("--repeats", type=int, default=3, help="runs of the fast call per workload (joint-calibration: seeds)")
    args = parser.parse_args()
    if args.part in ("agreement", "all"):
        agreement(SamplerSettings(), "default (decision-mode early stop)", seed=1)
        agreement(PRECISE, "PRECISE (tests/decision_fixtures.py: rounds until s.e. <= 0.003)", seed=1)
        fine = SamplerSettings().with_(is_max_rounds=24, is_target_se=0.001, is_decision_z=float("inf"))
        agreement(fine, "reference-grade (rounds until s.e. <= 0.001)", seed=1)
    if args.part in ("joint-agreement", "all"):
        joint_agreement(SamplerSettings(), "default (decision-mode early stop)", seed=1)
        fine = SamplerSettings().with_(is_target_se=0.004, is_decision_z=float("inf"), gibbs_max_iterations=12000)
        joint_agreement(fine, "reference-grade (Gibbs until s.e. <= 0.004)", seed=1)
    if args.part in ("joint-speed", "all"):
        joint_speed(args.joint_pairs, args.repeats, not args.no_reference, [r.resolve() for r in args.roots], args.old_route)
    if args.part in ("joint-calibration", "all"):
        joint_calibration(args.repeats)
    if args.part in ("rng", "all"):
        rng_speed()
    if args.part in ("speed", "all"):
        speed(args.reference_pairs, args.repeats)


if __name__ == "__main__":
    main()
