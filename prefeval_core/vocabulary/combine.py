"""Combining several human judgments of one thing into one: the project's single rule.

* **Comparisons** (outcome codes 0 ``>``, 1 ``=``, 2 ``<``, method.md §1) are combined by
  majority: the sign of the sum of their values ``v(>) = +1, v(=) = 0, v(<) = -1``; a sum of 0
  (a split, or only ties) is ``=`` **(choice)**.
* **Ratings** (scores, higher is better) are combined by their mean (method.md §2: several
  annotators of one dimension are averaged first).

Both work on frames, grouped by ``keys``, groups in order of first appearance.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd


def majority_outcomes(frame: pd.DataFrame, keys: Sequence[str], column: str = "outcome") -> pd.DataFrame:
    """One row per distinct ``keys``: the majority outcome of ``column`` (``int8`` code),
    ``1 - sign(sum of v)``, since ``v = 1 - code``."""
    votes = 1 - frame[column].astype(np.int64)
    summed = frame[list(keys)].assign(_vote=votes).groupby(list(keys), as_index=False, sort=False)["_vote"].sum()
    summed[column] = (1 - np.sign(summed["_vote"])).astype(np.int8)
    return summed.drop(columns="_vote")


def mean_scores(frame: pd.DataFrame, keys: Sequence[str], column: str = "score") -> pd.DataFrame:
    """One row per distinct ``keys``: the mean of ``column`` (``float64``)."""
    scores = frame[column].astype(np.float64)
    return frame[list(keys)].assign(**{column: scores}).groupby(list(keys), as_index=False, sort=False)[column].mean()
