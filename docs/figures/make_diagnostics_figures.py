"""Regenerate the figures and headline numbers of docs/results.md (Part 2).

Run from the repository root (needs kaleido and /usr/bin/chromium for the PNGs):

    .venv/bin/python docs/figures/make_diagnostics_figures.py [SHARED_DATA_DIR]

Prints the headline numbers as Markdown; writes PNGs next to this file. The protocol DAGs use
the ``replay`` command's stable JSON (seed 0, default settings).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import kaleido
import numpy as np

from prefeval_core.data.dataset import load_dataset
from prefeval_core.diagnostics.metric_report import MetricReport, metric_report
from prefeval_core.figures.confusion import confusion_heatmap
from prefeval_core.figures.dag import dag_figure
from prefeval_core.figures.favi import favi_box_plot
from prefeval_core.figures.metrics import kendall_tau_bars, sign_accuracy_bars
from prefeval_core.vocabulary.outcomes import SYMBOLS

OUT = Path(__file__).resolve().parent
DATA = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[3] / "shared" / "data"


def protocol_outcomes(dataset_dir: Path, human: str, metric: str, pairs: tuple[tuple[str, str], ...]) -> np.ndarray:
    command = [sys.executable, "-m", "prefeval_core", "replay", "--data", str(dataset_dir), "--human", human, "--metric", metric]
    replay = json.loads(subprocess.run([*command, "--seed", "0", "--json"], check=True, capture_output=True, text=True).stdout)
    codes = {(p["system_a"], p["system_b"]): SYMBOLS.index(p["outcome"]) for p in replay["pairs"]}
    return np.array([codes[pair] for pair in pairs], dtype=np.int8)


def slug(name: str) -> str:
    return name.replace(":", "_").replace(".", "_")


def save(figure, name: str, width: int = 1100) -> None:
    figure.write_image(OUT / f"{name}.png", width=width, scale=1)


def headline(report: MetricReport) -> str:
    kendall = report.kendall
    tau = "n/a" if kendall is None else f"{kendall.tau:.3f} / {kendall.tau_grouped:.3f} ({kendall.segments})"
    types = report.dags.naive_error_types
    freq = {t: int(np.sum(types == t)) for t in ("correct_significant", "correct_undecided", "inversion", "omission", "insertion")}
    undefined = int(np.isnan(report.favi).sum())
    return (
        f"| {report.metric} vs {report.human} | {len(report.pairs)} | {report.sign.sample:.3f} | {report.sign.system:.3f} | "
        f"{report.mean_abs_favi:.3f} ± {report.std_abs_favi:.3f} | {undefined} | {tau} | "
        f"{freq['correct_significant'] + freq['correct_undecided']}/{freq['inversion']}/{freq['omission']}/{freq['insertion']} | "
        f"{len(report.dags.metric.cycles)} |"
    )


def main() -> None:
    kaleido.start_sync_server()
    try:
        rows = []
        summeval_dir = DATA / "summeval"
        summeval = load_dataset(summeval_dir)
        summeval_reports = []
        for metric in ("rougeL", "gpt-4-0314-rts:relevance"):
            base = metric_report(summeval, "human:relevance", metric)
            report = metric_report(
                summeval,
                "human:relevance",
                metric,
                protocol_outcomes=protocol_outcomes(summeval_dir, "human:relevance", metric, base.pairs),
            )
            summeval_reports.append(report)
            rows.append(headline(report))
            name = f"summeval_relevance_{slug(metric)}"
            save(favi_box_plot(report.systems, metric=metric, human=report.human), f"{name}_favi_box")
            save(
                dag_figure(report.dags.human, title=f"Human reference DAG (human:relevance, {len(report.pairs)} pairs)"),
                f"{name}_dag_human",
            )
            save(
                dag_figure(report.dags.metric, title=f"Naive metric DAG ({metric}, sign test)", reference=report.dags.human),
                f"{name}_dag_naive",
            )
            assert report.dags.protocol is not None
            save(
                dag_figure(report.dags.protocol, title=f"Protocol DAG ({metric}, replay seed 0)", reference=report.dags.human),
                f"{name}_dag_protocol",
            )
            protocol_types = report.dags.protocol_error_types
            assert protocol_types is not None
            counts = {t: int(np.sum(protocol_types == t)) for t in ("inversion", "omission", "insertion")}
            print(f"protocol {metric}: {counts}, cycles {len(report.dags.protocol.cycles)}")
        for human in ("human:consistency",):
            report = metric_report(summeval, human, "rougeL")
            rows.append(headline(report))
            save(favi_box_plot(report.systems, metric="rougeL", human=human), "summeval_consistency_rougeL_favi_box")
        save(sign_accuracy_bars(summeval_reports), "summeval_relevance_sign_accuracy")
        save(kendall_tau_bars([r.kendall for r in summeval_reports if r.kendall is not None]), "summeval_relevance_kendall")
        pandalm = load_dataset(DATA / "pandalm")
        pandalm_reports = []
        for metric in ("gpt-3.5-turbo", "pandalm-7b"):
            report = metric_report(pandalm, "human", metric)
            pandalm_reports.append(report)
            rows.append(headline(report))
            name = f"pandalm_{slug(metric)}"
            save(favi_box_plot(report.systems, metric=metric, human="human"), f"{name}_favi_box")
            save(
                dag_figure(report.dags.metric, title=f"Naive metric DAG ({metric}, sign test)", reference=report.dags.human),
                f"{name}_dag_naive",
            )
            pooled = report.confusions.K.sum(axis=0)
            print(f"pandalm {metric} pooled confusion (rows metric, cols human, > = <): {pooled.tolist()}")
            for (a, b), favi, (low, high), errors in zip(
                report.pairs, report.favi, report.favi_posterior.interval, report.errors, strict=True
            ):
                print(f"  {a} vs {b}: F = {favi:+.3f} [{low:+.2f}, {high:+.2f}] over {errors} errors")
            worst = int(np.nanargmax(np.abs(report.favi)))
            save(
                confusion_heatmap(report.confusions.K[worst], *report.pairs[worst], metric=metric, human="human"), f"{name}_confusion_worst"
            )
        save(dag_figure(pandalm_reports[0].dags.human, title="Human reference DAG (PandaLM, human majority)"), "pandalm_dag_human")
        save(sign_accuracy_bars(pandalm_reports), "pandalm_sign_accuracy")
    finally:
        kaleido.stop_sync_server()
    print(
        "| metric vs human | pairs | sample acc. | system acc. | mean abs F ± sd | F undefined "
        "| Kendall tau-b / grouped (segments) | naive DAG corr/inv/omi/ins | cycles |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
