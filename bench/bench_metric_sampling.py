"""The most a metric-guided choice of items can save, beside what the metric saves as a control variate.

method.md §13 allows items "chosen with known probabilities that depend on the metric", weighted by
their inverse (Horvitz-Thompson). With the metric's value known on every item, group the items by it
(strata ``s`` with shares ``w_s``); the human quantity ``d`` (an item's outcome +1 / 0 / -1, or its
score difference) has a spread ``sd_s`` within each. Per item, the estimate of the mean of ``d`` has
variance (all as a share of ``var(d)``, human only and uniform sampling = 1):

* ``1 - r²``: the metric as a linear control variate (what ``pool_mean_clt`` / ``pool_sign_clt`` do);
* ``within``: ``sum_s w_s sd_s²``, the metric's strata as a control variate (post-stratification: every
  function of the stratum, not only a line);
* ``neyman``: ``(sum_s w_s sd_s)²``, the strata *and* Neyman's allocation (items drawn with
  probability proportional to ``sd_s``, weighted by its inverse): the least any metric-guided
  sampling over these strata reaches, with the ``sd_s`` known in advance (an oracle).

``neyman / within`` is then what the choice of items adds to the control variate, at best.
Fewer items in proportion need the variance in proportion (a decision's cost ~ variance); a run's
cost falls by less (docs/results_question_control.md §8).

Two sources:

* §10's ideal metric (exact, from its mixture matrix): the human outcome with rates ``p`` (ties
  ``--ties``, the rest split by the net win rate ``--win``), the metric's outcome the strata;
* the shared data: every pair of SummEval relevance (the full evaluation's score differences) with
  each LLM judge's score difference, strata by its sign (``>``, ``=``, ``<``; finer strata would fit
  noise on 100 items); WMT21 TED (MQM) with its model-free metrics. Medians and quartiles over pairs.

Usage (from the repository root)::

    PYTHONPATH=. .venv/bin/python bench/bench_metric_sampling.py [--ties 0.1 0.2 0.4] [--win 0.0 0.3]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import numpy.typing as npt

from prefeval_core.data.dataset import load_dataset
from prefeval_core.protocol.question_control import full_differences
from prefeval_core.protocol.simulation import ideal_mu
from prefeval_core.protocol.table import build_study_table
from prefeval_core.vocabulary.outcomes import VALUES

FloatArray = npt.NDArray[np.float64]
SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
ACCURACIES = (0.6, 0.7, 0.8, 0.9)
JUDGES = ("gpt-4-0314-rts", "gpt-3.5-turbo-0301-rts", "llama-2-13b-chat-hf-rts")
REAL = (
    ("SummEval relevance", "summeval", "human:relevance", tuple(f"{judge}:relevance" for judge in JUDGES)),
    ("WMT21 TED", "wmt21_ted_ende_mqm", "human", ("chrF", "sentBLEU")),
)


def group_ratios(shares: FloatArray, variances: FloatArray, total: float) -> tuple[float, float]:
    """``(within, neyman)`` (module docstring) of groups with ``shares`` and within-group
    ``variances``, as shares of the quantity's ``total`` variance."""
    return float(shares @ variances) / total, float(shares @ np.sqrt(variances)) ** 2 / total


def ideal_rows(ties: float, win: float) -> list[str]:
    """Table rows for §10's ideal metric at every accuracy, human outcome rates from ``ties`` and ``win``."""
    p = np.array([(1 - ties + win) / 2, ties, (1 - ties - win) / 2])  # human >, =, <
    h = np.asarray(VALUES, dtype=np.float64)
    rows = []
    for accuracy in ACCURACIES:
        joint = np.asarray(ideal_mu(accuracy)) * p  # (metric, human), both coded +1 / 0 / -1
        shares = joint.sum(axis=1)
        means = (joint @ h) / shares
        variances = (joint @ h**2) / shares - means**2
        total = float(p @ h**2 - (p @ h) ** 2)
        r = (float(h @ joint @ h) - float(shares @ h) * float(p @ h)) / np.sqrt(total * float(shares @ h**2 - (shares @ h) ** 2))
        within, neyman = group_ratios(shares, variances, total)
        cells = (f"{1 - r**2:.3f}", f"{within:.3f}", f"{neyman:.3f}", f"{neyman / within:.4f}")
        rows.append(f"| ideal, p = ({p[0]:.2f}, {p[1]:.2f}, {p[2]:.2f}) | {accuracy} | " + " | ".join(cells) + " |")
    return rows


def pair_ratios(d: FloatArray, f: FloatArray) -> tuple[float, float, float] | None:
    """``(1 - r², within, neyman)`` of one pair's human differences ``d`` with the metric's ``f``
    (items where both are known), groups by the sign of ``f``; ``None`` if ``d`` does not vary."""
    keep = ~(np.isnan(d) | np.isnan(f))
    d, f = d[keep], f[keep]
    if len(d) < 3 or np.var(d) == 0:
        return None
    groups = [d[f > 0], d[f == 0], d[f < 0]]
    shares = np.array([len(g) / len(d) for g in groups])
    variances = np.array([g.var() if len(g) else 0.0 for g in groups])
    r2 = float(np.corrcoef(d, f)[0, 1]) ** 2 if np.var(f) > 0 else 0.0
    return (1.0 - r2, *group_ratios(shares, variances, float(np.var(d))))


def real_rows() -> list[str]:
    """Table rows for the shared data: per study and metric, quartiles over the pairs."""
    rows = []
    for label, folder, human, metrics in REAL:
        data = load_dataset(SHARED / folder)
        table = build_study_table(data, human, metrics)
        d = full_differences(table)
        assert table.metric_scores is not None
        a, b = table.pair_systems[:, 0], table.pair_systems[:, 1]
        for j, metric in enumerate(metrics):
            f = table.metric_scores[j][a] - table.metric_scores[j][b]
            ratios = np.array([r for p in range(table.n_pairs) if (r := pair_ratios(d[p], f[p])) is not None])
            cells = [" / ".join(f"{q:.3f}" for q in np.quantile(ratios[:, c], (0.25, 0.5, 0.75))) for c in range(3)]
            gain = np.quantile(ratios[:, 2] / ratios[:, 1], (0.25, 0.5, 0.75))
            cells.append(" / ".join(f"{g:.3f}" for g in gain))
            rows.append(f"| {label}, {metric.split(':')[0]} ({len(ratios)} pairs) | – | " + " | ".join(cells) + " |")
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ties", type=float, nargs="+", default=[0.1, 0.2, 0.4], help="share of human ties (ideal metric)")
    parser.add_argument("--win", type=float, nargs="+", default=[0.0, 0.3], help="net win rate p> - p< (ideal metric)")
    parser.add_argument("--no-real", action="store_true", help="only the ideal metric")
    args = parser.parse_args(argv)
    print(f"`PYTHONPATH=. .venv/bin/python bench/bench_metric_sampling.py {' '.join(sys.argv[1:])}`".replace("  ", " ").replace(" `", "`"))
    print()
    print("Variance per item as a share of human only, uniform sampling (real data: quartiles over pairs)")
    print()
    columns = ("metric", "sign accuracy", "1 − r² (control variate)", "within groups", "groups + Neyman allocation", "Neyman / within")
    print("| " + " | ".join(columns) + " |")
    print("|---|---|---|---|---|---|")
    for ties in args.ties:
        for win in args.win:
            print("\n".join(ideal_rows(ties, win)))
    if not args.no_real:
        print("\n".join(real_rows()))


if __name__ == "__main__":
    main()
