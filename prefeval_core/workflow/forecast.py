"""How much of a study's budget is used, and how many judgments it will likely still need.

The rule, simple and stated with the number: the judgments spent so far per decided pair, times
the pairs that still matter, at most the budget left. A tier question (top-k) is answered by ruling
systems out, under question-level control often before any pair is decided, so there the rate is
per system ruled out, times the systems that must still go for a tier of k. Before anything is
decided there is no rate to go by, so the forecast is the budget left. It is a rough guide for the
lead, not a promise: hard pairs (close systems) take more judgments than the easy ones decided first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from prefeval_core.protocol import ProtocolState
from prefeval_core.workflow.status import StudyStatus, study_status


@dataclass(frozen=True)
class BudgetForecast:
    """Budget used and judgments likely still needed, in the study's unit.

    Attributes:
        unit: what one judgment is (ratings or comparisons).
        used, budget: judgments spent, and the budget.
        likely_needed: judgments the rule forecasts are still needed (0 when the study is finished).
        rule: how ``likely_needed`` was computed, in words with its numbers.
    """

    unit: str
    used: int
    budget: int
    likely_needed: int
    rule: str

    def sentence(self) -> str:
        """``Budget: 120 / 500 ratings used; likely still needed: about 200 (rule).``"""
        return f"Budget: {self.used:,} / {self.budget:,} {self.unit} used; likely still needed: about {self.likely_needed:,} ({self.rule})."


def budget_forecast(state: ProtocolState) -> BudgetForecast:
    """The study's :class:`BudgetForecast` (module docstring)."""
    status = study_status(state)
    left = max(0, status.budget - status.cost_used)
    if status.finished:
        return BudgetForecast(status.unit, status.cost_used, status.budget, 0, "the study has finished")
    if status.ruled_out is not None:
        return _tier_forecast(status, state.settings.question.k, left)
    if status.decided == 0:
        return BudgetForecast(status.unit, status.cost_used, status.budget, left, "no pair decided yet: the budget left")
    per_pair = status.cost_used / status.decided
    needed = min(left, math.ceil(per_pair * status.matter))
    rule = f"{per_pair:.0f} judgments per decided pair so far × {status.matter} pairs that still matter, at most the {left:,} left"
    return BudgetForecast(status.unit, status.cost_used, status.budget, needed, rule)


def _tier_forecast(status: StudyStatus, k: int, left: int) -> BudgetForecast:
    """A tier question's forecast: judgments per system ruled out so far, times those still to go for a tier of ``k``."""
    ruled_out = status.ruled_out or 0
    if ruled_out == 0:
        return BudgetForecast(status.unit, status.cost_used, status.budget, left, "no system ruled out yet: the budget left")
    per_system = status.cost_used / ruled_out
    still = max(status.systems - ruled_out - k, 0)
    rule = f"{per_system:.0f} judgments per system ruled out so far × {still} more to rule out for a tier of {k}, at most the {left:,} left"
    return BudgetForecast(status.unit, status.cost_used, status.budget, min(left, math.ceil(per_system * still)), rule)
