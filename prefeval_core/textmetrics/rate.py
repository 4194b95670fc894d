"""Scalar raters computed from texts: string metrics, embedding similarity, SEScore2.

Each output ``(item_id, system, output)`` is scored against the references of its item (or,
with ``against="sources"``, against its item's source as the single reference). The result is
a long ratings frame ``item_id, system, rater, score`` (higher is better) that joins a
:class:`~prefeval_core.data.dataset.Dataset`'s ratings like any uploaded metric. Raters are
named ``<metric>-ref`` or ``<metric>-src`` (as WMT names ``chrF-refA``), so they never clash
with metrics already in the data. Outputs of items without references get no rating.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd

from prefeval_core.data.dataset import Dataset
from prefeval_core.errors import CoverageError, settings_error
from prefeval_core.textmetrics.embedding import Reduce, SentenceEncoder, cosine_to_references, embed_with_references
from prefeval_core.textmetrics.string_metrics import STRING_METRICS, string_scores
from prefeval_core.vocabulary.text_metrics import LEARNED_METRICS as LEARNED_METRICS
from prefeval_core.vocabulary.text_metrics import METRICS as METRICS
from prefeval_core.vocabulary.text_metrics import MetricName as MetricName

if TYPE_CHECKING:
    from prefeval_core.textmetrics.sescore2.score import SEScore2Model

Against = Literal["references", "sources"]


@dataclass(frozen=True)
class Segments:
    """Outputs aligned with the texts they are compared with.

    Attributes:
        item_id, system: (H,) keys of the H outputs that have at least one reference.
        hypotheses: H outputs.
        references: H tuples of reference texts (ordered by ``ref_index``).
        missing: outputs left out because their item has no reference.
        missing_items: those outputs' items, each once, in the texts' order.
    """

    item_id: np.ndarray
    system: np.ndarray
    hypotheses: tuple[str, ...]
    references: tuple[tuple[str, ...], ...]
    missing: int
    missing_items: tuple[str, ...] = ()


def align_segments(
    texts: pd.DataFrame,
    references: pd.DataFrame,
    sources: pd.DataFrame | None = None,
    against: Against = "references",
    max_references: int | None = None,
) -> Segments:
    """Pair each output with its item's references (first ``max_references`` by ``ref_index``) or source.

    Raises:
        CoverageError: no output has anything to be compared with.
    """
    if against == "sources":
        table = (sources if sources is not None else pd.DataFrame(columns=["item_id", "source"])).rename(columns={"source": "reference"})
        table = table.assign(ref_index=0)
    else:
        table = references
    table = table.sort_values(["item_id", "ref_index"], kind="stable")
    grouped = table.groupby("item_id", sort=False)["reference"].apply(lambda s: tuple(str(r) for r in s))
    if max_references is not None:
        grouped = grouped.map(lambda refs: refs[:max_references])
    found = texts["item_id"].isin(grouped.index).to_numpy()
    kept = texts[found]
    if kept.empty:
        what = "a source (the sources file)" if against == "sources" else "a reference (the references file)"
        raise CoverageError.single("no_references", f"no output has {what} for its item", column="item_id")
    return Segments(
        item_id=kept["item_id"].to_numpy(dtype=object),
        system=kept["system"].to_numpy(dtype=object),
        hypotheses=tuple(str(t) for t in kept["output"]),
        references=tuple(grouped.loc[kept["item_id"]].tolist()),
        missing=int((~found).sum()),
        missing_items=tuple(str(item) for item in pd.unique(texts["item_id"][~found])),
    )


def rater_name(metric: MetricName, against: Against = "references") -> str:
    return f"{metric}-{'ref' if against == 'references' else 'src'}"


def metric_scores(
    segments: Segments,
    metric: MetricName,
    encoder: SentenceEncoder | None = None,
    sescore2_model: SEScore2Model | None = None,
    lowercase: bool = True,
    reduce: Reduce = "max",
    show_progress: bool = False,
) -> np.ndarray:
    """Scores (H,) of one metric for aligned segments (higher is better).

    ``embed`` is the cosine similarity of all-MiniLM-L6-v2 embeddings (best reference by
    default); ``sescore2`` needs a trained :class:`~prefeval_core.textmetrics.sescore2.score.SEScore2Model`.
    """
    if metric in STRING_METRICS:
        progress = _tqdm(f"{metric}", len(segments.hypotheses)) if show_progress else iter
        return string_scores(segments.hypotheses, segments.references, metric, lowercase=lowercase, progress=progress)
    if encoder is None:
        raise settings_error(f"metric '{metric}' needs a sentence encoder (load_encoder())")
    if metric == "embed":
        hyp, ref, owner = embed_with_references(encoder, segments.hypotheses, segments.references, show_progress)
        return cosine_to_references(hyp, ref, owner, reduce)
    if metric == "sescore2":
        from prefeval_core.textmetrics.sescore2.score import sescore2_scores

        if sescore2_model is None:
            raise settings_error("metric 'sescore2' needs a trained model (load_model(path) or train_sescore2(...))")
        return sescore2_scores(sescore2_model, encoder, segments.hypotheses, segments.references, reduce, show_progress)
    raise settings_error(f"unknown metric {metric!r}; expected one of {', '.join(METRICS)}")


def metric_ratings(
    segments: Segments,
    metrics: Sequence[MetricName],
    against: Against = "references",
    encoder: SentenceEncoder | None = None,
    sescore2_model: SEScore2Model | None = None,
    lowercase: bool = True,
    reduce: Reduce = "max",
    show_progress: bool = False,
) -> pd.DataFrame:
    """A long ratings frame ``item_id, system, rater, score`` with one rater per metric."""
    frames = [
        pd.DataFrame(
            {
                "item_id": segments.item_id,
                "system": segments.system,
                "rater": rater_name(metric, against),
                "score": metric_scores(segments, metric, encoder, sescore2_model, lowercase, reduce, show_progress),
            }
        )
        for metric in metrics
    ]
    return pd.concat(frames, ignore_index=True)


def _tqdm(description: str, total: int):
    from tqdm import tqdm

    return lambda iterable: tqdm(iterable, desc=description, total=total, unit="segment")


def dataset_with_ratings(dataset: Dataset, ratings: pd.DataFrame) -> Dataset:
    """A copy of ``dataset`` with computed ``ratings`` added (raters already present are replaced)."""
    kept = dataset.ratings[~dataset.ratings["rater"].isin(set(ratings["rater"]))]
    return replace(dataset, ratings=pd.concat([kept, ratings[["item_id", "system", "rater", "score"]]], ignore_index=True))
