"""The questions and the cost unit on real data (issue 10, method.md §12): a table per dataset.

For each dataset (and human dimension), each question (all pairs; top-1 and top-3; one baseline:
the median system by mean human score, named in the table), human only and with the dataset's
best metric (the highest sample-level sign accuracy against the human on all items, chosen by
this script before any protocol runs), error control on and off, over S seeds: the share of the
study's judgments used (ratings for scalar studies, comparisons for pairwise ones), the paper's
pair-outcome fraction, and the agreement with the full human evaluation (error types; for top-k
exact matches, false exclusions and extras).

Usage (from the repository root; writes a markdown table and the raw summaries)::

    PYTHONPATH=. .venv/bin/python bench/bench_questions.py [--seeds 10] [--data summeval,wmt21_ted,wmt20_ende_mqm,pandalm]
        [--controls none,anytime] [--futility 0.05] [--out docs/results_questions]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from prefeval_core.runtime import configure_jax

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


@dataclass(frozen=True)
class Study:
    """One dataset and human dimension of the tables."""

    label: str
    folder: str
    human: str


STUDIES = {
    "summeval": [Study(f"SummEval {d}", "summeval", f"human:{d}") for d in ("relevance", "coherence", "consistency", "fluency")],
    "wmt21_ted": [Study("WMT21 TED en-de (MQM)", "wmt21_ted_ende_mqm", "human")],
    "wmt20_ende_mqm": [Study("WMT20 en-de (MQM)", "wmt20_ende_mqm", "human")],
    "pandalm": [Study("PandaLM (pairwise)", "pandalm", "human")],
}


def best_metric(dataset: Any, human: str) -> str | None:
    """The candidate metric with the highest sample-level sign accuracy against ``human`` (all items)."""
    from prefeval_core.pairs.counts import align_outcomes, count_triples
    from prefeval_core.pairs.preferences import pair_outcomes
    from prefeval_core.workflow.papers import default_metrics

    scores = {}
    for metric in default_metrics(dataset, human):
        table = align_outcomes(pair_outcomes(dataset, human), pair_outcomes(dataset, metric))
        K = count_triples(table, table.human >= 0).K.sum(axis=0)
        scores[metric] = float(np.trace(K) / K.sum()) if K.sum() else 0.0
    return max(scores, key=scores.__getitem__) if scores else None


def median_system(dataset: Any, human: str) -> str:
    """The system in the middle of the ranking by mean human score (or win rate, pairwise)."""
    if dataset.rater_kind(human) == "scalar":
        ratings = dataset.ratings[dataset.ratings["rater"] == human]
        means = ratings.groupby("system")["score"].mean().sort_values()
    else:
        prefs = dataset.preferences[dataset.preferences["rater"] == human]
        wins: dict[str, float] = {}
        for a, b, o in zip(prefs["system_a"], prefs["system_b"], prefs["outcome"], strict=True):
            wins[a] = wins.get(a, 0.0) + (1.0 if o == 0 else 0.5 if o == 1 else 0.0)
            wins[b] = wins.get(b, 0.0) + (1.0 if o == 2 else 0.5 if o == 1 else 0.0)
        means = dict(sorted(wins.items(), key=lambda kv: kv[1]))  # type: ignore[assignment]
        return list(means)[len(means) // 2]
    return str(means.index[len(means) // 2])


def aggregate(summaries: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Mean, min and max over seeds of the table's numbers; counts for top-k."""
    row: dict[str, Any] = {"seeds": len(summaries)}
    for field in ("cost_fraction", "annotation_fraction", "correct", "inversion", "omission", "insertion"):
        values = np.array([s[field] for s in summaries], dtype=float)
        row[field] = {"mean": float(values.mean()), "min": float(values.min()), "max": float(values.max())}
    if "exact_match" in summaries[0]:
        row["exact_match"] = int(sum(bool(s["exact_match"]) for s in summaries))
        row["false_exclusions"] = int(sum(int(s["false_exclusions"]) for s in summaries))
        row["extras"] = float(np.mean([s["extras"] for s in summaries]))
        row["reference_answer"] = summaries[0]["reference_answer"]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--data", default="summeval,wmt21_ted,wmt20_ende_mqm,pandalm")
    parser.add_argument("--controls", default="none,anytime")
    parser.add_argument("--futility", type=float, default=None, help="β of the futility stop with error control (default: the setup's)")
    parser.add_argument("--batch", type=int, default=10)
    parser.add_argument("--out", default="docs/results_questions")
    args = parser.parse_args()
    configure_jax(x64=True)

    from prefeval_core.data.dataset import load_dataset
    from prefeval_core.protocol import Question
    from prefeval_core.workflow import StudySetup, replay_json, run_replay, study_table
    from prefeval_core.workflow.setup import DEFAULT_FUTILITY

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    for key in args.data.split(","):
        for study in STUDIES[key]:
            dataset = load_dataset(SHARED / study.folder)
            metric = best_metric(dataset, study.human)
            baseline = median_system(dataset, study.human)
            questions = [Question(), Question("top-k", 1), Question("top-k", 3), Question("baseline", baselines=(baseline,))]
            for question in questions:
                for metrics in [(), (metric,)] if metric else [()]:
                    for control in args.controls.split(","):
                        futility = None if control == "none" else (DEFAULT_FUTILITY if args.futility is None else args.futility)
                        summaries = []
                        start = time.perf_counter()
                        for seed in range(args.seeds):
                            setup = StudySetup(
                                study.human, metrics=metrics, question=question, batch=args.batch, error_control=control,  # type: ignore[arg-type]
                                futility=futility, seed=seed,
                            )  # fmt: skip
                            summaries.append(replay_json(run_replay(study_table(dataset, setup), setup))["summary"])
                        row = {
                            "study": study.label, "human": study.human, "question": question.kind, "k": question.k,
                            "baseline": baseline if question.kind == "baseline" else None, "metric": metrics[0] if metrics else None,
                            "error_control": control, "futility": futility, "unit": summaries[0]["cost_unit"],
                            "cost_available": summaries[0]["cost_available"], **aggregate(summaries),
                        }  # fmt: skip
                        rows.append(row)
                        print(f"{study.label:28} {question.kind}{question.k if question.kind == 'top-k' else '':<2} "
                              f"{row['metric'] or 'human only':30} {control:8} cost {row['cost_fraction']['mean']:.3f} "
                              f"pairs {row['annotation_fraction']['mean']:.3f} correct {row['correct']['mean']:.3f} "
                              f"ins {row['insertion']['mean']:.3f} inv {row['inversion']['mean']:.3f}"
                              + (f" exact {row['exact_match']}/{args.seeds} excl {row['false_exclusions']}" if "exact_match" in row else "")
                              + f"  {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)  # fmt: skip
    (out / "questions.json").write_text(json.dumps(rows, indent=1))
    (out / "questions.md").write_text(markdown(rows, args))
    print(markdown(rows, args))


def _range(cell: dict[str, float]) -> str:
    return f"{cell['mean']:.2f} ({cell['min']:.2f}–{cell['max']:.2f})"


def markdown(rows: Sequence[dict[str, Any]], args: argparse.Namespace) -> str:
    """One table per study: rows question x metric x error control."""
    command = "PYTHONPATH=. .venv/bin/python bench/bench_questions.py " + " ".join(
        f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items() if v is not None
    )
    lines = [f"Made by `{command}`; mean (min–max) over {args.seeds} seeds; N = {args.batch}.", ""]
    for study in dict.fromkeys(r["study"] for r in rows):
        chosen = [r for r in rows if r["study"] == study]
        first = chosen[0]
        lines += [
            f"**{study}** ({first['human']}; cost in {first['unit']}, {first['cost_available']:,} in the full evaluation)",
            "",
            "| question | metric | error control | cost used | pair outcomes | correct | inversion | omission | insertion "
            "| top-k: exact / false excl. / extras |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in chosen:
            question = f"top-{r['k']}" if r["question"] == "top-k" else (f"baseline {r['baseline']}" if r["baseline"] else r["question"])
            top = f"{r['exact_match']}/{r['seeds']} / {r['false_exclusions']} / {r['extras']:.1f}" if "exact_match" in r else ""
            lines.append(
                f"| {question} | {r['metric'] or 'human only'} | {r['error_control']} | {_range(r['cost_fraction'])} | "
                f"{_range(r['annotation_fraction'])} | {r['correct']['mean']:.2f} | {r['inversion']['mean']:.3f} | "
                f"{r['omission']['mean']:.2f} | {r['insertion']['mean']:.3f} | {top} |"
            )
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
