"""Severity labels of perturbations and the score of a synthetic hypothesis (SEScore2 Sec. 4.2).

Each edit is labelled independently: **minor** (``-1``) or **major** (``-5``).

* A **deletion** is major if any deleted word is salient: its TF-IDF weight in the anchor,
  ``tf(w, anchor) * idf(w)``, exceeds ``threshold`` (the paper takes the maximum over the
  span and the threshold ``1``). ``idf(w) = ln((N + 1) / (df(w) + 1))`` over the N corpus
  sentences; punctuation weighs 0.
* An **insertion or replacement** is major, in the paper, when a cross-lingual masked
  language model (XLM with the source) finds the new tokens unlikely in context. That model
  cannot be had offline here. **Substitute (choice):** the same TF-IDF salience rule applied
  to the *new* tokens (weighted by their count in the hypothesis) and, for a replacement, to the
  removed ones: a change that brings in or takes out a content word is major, a change of
  function words or punctuation (``a`` -> ``the``, a comma) is minor. This keeps labelling
  free of any model; it cannot tell a synonym from an antonym, which the MLM could.

The hypothesis score is the sum over its edits, floored at ``FLOOR = -25`` (choice: the
paper's number was lost from the text; five major errors, the most a hypothesis can carry,
reach it exactly, so the floor is also the catastrophic-error score that unrelated in-batch
sentences receive). Without severity (the paper's ablation) every edit counts ``-1``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from prefeval_core.textmetrics.sescore2.perturb import Edit

MINOR = -1.0
MAJOR = -5.0
FLOOR = -25.0
SALIENCE_THRESHOLD = 1.0


@dataclass(frozen=True)
class IdfTable:
    """Inverse document frequencies over a corpus of tokenised sentences.

    Attributes:
        documents: N, the number of sentences.
        frequency: lower-cased word -> number of sentences containing it (df).
    """

    documents: int
    frequency: dict[str, int]

    def idf(self, word: str) -> float:
        """``ln((N + 1) / (df + 1))``; punctuation-only tokens get 0."""
        if not any(c.isalnum() for c in word):
            return 0.0
        return math.log((self.documents + 1) / (self.frequency.get(word.lower(), 0) + 1))


def idf_table(sentences: Iterable[Sequence[str]]) -> IdfTable:
    """Document frequencies of lower-cased tokens over tokenised sentences."""
    frequency: Counter[str] = Counter()
    documents = 0
    for tokens in sentences:
        documents += 1
        frequency.update({t.lower() for t in tokens})
    return IdfTable(documents, dict(frequency))


def max_tfidf(words: Sequence[str], context: Sequence[str], idf: IdfTable) -> float:
    """Largest ``tf(w, context) * idf(w)`` over ``words`` (0 when empty)."""
    counts = Counter(t.lower() for t in context)
    return max((counts[w.lower()] * idf.idf(w) for w in words), default=0.0)


def edit_severity(edit: Edit, anchor: Sequence[str], idf: IdfTable, threshold: float = SALIENCE_THRESHOLD) -> float:
    """``MAJOR`` (-5) or ``MINOR`` (-1) for one edit of ``anchor`` (rules in the module docstring)."""
    removed = edit.removed(anchor)
    salience = max_tfidf(removed, anchor, idf)
    if edit.tokens:
        # tf of a new word: its count in the anchor after this edit alone
        context = [*anchor[: edit.start], *edit.tokens, *anchor[edit.end :]]
        salience = max(salience, max_tfidf(edit.tokens, context, idf))
    return MAJOR if salience > threshold else MINOR


def hypothesis_score(
    edits: Sequence[Edit], anchor: Sequence[str], idf: IdfTable, severity: bool = True, threshold: float = SALIENCE_THRESHOLD
) -> float:
    """Sum of edit severities floored at ``FLOOR``; with ``severity=False`` each edit counts -1."""
    total = sum(edit_severity(e, anchor, idf, threshold) if severity else MINOR for e in edits)
    return max(FLOOR, float(total))
