"""Judgments as frames, and one human answer per task from several annotators.

An annotator's latest judgment of a task replaces their earlier ones (judgments are taken in
the order they were made, as the store returns them); undone judgments do not count. The
annotators' answers are then combined by :mod:`prefeval_core.vocabulary.combine`. A task is **complete**
when at least ``per_item`` different annotators have judged it; only complete tasks are
answered (the protocol is fed only those).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np
import pandas as pd

from prefeval_core.store.records import Comparison, Judgment, JudgmentKind, Rating, judgment_fields, judgment_values
from prefeval_core.vocabulary.combine import majority_outcomes, mean_scores

COMPARISON_TASK: Final = ("system_a", "system_b", "item_id")
"""Columns naming a comparison's task (canonical pair, item)."""
RATING_TASK: Final = ("item_id", "system")
"""Columns naming a rating's task."""
_DTYPES: Final[dict[str, type]] = {"outcome": np.int8, "score": np.float64}


def judgments_frame(judgments: Sequence[Judgment], kind: JudgmentKind) -> pd.DataFrame:
    """Judgments of ``kind`` as a frame, one column per field (:func:`judgment_fields`)."""
    columns = judgment_fields(kind)
    frame = pd.DataFrame([judgment_values(j) for j in judgments if j.kind == kind], columns=list(columns))
    return frame.astype({c: t for c, t in _DTYPES.items() if c in frame.columns})


def latest_answers(judgments: Sequence[Judgment], kind: JudgmentKind) -> pd.DataFrame:
    """The judgments that count, one per (task, annotator): the annotator's latest."""
    task = COMPARISON_TASK if kind == "comparison" else RATING_TASK
    live = [j for j in judgments if j.undone_at is None]
    return judgments_frame(live, kind).drop_duplicates([*task, "annotator"], keep="last").reset_index(drop=True)


def _complete(answers: pd.DataFrame, task: tuple[str, ...], per_item: int) -> pd.DataFrame:
    counts = answers.groupby(list(task), sort=False).size().rename("judgments").reset_index()
    return counts[counts["judgments"] >= per_item]


def combined_outcomes(comparisons: Sequence[Comparison], per_item: int = 1) -> pd.DataFrame:
    """One human outcome per complete (item, pair), combined by majority.

    Returns:
        ``system_a, system_b, item_id, outcome, judgments`` (``outcome`` an ``int8`` code;
        ``judgments`` how many annotators answered), sorted by pair and item.
    """
    answers = latest_answers(comparisons, "comparison")
    complete = _complete(answers, COMPARISON_TASK, per_item)
    combined = majority_outcomes(answers, COMPARISON_TASK).merge(complete, on=list(COMPARISON_TASK))
    return combined.sort_values(list(COMPARISON_TASK), kind="stable").reset_index(drop=True)


def combined_scores(ratings: Sequence[Rating], per_item: int = 1) -> pd.DataFrame:
    """One human score per complete (item, system), the mean of its annotators' scores.

    Returns:
        ``item_id, system, score, judgments``, sorted by item and system.
    """
    answers = latest_answers(ratings, "rating")
    complete = _complete(answers, RATING_TASK, per_item)
    combined = mean_scores(answers, RATING_TASK).merge(complete, on=list(RATING_TASK))
    return combined.sort_values(list(RATING_TASK), kind="stable").reset_index(drop=True)
