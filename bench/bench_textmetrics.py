"""Meta-evaluation and cost of the text metrics on SummEval (issue 7; method.md §9, §11).

Computes, for the 1,600 SummEval summaries (100 documents x 16 systems), sentence BLEU and
chrF against all 11 references, TER against the first reference only (TER with shifts costs
about 0.1 s per reference here), the embedding similarity and the SEScore2-style metric
(shipped model, whole texts and sentence by sentence; an ablation trained without severity, and one trained on the TED sources
only, i.e. without the SummEval articles' sentences) against all 11 references (best
reference), and reports segment-level Kendall tau-b (overall and grouped by item) against
each human dimension, next to the dataset's own rougeL/bleu/chrF columns. Also prints the
cost: training time and model size of the ablation (trained here, same corpus and seed as
the shipped model), encoding and scoring throughput.

    .venv/bin/python bench/bench_textmetrics.py [--items N] [--out bench/out/textmetrics.json]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from prefeval_core.data.dataset import load_dataset  # noqa: E402
from prefeval_core.diagnostics.kendall import kendall_tau  # noqa: E402
from prefeval_core.textmetrics.embedding import load_encoder  # noqa: E402
from prefeval_core.textmetrics.rate import align_segments, metric_scores  # noqa: E402
from prefeval_core.textmetrics.sescore2.corpus import DEFAULT_CORPUS, corpus_sentences, read_corpus  # noqa: E402
from prefeval_core.textmetrics.sescore2.score import DEFAULT_MODEL, load_model, save_model, sentence_level_scores, sescore2_scores  # noqa: E402
from prefeval_core.textmetrics.sescore2.train import TrainingConfig, train_sescore2  # noqa: E402

HUMAN = ("human:coherence", "human:consistency", "human:fluency", "human:relevance")
DATA_METRICS = ("rougeL", "bleu", "chrF")


def timed(function, *args, **kwargs):
    started = time.perf_counter()
    value = function(*args, **kwargs)
    return value, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "summeval"))
    parser.add_argument("--items", type=int, help="only the first N documents (quick runs)")
    parser.add_argument("--corpus-limit", type=int, help="train the ablation on the first N corpus sentences only (quick runs)")
    parser.add_argument("--out", default=str(ROOT / "bench" / "out" / "textmetrics.json"))
    args = parser.parse_args()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)

    dataset = load_dataset(args.data)
    texts = dataset.texts
    if args.items:
        texts = texts[texts["item_id"].isin(dataset.items[: args.items])]
    segments = align_segments(texts, dataset.references)
    first_reference = align_segments(texts, dataset.references, max_references=1)
    n = len(segments.hypotheses)
    cost: dict[str, float] = {"segments": n}
    scores: dict[str, object] = {}

    for metric in ("bleu", "chrf"):
        scores[f"{metric}-ref"], seconds = timed(metric_scores, segments, metric)
        cost[f"{metric}_segments_per_s"] = n / seconds
    scores["ter-ref1"], seconds = timed(metric_scores, first_reference, "ter")
    cost["ter_1ref_segments_per_s"] = n / seconds

    encoder, cost["encoder_load_s"] = timed(load_encoder)
    unique_texts = len(set(segments.hypotheses) | {r for refs in segments.references for r in refs})
    scores["embed-ref"], seconds = timed(metric_scores, segments, "embed", encoder, show_progress=True)
    cost["encode_texts_per_s"] = unique_texts / seconds
    cost["embed_segments_per_s_with_encoding"] = n / seconds

    shipped = load_model(DEFAULT_MODEL)
    scores["sescore2-ref"], seconds = timed(sescore2_scores, shipped, encoder, segments.hypotheses, segments.references)
    cost["sescore2_segments_per_s_cached_embeddings"] = n / seconds
    cost["sescore2_segments_per_s_with_encoding"] = n / (seconds + unique_texts / cost["encode_texts_per_s"])
    scores["sescore2-sentences-ref"], seconds = timed(sentence_level_scores, shipped, encoder, segments.hypotheses, segments.references)
    cost["sescore2_sentence_level_segments_per_s_with_encoding"] = n / seconds

    config = dataclasses.replace(TrainingConfig(), severity=False)
    corpus = read_corpus(DEFAULT_CORPUS)[: args.corpus_limit]
    ablation, cost["train_no_severity_s"] = timed(train_sescore2, corpus, encoder, config, 0, True, DEFAULT_CORPUS.name)
    ablation_file = out.parent / "sescore2-en-no-severity.npz"
    save_model(ablation, ablation_file)
    cost["model_kib"] = ablation_file.stat().st_size / 1024
    cost["shipped_model_kib"] = DEFAULT_MODEL.stat().st_size / 1024
    cost["shipped_model_training_s"] = float(shipped.info.get("training_seconds", float("nan")))
    scores["sescore2-no-severity-ref"] = sescore2_scores(ablation, encoder, segments.hypotheses, segments.references)

    # corpus ablation: only the TED talks' English sources, no sentence of the SummEval articles
    ted = corpus_sentences(pd.read_csv(Path(args.data).parent / "wmt21_ted_ende_mqm" / "sources.csv", dtype=str)["source"].dropna())
    ted_model, cost["train_ted_corpus_s"] = timed(train_sescore2, ted, encoder, TrainingConfig(), 0, True, "wmt21 TED sources")
    cost["ted_corpus_sentences"] = len(ted)
    scores["sescore2-ted-corpus-ref"] = sescore2_scores(ted_model, encoder, segments.hypotheses, segments.references)

    ours = pd.concat(
        [
            pd.DataFrame({"item_id": segments.item_id, "system": segments.system, "rater": name, "score": values})
            for name, values in scores.items()
        ]
    )
    ours.to_csv(out.with_suffix(".ratings.csv"), index=False)
    frame = pd.concat([dataset.ratings[dataset.ratings["rater"].isin(HUMAN + DATA_METRICS)], ours], ignore_index=True)
    rows = []
    for metric in [*scores, *DATA_METRICS]:
        for human in HUMAN:
            result = kendall_tau(frame, human=human, metric=metric)
            rows.append({**dataclasses.asdict(result)})
    table = pd.DataFrame(rows)
    out.write_text(json.dumps({"cost": cost, "kendall": rows, "shipped_model": shipped.info}, indent=2, default=float))
    print_tables(table, cost)


def print_tables(table: pd.DataFrame, cost: dict[str, float]) -> None:
    for column, title in (("tau", "overall"), ("tau_grouped", "grouped by item")):
        wide = table.pivot(index="metric", columns="human", values=column)
        wide.columns = [c.removeprefix("human:") for c in wide.columns]
        wide["mean"] = wide.mean(axis=1)
        print(f"\nKendall tau-b, {title} (segments: {int(table['segments'].max())})")
        print(wide.sort_values("mean", ascending=False).round(3).to_markdown())
    print("\ncost")
    for key, value in cost.items():
        print(f"  {key}: {value:.1f}")


if __name__ == "__main__":
    main()
