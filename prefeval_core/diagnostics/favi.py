"""The Favi-Score: how much a metric's errors favour one system of a pair (method.md §7).

von Däniken et al. 2024, Def. 8-9 and Lemma 1. For a pair ``(A, B)`` with confusion matrix
``K`` (rows = metric, columns = human, order ``>``, ``=``, ``<``):

* directed error cost ``W[c, h] = v(c) - v(h)`` with ``v(>) = +1, v(=) = 0, v(<) = -1``:
  positive where the metric is kinder to A than the human was;
* ``F = sum(W * K) / E`` with ``E`` the number of errors (off-diagonal items): the expected
  cost of an error, in [-2, 2]; positive = the metric favours A. Equivalently
  ``F = [(M> - M<) - (H> - H<)] / E`` with ``M = K.sum(1)`` and ``H = K.sum(0)`` the
  metric's and the human's outcome counts on the same items (Lemma 1).
* ``F`` is undefined when there is no error: reported as NaN here (``null`` in JSON), never 0.

Posterior **(extension, choice)**: the paper notes (Limitations, "Robustness") that with few
errors ``F`` moves in coarse steps. We put ``q ~ Dirichlet(K + 1)`` over the 9 cells
(uniform prior) and report the distribution of ``F(q) = sum(W * q) / sum(off-diagonal q)``,
the expected error cost under the item distribution ``q``. ``F(q)`` is defined for every
draw (``q > 0`` almost surely), so the interval exists even for a pair without errors: then
it mostly shows the prior. By the aggregation property only the off-diagonal counts move it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from prefeval_core.errors import settings_error
from prefeval_core.vocabulary.outcomes import VALUES

ERROR_COST: npt.NDArray[np.int64] = VALUES[:, None].astype(np.int64) - VALUES[None, :].astype(np.int64)
"""``W[c, h] = v(c) - v(h)``: rows = metric outcome ``c``, columns = human outcome ``h``."""

OFF_DIAGONAL: npt.NDArray[np.bool_] = ~np.eye(3, dtype=bool)
"""Mask of the error cells of a 3x3 confusion matrix."""


def error_counts(K: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Number of errors (off-diagonal items) of each confusion matrix; (..., 3, 3) -> (...)."""
    K = np.asarray(K)
    return np.asarray(K.sum(axis=(-2, -1)) - np.trace(K, axis1=-2, axis2=-1), dtype=np.int64)


def favi_scores(K: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Favi-Score of each confusion matrix, NaN where it has no error; (..., 3, 3) -> (...).

    Values lie in [-2, 2]; positive means the metric favours system A of the pair.
    """
    K = np.asarray(K, dtype=np.float64)
    cost = (K * ERROR_COST).sum(axis=(-2, -1))
    errors = error_counts(K).astype(np.float64)
    safe = np.where(errors > 0, errors, 1.0)
    return np.asarray(np.where(errors > 0, cost / safe, np.nan), dtype=np.float64)


def favi_score(K: npt.ArrayLike) -> float:
    """Favi-Score of one 3x3 confusion matrix; NaN if it has no error."""
    K = np.asarray(K)
    if K.shape != (3, 3):
        raise settings_error(f"a confusion matrix is 3x3, got shape {K.shape}")
    return float(favi_scores(K))


@dataclass(frozen=True)
class FaviPosterior:
    """Posterior of the Favi-Score of every pair under ``q ~ Dirichlet(K + 1)`` (module docstring).

    Attributes:
        samples: (P, S) draws of ``F(q)``, in [-2, 2].
        mean: (P,) posterior mean.
        interval: (P, 2) equal-tailed credible interval ``[lower, upper]``.
        level: the interval's probability mass (e.g. 0.95).
        seed: the seed the draws came from.
    """

    samples: npt.NDArray[np.float64]
    mean: npt.NDArray[np.float64]
    interval: npt.NDArray[np.float64]
    level: float
    seed: int


def favi_posterior(K: npt.ArrayLike, *, seed: int, samples: int = 4000, level: float = 0.95) -> FaviPosterior:
    """Draw the Favi-Score posterior of each confusion matrix ``K`` (P, 3, 3) or (3, 3).

    Args:
        K: confusion counts (rows = metric, columns = human).
        seed: seed of ``np.random.default_rng``; the same seed gives the same draws.
        samples: draws per pair.
        level: mass of the equal-tailed credible interval, in (0, 1).
    """
    if not 0 < level < 1:
        raise settings_error(f"the interval level must be in (0, 1), got {level}")
    K = np.asarray(K, dtype=np.float64).reshape(-1, 3, 3)
    rng = np.random.default_rng(seed)
    alpha = K.reshape(-1, 9) + 1.0
    # A Dirichlet draw is independent Gamma(alpha) draws normalised; F(q) is scale free, so
    # the normalisation cancels and the Gamma draws can be used as they are.
    gamma = rng.gamma(alpha[:, None, :], size=(alpha.shape[0], samples, 9)).reshape(-1, samples, 3, 3)
    draws = (gamma * ERROR_COST).sum(axis=(-2, -1)) / (gamma * OFF_DIAGONAL).sum(axis=(-2, -1))
    tail = (1 - level) / 2
    interval = np.quantile(draws, [tail, 1 - tail], axis=1).T if len(draws) else np.empty((0, 2))
    return FaviPosterior(samples=draws, mean=draws.mean(axis=1), interval=interval, level=level, seed=seed)


@dataclass(frozen=True)
class SystemFavi:
    """The Favi-Scores of one system against every other, oriented so that positive favours it.

    Pairs without an error (undefined score) are left out.

    Attributes:
        system: the system.
        opponents: the other system of each score.
        scores: Favi-Score per opponent, in [-2, 2]; positive = the metric favours ``system``.
        errors: errors of each pair (the score's denominator).
    """

    system: str
    opponents: tuple[str, ...]
    scores: tuple[float, ...]
    errors: tuple[int, ...]


def system_favi(pairs: Sequence[tuple[str, str]], favi: npt.ArrayLike, errors: npt.ArrayLike | None = None) -> dict[str, SystemFavi]:
    """Per-system view (von Däniken et al. Sec. 7.1, Fig. 6): every system's oriented scores.

    ``favi[p]`` is the score of ``pairs[p] = (A, B)`` (positive favours A); A gets ``F`` and B
    gets ``-F`` (swapping a pair negates ``F``). Systems are sorted by name.
    """
    favi = np.asarray(favi, dtype=np.float64)
    errors_arr = np.zeros(len(pairs), dtype=np.int64) if errors is None else np.asarray(errors, dtype=np.int64)
    entries: dict[str, list[tuple[str, float, int]]] = {s: [] for s in sorted({s for pair in pairs for s in pair})}
    for (a, b), score, count in zip(pairs, favi, errors_arr, strict=True):
        if np.isnan(score):
            continue
        entries[a].append((b, float(score), int(count)))
        entries[b].append((a, 0.0 - float(score), int(count)))  # 0.0 - x: no -0.0 for a zero score
    return {
        system: SystemFavi(
            system=system,
            opponents=tuple(e[0] for e in rows),
            scores=tuple(e[1] for e in rows),
            errors=tuple(e[2] for e in rows),
        )
        for system, rows in entries.items()
    }
