"""The ``baseline`` question (method.md §12): each other system against each named baseline B.

Only the pairs with exactly one baseline are asked (pairs of two non-baselines, or of two
baselines, are not). The answer: per baseline, the systems that beat it, that lose to it, and that
cannot be separated from it yet.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from prefeval_core.vocabulary.words import listing

if TYPE_CHECKING:
    from prefeval_core.protocol.questions import Decided, Question

NAME = "baseline"
LABEL = "Each system against a baseline"
BASELINES = True
STATUS_WORDS = "Status: better / worse = significantly better than every baseline / worse than one; undecided otherwise."


def describe(question: Question) -> str:
    return f"is each system better or worse than {' and '.join(question.baselines)}"


def pairs(question: Question, systems: Sequence[str], pair_systems: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
    """(P,) the pairs with exactly one baseline."""
    is_baseline = np.isin(np.asarray(systems, dtype=object), question.baselines)
    return is_baseline[pair_systems[:, 0]] != is_baseline[pair_systems[:, 1]]


def words(d: Decided) -> str:
    """E.g. "M2 and M5 beat M8; M1 and M4 lose to M8; M6 is equivalent to M8 within the margin; M3
    cannot be separated from M8 yet." per baseline."""
    beats, equal = d.beats, d.equal
    names = np.asarray(d.systems, dtype=object)
    others = ~np.isin(names, d.question.baselines)
    sentences = []
    for baseline in d.question.baselines:
        b = d.systems.index(baseline)
        above = tuple(names[others & beats[:, b]])
        below = tuple(names[others & beats[b, :]])
        same = tuple(names[others & equal[:, b] & ~beats[:, b] & ~beats[b, :]])
        open_ = tuple(names[others & ~beats[:, b] & ~beats[b, :] & ~equal[:, b]])
        parts = [
            f"{listing(above)} {'beats' if len(above) == 1 else 'beat'} {baseline}" if above else f"No system beats {baseline}",
            f"{listing(below)} {'loses' if len(below) == 1 else 'lose'} to {baseline}" if below else f"none loses to {baseline}",
        ]
        if same:
            parts.append(f"{listing(same)} {'is' if len(same) == 1 else 'are'} equivalent to {baseline} within the margin")
        if open_:
            parts.append(f"{listing(open_)} cannot be separated from {baseline} {d.when}")
        sentences.append("; ".join(parts) + ".")
    return " ".join(sentences)


def status(d: Decided) -> tuple[str, ...]:
    """(S,) ``baseline``; ``better`` / ``worse`` (significantly, than every baseline / than some
    baseline); ``undecided``."""
    beats = d.beats
    base = [d.systems.index(b) for b in d.question.baselines]
    out = []
    for i, s in enumerate(d.systems):
        if s in d.question.baselines:
            out.append("baseline")
        elif beats[base, i].any():
            out.append("worse")
        elif beats[i, base].all():
            out.append("better")
        else:
            out.append("undecided")
    return tuple(out)
