"""The default levels of a study (method.md §4, §12), and the default precision of a metric
check's posterior: one value each, named once.

Every function with a level argument takes its default from here, so that a study run from the
CLI, the dashboard or the notebook API decides at the same level unless told otherwise.
"""

from __future__ import annotations

from typing import Final

DEFAULT_GAMMA: Final = 0.05
"""γ: the significance level of every decision (a pair at a true tie is declared significant
with probability at most γ, per look or over the run depending on the error control)."""
DEFAULT_FUTILITY: Final = DEFAULT_GAMMA
"""β of the predictive futility stop: a pair stops costing judgments when the probability that
more judgments decide it is below β (:mod:`prefeval_core.sequential.futility`)."""
DEFAULT_FAVI_DRAWS: Final = 4000
"""Posterior draws of each pair's Favi-Score in a metric check by default (method.md §8)."""
