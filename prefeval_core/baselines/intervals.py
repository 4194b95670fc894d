"""Decisions from confidence intervals, shared by the baseline pair deciders.

A baseline gives, per pair, an interval ``[low, high]`` at level ``1 - gamma`` for a quantity
whose sign says which system is better (positive: A better). The pair is decided ``>`` when
the interval lies strictly above 0, ``<`` when strictly below, and stays undecided otherwise,
also when there is no interval (NaN bounds). Outcome codes as everywhere: 0 ``>``, 1
undecided, 2 ``<``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from prefeval_core.errors import settings_error
from prefeval_core.vocabulary.outcomes import BETTER, TIE, WORSE


@dataclass(frozen=True)
class IntervalDecisions:
    """Per-pair decisions of a baseline, in the order of the table's pairs.

    Attributes:
        decision: (P,) int8 codes: 0 ``>`` (A better), 1 undecided, 2 ``<`` (B better).
        estimate: (P,) float64 point estimate (positive favours A; units depend on the method).
        low, high: (P,) float64 bounds of the ``1 - gamma`` interval; NaN where the method
            gives none (then the pair is undecided).
        gamma: the significance level.
    """

    decision: npt.NDArray[np.int8]
    estimate: npt.NDArray[np.float64]
    low: npt.NDArray[np.float64]
    high: npt.NDArray[np.float64]
    gamma: float

    @property
    def n_pairs(self) -> int:
        return int(self.decision.shape[0])


def decision_from_interval(low: npt.ArrayLike, high: npt.ArrayLike) -> npt.NDArray[np.int8]:
    """``>`` (0) where ``low > 0``, ``<`` (2) where ``high < 0``, else undecided (1); NaN bounds
    stay undecided. Both inequalities are strict: an interval touching 0 does not decide."""
    low = np.asarray(low, dtype=np.float64)
    high = np.asarray(high, dtype=np.float64)
    codes = np.full(low.shape, TIE, dtype=np.int8)
    codes[low > 0.0] = BETTER  # NaN compares false: no interval, no decision
    codes[high < 0.0] = WORSE
    return codes


def check_gamma(gamma: float) -> float:
    """``gamma`` if it is a level in (0, 1); :class:`~prefeval_core.errors.SettingsError` otherwise."""
    if not 0.0 < gamma < 1.0:
        raise settings_error(f"gamma must be in (0, 1), got {gamma}", field="gamma")
    return float(gamma)
