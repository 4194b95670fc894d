"""The default route of a study, end to end as processes (issue 22 items 5-6): prints figures, asserts nothing.

The workloads, each run as ``python -m prefeval_core replay ...`` with the default settings
(since round 3 error control ``question`` with the ``pool_mean`` statistic; before, ``spending``;
the full model, the fast sampler) in a fresh process, wall time and
peak resident memory (``ru_maxrss`` of the child), for every checkout given with ``--roots``
(the first is "before": e.g. ``/work/main`` against this branch, same run, same machine):

1. ``round``: one round on 100 systems (4,950 pairs), 500 items each with the metric's score,
   the human's on 100 of them (``--human-fraction 0.2``: 100 human + 400 metric-only items per
   pair), ``--max-rounds 1``. Target < 5 s, < 500 MB.
2. ``heldout``: the held-out-style replay, 10 systems (45 pairs), 500 items, human on 25 of them
   (``--human-fraction 0.05``: 475 metric-only items per pair), to the end. Target < 3 s.
3. ``round-none``: workload 1 with ``--error-control none`` (the posterior decides; for reference);
   ``round-spending``, ``heldout-spending``: workloads 1 and 2 with round 2's per-pair rule
   (``--error-control spending``, the sign statistic), the default before round 3.
4. ``metrics3``, ``metrics3-none``: several metrics at once, on the shared SummEval data
   (``human:relevance`` with rougeL, bleu and chrF, 16 systems, 120 pairs), to the end, defaults
   and ``--error-control none`` (there the several-metric posterior decides every round:
   ``joint_gibbs``, NUTS for pairs whose chains fail their checks). The figure that matters is
   the engine's time per round (target < 1 s).
5. ``metrics3-66-none``, ``metrics3-66``: ``metrics3-none`` and ``metrics3`` on the first 12 systems
   (66 pairs: the size of the issue's target), written once to ``--workdir`` from the shared data.

``--vary-seed`` runs repeat ``r`` with ``--seed r`` (the protocol's reveal order and the samplers'
streams), so that the repeats show the spread over orders rather than one order's timing noise.

Data are synthetic and seeded (written once to ``--workdir``): per system a latent quality
N(0, 0.3²); human score = quality + item effect N(0, 1) + noise N(0, 1); metric = human + N(0, 0.7²);
tie thresholds 0.1.

Usage (from the repository root)::

    .venv/bin/python bench/bench_default_route.py [--roots /work/main .] [--repeats 3] [--only round heldout]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

WORKLOADS: dict[str, tuple[int, int, float, list[str]]] = {
    "round": (100, 500, 0.2, ["--max-rounds", "1"]),
    "heldout": (10, 500, 0.05, []),
    "round-none": (100, 500, 0.2, ["--max-rounds", "1", "--error-control", "none"]),
    "round-spending": (100, 500, 0.2, ["--max-rounds", "1", "--error-control", "spending"]),
    "heldout-spending": (10, 500, 0.05, ["--error-control", "spending"]),
}
"""name -> (systems, items, human fraction, extra replay options)."""
SHARED: Path = Path(__file__).resolve().parents[2] / "shared" / "data"
SHARED_WORKLOADS: dict[str, list[str]] = {
    "metrics3": [
        "--data",
        str(SHARED / "summeval"),
        "--human",
        "human:relevance",
        "--metric",
        "rougeL,bleu,chrF",
    ],
}
SHARED_WORKLOADS["metrics3-none"] = [*SHARED_WORKLOADS["metrics3"], "--error-control", "none"]
SUBSET_WORKLOADS: dict[str, tuple[int, list[str]]] = {
    "metrics3-66-none": (12, SHARED_WORKLOADS["metrics3-none"]),
    "metrics3-66": (12, SHARED_WORKLOADS["metrics3"]),
}
"""name -> (the first systems kept, a shared workload's options): that workload on a subset of its systems."""
"""name -> replay options, on the shared data (``../shared/data`` beside the project)."""


def write_ratings(path: Path, systems: int, items: int, seed: int = 0) -> None:
    """Long ratings (``item_id, system, rater, score``) of a human and a metric (see the module docstring)."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(0.0, 0.3, systems)
    human = quality[:, None] + rng.normal(0.0, 1.0, items)[None, :] + rng.normal(0.0, 1.0, (systems, items))
    metric = human + rng.normal(0.0, 0.7, (systems, items))
    system, item = np.meshgrid(np.arange(systems), np.arange(items), indexing="ij")
    with path.open("w") as out:
        out.write("item_id,system,rater,score\n")
        for rater, scores in (("human", human), ("metric", metric)):
            for s, i, v in zip(system.ravel(), item.ravel(), scores.ravel(), strict=True):
                out.write(f"i{i},S{s:03d},{rater},{v:.6f}\n")


def replay_argv(data: Path, fraction: float, extra: list[str]) -> list[str]:
    return [
        "-m", "prefeval_core", "replay", "--data", str(data), "--human", "human", "--metric", "metric",
        "--eps", "0.1", "--eps-human", "0.1", "--human-fraction", str(fraction), "--json", *extra,
    ]  # fmt: skip


@dataclass(frozen=True)
class Run:
    """One process: wall and CPU (user + system) seconds, peak resident MB, and the engine's own
    wall time (``summary.wall_s`` of ``replay --json``: the protocol loop, without imports and loading)."""

    wall_s: float
    cpu_s: float
    peak_mb: float
    engine_s: float
    rounds: float


def run(root: Path, argv: list[str]) -> Run:
    """``python argv`` in a fresh process with ``root`` first on the path."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    code = (
        "import json, resource, subprocess, sys, time; t = time.perf_counter(); "
        "out = subprocess.run(sys.argv[1:], check=True, capture_output=True, text=True).stdout; "
        "wall = time.perf_counter() - t; use = resource.getrusage(resource.RUSAGE_CHILDREN); "
        "summary = json.loads(out)['summary']; "
        "print(wall, use.ru_utime + use.ru_stime, use.ru_maxrss / 1024, summary['wall_s'], summary['rounds'])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, sys.executable, *argv], cwd=root, env=env, check=True, capture_output=True, text=True
    )
    return Run(*(float(v) for v in done.stdout.split()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--roots", nargs="+", type=Path, default=[Path(__file__).resolve().parents[1]])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--only", nargs="+", choices=sorted([*WORKLOADS, *SHARED_WORKLOADS, *SUBSET_WORKLOADS]), default=["round", "heldout", "round-none"]
    )
    parser.add_argument("--vary-seed", action="store_true", help="repeat r runs with --seed r")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/prefeval-bench-default-route"))
    args = parser.parse_args()
    print(f"command: {' '.join([Path(sys.executable).name, *sys.argv])}")
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    print("Per checkout: process wall s (median; each run) / CPU s / engine s (median; per round) / peak MB (max)")
    print("ratio: median wall, first / last")
    print("| workload | " + " | ".join(str(root) for root in args.roots) + " | ratio |")
    print("|---|" + "---|" * len(args.roots) + "---:|")
    for name in args.only:
        cells, medians = [], []
        for root in args.roots:
            seeds = [["--seed", str(r)] if args.vary_seed else [] for r in range(args.repeats)]
            runs = [run(root.resolve(), _argv(name, args.workdir) + seed) for seed in seeds]
            wall = statistics.median(r.wall_s for r in runs)
            engine = statistics.median(r.engine_s for r in runs)
            medians.append(wall)
            cells.append(
                f"{wall:.2f} ({', '.join(f'{r.wall_s:.1f}' for r in runs)}) / {statistics.median(r.cpu_s for r in runs):.1f} / "
                f"{engine:.2f} ({engine / max(runs[0].rounds, 1):.2f} per round) / {max(r.peak_mb for r in runs):.0f} MB"
            )
        ratio = f"{medians[0] / medians[-1]:.1f}x" if len(medians) > 1 else ""
        print(f"| {name} | " + " | ".join(cells) + f" | {ratio} |", flush=True)


def _argv(name: str, workdir: Path) -> list[str]:
    """The replay command of a workload (its synthetic data written once to ``workdir``)."""
    if name in SHARED_WORKLOADS:
        return ["-m", "prefeval_core", "replay", *SHARED_WORKLOADS[name], "--json"]
    if name in SUBSET_WORKLOADS:
        return _subset_argv(name, workdir)
    systems, items, fraction, extra = WORKLOADS[name]
    data = workdir / f"s{systems}_i{items}" / "ratings.csv"
    if not data.exists():
        data.parent.mkdir(parents=True, exist_ok=True)
        write_ratings(data, systems, items)
    return replay_argv(data.parent, fraction, extra)


def _subset_argv(name: str, workdir: Path) -> list[str]:
    """A shared workload on its first systems (SummEval's numeric order: M0, M1, M2, M5, ...), its
    human and metric ratings written once to ``workdir``."""
    import pandas as pd

    keep, options = SUBSET_WORKLOADS[name]
    data, rest = Path(options[options.index("--data") + 1]), list(options)
    raters = [options[options.index("--human") + 1], *options[options.index("--metric") + 1].split(",")]
    target = workdir / name / "ratings.csv"
    if not target.exists():
        ratings = pd.read_csv(data / "ratings.csv")
        systems = sorted(ratings["system"].unique(), key=lambda s: (len(s), s))[:keep]
        target.parent.mkdir(parents=True, exist_ok=True)
        ratings[ratings["system"].isin(systems) & ratings["rater"].isin(raters)].to_csv(target, index=False)
    rest[rest.index("--data") + 1] = str(target.parent)
    return ["-m", "prefeval_core", "replay", *rest, "--json"]


if __name__ == "__main__":
    main()
