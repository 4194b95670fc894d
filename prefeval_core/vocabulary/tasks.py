"""What a human is asked to judge (method.md §12): one output's rating or one pair's comparison;
what one paid judgment is (:data:`Unit`) and what one request buys (:data:`RatingsPerRequest`).

The protocol's requests are made of these tasks, the store files each judgment under one, and
the assignment of tasks to annotators compares them: one definition for all three.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Unit = Literal["ratings", "comparisons"]
"""What one human judgment is (method.md §12): a rating of one output, or a comparison of two."""
RatingsPerRequest = Literal["all", "one", "one_pooled"]
"""What a request for an output buys where the data keep several annotators per output apart
(method.md §13): ``all`` their ratings at once (the mean; each one paid); ``one`` annotator's
rating, the annotator rotated over the items by the seed, never a second (in a comparisons replay,
one annotator's comparison instead of their majority); or ``one_pooled``: one rating, every rating
the study paid in the pool as an (item, annotator) unit (:mod:`~prefeval_core.protocol.annotator_units`;
replays of ratings with a pool statistic)."""


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
