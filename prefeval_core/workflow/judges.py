"""Judges side by side (:mod:`prefeval_core.diagnostics.judges`) on a dataset, with a verdict on each.

All raters are compared on the systems that the human rater and every judge scored (the same
systems for everyone, so the figures are comparable). Where the data keep the human rater's
annotators apart (raters ``<human>:<annotator>`` whose mean is its score, e.g. SummEval's three
experts; :mod:`~prefeval_core.data.annotators`), each annotator is compared with the mean of the
*other* annotators (leave-one-out: an annotator is not compared with a mean that contains its own
scores); where annotators are nested in outputs (a crowd), the k-th rating of every output stands
for a single annotator; the median annotator's system accuracy is the bar a
judge must reach to be called *use it* (as good as a typical single annotator). Without annotators the bar is
:data:`~prefeval_core.diagnostics.judges.DEFAULT_BAR`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from prefeval_core.data.annotators import annotator_places, annotator_scores
from prefeval_core.data.dataset import Dataset
from prefeval_core.diagnostics.judges import DEFAULT_BAR, VERDICT_RULE, JudgeFigures, Verdict, judge_figures, verdict
from prefeval_core.errors import settings_error


@dataclass(frozen=True)
class JudgeComparison:
    """Judges against one human rater.

    Attributes:
        human: the reference rater; k: the top-k boundary the figures look at.
        systems: the systems compared (scored by the human rater and every judge).
        judges: one :class:`JudgeFigures` per judge, in the order asked.
        verdicts: one verdict per judge.
        annotators: each single annotator against the others' mean (empty if the data have none).
        bar: the system accuracy a judge must reach for *use it*.
    """

    human: str
    k: int
    systems: tuple[str, ...]
    judges: tuple[JudgeFigures, ...]
    verdicts: tuple[Verdict, ...]
    annotators: tuple[JudgeFigures, ...]
    bar: float

    @property
    def rule(self) -> str:
        """How the verdicts were reached, in words."""
        return VERDICT_RULE.format(bar=self.bar)

    def reference_note(self) -> str:
        """Which reference the annotators had, in words."""
        if not self.annotators:
            return f"The data publish only {self.human} (no single annotator kept apart): the bar is {DEFAULT_BAR:.0%}."
        singles = f"Single annotators ({len(self.annotators)})"
        if all(":#" in a.judge for a in self.annotators):
            singles = f"The k-th ratings of the outputs (#1 to #{len(self.annotators)}: the annotators are nested in outputs)"
        return (
            f"{singles} are each compared with the mean of the others; the judges with "
            f"{self.human}. The bar is the median annotator's system accuracy, {self.bar:.0%}."
        )


def _grid(dataset: Dataset, rater: str, systems: Sequence[str], items: Sequence[str]) -> npt.NDArray[np.float64]:
    rows = dataset.ratings[dataset.ratings["rater"] == rater]
    wide = rows.pivot_table(index="system", columns="item_id", values="score", aggfunc="mean")
    return wide.reindex(index=list(systems), columns=list(items)).to_numpy(dtype=np.float64)


def _single_annotators(
    dataset: Dataset, human: str, systems: Sequence[str], items: Sequence[str]
) -> tuple[tuple[str, ...], npt.NDArray[np.float64]]:
    """The names ``<human>:<annotator>`` and (A, S, I) score grids of ``human``'s single
    annotators (:func:`~prefeval_core.data.annotators.annotator_scores`). Where annotators are
    nested in outputs (a crowd) each "annotator" is a place, the k-th rating of every output
    (``<human>:#k``, :func:`~prefeval_core.data.annotators.annotator_places`): one rating of each
    output, as a single annotator gives, rather than a worker who rated a few."""
    annotated = annotator_places(annotator_scores(dataset.ratings, human))
    names = sorted(annotated["annotator"].astype(str).unique().tolist())
    grids = np.full((len(names), len(systems), len(items)), np.nan)
    a = pd.Index(names).get_indexer(annotated["annotator"].astype(str))
    s = pd.Index(systems).get_indexer(annotated["system"].astype(str))
    i = pd.Index([str(item) for item in items]).get_indexer(annotated["item_id"].astype(str))
    keep = (s >= 0) & (i >= 0)
    grids[a[keep], s[keep], i[keep]] = annotated["score"].to_numpy(dtype=np.float64)[keep]
    return tuple(f"{human}:{name}" for name in names), grids


def compare_judges(dataset: Dataset, human: str, judges: Sequence[str], *, k: int = 1, eps: float = 0.0) -> JudgeComparison:
    """Every judge of ``judges`` against ``human`` (module docstring); ``eps``: the judges' tie threshold.

    Raises:
        SettingsError: no judge, a rater that gives no scores, or no system every rater scored.
    """
    scalar = set(dataset.ratings["rater"].unique())
    missing = [r for r in (human, *judges) if r not in scalar]
    if not judges or missing:
        raise settings_error(f"judges are compared on scores: {', '.join(missing) or 'no judge'} given none", field="judges")
    items = dataset.items
    grids = {r: _grid(dataset, r, dataset.systems, items) for r in (human, *judges)}
    common = np.all([~np.isnan(g).all(axis=1) for g in grids.values()], axis=0)
    if common.sum() < 2:
        raise settings_error("fewer than two systems are scored by the human rater and every judge", field="judges")
    systems = tuple(s for s, keep in zip(dataset.systems, common, strict=True) if keep)
    reference = grids[human][common]
    figures = tuple(judge_figures(j, systems, reference, grids[j][common], k=k, eps=eps) for j in judges)
    names, singles = _single_annotators(dataset, human, systems, items)
    total, seen = np.nansum(singles, axis=0), (~np.isnan(singles)).sum(axis=0)
    against_others = []
    for name, grid in zip(names, singles, strict=True):
        others = seen - ~np.isnan(grid)  # leave-one-out: the others' mean, NaN where nobody else scored it
        mean = np.where(others > 0, (total - np.nan_to_num(grid)) / np.maximum(others, 1), np.nan)
        against_others.append(judge_figures(name, systems, mean, grid, k=k))
    bar = float(np.median([a.system_accuracy for a in against_others])) if len(names) > 1 else DEFAULT_BAR
    return JudgeComparison(
        human=human,
        k=k,
        systems=systems,
        judges=figures,
        verdicts=tuple(verdict(f, bar) for f in figures),
        annotators=tuple(against_others) if len(names) > 1 else (),
        bar=bar,
    )


def judges_frame(comparison: JudgeComparison) -> pd.DataFrame:
    """One row per judge, then one per single annotator: the figures and the verdict."""

    def row(f: JudgeFigures, kind: str, word: str) -> dict[str, object]:
        return {
            "judge": f.judge,
            "kind": kind,
            "verdict": word,
            "sample accuracy": f.sample_accuracy,
            "system accuracy (means)": f.system_accuracy,
            "Kendall τ (means)": f.kendall_tau,
            "inversions": f"{f.inversions} of {f.pairs}",
            f"|Favi| at the top-{comparison.k} boundary": f.boundary_favi,
            f"moved across the top-{comparison.k} boundary": ", ".join(f.moved) or "none",
            "scored outputs": f.items,
        }

    rows = [row(f, "judge", v) for f, v in zip(comparison.judges, comparison.verdicts, strict=True)]
    rows += [row(a, "annotator (vs the others' mean)", "reference") for a in comparison.annotators]
    return pd.DataFrame(rows)


def judge_candidates(dataset: Dataset, human: str) -> tuple[str, ...]:
    """Raters that can be compared with ``human`` as judges: every non-human rater that gives scores."""
    scalar = set(dataset.ratings["rater"].unique())
    return tuple(r for r in dataset.raters if r in scalar and r not in dataset.human_raters and r != human)


def default_judges(dataset: Dataset, human: str, checked: str, study: Sequence[str] = (), *, most: int = 4) -> tuple[str, ...]:
    """The judges to compare by default: ``checked``, the study's metrics, then the judges of the human
    rater's dimension (``rater:<dimension>``) — those that give scores, each once, at most ``most``."""
    candidates = judge_candidates(dataset, human)
    dimension = human.rsplit(":", 1)[-1] if ":" in human else None
    same = [r for r in candidates if dimension is not None and r.endswith(f":{dimension}")]
    return tuple(r for r in dict.fromkeys([checked, *study, *same]) if r in candidates)[:most]
