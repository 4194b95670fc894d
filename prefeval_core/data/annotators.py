"""The annotators behind a human rater's scores, where the data keep them apart (method.md §2,
§12-§13): who they are, what the study paid for each score, and the units one rating at a time
can buy.

A human rater's annotators are its sub-raters ``<rater>:<name>`` (``human:relevance:expert1``; a
file's ``annotator`` column gives them those names, ``human::<name>`` for ``human``) whose mean,
for ratings, or majority, for comparisons, is the rater's own score.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from prefeval_core.vocabulary.outcomes import BETTER, TIE, WORSE


def annotator_scores(ratings: pd.DataFrame, rater: str) -> pd.DataFrame:
    """``item_id, system, annotator, score``: the ratings of the annotators behind ``rater``'s
    scores (method.md §12-§13).

    The candidates are its ``<rater>:<name>`` sub-raters (for ``human`` also ``human::<name>``, the
    name a file's ``annotator`` column gives them: :func:`annotator_rater_names`). A sub-rater whose
    scores are something else than an annotator's (WMT's DA scores beside MQM; one judgment normalised two ways) breaks
    the rule that the annotators' mean is the rater's score: sub-raters are dropped, one at a time
    (the one whose removal makes the mean agree on the most outputs), while that improves the
    agreement. The annotators' ratings are then kept on the outputs where their mean is the score;
    sub-raters whose mean is the score on fewer than half of the outputs they rated are no
    annotators at all (WMT20's DA beside MQM: the same value on 1 output of 6,601 by chance).
    """
    own = ratings.loc[ratings["rater"] == rater, ["item_id", "system", "score"]]
    prefix = rater + ":"
    members = _sub_rater_rows(ratings, rater)
    if members.empty:
        return pd.DataFrame({"item_id": [], "system": [], "annotator": [], "score": []})
    members = members.merge(own.rename(columns={"score": "own"}), on=["item_id", "system"], how="inner")
    scale = max(float(np.ptp(own["score"].to_numpy(dtype=np.float64))), 1.0) if len(own) else 1.0
    agreement = _MeanAgreement(members, tolerance=1e-6 * scale)
    active = np.ones(len(agreement.names), dtype=bool)
    agreeing = agreement.outputs(active)
    while active.any():  # drop the sub-rater whose removal makes the mean agree on the most outputs (ties: the last name)
        without = agreement.counts_without_each(active, agreeing)
        best = int(np.flatnonzero(without == without.max())[-1])
        if without[best] <= agreeing.sum():
            break
        active[best] = False
        agreeing = agreement.outputs(active)
    covered = np.bincount(agreement.output, weights=active[agreement.name], minlength=len(agreeing)) > 0
    if 2 * int(agreeing.sum()) < int(covered.sum()):
        active[:] = False
    kept = members[active[agreement.name] & agreeing[agreement.output]]
    return pd.DataFrame(
        {
            "item_id": kept["item_id"],
            "system": kept["system"],
            "annotator": kept["rater"].str.slice(len(prefix)).str.removeprefix(":"),
            "score": kept["score"],
        }
    )


def annotator_rater_names(raters: pd.Series, annotators: pd.Series) -> pd.Series:
    """The rater names of annotators of human raters: ``<rater>:<annotator>``, and
    ``human::<annotator>`` for ``human`` (whose ``human:<name>`` would read as a criterion)."""
    return raters.where(raters != "human", "human:") + ":" + annotators


def keeps_annotators(raters: pd.Series) -> pd.Series:
    """Whether each rater's annotators are kept apart when a file names them: ``human`` and
    ``human:<criterion>`` (not a metric's samples, not an annotator's)."""
    return (raters == "human") | (raters.str.startswith("human:") & (raters.str.count(":") == 1))


def _sub_rater_rows(frame: pd.DataFrame, rater: str) -> pd.DataFrame:
    """The rows of ``rater``'s sub-raters ``<rater>:<name>`` in a ratings or preferences frame."""
    prefix = rater + ":"
    members = frame.loc[frame["rater"].str.startswith(prefix) & (frame["rater"].str.count(":") == rater.count(":") + 1)]
    if rater == "human":  # its annotators are human::<name> (human:<name> reads as a criterion), or human:<name> in older data
        members = pd.concat([members, frame.loc[frame["rater"].str.match(r"^human::[^:]+$")]])
    return members


def comparisons_behind(preferences: pd.DataFrame, rater: str) -> pd.DataFrame:
    """``item_id, system_a, system_b, judgments``: for each comparison of the pairwise ``rater``,
    how many people's comparisons the study paid for it (method.md §12): its annotators' where the
    data keep them apart — the sub-raters (as in :func:`annotator_scores`) whose majority is the
    rater's outcome, PandaLM's three — else 1. Majority here is this project's rule
    (:mod:`~prefeval_core.vocabulary.combine`) or the most frequent label (PandaLM's: two ``=`` and
    one ``>`` are ``=``). Sub-raters whose majority is the outcome on fewer than half of the
    comparisons they made are no annotators."""
    votes = _ComparisonVotes.of(preferences, rater)
    judgments = np.where(votes.agreeing, votes.counts.sum(axis=1), 1).astype(np.int64)
    return votes.keys.assign(judgments=judgments)


def annotator_comparisons(preferences: pd.DataFrame, rater: str) -> pd.DataFrame:
    """``item_id, system_a, system_b, annotator, outcome``: the comparisons of the annotators behind
    the pairwise ``rater``'s outcomes, on the comparisons where :func:`comparisons_behind` counts
    them (pairs canonical, outcome codes 0 ``>``, 1 ``=``, 2 ``<``)."""
    votes = _ComparisonVotes.of(preferences, rater)
    keys = ["item_id", "system_a", "system_b"]
    kept = votes.members.merge(votes.keys[votes.agreeing], on=keys, how="inner")
    return pd.DataFrame(
        {
            **{key: kept[key] for key in keys},
            "annotator": kept["rater"].str.slice(len(rater) + 1).str.removeprefix(":"),
            "outcome": kept["outcome"].astype(np.int8),
        }
    )


@dataclass(frozen=True)
class _ComparisonVotes:
    """A pairwise rater's comparisons with its sub-raters' votes.

    Attributes:
        keys: ``item_id, system_a, system_b`` of each of the rater's comparisons, in its order.
        members: the sub-raters' rows (:func:`_sub_rater_rows`).
        counts: (C, 3) int64 the sub-raters' votes ``>``, ``=``, ``<`` on each comparison.
        agreeing: (C,) whether the votes are the rater's annotators there (their majority, or
            their most frequent label, is its outcome), all ``False`` where they agree on fewer
            than half of the comparisons they made.
    """

    keys: pd.DataFrame
    members: pd.DataFrame
    counts: npt.NDArray[np.int64]
    agreeing: npt.NDArray[np.bool_]

    @classmethod
    def of(cls, preferences: pd.DataFrame, rater: str) -> _ComparisonVotes:
        keys = ["item_id", "system_a", "system_b"]
        own = preferences.loc[preferences["rater"] == rater, [*keys, "outcome"]]
        members = _sub_rater_rows(preferences, rater)
        if members.empty:
            return cls(own[keys].reset_index(drop=True), members, np.zeros((len(own), 3), dtype=np.int64), np.zeros(len(own), dtype=bool))
        labels = members.groupby(keys, sort=False)["outcome"].value_counts().unstack(fill_value=0)
        labels = labels.reindex(columns=[BETTER, TIE, WORSE], fill_value=0).reset_index()
        merged = own.merge(labels, on=keys, how="left")
        covered = merged[BETTER].notna().to_numpy()
        votes = merged[[BETTER, TIE, WORSE]].fillna(0).to_numpy(dtype=np.int64)
        given = votes[np.arange(len(merged)), merged["outcome"].to_numpy(dtype=np.int64)]
        summed = 1 - np.sign(votes[:, BETTER] - votes[:, WORSE])  # the outcome code of the sign of the sum of v
        agreeing = covered & ((summed == merged["outcome"].to_numpy()) | (given == votes.max(axis=1)))
        if 2 * int(agreeing.sum()) < int(covered.sum()):
            agreeing[:] = False
        return cls(merged[keys].reset_index(drop=True), members, votes, agreeing)


class _MeanAgreement:
    """Where the mean of a set of sub-raters' scores is the rater's own score, output by output,
    for every set the search of :func:`annotator_scores` tries, in time linear in the ratings."""

    def __init__(self, members: pd.DataFrame, tolerance: float) -> None:
        self.output = members.groupby(["item_id", "system"], sort=False).ngroup().to_numpy()
        codes, names = pd.factorize(members["rater"], sort=True)
        self.name, self.names = codes, names
        self.score = members["score"].to_numpy(dtype=np.float64)
        outputs = int(self.output.max()) + 1 if len(self.output) else 0
        self.own = np.zeros(outputs)
        self.own[self.output] = members["own"].to_numpy(dtype=np.float64)
        self.tolerance = tolerance

    def _sums(self, active: npt.NDArray[np.bool_]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        rows = active[self.name].astype(np.float64)
        total = np.bincount(self.output, weights=self.score * rows, minlength=len(self.own)).astype(np.float64)
        return total, np.bincount(self.output, weights=rows, minlength=len(self.own)).astype(np.float64)

    def _agrees(
        self, total: npt.NDArray[np.float64], count: npt.NDArray[np.float64], own: npt.NDArray[np.float64]
    ) -> npt.NDArray[np.bool_]:
        with np.errstate(invalid="ignore", divide="ignore"):
            return (count > 0) & (np.abs(total / count - own) <= self.tolerance)

    def outputs(self, active: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
        """(outputs,) whether the mean of the ``active`` sub-raters' scores is the rater's own."""
        return self._agrees(*self._sums(active), self.own)

    def counts_without_each(self, active: npt.NDArray[np.bool_], agreeing: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
        """(names,) the outputs that would agree with each active sub-rater left out (-1: inactive);
        a sub-rater changes only the outputs it rated."""
        total, count = self._sums(active)
        rows = active[self.name]
        o = self.output[rows]
        after = self._agrees(total[o] - self.score[rows], count[o] - 1, self.own[o])
        change = np.bincount(self.name[rows], weights=after.astype(np.float64) - agreeing[o], minlength=len(self.names))
        return np.where(active, int(agreeing.sum()) + np.rint(change).astype(np.int64), -1)


def judgments_behind(ratings: pd.DataFrame, rater: str) -> pd.DataFrame:
    """``item_id, system, judgments``: for each score of ``rater``, how many people's ratings the
    study paid for it (method.md §12-§13: each annotator's score is one rating): its annotators
    (:func:`annotator_scores`) where the data keep them apart. Where every output with annotators
    kept apart had the same number c of them, the outputs published only as the mean were rated c
    times too (SummEval's extractive systems: three experts, mean only) **(choice)**; elsewhere an
    output costs 1.
    """
    own = ratings.loc[ratings["rater"] == rater, ["item_id", "system"]]
    counts = annotator_scores(ratings, rater).groupby(["item_id", "system"], sort=False).size().rename("size").reset_index()
    merged = own.merge(counts, on=["item_id", "system"], how="left")
    sizes = merged["size"].dropna().astype(np.int64)
    design = int(sizes.iloc[0]) if len(sizes) and sizes.nunique() == 1 else 1
    judgments = merged["size"].fillna(design).astype(np.int64)
    return pd.DataFrame({"item_id": merged["item_id"], "system": merged["system"], "judgments": judgments.to_numpy()})


def annotator_places(annotated: pd.DataFrame) -> pd.DataFrame:
    """``annotated`` (:func:`annotator_scores`) with ``annotator`` the rating's place among its
    item's ratings: the annotator where each annotator of an item rated all its outputs (experts
    crossed with the systems: SummEval, WMT's MQM raters), else the output's ``k``-th rating,
    annotators sorted by name (``#1`` ... ``#c``: a crowd, other workers for each output), so that
    one place of an item covers every output, as one annotator would."""
    per_output = annotated.groupby(["item_id", "system"], sort=False).size()
    if per_output.empty or (annotated.groupby("item_id", sort=False)["annotator"].nunique() == int(per_output.max())).all():
        return annotated
    place = annotated.sort_values(["item_id", "system", "annotator"]).groupby(["item_id", "system"], sort=False).cumcount() + 1
    return annotated.assign(annotator="#" + place.reindex(annotated.index).astype(str))
