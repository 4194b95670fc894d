"""What a human is asked to judge (method.md §12): one output's rating or one pair's comparison.

The protocol's requests are made of these tasks, the store files each judgment under one, and
the assignment of tasks to annotators compares them: one definition for all three.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ComparisonTask:
    """Compare the outputs of the canonical pair ``(system_a, system_b)`` (``system_a < system_b``) on ``item_id``."""

    item_id: str
    system_a: str
    system_b: str

    @property
    def systems(self) -> tuple[str, ...]:
        return (self.system_a, self.system_b)


@dataclass(frozen=True)
class RatingTask:
    """Rate the output of ``system`` on ``item_id``."""

    item_id: str
    system: str

    @property
    def systems(self) -> tuple[str, ...]:
        return (self.system,)


Task = ComparisonTask | RatingTask
