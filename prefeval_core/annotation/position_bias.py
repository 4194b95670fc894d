"""Whether an annotator prefers the output shown on the left (position bias), from comparisons.

Every comparison stores the side its systems were shown on (``left_system``). For one annotator
the decisive judgments (ties and *both bad* dropped; the annotator's latest per task, as
everywhere) are stratified by canonical pair; within a pair, a 2x2 table of side (A shown on the
left, or B) by winner (A or B). Without position bias the winner does not depend on the side, and
the **Cochran–Mantel–Haenszel test** of that null over the pairs (no continuity correction, one
degree of freedom; Mantel & Haenszel 1959; Agresti, *Categorical Data Analysis*, 2013, §6.4)
gives the p-value. A pair whose side never varied (sides not randomised, e.g. a file that names
the systems) carries no information and drops out, so the test stays valid there; with
randomised sides (the app, blind files, Label Studio) each pair is a fair coin flip's worth of
evidence per judgment. NaN when no pair was shown both ways with both winners.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import chdtrc  # the chi-square survival function (scipy.stats would cost 0.8 s of import)

from prefeval_core.store.frames import latest_answers
from prefeval_core.store.records import Comparison
from prefeval_core.vocabulary.outcomes import BETTER, WORSE


@dataclass(frozen=True)
class PositionBias:
    """One annotator's sides: ``decisive`` judgments (not ties), of which the output shown on the
    left won ``left_won``; ``p_value`` of the Cochran–Mantel–Haenszel test of no position bias
    (module docstring; NaN when untestable)."""

    annotator: str
    decisive: int
    left_won: int
    p_value: float

    @property
    def left_share(self) -> float:
        """The share of decisive judgments won by the left output (NaN without any)."""
        return self.left_won / self.decisive if self.decisive else math.nan


def mantel_haenszel_p_value(tables: np.ndarray) -> float:
    """The p-value of the Cochran–Mantel–Haenszel test (no continuity correction) of conditional
    independence in ``tables``, shape ``(strata, 2, 2)`` of counts; NaN when no stratum has
    variance (a stratum of fewer than two or with a constant row or column)."""
    counts = np.asarray(tables, dtype=np.float64)
    total = counts.sum(axis=(1, 2))
    rows, columns = counts.sum(axis=2), counts.sum(axis=1)
    usable = total >= 2
    n, r, c = total[usable], rows[usable], columns[usable]
    expected = r[:, 0] * c[:, 0] / n
    variance = r[:, 0] * r[:, 1] * c[:, 0] * c[:, 1] / (n**2 * (n - 1))
    if variance.sum() <= 0:
        return math.nan
    statistic = (counts[usable, 0, 0] - expected).sum() ** 2 / variance.sum()
    return float(chdtrc(1, statistic))


def side_tables(answers: pd.DataFrame) -> np.ndarray:
    """The ``(pairs, 2, 2)`` tables of decisive ``answers`` (a frame of comparisons with
    ``system_a, system_b, outcome, left_system``): rows A left / B left, columns A won / B won."""
    a_left = (answers["left_system"] == answers["system_a"]).to_numpy()
    a_won = (answers["outcome"] == BETTER).to_numpy()
    pair = answers.groupby(["system_a", "system_b"], sort=True).ngroup().to_numpy()
    tables = np.zeros((int(pair.max()) + 1 if len(pair) else 0, 2, 2), dtype=np.int64)
    np.add.at(tables, (pair, (~a_left).astype(np.int64), (~a_won).astype(np.int64)), 1)
    return tables


def position_bias(comparisons: Sequence[Comparison]) -> tuple[PositionBias, ...]:
    """Each annotator's position bias (module docstring), annotators sorted."""
    answers = latest_answers(comparisons, "comparison")
    decisive = answers[answers["outcome"].isin([BETTER, WORSE])]
    result = []
    for who in sorted(answers["annotator"].unique()):
        mine = decisive[decisive["annotator"] == who]
        left_won = int(((mine["left_system"] == mine["system_a"]) == (mine["outcome"] == BETTER)).sum())
        result.append(PositionBias(str(who), len(mine), left_won, mantel_haenszel_p_value(side_tables(mine))))
    return tuple(result)
