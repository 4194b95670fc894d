"""What each rater of the data is, on arrival: its role, its direction, its scale, and
what looks wrong, so the Data page can say it before anyone picks a rater.

* **Role** from the name (editable on the Data page): ``human`` or ``human:<criterion>`` is a
  *human* rater (the trusted score, a mean over annotators where there are several);
  ``human:<criterion>:<annotator>`` is one *annotator* (never offered as a metric);
  a name naming a language model or a judge (:data:`JUDGE_NAME`, e.g. ``llm:gpt4:relevance``,
  ``gpt-4-0314-rts:relevance``, ``pandalm``) is an *LLM judge*; anything else a *metric*.
* **Criterion**: ``human:<criterion>...`` names it; a judge or metric ``...:<criterion>`` names
  it as its last part. A judge is **paired** with the human rater of its criterion
  (``human:relevance`` <-> ``llm:gpt4:relevance``).
* **Direction**: prefeval takes higher as better. A name that says penalty, error count, length
  or repetition (:data:`LOWER_NAME`: TER, WER, length, repetition, errors, MQM, penalty,
  perplexity) whose scores are non-negative with some above zero is *lower is better*; the same
  name stored as negated penalties (every score <= 0, as the bundled WMT data store MQM and
  TER, see their READMEs) is higher is better. A lower-is-better rater is not offered as a
  metric as it stands; :func:`negated_raters_file` adds its higher-is-better copy ``neg_<name>``.
* **Scale**: the observed range. A judge's score outside its paired human's observed range is
  flagged (``judge -0.79 on a 1-5 scale``).
* **Warnings** of one kind in one file read as one line with a count (:func:`group_problems`).
* **Agreement**: the annotators of one criterion whose mean pairwise Pearson correlation on the
  outputs they both scored is below :data:`LOW_AGREEMENT` are flagged.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

import numpy as np
import pandas as pd
from scipy import sparse

from prefeval_core.data.dataset import Dataset
from prefeval_core.errors import Problem

RaterRole = Literal["human", "annotator", "metric", "judge"]
"""What a rater is: the human score (a mean where several annotators), one annotator, a metric, an LLM judge."""
Direction = Literal["higher", "lower"]
"""Which way is better for a rater's scores."""

ROLE_WORDS: Final[dict[RaterRole, str]] = {
    "human": "human (the trusted score)",
    "annotator": "one annotator",
    "metric": "metric",
    "judge": "LLM judge",
}
JUDGE_NAME: Final = re.compile(r"^llm:|gpt|claude|llama|gemini|mistral|qwen|judge|pandalm|palm|deepseek", re.IGNORECASE)
"""A name that says an LLM judge."""
LOWER_NAME: Final = re.compile(r"(^|[^a-z])(ter|wer|length|len|repetitions?|errors?|mqm|penalty|perplexity|ppl)([^a-z]|$)", re.IGNORECASE)
"""A name that says lower is better (when its scores are positive penalties, not negated ones)."""
LOW_AGREEMENT: Final = 0.3
"""Mean pairwise Pearson correlation below which a criterion's annotators are flagged."""


@dataclass(frozen=True)
class RaterProfile:
    """One rater as the data show it.

    Attributes:
        name: the rater's name in the data.
        role: see :data:`RaterRole`.
        direction: ``higher`` or ``lower`` is better (see the module docstring).
        criterion: what it judges (from the name), or ``None``.
        low, high: the observed range of its scores (``None`` for a pairwise rater).
        scores: how many scores (or pairwise labels) it gave.
        paired_human: for a judge or metric, the human rater of the same criterion, if any.
        flags: what looks wrong, in words (empty: nothing).
    """

    name: str
    role: RaterRole
    direction: Direction
    criterion: str | None
    low: float | None
    high: float | None
    scores: int
    paired_human: str | None
    flags: tuple[str, ...]


def rater_role(name: str) -> RaterRole:
    """The role the name states (module docstring)."""
    parts = name.split(":")
    if parts[0] == "human":
        return "human" if len(parts) <= 2 else "annotator"
    return "judge" if JUDGE_NAME.search(name) else "metric"


