"""Showing a pair side by side: which output goes left, and what a click on it means.

**Left/right order** is a seeded coin flip per (dataset, item, pair): random to the annotator,
reproducible for the project (:func:`left_right`). The side each system was shown on is
stored with the judgment (``left_system``); the displayed choice is turned back into the
canonical outcome (codes 0 ``>`` A better, 1 ``=``, 2 ``<`` B better, ``A < B`` sorted) before
storing (:func:`outcome_from_choice`). "Both bad" is stored as a tie labelled ``both_bad``.
"""

from __future__ import annotations

import hashlib
from typing import Literal

import numpy as np

from prefeval_core.errors import settings_error
from prefeval_core.store.records import Comparison, ComparisonLabel, utc_now
from prefeval_core.vocabulary.outcomes import BETTER, TIE, WORSE, canonical_pair

Choice = Literal["left", "equal", "right", "both_bad"]
"""What the annotator clicked: the left output is better, no preference, the right one, both are bad."""


def left_right(seed: int, dataset: str, item_id: str, system_a: str, system_b: str) -> tuple[str, str]:
    """``(left_system, right_system)`` for showing a pair on an item.

    A coin flip seeded by ``seed`` and the (dataset, item, pair) identity: each item gets its
    own random side, the same on every rerun and restart. The pair may be given in any order.
    """
    a, b, _ = canonical_pair(system_a, system_b)
    digest = hashlib.sha256(f"{dataset}\x1f{item_id}\x1f{a}\x1f{b}".encode()).digest()
    rng = np.random.default_rng([seed, int.from_bytes(digest[:8], "little")])
    return (b, a) if rng.random() < 0.5 else (a, b)


def outcome_from_choice(choice: Choice, left_system: str, system_a: str, system_b: str) -> int:
    """The canonical outcome code of a displayed choice (undoes the left/right shuffle);
    ``both_bad`` is a tie."""
    a, b, _ = canonical_pair(system_a, system_b)
    if left_system not in (a, b):
        raise settings_error(f"left_system {left_system!r} is not one of the pair ({a}, {b})")
    if choice in ("equal", "both_bad"):
        return TIE
    winner = left_system if choice == "left" else (b if left_system == a else a)
    return BETTER if winner == a else WORSE


def make_comparison(
    dataset: str,
    item_id: str,
    system_a: str,
    system_b: str,
    choice: Choice,
    annotator: str,
    left_system: str,
    *,
    study_id: int | None = None,
    request_id: str = "",
) -> Comparison:
    """A :class:`~prefeval_core.store.records.Comparison` judged in the app from what the
    annotator saw and clicked, time-stamped now (an empty annotator name is ``anonymous``)."""
    a, b, _ = canonical_pair(system_a, system_b)
    outcome = outcome_from_choice(choice, left_system, a, b)
    label: ComparisonLabel | None = "both_bad" if choice == "both_bad" else None
    who = annotator.strip() or "anonymous"
    return Comparison(dataset, item_id, a, b, outcome, who, left_system, utc_now(), label, study_id=study_id, request_id=request_id)
