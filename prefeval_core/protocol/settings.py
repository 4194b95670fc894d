"""Settings of one run of the annotation-budget protocol (method.md §5, Deriu et al. Alg. 2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

Model = Literal["human_only", "known_mu", "full"]
"""Decision model (method.md §4): exact human-only Dirichlet, metric with fixed ``mu``, full model."""
MuRows = tuple[tuple[float, float, float], tuple[float, float, float], tuple[float, float, float]]
"""A 3 x 3 mixture matrix as nested tuples (rows = metric outcome, columns = human outcome)."""
Sampler = Literal["fast", "nuts"]
"""Sampler of the decision engine for the metric models; ignored by ``human_only`` (exact)."""


@dataclass(frozen=True)
class ProtocolSettings:
    """What a protocol run needs besides the data; stored in the state, serialised with it.

    Attributes:
        budget: ``B``, the total number of human pairwise outcomes that may be revealed; never exceeded.
        batch: ``N``, human outcomes requested per undecided pair and round (paper's policy).
        gamma: significance level of the decision function (``>`` if ``theta > 1 - gamma/2``, ...).
        model: decision model; ``human_only`` ignores the metric (the paper's "Human" row).
        mu: the fixed mixture matrix for ``model="known_mu"``, rows = metric, columns = human,
            each column sums to 1; ``None`` otherwise.
        sampler: ``fast`` (conditionally conjugate Gibbs) or ``nuts`` (reference), for metric models.
        policy: name of the allocation policy in :data:`prefeval_core.protocol.policies.POLICIES`.
        seed: seeds the reveal order (replay) and every round's sampler (same seed, same run).
        human, metric: rater names, for the record (``metric`` ``None``: no metric).
        eps_human, eps_metric: tie thresholds used to turn scores into outcomes (method.md §2), for the record.
    """

    budget: int
    batch: int = 10
    gamma: float = 0.05
    model: Model = "full"
    mu: MuRows | None = None
    sampler: Sampler = "fast"
    policy: str = "paper"
    seed: int = 0
    human: str | None = None
    metric: str | None = None
    eps_human: float = 0.0
    eps_metric: float = 0.0

    def __post_init__(self) -> None:
        if self.budget < 0:
            raise ValueError(f"the budget must be >= 0, got {self.budget}")
        if self.batch < 1:
            raise ValueError(f"the batch size must be >= 1, got {self.batch}")
        if not 0.0 < self.gamma < 1.0:
            raise ValueError(f"gamma must be in (0, 1), got {self.gamma}")
        if self.model not in ("human_only", "known_mu", "full"):
            raise ValueError(f"unknown model {self.model!r}")
        if self.sampler not in ("fast", "nuts"):
            raise ValueError(f"unknown sampler {self.sampler!r}")
        if (self.model == "known_mu") != (self.mu is not None):
            raise ValueError("a fixed mu is needed for model 'known_mu' and only for it")
        if self.mu is not None:
            mu = np.asarray(self.mu, dtype=np.float64)
            if mu.shape != (3, 3) or np.any(mu < 0) or not np.allclose(mu.sum(axis=0), 1.0):
                raise ValueError("mu must be 3 x 3, non-negative, with columns summing to 1")
