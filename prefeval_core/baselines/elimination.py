"""Successive elimination for the best system (top-1) on paired score differences: an anchor for
prefeval's top-1 question in a ratings study (method.md §13; issue 18).

The rule (Even-Dar, Mannor & Mansour 2006, *Action elimination and stopping conditions for the
multi-armed and reinforcement learning problems*, JMLR 7, Alg. "successive elimination", here with
paired differences and a fixed item order):

* the items are revealed in a given order (the study's seeded order), ``batch`` items per look, for
  every system still *active*; a look's cost is the judgments behind the active systems' scores on
  its items;
* at each look, the *leader* L is the active system with the highest mean over the revealed items;
  every other active system X gets a one-sided lower confidence bound on the mean of the paired
  differences ``d_i = s(L, i) - s(X, i)`` (items both have), and X is eliminated when it is above 0;
* the run stops when one system is active or the items run out; the answer is the active set.

**Union bound.** Each bound has one-sided level ``a = gamma / (K * S * (S - 1))`` with ``K`` the
number of looks the pool allows (``ceil(items / batch)``) and ``S`` the number of systems: a true
best system X (none has a higher mean) is eliminated only if, at some look, the bound of some
``(L, X)`` misses its mean ``<= 0``; whichever leader the data pick, that is one of ``K (S - 1)``
events per best system and at most ``S`` best systems, so P(any true best system eliminated) <= γ
(Bonferroni over looks, leaders and tied best systems).

**Bounds** (``bound``):

* ``"t"``: Student's t, ``mean - t_{1-a, n-1} sd / sqrt(n)`` (``sd`` with ``n - 1``); exact for
  normal differences, asymptotically valid otherwise (Student 1908). It is what a practitioner runs.
* ``"hoeffding"``: ``mean - 2 R sqrt(log(1/a) / (2 n))`` for differences in ``[-R, R]`` (Hoeffding
  1963, *Probability inequalities for sums of bounded random variables*, JASA, Thm. 2; by his §6 it
  holds for sampling without replacement from the pool too): exact, and wide.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy.stats import t as student_t

from prefeval_core.errors import settings_error

Bound = Literal["t", "hoeffding"]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class EliminationRun:
    """One successive-elimination run.

    Attributes:
        members: (S,) bool, the systems still active at the end (the top-1 answer).
        cost: judgments revealed (sum of ``cost`` over the active systems' revealed cells).
        looks: looks taken.
        level: the one-sided level ``a`` of every bound.
    """

    members: npt.NDArray[np.bool_]
    cost: int
    looks: int
    level: float


def successive_elimination(
    scores: npt.ArrayLike,
    cost: npt.ArrayLike,
    *,
    batch: int,
    gamma: float,
    score_range: float,
    bound: Bound = "t",
) -> EliminationRun:
    """Run successive elimination for the best system (module docstring).

    Args:
        scores: (S, T) human scores, columns in the order items are revealed; NaN where a system
            has no score on an item (never revealed, costs nothing).
        cost: (S, T) judgments behind each score (what revealing it costs).
        batch: items per look (>= 1).
        gamma: the error level γ in (0, 1): P(a true best system is eliminated) <= γ.
        score_range: ``R``, the largest possible ``|d|`` (the scale's max minus min); used by
            ``"hoeffding"`` only.
        bound: ``"t"`` or ``"hoeffding"``.

    Raises:
        SettingsError: bad ``batch``, ``gamma``, ``score_range`` or ``bound``, or mismatched shapes.
    """
    values = np.asarray(scores, dtype=np.float64)
    price = np.asarray(cost, dtype=np.int64)
    if values.ndim != 2 or price.shape != values.shape:
        raise settings_error(f"scores and cost must be (S, T) of one shape, got {values.shape} and {price.shape}")
    if batch < 1 or not 0.0 < gamma < 1.0 or not score_range > 0 or bound not in ("t", "hoeffding"):
        raise settings_error(f"bad settings: batch {batch}, gamma {gamma}, score_range {score_range}, bound {bound!r}")
    S, T = values.shape
    looks_allowed = max(math.ceil(T / batch), 1)
    level = gamma / (looks_allowed * S * max(S - 1, 1))
    active = np.ones(S, dtype=bool)
    spent, looks = 0, 0
    for end in range(batch, T + batch, batch):
        start, end = end - batch, min(end, T)
        window = np.isfinite(values[:, start:end]) & active[:, None]
        spent += int(price[:, start:end][window].sum())
        looks += 1
        active &= ~_eliminated(values[:, :end], active, level, score_range, bound)
        if active.sum() <= 1:
            break
    return EliminationRun(members=active, cost=spent, looks=looks, level=level)


def _eliminated(values: FloatArray, active: npt.NDArray[np.bool_], level: float, score_range: float, bound: Bound) -> npt.NDArray[np.bool_]:
    """(S,) active systems whose lower bound against the leader is above 0 at this look."""
    seen = np.isfinite(values)
    totals = np.where(seen, values, 0.0).sum(axis=1)
    counts = seen.sum(axis=1)
    means = np.where(active & (counts > 0), totals / np.maximum(counts, 1), -np.inf)
    leader = int(np.argmax(means))
    out = np.zeros(len(values), dtype=bool)
    for x in np.flatnonzero(active):
        if x == leader:
            continue
        d = values[leader] - values[x]
        d = d[np.isfinite(d)]
        out[x] = lower_bound(d, level, score_range, bound) > 0.0
    return out


def lower_bound(d: FloatArray, level: float, score_range: float, bound: Bound) -> float:
    """One-sided ``1 - level`` lower confidence bound on the mean of the differences ``d``
    (module docstring); ``-inf`` with fewer than 2 differences."""
    n = len(d)
    if n < 2:
        return -math.inf
    mean = float(d.mean())
    if bound == "hoeffding":
        return mean - 2.0 * score_range * math.sqrt(math.log(1.0 / level) / (2.0 * n))
    spread = float(d.std(ddof=1))
    return mean - _t_quantile(level, n - 1) * spread / math.sqrt(n)


@lru_cache(maxsize=4096)
def _t_quantile(level: float, dof: int) -> float:
    """Student t's upper ``level`` quantile (one level per run, a few sample sizes: cached)."""
    return float(student_t.ppf(1.0 - level, dof))
