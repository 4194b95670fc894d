"""Make ``tests/golden/joint_reference.json``: NUTS reference values of the several-metric model.

The model is :func:`prefeval_core.decision.model.joint_preference_model` (Dawid–Skene: one
mixture matrix per metric, metrics conditionally independent given the true outcome;
docs/model.md), run with the paper's settings (5 chains, 2000 warm-up, 10000 draws per chain).
Run once, in the background (minutes per setting on 2 cores; one heavy job at a time):

    nohup .venv/bin/python bench/make_joint_golden.py > /tmp/joint_golden.log 2>&1 &

Each setting is built from a true outcome rate ``p``, one mixture matrix per metric (rows =
metric, columns = human), the share of items each metric rated, and the numbers of revealed
and unrevealed items, as rounded expected counts: an item with true outcome ``h`` shows the
pattern ``c = (c_1..c_k)`` with probability ``prod_j (s_j mu_j[c_j, h] if c_j < 3 else 1 - s_j)``;
``revealed[c, h] = round(R p_h P(c | h))`` and ``unrevealed[c] = round(U sum_h p_h P(c | h))``.
The file stores the counts (:class:`~prefeval_core.pairs.counts.JointCounts` layout), so the tests
never rebuild them. Settings already in the file with the same counts are kept.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from prefeval_core.runtime import configure_jax  # noqa: E402

configure_jax(x64=True, host_devices=5)

import numpy as np  # noqa: E402
from make_decision_golden import CLOSE, FAVOURS_A, GOOD, MODERATE, NEVER_TIE, OK, STRONG, TIES_TO_A, USELESS  # noqa: E402

from prefeval_core.decision.joint_data import joint_inputs  # noqa: E402
from prefeval_core.decision.reference import joint_nuts_draws, summarise_draws  # noqa: E402
from prefeval_core.decision.settings import SamplerSettings  # noqa: E402
from prefeval_core.pairs.counts import JointCounts, pattern_codes  # noqa: E402

OUT = ROOT / "tests" / "golden" / "joint_reference.json"
SEED = 20261123

WEAK = [[0.5, 0.3, 0.3], [0.2, 0.4, 0.2], [0.3, 0.3, 0.5]]
EVEN = [0.4, 0.2, 0.4]

# name, p, mixture matrices, share of items each metric rated, revealed items, unrevealed items
SETTINGS: list[tuple[str, list[float], list[list[list[float]]], list[float], int, int]] = [
    ("k2_good_ok_20_1000", MODERATE, [GOOD, OK], [1.0, 1.0], 20, 1000),
    ("k2_good_useless_20_1000", CLOSE, [GOOD, USELESS], [1.0, 1.0], 20, 1000),
    ("k2_ok_ok_10_200", MODERATE, [OK, OK], [1.0, 1.0], 10, 200),
    ("k2_good_good_50_5000", CLOSE, [GOOD, GOOD], [1.0, 1.0], 50, 5000),
    ("k2_favours_a_good_50_2000", EVEN, [FAVOURS_A, GOOD], [1.0, 1.0], 50, 2000),
    ("k2_never_tie_ok_30_500", MODERATE, [NEVER_TIE, OK], [1.0, 1.0], 30, 500),
    ("k2_missing_good_ok_40_1000", MODERATE, [GOOD, OK], [0.7, 0.6], 40, 1000),
    ("k2_ok_weak_100_1000", CLOSE, [OK, WEAK], [1.0, 1.0], 100, 1000),
    ("k2_no_human_0_500", MODERATE, [OK, GOOD], [1.0, 1.0], 0, 500),
    ("k2_near_threshold_100_400", [0.5, 0.15, 0.35], [OK, WEAK], [1.0, 1.0], 100, 400),
    ("k2_ok_ok_20_10900", MODERATE, [OK, OK], [1.0, 1.0], 20, 10900),
    ("k2_ties_to_a_ok_100_1000", CLOSE, [TIES_TO_A, OK], [1.0, 1.0], 100, 1000),
    ("k3_good_ok_useless_20_1000", MODERATE, [GOOD, OK, USELESS], [1.0, 1.0, 1.0], 20, 1000),
    ("k3_ok_ok_ok_20_300", MODERATE, [OK, OK, OK], [1.0, 1.0, 1.0], 20, 300),
    ("k3_ok_ok_ok_10_3000", CLOSE, [OK, OK, OK], [1.0, 1.0, 1.0], 10, 3000),
    ("k3_good_ok_favours_a_50_2000", EVEN, [GOOD, OK, FAVOURS_A], [1.0, 1.0, 1.0], 50, 2000),
    ("k3_missing_ok_ok_good_30_1000", MODERATE, [OK, OK, GOOD], [0.5, 0.8, 0.5], 30, 1000),
    ("k3_ties_to_a_ok_good_100_1000", CLOSE, [TIES_TO_A, OK, GOOD], [1.0, 1.0, 1.0], 100, 1000),
    ("k3_weak_10_60", MODERATE, [WEAK, WEAK, OK], [1.0, 1.0, 1.0], 10, 60),
    ("k3_strong_ok_20_500", STRONG, [OK, OK, WEAK], [1.0, 1.0, 1.0], 20, 500),
    ("k3_near_threshold_60_300", [0.5, 0.15, 0.35], [OK, WEAK, WEAK], [1.0, 1.0, 1.0], 60, 300),
    ("k3_ok_weak_weak_20_10900", CLOSE, [OK, WEAK, WEAK], [1.0, 1.0, 1.0], 20, 10900),
    ("k3_missing_heavy_weak_5_5000", MODERATE, [OK, WEAK, GOOD], [0.6, 0.6, 0.3], 5, 5000),
]


def joint_counts_of(p: list[float], mus: list[list[list[float]]], shares: list[float], revealed: int, unrevealed: int) -> JointCounts:
    """Rounded expected counts of one pair (module docstring)."""
    k = len(mus)
    codes = pattern_codes(k)  # (J, k)
    mu = np.asarray(mus, dtype=float)  # (k, c, h)
    share = np.asarray(shares, dtype=float)
    likelihood = np.ones((len(codes), 3))
    for j in range(k):
        present = codes[:, j] < 3
        rows = mu[j][np.minimum(codes[:, j], 2)]  # (J, h)
        likelihood *= np.where(present[:, None], share[j] * rows, 1.0 - share[j])
    joint = likelihood * np.asarray(p)[None, :]  # (J, h): P(c, h)
    revealed_counts = np.rint(revealed * joint).astype(np.int64)
    unrevealed_counts = np.rint(unrevealed * joint.sum(axis=1)).astype(np.int64)
    unrevealed_counts[-1] = 0  # no metric: carries nothing
    return JointCounts(tuple(f"m{j}" for j in range(k)), revealed_counts[None], unrevealed_counts[None])


def main() -> None:
    settings = SamplerSettings.paper()
    done = {row["name"]: row for row in json.loads(OUT.read_text())["cases"]} if OUT.exists() else {}
    rows = []
    for name, p, mus, shares, revealed, unrevealed in SETTINGS:
        counts = joint_counts_of(p, mus, shares, revealed, unrevealed)
        stored = {"revealed": counts.revealed[0].tolist(), "unrevealed": counts.unrevealed[0].tolist()}
        if name in done and all(done[name][key] == value for key, value in stored.items()):
            rows.append(done[name])
            continue
        inputs = joint_inputs(counts)
        start = time.perf_counter()
        draws = joint_nuts_draws(inputs.n, inputs.K, inputs.patterns, inputs.u, seed=SEED, settings=settings)
        ref = summarise_draws(draws.p, draws.divergences, draws.chain_method)
        row = {
            "name": name,
            "k": len(mus),
            **stored,
            "theta_ref": float(ref.theta[0]),
            "theta_ref_se": float(ref.theta_mc_se[0]),
            "ess": None if np.isnan(ref.ess[0]) else float(ref.ess[0]),
            "rhat": float(ref.rhat[0]),
            "divergences": int(ref.divergences[0]),
            "p_mean_ref": ref.p_mean[0].tolist(),
            "seconds": round(time.perf_counter() - start, 1),
        }
        rows.append(row)
        print(json.dumps({key: row[key] for key in ("name", "theta_ref", "theta_ref_se", "rhat", "divergences", "seconds")}), flush=True)
        write(rows, settings)
    write(rows, settings)


def write(rows: list[dict], settings: SamplerSettings) -> None:
    document = {
        "description": "NumPyro NUTS reference values of theta = P(p> > p<) under the several-metric model (docs/model.md), "
        "made by bench/make_joint_golden.py",
        "sampler": "nuts",
        "sampler_settings": {k: settings.as_dict()[k] for k in ("nuts_chains", "nuts_warmup", "nuts_draws", "nuts_target_accept")},
        "seed": SEED,
        "layout": "revealed (4**k, 3) by metric pattern sum_j code_j 4**j (3 = no outcome) and human outcome; unrevealed (4**k,)",
        "cases": rows,
    }
    OUT.write_text(json.dumps(document, indent=1) + "\n")


if __name__ == "__main__":
    main()
