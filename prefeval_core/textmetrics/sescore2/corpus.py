"""Sentence corpora for SEScore2-style training (method.md §11, step 1).

A corpus is a plain text file, one sentence per line. Sentences are tokenised into words and
punctuation (``tokenize``) and stored re-joined by single spaces, so that a synthetic
hypothesis differs from its anchor only by its perturbations, never by spacing.

The default English corpus (``sample_data/corpus/en.txt``) is built by ``build_default_corpus``
from the *sources* of the shared datasets only (SummEval's CNN/DailyMail articles and the
English sides of the WMT21 TED talks), never from system outputs or references.
Run ``python -m prefeval_core.textmetrics.sescore2.corpus SHARED_DATA_DIR OUT`` to rebuild it.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from prefeval_core.data.bundled import SAMPLES_DIR

DEFAULT_CORPUS = SAMPLES_DIR / "corpus" / "en.txt"
"""The shipped English corpus (see its README for provenance)."""

_TOKEN = re.compile(r"\d+(?:[.,:]\d+)+|\w+(?:['’]\w+)*|'(?:[sdmt]|re|ve|ll)\b|[^\w\s]", re.IGNORECASE)
# no split after an initial such as "V. Stiviano"
_SENTENCE_END = re.compile(r"(?<![\s(][A-Z]\.)(?<=[.!?])\s+(?=[\"'“‘(]?[A-Z0-9])")


def tokenize(text: str) -> tuple[str, ...]:
    """Words (with inner apostrophes) and single punctuation marks, in order."""
    return tuple(_TOKEN.findall(text))


def detokenize(tokens: Sequence[str]) -> str:
    """Tokens joined by single spaces (the corpus's normal form)."""
    return " ".join(tokens)


def split_sentences(text: str) -> list[str]:
    """Split a paragraph at ``.``, ``!`` or ``?`` followed by space and an upper-case start."""
    return [s.strip() for s in _SENTENCE_END.split(text.replace("\n", " ")) if s.strip()]


def corpus_sentences(texts: Iterable[str], min_words: int = 5, max_words: int = 40) -> tuple[str, ...]:
    """Distinct normalised sentences of ``min_words`` to ``max_words`` words, in first-seen order.

    Words are tokens with a letter or digit; punctuation does not count.
    """
    seen: dict[str, None] = {}
    for text in texts:
        for sentence in split_sentences(text):
            tokens = tokenize(sentence)
            words = sum(1 for t in tokens if any(c.isalnum() for c in t))
            if min_words <= words <= max_words:
                seen.setdefault(detokenize(tokens), None)
    return tuple(seen)


def read_corpus(path: str | Path) -> tuple[str, ...]:
    """Non-empty lines of a UTF-8 text file, normalised (tokenised and re-joined)."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return tuple(detokenize(tokenize(line)) for line in lines if line.strip())


def write_corpus(sentences: Sequence[str], path: str | Path) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text("".join(s + "\n" for s in sentences), encoding="utf-8")


def build_default_corpus(shared_data: str | Path, max_sentences: int = 2400, seed: int = 0) -> tuple[str, ...]:
    """The default English corpus from the shared datasets' sources (articles and TED source sides).

    Sentences from SummEval's ``sources.csv`` (column ``source``) and WMT21 TED's
    ``sources.csv`` (English column ``source``) are split, filtered (5-40 words), de-duplicated
    and, if more than ``max_sentences``, subsampled with ``seed`` (kept in corpus order).
    """
    root = Path(shared_data)
    texts: list[str] = []
    for name in ("summeval", "wmt21_ted_ende_mqm"):
        texts.extend(pd.read_csv(root / name / "sources.csv", dtype=str)["source"].dropna())
    sentences = corpus_sentences(texts)
    if len(sentences) > max_sentences:
        keep = np.sort(np.random.default_rng(seed).choice(len(sentences), size=max_sentences, replace=False))
        sentences = tuple(sentences[i] for i in keep)
    return sentences


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python -m prefeval_core.textmetrics.sescore2.corpus SHARED_DATA_DIR OUT_FILE")
    corpus = build_default_corpus(sys.argv[1])
    write_corpus(corpus, sys.argv[2])
    print(f"{len(corpus)} sentences written to {sys.argv[2]}", file=sys.stderr)
