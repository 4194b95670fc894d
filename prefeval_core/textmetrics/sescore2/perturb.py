"""Retrieval-augmented perturbations (SEScore2 Sec. 4.1; method.md §11, step 2).

An anchor and a retrieved neighbour are aligned by word-level edit distance (Levenshtein,
unit costs, as TER without shifts). Each maximal run of non-matching alignment steps becomes
one :class:`Edit` in anchor coordinates: an insertion (``start == end``), a deletion (no new
tokens) or a replacement. Runs are separated by at least one matched word, so any subset of
the edits applies to the anchor unambiguously, and all of them together turn the anchor into
the neighbour. Random single-word drops at matched positions add further deletions.
A synthetic hypothesis applies a random non-empty subset of at most five candidate edits.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from prefeval_core.errors import settings_error

EditKind = Literal["insert", "delete", "replace"]


@dataclass(frozen=True)
class Edit:
    """One perturbation of the anchor's tokens ``[start, end)``, replaced by ``tokens``.

    Attributes:
        start: first anchor token affected (for an insertion: the position before which
            ``tokens`` go).
        end: one past the last anchor token affected (``== start`` for an insertion).
        tokens: the new tokens (empty for a deletion).
        source: ``"neighbour"`` (from the edit-distance decomposition) or ``"drop"`` (a random
            word drop).
    """

    start: int
    end: int
    tokens: tuple[str, ...] = ()
    source: Literal["neighbour", "drop"] = "neighbour"

    @property
    def kind(self) -> EditKind:
        if self.start == self.end:
            return "insert"
        return "replace" if self.tokens else "delete"

    def removed(self, anchor: Sequence[str]) -> tuple[str, ...]:
        """The anchor tokens this edit removes (deleted or replaced)."""
        return tuple(anchor[self.start : self.end])


def decompose(anchor: Sequence[str], neighbour: Sequence[str]) -> tuple[Edit, ...]:
    """Edits that turn ``anchor`` into ``neighbour`` (token sequences), ordered by position.

    A minimum edit-distance alignment (ties broken towards substitution, then deletion) is
    cut into maximal runs of non-matching steps, each one :class:`Edit`.
    """
    n, m = len(anchor), len(neighbour)
    cost = np.zeros((n + 1, m + 1), dtype=np.int32)
    cost[:, 0] = np.arange(n + 1)
    cost[0, :] = np.arange(m + 1)
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            same = anchor[i - 1] == neighbour[j - 1]
            cost[i, j] = min(cost[i - 1, j - 1] + (0 if same else 1), cost[i - 1, j] + 1, cost[i, j - 1] + 1)
    steps: list[tuple[int, int, bool]] = []  # (anchor index consumed or -1, neighbour index or -1, matched)
    i, j = n, m
    while i > 0 or j > 0:
        if i > 0 and j > 0 and cost[i, j] == cost[i - 1, j - 1] + (0 if anchor[i - 1] == neighbour[j - 1] else 1):
            steps.append((i - 1, j - 1, anchor[i - 1] == neighbour[j - 1]))
            i, j = i - 1, j - 1
        elif i > 0 and cost[i, j] == cost[i - 1, j] + 1:
            steps.append((i - 1, -1, False))
            i -= 1
        else:
            steps.append((-1, j - 1, False))
            j -= 1
    steps.reverse()
    edits: list[Edit] = []
    position = 0  # anchor tokens consumed so far
    run_start: int | None = None
    run_tokens: list[str] = []
    for a, b, matched in steps:
        if matched:
            if run_start is not None:
                edits.append(Edit(run_start, position, tuple(run_tokens)))
                run_start, run_tokens = None, []
            position += 1
            continue
        if run_start is None:
            run_start = position
        if b >= 0:
            run_tokens.append(neighbour[b])
        if a >= 0:
            position += 1
    if run_start is not None:
        edits.append(Edit(run_start, position, tuple(run_tokens)))
    return tuple(edits)


def apply_edits(anchor: Sequence[str], edits: Sequence[Edit]) -> tuple[str, ...]:
    """The anchor with ``edits`` applied (non-overlapping in anchor coordinates).

    At one position, an insertion goes before a deletion or replacement starting there.
    """
    ordered = sorted(edits, key=lambda e: (e.start, e.end))
    for first, second in itertools.pairwise(ordered):
        if second.start < first.end or (first.start == second.start == second.end):
            raise settings_error(f"overlapping edits {first} and {second}")
    out: list[str] = []
    position = 0
    for edit in ordered:
        out.extend(anchor[position : edit.start])
        out.extend(edit.tokens)
        position = edit.end
    out.extend(anchor[position:])
    return tuple(out)


def random_drops(anchor: Sequence[str], edits: Sequence[Edit], count: int, rng: np.random.Generator) -> tuple[Edit, ...]:
    """Up to ``count`` single-word deletions at anchor words no edit touches (punctuation excluded)."""
    covered = {k for e in edits for k in range(e.start, e.end)}
    free = [k for k, token in enumerate(anchor) if k not in covered and any(c.isalnum() for c in token)]
    if not free or count <= 0:
        return ()
    chosen = np.sort(rng.choice(len(free), size=min(count, len(free)), replace=False))
    return tuple(Edit(free[k], free[k] + 1, (), "drop") for k in chosen)


def candidate_edits(
    anchor: Sequence[str], neighbour: Sequence[str], rng: np.random.Generator, max_span: int = 4, drops: int = 1, max_candidates: int = 5
) -> tuple[Edit, ...]:
    """At most ``max_candidates`` edits for one anchor, drawn at random (SEScore2: five).

    Edits from the neighbour that remove or add more than ``max_span`` tokens are left out (a
    rewrite of a whole clause is not a realistic local error); ``drops`` random word drops
    are added to the pool before drawing.
    """
    pool = [e for e in decompose(anchor, neighbour) if max(e.end - e.start, len(e.tokens)) <= max_span]
    pool.extend(random_drops(anchor, pool, drops, rng))
    if len(pool) > max_candidates:
        keep = rng.choice(len(pool), size=max_candidates, replace=False)
        pool = [pool[k] for k in sorted(keep)]
    return tuple(sorted(pool, key=lambda e: (e.start, e.end)))


def random_subsets(count: int, draws: int, rng: np.random.Generator) -> list[tuple[int, ...]]:
    """``draws`` distinct non-empty subsets of ``range(count)`` (fewer if fewer exist), sorted each."""
    total = 2**count - 1
    if total <= 0:
        return []
    codes = rng.choice(total, size=min(draws, total), replace=False) + 1
    return [tuple(k for k in range(count) if code >> k & 1) for code in codes]
