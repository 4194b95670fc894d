"""The SEScore2-style regressor, its model file and scoring (SEScore2 Sec. 5 and App. H).

Features of a (reference, hypothesis) pair, from unit-length sentence embeddings ``r`` and
``h`` (D = 384): ``[r * h, |r - h|]`` (2D values; element-wise product and absolute
difference). A one-hidden-layer network ``tanh(x W1 + b1) w2 + b2`` predicts the synthetic
score divided by 25 (so -1 is the catastrophic floor). Inference needs numpy only.

Normalisation (App. H): ``low`` is the mean raw output on unrelated sentence pairs and
``high`` on dropout-perturbed copies; ``normalised = 25 * (raw - high) / (high - low)``, so
unrelated pairs score about -25 and copies about 0. Higher is better. The map is increasing,
so rankings and Kendall tau do not depend on it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from prefeval_core.data.bundled import SAMPLES_DIR
from prefeval_core.errors import settings_error
from prefeval_core.textmetrics.embedding import Reduce, SentenceEncoder, embed_with_references, reduce_per_owner
from prefeval_core.textmetrics.sescore2.corpus import split_sentences

SCORE_SCALE = 25.0
"""Scores are predicted divided by this (the floor -25 becomes -1)."""


@dataclass(frozen=True)
class SEScore2Model:
    """A trained regressor with its normalisation constants.

    Attributes:
        w1: (2D, H) first-layer weights; b1: (H,) biases.
        w2: (H,) output weights; b2: output bias.
        low: mean raw output on unrelated pairs (App. H lower anchor).
        high: mean raw output on dropout copies (App. H upper anchor).
        info: how the model was made (corpus, seed, sizes, settings, training time).
    """

    w1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray
    b2: float
    low: float
    high: float
    info: dict[str, Any] = field(default_factory=dict)

    def raw(self, references: np.ndarray, hypotheses: np.ndarray) -> np.ndarray:
        """Raw predictions (P,) for paired rows of unit-length embeddings (P, D)."""
        features = pair_features(references, hypotheses)
        return np.tanh(features @ self.w1 + self.b1) @ self.w2 + self.b2

    def normalise(self, raw: np.ndarray) -> np.ndarray:
        """App. H: unrelated pairs -> about -25, copies -> about 0."""
        return SCORE_SCALE * (raw - self.high) / (self.high - self.low)

    def score(self, references: np.ndarray, hypotheses: np.ndarray) -> np.ndarray:
        """Normalised scores (P,) of paired embedding rows; higher is better."""
        return self.normalise(self.raw(references, hypotheses))


def pair_features(references: np.ndarray, hypotheses: np.ndarray) -> np.ndarray:
    """``[r * h, |r - h|]`` of shape (P, 2D) from paired rows (P, D)."""
    return np.concatenate([references * hypotheses, np.abs(references - hypotheses)], axis=1).astype(np.float32)


def save_model(model: SEScore2Model, path: str | Path) -> None:
    """Write the model as a compressed ``.npz`` (float32 weights, JSON info)."""
    np.savez_compressed(
        Path(path),
        w1=model.w1.astype(np.float32),
        b1=model.b1.astype(np.float32),
        w2=model.w2.astype(np.float32),
        scalars=np.array([model.b2, model.low, model.high]),
        info=np.array(json.dumps(model.info, sort_keys=True)),
    )


def load_model(path: str | Path) -> SEScore2Model:
    with np.load(Path(path), allow_pickle=False) as data:
        b2, low, high = (float(v) for v in data["scalars"])
        return SEScore2Model(data["w1"], data["b1"], data["w2"], b2, low, high, json.loads(str(data["info"])))


def sescore2_scores(
    model: SEScore2Model,
    encoder: SentenceEncoder,
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]],
    reduce: Reduce = "max",
    show_progress: bool = False,
) -> np.ndarray:
    """Normalised SEScore2 of each hypothesis (H,) against its references (best by default).

    Texts are embedded whole (a multi-sentence summary is one segment, truncated at 256 word
    pieces).
    """
    hyp, ref, owner = embed_with_references(encoder, hypotheses, references, show_progress)
    return reduce_per_owner(model.score(ref, hyp[owner]), owner, len(hypotheses), reduce)


def sentence_level_scores(
    model: SEScore2Model, encoder: SentenceEncoder, hypotheses: Sequence[str], references: Sequence[Sequence[str]]
) -> np.ndarray:
    """Scores (H,) of multi-sentence texts computed sentence by sentence, the granularity of training.

    For a hypothesis with sentences ``h_1..h_a`` and a reference with sentences ``r_1..r_b``,
    ``s[i, j]`` is the normalised score of ``h_i`` against ``r_j``; precision ``P`` is the mean
    over ``i`` of ``max_j s[i, j]``, recall ``R`` the mean over ``j`` of ``max_i s[i, j]``, and
    the text's score against that reference ``(P + R) / 2``; the best reference counts.
    Sentences are split by :func:`~prefeval_core.textmetrics.sescore2.corpus.split_sentences`.
    """
    if len(hypotheses) != len(references):
        raise settings_error(f"{len(hypotheses)} hypotheses but {len(references)} reference lists")
    split = [split_sentences(h) or [h] for h in hypotheses]
    split_refs = [[split_sentences(r) or [r] for r in refs] for refs in references]
    unique = list(dict.fromkeys([*(s for sents in split for s in sents), *(s for refs in split_refs for sents in refs for s in sents)]))
    embedded = encoder.encode(unique)
    row = {text: k for k, text in enumerate(unique)}
    out = np.full(len(hypotheses), np.nan)
    for k, (hyp_sentences, refs) in enumerate(zip(split, split_refs)):
        hyp = embedded[[row[t] for t in hyp_sentences]]
        for ref_sentences in refs:
            ref = embedded[[row[t] for t in ref_sentences]]
            pair = model.score(np.tile(ref, (len(hyp), 1)), np.repeat(hyp, len(ref), axis=0)).reshape(len(hyp), len(ref))
            value = (pair.max(axis=1).mean() + pair.max(axis=0).mean()) / 2
            out[k] = value if np.isnan(out[k]) else max(out[k], value)
    return out


DEFAULT_MODEL = SAMPLES_DIR / "models" / "sescore2-en.npz"
"""The shipped English model, trained on ``sample_data/corpus/en.txt`` (see its README)."""
