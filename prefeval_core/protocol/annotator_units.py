"""One rating per request, every rating the study paid in the pool (method.md §13).

Where the data keep a rater's annotators apart, each (item, annotator) rating is its own **unit**:
a request buys one annotator's ratings of the outputs an item's pairs still need, and a pair's pool
is every unit on which both its systems were rated. In the seeded uniform order of the pool
statistics a second or third rating of an output is bought when the order reaches it, and the
pool's mean difference is the full evaluation's (the mean over every annotator), so the pool tests
decide what the full evaluation says, one rating at a time. The units of one item are dependent
(the same outputs); the pool statistics do not care, since their validity rests on the seeded
order alone, and the protocol allows no other statistic on units.

That equality needs every output rated the same number ``c`` of times. Where each annotator of an
item rated all its outputs (experts crossed with the systems: SummEval, WMT's MQM raters), a unit is
an annotator of the item. Where annotators are nested in outputs (a crowd: other workers for each
output), an annotator's unit would hold a few of the item's outputs and a pair's pool only the
items where one worker happened to rate both, with another mean difference; a unit is then the
item's ``k``-th **place**: the ``k``-th rating of each output, annotators sorted by name (``#1`` ...
``#c``), fixed before any order is drawn. Where outputs were rated different numbers of times
there is no such split (the units would weigh outputs unequally): :func:`pooling_problem` says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Final

import numpy as np
import pandas as pd

from prefeval_core.data.annotators import annotator_places, annotator_scores, judgments_behind
from prefeval_core.data.dataset import Dataset
from prefeval_core.errors import settings_error

UNIT_MARK: Final = " @ "
"""Between an item id and an annotator's name in a unit's id (``doc7 @ expert2``)."""

_KEY: Final = ["item_id", "system"]


def annotator_unit_dataset(dataset: Dataset, human: str, metrics: Sequence[str]) -> Dataset:
    """``dataset`` reduced to ``human`` and ``metrics``, with ``human``'s items split into units.

    An item's units are the annotators who rated any of its outputs (an item with none: as many
    unnamed places as its outputs' ratings were paid, ``#1``, ``#2``, ...). An output published only
    as the annotators' mean stands in, with that mean, for every annotator of its item, one rating
    each: what a study rating it one annotator at a time pays, and the same pool mean. A metric's
    score of an item is copied to each of the item's units; metric-only items keep their ids. The
    texts are dropped (units are for replays).

    Raises:
        SettingsError: the data keep no annotators of ``human`` apart, or a unit's id is taken.
    """
    annotated, problem = _units_of_ratings(annotator_scores(dataset.ratings, human), human)
    if problem is not None:
        raise settings_error(problem, field="ratings_per_request")
    own = dataset.ratings.loc[dataset.ratings["rater"] == human, [*_KEY, "score"]].astype({"item_id": str, "system": str})
    places = _unit_places(annotated, own, dataset.ratings, human)
    rated = pd.MultiIndex.from_frame(annotated[_KEY])
    mean_only = own[~pd.MultiIndex.from_frame(own[_KEY]).isin(rated)]
    human_units = pd.concat([annotated, mean_only.merge(places, on="item_id")[annotated.columns]], ignore_index=True)
    unit_of = places.assign(unit=places["item_id"] + UNIT_MARK + places["annotator"])
    _require_new_ids(unit_of, dataset.items)
    ratings = [_on_units(human_units, unit_of).assign(rater=human)]
    scored = dataset.ratings.loc[dataset.ratings["rater"].isin(metrics), [*_KEY, "rater", "score"]].astype({"item_id": str, "system": str})
    ratings.append(_copied_to_units(scored, unit_of))
    compared = dataset.preferences.loc[dataset.preferences["rater"].isin(metrics)].astype({"item_id": str})
    return replace(
        dataset,
        ratings=pd.concat(ratings, ignore_index=True)[["item_id", "system", "rater", "score"]],
        preferences=_copied_to_units(compared, unit_of)[dataset.preferences.columns],
        texts=dataset.texts.iloc[0:0],
        sources=dataset.sources.iloc[0:0],
        references=dataset.references.iloc[0:0],
    )


def pooling_problem(dataset: Dataset, human: str) -> str | None:
    """Why ``human``'s items cannot be split into units that keep the full evaluation's mean
    difference (``None``: they can; :func:`annotator_unit_dataset`)."""
    return _units_of_ratings(annotator_scores(dataset.ratings, human), human)[1]


def unpooled_reason(dataset: Dataset, human: str) -> str | None:
    """Why the annotators of ``human`` that the data keep apart cannot be split into units
    (:func:`pooling_problem`: outputs rated different numbers of times); ``None`` where they can, or
    where the data keep none apart."""
    annotated, problem = _units_of_ratings(annotator_scores(dataset.ratings, human), human)
    return None if annotated.empty else problem


def _units_of_ratings(annotated: pd.DataFrame, human: str) -> tuple[pd.DataFrame, str | None]:
    """``annotated`` (:func:`~prefeval_core.data.annotators.annotator_scores`) with ``annotator`` the
    rating's unit within its item (:func:`~prefeval_core.data.annotators.annotator_places`), or why
    there are no units."""
    if annotated.empty:
        problem = f"the data keep no annotators of '{human}' apart, so a request can only buy their mean (ratings per request 'all')"
        return annotated, problem
    annotated = annotated.astype({"item_id": str, "system": str, "annotator": str})
    per_output = annotated.groupby(_KEY, sort=False).size()
    if per_output.nunique() > 1:
        (item, system), fewest = per_output.idxmin(), int(per_output.min())
        problem = (
            f"the outputs of '{human}' were rated {fewest} to {int(per_output.max())} times (item '{item}', system '{system}': "
            f"{fewest}): one rating per request would weigh them unequally; buy their mean (ratings per request 'all') or one ('one')"
        )
        return annotated, problem
    return annotator_places(annotated), None


def _unit_places(annotated: pd.DataFrame, own: pd.DataFrame, ratings: pd.DataFrame, human: str) -> pd.DataFrame:
    """``item_id, annotator``: every item's units (the named annotators, else ``#1`` ... ``#c``)."""
    named = annotated[["item_id", "annotator"]].drop_duplicates()
    unnamed_items = pd.Index(sorted(set(own["item_id"]) - set(named["item_id"])), name="item_id")
    if len(unnamed_items) == 0:  # the usual case: no second pass over the annotators
        return named.sort_values(["item_id", "annotator"], ignore_index=True)
    behind = judgments_behind(ratings, human).astype({"item_id": str, "system": str})
    counts = behind[behind["item_id"].isin(unnamed_items)].groupby("item_id", sort=True)["judgments"].max()
    counts = counts.reindex(unnamed_items, fill_value=1)
    repeated = np.repeat(counts.index.to_numpy(dtype=object), counts.to_numpy())
    place = np.concatenate([np.arange(1, c + 1) for c in counts.to_numpy()])
    extra = pd.DataFrame({"item_id": repeated, "annotator": [f"#{p}" for p in place]})
    return pd.concat([named, extra], ignore_index=True).sort_values(["item_id", "annotator"], ignore_index=True)


