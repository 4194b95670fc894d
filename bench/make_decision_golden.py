"""Make ``tests/golden/decision_reference.json``: reference (NumPyro NUTS, paper settings) values on fixed count settings.

Run once (takes minutes per setting on 2 cores; one heavy job at a time):

    nohup .venv/bin/python bench/make_decision_golden.py > /tmp/golden.log 2>&1 &

Each setting is built from a true outcome rate ``p``, a mixture matrix ``mu`` (rows = metric,
columns = human), a number of revealed human items and of metric-only items, as rounded
expected counts: ``K[c, h] = round(N_h p[h] mu[c, h])``, ``n = K.sum(0)`` (the metric rated every
revealed item), ``m = round(M mu @ p)``. Settings may override ``n``/``K``/``m`` directly.
The file stores the counts, so the tests never rebuild them.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from prefeval_core.runtime import configure_jax  # noqa: E402

configure_jax(x64=True, host_devices=5)

import numpy as np  # noqa: E402

from prefeval_core.decision.exact import enumerate_posterior, human_only_theta  # noqa: E402
from prefeval_core.decision.reference import nuts_posterior  # noqa: E402
from prefeval_core.decision.settings import SamplerSettings  # noqa: E402

OUT = ROOT / "tests" / "golden" / "decision_reference.json"
SEED = 20261121

GOOD = [[0.8, 0.25, 0.1], [0.1, 0.5, 0.1], [0.1, 0.25, 0.8]]  # the ideal metric of method.md §10
OK = [[0.6, 0.3, 0.2], [0.2, 0.4, 0.2], [0.2, 0.3, 0.6]]
USELESS = [[0.34, 0.33, 0.33], [0.33, 0.34, 0.33], [0.33, 0.33, 0.34]]  # columns almost equal
TIES_TO_A = [[0.8, 0.8, 0.1], [0.1, 0.1, 0.1], [0.1, 0.1, 0.8]]  # says '>' on 80% of human ties
NEVER_TIE = [[0.9, 0.5, 0.1], [0.0, 0.0, 0.0], [0.1, 0.5, 0.9]]  # never says '='
FAVOURS_A = [[0.9, 0.6, 0.3], [0.05, 0.3, 0.2], [0.05, 0.1, 0.5]]  # strongly favours A

CLOSE = [0.42, 0.2, 0.38]
MODERATE = [0.45, 0.2, 0.35]
STRONG = [0.6, 0.1, 0.3]

# name, p, mu, revealed human items, metric-only items, known mu?, overrides
SETTINGS: list[tuple[str, list[float], list[list[float]], int, int, bool, dict]] = [
    ("human_only_100", MODERATE, GOOD, 100, 0, False, {}),
    ("human_only_all_ties", MODERATE, GOOD, 0, 0, False, {"n": [0, 30, 0]}),
    ("good_100_10900", CLOSE, GOOD, 100, 10900, False, {}),
    ("good_500_500", MODERATE, GOOD, 500, 500, False, {}),
    ("ok_10_1000", MODERATE, OK, 10, 1000, False, {}),
    ("ties_to_a_100_1000", CLOSE, TIES_TO_A, 100, 1000, False, {}),
    ("useless_100_1000", MODERATE, USELESS, 100, 1000, False, {}),
    ("useless_20_10900", MODERATE, USELESS, 20, 10900, False, {}),
    ("good_20_10900", MODERATE, GOOD, 20, 10900, False, {}),
    ("ok_20_10900", CLOSE, OK, 20, 10900, False, {}),
    ("ok_10_90", MODERATE, OK, 10, 90, False, {}),
    ("good_20_80", STRONG, GOOD, 20, 80, False, {}),
    ("no_human_0_200", MODERATE, GOOD, 0, 200, False, {}),
    ("never_tie_50_500", MODERATE, NEVER_TIE, 50, 500, False, {}),
    ("human_all_ties_good_500", MODERATE, GOOD, 0, 500, False, {"n": [0, 20, 0], "K": [[0, 5, 0], [0, 10, 0], [0, 5, 0]]}),
    ("favours_a_50_2000", [0.4, 0.2, 0.4], FAVOURS_A, 50, 2000, False, {}),
    ("good_5_5000", MODERATE, GOOD, 5, 5000, False, {}),
    ("known_good_20_10900", MODERATE, GOOD, 20, 10900, True, {}),
    ("known_ok_10_1000", CLOSE, OK, 10, 1000, True, {}),
    ("good_1000_20000", CLOSE, GOOD, 1000, 20000, False, {}),
    ("ok_50_150", MODERATE, OK, 50, 150, False, {}),
    ("near_threshold_100_400", [0.5, 0.15, 0.35], OK, 100, 400, False, {}),
    ("good_200_2000", CLOSE, GOOD, 200, 2000, False, {}),
    ("issue_example", MODERATE, GOOD, 0, 0, False, {"n": [40, 10, 50], "K": [[30, 5, 2], [6, 3, 4], [4, 2, 44]], "m": [500, 100, 400]}),
]


def counts_of(p, mu, humans: int, metric_only: int, overrides: dict) -> tuple[list[int], list[list[int]], list[int]]:
    p_arr = np.asarray(p, dtype=float)
    mu_arr = np.asarray(mu, dtype=float)
    K = np.rint(humans * mu_arr * p_arr[None, :]).astype(int)
    n = K.sum(axis=0)
    m = np.rint(metric_only * (mu_arr @ p_arr)).astype(int)
    K = np.asarray(overrides.get("K", K))
    n = np.asarray(overrides.get("n", n))
    m = np.asarray(overrides.get("m", m))
    return n.tolist(), K.tolist(), m.tolist()


def main() -> None:
    settings = SamplerSettings.paper()
    done = {row["name"]: row for row in json.loads(OUT.read_text())["cases"]} if OUT.exists() else {}
    rows = []
    for name, p, mu, humans, metric_only, known, overrides in SETTINGS:
        n, K, m = counts_of(p, mu, humans, metric_only, overrides)
        mu_known = mu if known else None
        if name in done and (done[name]["n"], done[name]["K"], done[name]["m"], done[name]["mu"]) == (n, K, m, mu_known):
            rows.append(done[name])
            continue
        start = time.perf_counter()
        ref = nuts_posterior([n], [K], [m], None if mu_known is None else [mu_known], seed=SEED, settings=settings)
        seconds = time.perf_counter() - start
        row = {
            "name": name,
            "n": n,
            "K": K,
            "m": m,
            "mu": mu_known,
            "theta_ref": float(ref.theta[0]),
            "theta_ref_se": float(ref.theta_mc_se[0]),
            "ess": None if np.isnan(ref.ess[0]) else float(ref.ess[0]),
            "rhat": float(ref.rhat[0]),
            "divergences": int(ref.divergences[0]),
            "p_mean_ref": ref.p_mean[0].tolist(),
            "seconds": round(seconds, 1),
        }
        if sum(m) == 0:
            row["theta_exact"] = float(human_only_theta(n))
        elif sum(m) <= 300:
            row["theta_exact"] = enumerate_posterior(n, K, m, mu_known).theta
        rows.append(row)
        print(json.dumps(row), flush=True)
        write(rows, settings)
    write(rows, settings)


def write(rows: list[dict], settings: SamplerSettings) -> None:
    document = {
        "description": "NumPyro NUTS reference values of theta = P(p> > p<) (method.md §4), made by bench/make_decision_golden.py",
        "sampler": "nuts",
        "sampler_settings": {k: settings.as_dict()[k] for k in ("nuts_chains", "nuts_warmup", "nuts_draws", "nuts_target_accept")},
        "seed": SEED,
        "note": "theta_exact: closed form (m = 0) or exact enumeration (sum(m) <= 300), where available",
        "cases": rows,
    }
    OUT.write_text(json.dumps(document, indent=1) + "\n")


if __name__ == "__main__":
    main()