def criterion_of(name: str) -> str | None:
    """``human:<c>[:<annotator>]`` -> ``c``; ``<judge or metric>:<c>`` -> ``c``; else ``None``."""
    parts = name.split(":")
    if parts[0] == "human":
        return parts[1] if len(parts) > 1 and parts[1] else None
    return parts[-1] if len(parts) > 1 and parts[-1] else None


def direction_of(name: str, scores: np.ndarray) -> Direction:
    """``lower`` for a penalty-like name (:data:`LOWER_NAME`) whose scores are non-negative with
    some above zero; otherwise ``higher``."""
    if LOWER_NAME.search(name.replace("_", " ")) and len(scores) and scores.min() >= 0 and scores.max() > 0:
        return "lower"
    return "higher"


def _annotator_agreement(ratings: pd.DataFrame, annotators: list[str]) -> float | None:
    """Mean pairwise Pearson correlation of ``annotators`` on the outputs both scored (``None``: no
    pair shares 3 outputs with some spread in both). Every pair at once from sums over the outputs
    each pair shares (sparse products: a crowd of hundreds rates few outputs each)."""
    chosen = ratings[ratings["rater"].isin(annotators)]
    output = chosen.groupby(["item_id", "system"], sort=False).ngroup().to_numpy()
    rater, names = pd.factorize(chosen["rater"])
    shape = (int(output.max()) + 1 if len(output) else 0, len(names))
    score = chosen["score"].to_numpy(dtype=np.float64)
    score = score - score.mean() if len(score) else score  # centred: the sums below lose no precision
    rated = sparse.csr_matrix((np.ones(len(score)), (output, rater)), shape=shape)
    x = sparse.csr_matrix((score, (output, rater)), shape=shape)
    shared = (rated.T @ rated).toarray()  # outputs both rated
    sum_a = (x.T @ rated).toarray()  # [a, b]: a's scores summed over the outputs a and b share
    square_a = (x.multiply(x).T @ rated).toarray()
    with np.errstate(invalid="ignore", divide="ignore"):
        cross = (x.T @ x).toarray() - sum_a * sum_a.T / shared
        var_a = square_a - sum_a**2 / shared
        var_b = var_a.T
        correlation = cross / np.sqrt(var_a * var_b)
    tolerance = 1e-12 * np.maximum(square_a, square_a.T).clip(min=1.0)
    upper = np.triu(np.ones_like(shared, dtype=bool), k=1)
    valid = upper & (shared >= 3) & (var_a > tolerance) & (var_b > tolerance)
    return float(np.clip(correlation[valid], -1.0, 1.0).mean()) if valid.any() else None


def profile_raters(dataset: Dataset) -> tuple[RaterProfile, ...]:
    """Every rater of ``dataset`` with role, direction, criterion, range, pairing and flags, in
    the data's rater order."""
    ratings = dataset.ratings
    grouped = {str(name): frame["score"].to_numpy(dtype=float) for name, frame in ratings.groupby("rater")}
    pairwise = dataset.preferences["rater"].value_counts().to_dict() if not dataset.preferences.empty else {}
    humans = {criterion_of(r): r for r in dataset.raters if rater_role(r) == "human"}
    annotators: dict[str | None, list[str]] = {}
    for rater in dataset.raters:
        if rater_role(rater) == "annotator":
            annotators.setdefault(criterion_of(rater), []).append(rater)
    low_agreement = {
        c
        for c, names in annotators.items()
        if len(names) > 1 and (a := _annotator_agreement(ratings, names)) is not None and a < LOW_AGREEMENT
    }
    profiles = []
    for name in dataset.raters:
        role, criterion = rater_role(name), criterion_of(name)
        scores = grouped.get(name, np.empty(0))
        paired = humans.get(criterion) if role in ("judge", "metric") and criterion is not None else None
        flags: list[str] = []
        direction = direction_of(name, scores)
        if direction == "lower":
            flags.append("lower is better (by its name and its positive scores); prefeval takes higher as better")
        if paired is not None and len(scores) and paired in grouped:
            h_low, h_high = float(grouped[paired].min()), float(grouped[paired].max())
            outside = scores[(scores < h_low) | (scores > h_high)]
            if len(outside) and role == "judge":
                flags.append(f"{len(outside):,} scores outside the human scale {h_low:g}–{h_high:g} (e.g. {outside[0]:g})")
        if role == "annotator" and criterion in low_agreement:
            flags.append(f"the annotators of {criterion} agree little (mean correlation below {LOW_AGREEMENT:g})")
        low, high = (float(scores.min()), float(scores.max())) if len(scores) else (None, None)
        count = len(scores) + int(pairwise.get(name, 0))
        profiles.append(RaterProfile(name, role, direction, criterion, low, high, count, paired, tuple(flags)))
    return tuple(profiles)