def _require_new_ids(unit_of: pd.DataFrame, items: Sequence[object]) -> None:
    units = unit_of["unit"]
    taken = set(units) & {str(i) for i in items}
    if units.duplicated().any() or taken:
        clash = sorted(taken)[0] if taken else units[units.duplicated()].iloc[0]
        raise settings_error(
            f"the unit id '{clash}' (item{UNIT_MARK}annotator) is already an item id: rename the item or the annotator",
            field="ratings_per_request",
        )


def _on_units(human_units: pd.DataFrame, unit_of: pd.DataFrame) -> pd.DataFrame:
    merged = human_units.merge(unit_of, on=["item_id", "annotator"])
    return pd.DataFrame({"item_id": merged["unit"], "system": merged["system"], "score": merged["score"]})


def _copied_to_units(frame: pd.DataFrame, unit_of: pd.DataFrame) -> pd.DataFrame:
    """``frame``'s rows on a split item once per unit of the item (the unit's id as ``item_id``);
    rows on other items as they are."""
    split = frame["item_id"].isin(unit_of["item_id"])
    copies = frame[split].merge(unit_of[["item_id", "unit"]], on="item_id")
    copies = copies.assign(item_id=copies["unit"]).drop(columns="unit")
    return pd.concat([copies, frame[~split]], ignore_index=True)
