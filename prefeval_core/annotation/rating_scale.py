"""The scale people rate on in a live ratings study, inferred from the data (method.md §12).

A study's human rater fixes the scale: if the data keep individual annotators
(``human:<dim>:<annotator>`` raters) their scores are the scale people used, else the human
rater's own scores. Scores between two integers at most :data:`MAX_LEVELS` levels apart (also
averages of such ratings: SummEval's means of three experts' 1–5) give a discrete integer scale
(one button per level, keyboard digits); anything else (MQM penalties, DA) a continuous range
from the lowest to the highest score seen.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np

from prefeval_core.data.dataset import Dataset

MAX_LEVELS: Final = 10
"""Most levels of a discrete scale (one keyboard digit each)."""


@dataclass(frozen=True)
class RatingScale:
    """What a rating may be: ``low`` to ``high`` (higher is better); ``levels`` the allowed
    values of a discrete scale (``None``: any number in the range)."""

    low: float
    high: float
    levels: tuple[float, ...] | None

    def describe(self) -> str:
        if self.levels is not None:
            return f"{self.low:g} (worst) to {self.high:g} (best)"
        return f"a number from {self.low:g} (worst) to {self.high:g} (best)"


def rating_scale(dataset: Dataset, human: str) -> RatingScale:
    """The scale of ``human``'s ratings (module docstring); 1–5 when the data hold none."""
    ratings = dataset.ratings
    annotators = ratings["rater"].astype(str).str.startswith(human + ":")
    scores = ratings.loc[annotators if annotators.any() else ratings["rater"] == human, "score"].to_numpy(dtype=np.float64)
    scores = scores[np.isfinite(scores)]
    if scores.size == 0:
        return RatingScale(1.0, 5.0, (1.0, 2.0, 3.0, 4.0, 5.0))
    low, high = float(scores.min()), float(scores.max())
    if low == round(low) and high == round(high) and high - low + 1 <= MAX_LEVELS:
        return RatingScale(low, high, tuple(float(v) for v in np.arange(low, high + 1)))
    return RatingScale(low, high, None)
