"""Nearest neighbours by sentence embedding (SEScore2 Sec. 4.1; method.md §11, step 1).

Exact k-NN by cosine similarity with numpy, in blocks of rows (the corpora here have a few
thousand sentences; an index such as faiss pays off only far beyond that). The paper picks one
of the neighbours at random rather than always the nearest, which is often near-identical.
Instead of its margin criterion, near-duplicates (cosine above ``max_similarity``) are skipped.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Neighbours:
    """The ``k`` nearest other sentences of every sentence.

    Attributes:
        index: (N, k) int, row ``i`` lists the neighbours of sentence ``i``, nearest first;
            ``-1`` pads rows with fewer than ``k`` admissible neighbours.
        similarity: (N, k) float, their cosine similarities (NaN where padded).
    """

    index: np.ndarray
    similarity: np.ndarray


def nearest_neighbours(embeddings: np.ndarray, k: int = 8, max_similarity: float = 0.98, block: int = 1024) -> Neighbours:
    """k nearest neighbours of each row of unit-length ``embeddings`` (N, D), excluding itself
    and near-duplicates (cosine > ``max_similarity``)."""
    n = len(embeddings)
    index = np.full((n, k), -1, dtype=np.int64)
    similarity = np.full((n, k), np.nan)
    for lo in range(0, n, block):
        sims = embeddings[lo : lo + block] @ embeddings.T
        rows = np.arange(sims.shape[0])
        sims[rows, lo + rows] = -np.inf
        sims[sims > max_similarity] = -np.inf
        order = np.argsort(-sims, axis=1, kind="stable")[:, :k]
        best = np.take_along_axis(sims, order, axis=1)
        valid = np.isfinite(best)
        width = order.shape[1]
        index[lo : lo + block, :width] = np.where(valid, order, -1)
        similarity[lo : lo + block, :width] = np.where(valid, best, np.nan)
    return Neighbours(index, similarity)


def pick_neighbours(neighbours: Neighbours, rng: np.random.Generator) -> np.ndarray:
    """One neighbour per sentence, uniformly among its admissible ones (-1 if it has none)."""
    counts = (neighbours.index >= 0).sum(axis=1)
    choice = np.floor(rng.random(len(counts)) * np.maximum(counts, 1)).astype(np.int64)
    picked = neighbours.index[np.arange(len(counts)), choice]
    return np.where(counts > 0, picked, -1)
