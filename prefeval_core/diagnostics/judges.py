"""Several judges (metrics, LLM judges, single annotators) side by side against one human reference.

Input: ``(S, I)`` score grids (higher is better, NaN where a rater gave no score) on the same
systems and items. For one judge against the reference, only the cells both scored count.

* **sample accuracy**: over every pair of systems and every item both have in common, the share
  of item outcomes (``>``, ``=``, ``<``; the judge's score differences up to ``eps`` are ties, the
  reference's exact ties are ties) on which judge and reference agree (method.md §7, Def. 10);
* **system accuracy**: the share of pairs of systems that the judge's *mean scores* order the
  same way as the reference's mean scores (equal means only match equal means). This is not
  the paper's system-level sign accuracy (which counts item wins): it asks whether the judge's
  leaderboard puts each pair in the reference's order;
* **Kendall τ**: tau-b between the two vectors of system means;
* **inversions**: pairs of systems whose two mean-score orders are opposite;
* **Favi-Score at the boundary**: mean |Favi-Score| (method.md §7; confusion rows = judge,
  columns = reference) over the pairs with one system in the reference's top k by mean score
  and one outside it — the pairs whose errors can change a top-k answer (NaN: no error there);
* **moved**: systems on the other side of the top-k boundary under the judge's means.

The verdict (:data:`VERDICT_RULE`): *use it* when system accuracy is at least the reference
bar and nobody is moved across the top-k boundary; *don't* when system accuracy is below 0.7
or Kendall τ below 0.5; *use with care* otherwise.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from prefeval_core.diagnostics.favi import favi_scores
from prefeval_core.diagnostics.kendall import tau_b
from prefeval_core.vocabulary.outcomes import codes_from_differences

Verdict = Literal["use it", "use with care", "don't"]
DONT_ACCURACY = 0.7
DONT_TAU = 0.5
DEFAULT_BAR = 0.9
VERDICT_RULE = (
    "use it: system accuracy at least the bar ({bar:.0%}: a typical single annotator's, or a fixed bar) and no system moved across the "
    f"top-k boundary; don't: system accuracy below {DONT_ACCURACY:.0%} or Kendall τ below {DONT_TAU}; use with care: otherwise."
)
"""How a verdict is reached (``bar`` filled in by the caller's :func:`verdict`)."""


@dataclass(frozen=True)
class JudgeFigures:
    """One judge against the reference (module docstring).

    Attributes:
        judge: its name.
        systems: systems both rated (sorted as given); items: cells both scored.
        sample_accuracy, system_accuracy: shares in [0, 1] (NaN: nothing to compare).
        kendall_tau: tau-b of the system means.
        inversions: pairs ordered oppositely by mean score; pairs: pairs compared.
        boundary_favi: mean |Favi-Score| over the pairs straddling the reference's top-k boundary.
        moved: systems the judge's means put on the other side of the top-k boundary.
        k: the k of the boundary.
    """

    judge: str
    systems: tuple[str, ...]
    items: int
    sample_accuracy: float
    system_accuracy: float
    kendall_tau: float
    inversions: int
    pairs: int
    boundary_favi: float
    moved: tuple[str, ...]
    k: int


def judge_figures(
    judge: str, systems: Sequence[str], reference: npt.NDArray[np.float64], scores: npt.NDArray[np.float64], *, k: int = 1, eps: float = 0.0
) -> JudgeFigures:
    """The :class:`JudgeFigures` of ``scores`` (S, I) against ``reference`` (S, I); ``eps``: the judge's tie threshold."""
    both = ~np.isnan(reference) & ~np.isnan(scores)
    kept = np.flatnonzero(both.any(axis=1))
    names = tuple(str(systems[int(s)]) for s in kept)
    ref_mean = np.array([reference[s, both[s]].mean() for s in kept])
    judge_mean = np.array([scores[s, both[s]].mean() for s in kept])
    pairs = list(itertools.combinations(range(len(kept)), 2))
    K = np.zeros((len(pairs), 3, 3), dtype=np.int64)
    for p, (x, y) in enumerate(pairs):
        a, b = kept[x], kept[y]
        joint = both[a] & both[b]
        human = codes_from_differences(reference[a, joint] - reference[b, joint], 0.0)
        metric = codes_from_differences(scores[a, joint] - scores[b, joint], eps)
        np.add.at(K[p], (metric, human), 1)
    total = K.sum()
    sample = float(np.trace(K, axis1=1, axis2=2).sum() / total) if total else np.nan
    ref_sign = np.array([np.sign(ref_mean[x] - ref_mean[y]) for x, y in pairs])
    judge_sign = np.array([np.sign(judge_mean[x] - judge_mean[y]) for x, y in pairs])
    system = float(np.mean(ref_sign == judge_sign)) if pairs else np.nan
    inversions = int(np.sum(ref_sign * judge_sign < 0))
    top = min(k, len(kept))
    ref_top = set(np.argsort(-ref_mean, kind="stable")[:top].tolist())
    judge_top = set(np.argsort(-judge_mean, kind="stable")[:top].tolist())
    straddle = [p for p, (x, y) in enumerate(pairs) if (x in ref_top) != (y in ref_top)]
    favi = favi_scores(K[straddle]) if straddle else np.array([np.nan])
    boundary = float(np.nanmean(np.abs(favi))) if np.any(~np.isnan(favi)) else np.nan
    return JudgeFigures(
        judge=judge,
        systems=names,
        items=int(both.sum()),
        sample_accuracy=sample,
        system_accuracy=system,
        kendall_tau=tau_b(ref_mean, judge_mean) if len(kept) > 1 else np.nan,
        inversions=inversions,
        pairs=len(pairs),
        boundary_favi=boundary,
        moved=tuple(sorted(names[s] for s in ref_top ^ judge_top)),
        k=k,
    )


def verdict(figures: JudgeFigures, bar: float) -> Verdict:
    """The plain verdict on a judge (module docstring); ``bar``: the system accuracy to reach."""
    if figures.system_accuracy < DONT_ACCURACY or figures.kendall_tau < DONT_TAU:
        return "don't"
    if figures.system_accuracy >= bar and not figures.moved:
        return "use it"
    return "use with care"
