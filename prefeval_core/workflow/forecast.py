"""How much of a study's budget is used, and how many judgments it will likely still need.

The rule, simple and stated with the number: the judgments spent so far per decided pair, times
the pairs that still matter, at most the budget left. Before any pair is decided there is no rate
to go by, so the forecast is the budget left. It is a rough guide for the lead, not a promise:
hard pairs (close systems) take more judgments than the easy ones decided first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from prefeval_core.protocol import ProtocolState
from prefeval_core.workflow.status import study_status


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
    if status.decided == 0:
        return BudgetForecast(status.unit, status.cost_used, status.budget, left, "no pair decided yet: the budget left")
    per_pair = status.cost_used / status.decided
    needed = min(left, math.ceil(per_pair * status.matter))
    rule = f"{per_pair:.0f} judgments per decided pair so far × {status.matter} pairs that still matter, at most the {left:,} left"
    return BudgetForecast(status.unit, status.cost_used, status.budget, needed, rule)