def default_raters(profiles: tuple[RaterProfile, ...], ratings: pd.DataFrame | None = None) -> tuple[str | None, tuple[str, ...]]:
    """The human rater and metrics to open with: the human rater with the most scores (ties:
    the data's order); the judge paired with its criterion, else the higher-is-better metric or
    judge whose scores correlate best (Pearson, on the outputs both scored) with that human rater
    in ``ratings`` (the data's long ratings; without them, or with no overlap, the first such
    metric); no metric when the data hold none (human only). ``(None, ())`` without any human rater."""
    humans = [p for p in profiles if p.role == "human"]
    if not humans:
        return None, ()
    human = max(humans, key=lambda p: p.scores)
    paired = [p.name for p in profiles if p.paired_human == human.name and p.role == "judge" and p.direction == "higher"]
    if paired:
        return human.name, (paired[0],)
    metrics = [p.name for p in profiles if p.role in ("metric", "judge") and p.direction == "higher"]
    if ratings is None or len(metrics) < 2:
        return human.name, tuple(metrics[:1])
    wide = ratings[ratings["rater"].isin([human.name, *metrics])].pivot_table(index=["item_id", "system"], columns="rater", values="score")
    if human.name not in wide:
        return human.name, (metrics[0],)
    correlation = {m: wide[[human.name, m]].dropna().corr().iloc[0, 1] if m in wide else np.nan for m in metrics}
    best = max(metrics, key=lambda m: -np.inf if np.isnan(correlation[m]) else correlation[m])
    return human.name, (best,)


@dataclass(frozen=True)
class ProblemGroup:
    """Problems of one kind in one file, summarised: how many, and the first as an example."""

    severity: str
    kind: str
    file: str | None
    count: int
    example: str

    def line(self) -> str:
        """One line: the example, and how many more like it."""
        more = f" (and {self.count - 1:,} more like this)" if self.count > 1 else ""
        return f"{self.example}{more}"


def group_problems(problems: Sequence[Problem]) -> tuple[ProblemGroup, ...]:
    """``problems`` grouped by (severity, kind, file), in the order each group first appears, so
    259 warnings of one kind read as one line with a count."""
    groups: dict[tuple[str, str, str | None], list[Problem]] = {}
    for problem in problems:
        groups.setdefault((problem.severity, problem.kind, problem.file), []).append(problem)
    return tuple(ProblemGroup(s, k, f, len(found), str(found[0])) for (s, k, f), found in groups.items())


NEGATED_PREFIX: Final = "neg_"
"""Prefix of a lower-is-better rater's higher-is-better copy (:func:`negated_raters_file`)."""


def negated_raters_file(dataset: Dataset, raters: Sequence[str]) -> tuple[str, bytes]:
    """A long ratings CSV (``item_id, system, rater, score``) holding, for each of ``raters``
    (lower is better), the rater ``neg_<name>`` with every score negated: higher is better, as
    prefeval takes every rater. To load along with the data (a data choice's computed files)."""
    ratings = dataset.ratings[dataset.ratings["rater"].isin(list(raters))]
    copy = ratings.assign(rater=NEGATED_PREFIX + ratings["rater"], score=-ratings["score"])[["item_id", "system", "rater", "score"]]
    return f"computed-negated-{'-'.join(sorted(raters))}.csv", copy.to_csv(index=False).encode()
