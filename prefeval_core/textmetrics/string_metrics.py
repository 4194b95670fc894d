"""Sentence-level BLEU, chrF and TER with sacrebleu (Post, 2018), higher is better.

Each hypothesis is scored against all of its references at once, as sacrebleu does for
multiple references: BLEU pools n-gram matches over the references, chrF and TER take the
best reference. TER is negated (``-TER``, in percent) so that higher is better, as every
rater in prefeval. Scores are in sacrebleu's units (0-100 for BLEU and chrF).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Literal

import numpy as np

from prefeval_core.errors import settings_error

StringMetric = Literal["bleu", "chrf", "ter"]
STRING_METRICS: tuple[StringMetric, ...] = ("bleu", "chrf", "ter")


def sentence_scorer(metric: StringMetric, lowercase: bool = True) -> Callable[[str, Sequence[str]], float]:
    """A function ``(hypothesis, references) -> score`` for one sacrebleu metric.

    BLEU uses sacrebleu's sentence defaults (exponential smoothing, effective order).
    ``lowercase=True`` (default) compares case-insensitively: many generation outputs (e.g.
    SummEval's abstractive summaries) are lower-cased while their references are not.
    """
    from sacrebleu.metrics import BLEU, CHRF, TER

    if metric == "bleu":
        bleu = BLEU(effective_order=True, lowercase=lowercase)
        return lambda hyp, refs: float(bleu.sentence_score(hyp, list(refs)).score)
    if metric == "chrf":
        chrf = CHRF(lowercase=lowercase)
        return lambda hyp, refs: float(chrf.sentence_score(hyp, list(refs)).score)
    if metric == "ter":
        ter = TER(case_sensitive=not lowercase)
        return lambda hyp, refs: -float(ter.sentence_score(hyp, list(refs)).score)
    raise settings_error(f"unknown string metric {metric!r}; expected one of {', '.join(STRING_METRICS)}")


def string_scores(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]],
    metric: StringMetric,
    lowercase: bool = True,
    progress: Callable[[Iterable[int]], Iterable[int]] = iter,
) -> np.ndarray:
    """Scores of shape (H,) of each hypothesis against its references (higher is better).

    Args:
        hypotheses: H outputs.
        references: H lists of references (at least one each).
        metric: ``bleu``, ``chrf`` or ``ter`` (TER is returned negated).
        progress: wraps the loop over hypothesis indices (e.g. ``tqdm``).
    """
    if len(hypotheses) != len(references):
        raise settings_error(f"{len(hypotheses)} hypotheses but {len(references)} reference lists")
    if any(len(refs) == 0 for refs in references):
        raise settings_error("every hypothesis needs at least one reference")
    score = sentence_scorer(metric, lowercase)
    return np.array([score(hypotheses[i], references[i]) for i in progress(range(len(hypotheses)))], dtype=float)
