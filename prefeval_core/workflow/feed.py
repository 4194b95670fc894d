"""Feeding stored human judgments into the protocol (live studies only: a replay study takes its
judgments from its data, :func:`decide_stored` refuses it).

The store combines the annotators' answers per task (majority for comparisons, mean for
ratings, :mod:`prefeval_core.vocabulary.combine`) and keeps only complete tasks (judged by at least
``judgments per item`` annotators). Of those, the protocol gets what it has not seen yet: the
tasks of its current request first, then the others (in the store's order), as many as the
budget left allows **(choice)**, so feeding never fails for going over budget. Each combined
answer costs the judgments behind it.

Deciding part-way through a round loses nothing. By default the open requests are **kept**: the
request is drawn from what is not yet revealed, in the study's fixed item order, so the tasks of
the open request nobody judged yet come first in the next request (:func:`decide_now` counts
them). The lead may **withdraw** them instead: they are no longer served nor counted as
requested, and the next request is drawn without them (they come last, asked again only when a
system or pair has nothing else left, :func:`~prefeval_core.protocol.withdraw_requests`). Either
way every stored judgment stays in the store; one for a withdrawn task is fed once the task is
asked again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from prefeval_core.annotation.rating_scale import RatingScale
from prefeval_core.errors import SettingsError
from prefeval_core.protocol import (
    ComparisonJudgment,
    ComparisonTask,
    Judgment,
    ProtocolState,
    RatingJudgment,
    RatingTask,
    apply_judgments,
    decide_round,
    next_request,
    withdraw_requests,
)
from prefeval_core.store import Store
from prefeval_core.workflow.setup import Mode

REPLAY_NOT_FED = "a replay study takes its judgments from its data, never from the store: step it on the Protocol page"


def unseen_judgments(state: ProtocolState, complete: pd.DataFrame) -> list[Judgment]:
    """The combined answers of ``complete`` (the store's ``complete_ratings`` or
    ``complete_comparisons`` frame) that the protocol has not seen, ready for
    :func:`~prefeval_core.protocol.apply_judgments`; a withdrawn task's only once it is requested again."""
    table = state.table
    requested = {_key(t): k for k, t in enumerate(next_request(state).tasks)}
    candidates: list[tuple[int, Judgment]] = []
    if table.grid is not None:
        systems = {name: i for i, name in enumerate(table.systems)}
        items = {name: i for i, name in enumerate(table.items)}
        for item, system, score, judgments in complete[["item_id", "system", "score", "judgments"]].itertuples(index=False):
            s, i = systems.get(str(system)), items.get(str(item))
            key: tuple[str, ...] = (str(item), str(system))
            if s is None or i is None or _not_wanted(state, s * len(table.items) + i, key in requested):
                continue
            candidates.append((requested.get(key, len(requested)), RatingJudgment(key[0], key[1], float(score), int(judgments))))
    else:
        rows = {(table.pairs[p], table.items[i]): r for r, (p, i) in enumerate(zip(table.row_pair, table.row_item, strict=True))}
        for a, b, item, outcome, judgments in complete[["system_a", "system_b", "item_id", "outcome", "judgments"]].itertuples(index=False):
            row, key = rows.get(((a, b), str(item))), (str(item), str(a), str(b))
            if row is None or _not_wanted(state, row, key in requested):
                continue
            comparison = ComparisonJudgment(str(item), str(a), str(b), int(outcome), int(judgments))
            candidates.append((requested.get(key, len(requested)), comparison))
    candidates.sort(key=lambda pair: pair[0])  # stable: the store's order within each group
    chosen: list[Judgment] = []
    left = state.budget_left
    for _, candidate in candidates:
        if candidate.cost <= left:
            chosen.append(candidate)
            left -= candidate.cost
    return chosen


def _not_wanted(state: ProtocolState, slot: int, requested: bool) -> bool:
    """Whether a stored answer for ``slot`` is not fed: revealed already, or withdrawn and not requested again."""
    return bool(state.reveals.round[slot] > 0 or (state.withdrawn_slots[slot] and not requested))


def _key(task: RatingTask | ComparisonTask) -> tuple[str, ...]:
    return (task.item_id, task.system) if isinstance(task, RatingTask) else (task.item_id, task.system_a, task.system_b)


def stored_judgments(
    store: Store, dataset_key: str, state: ProtocolState, *, study_id: int | None = None, per_item: int = 1
) -> list[Judgment]:
    """The store's complete, combined judgments of this data (and study) the protocol has not seen."""
    if state.table.grid is not None:
        complete = store.complete_ratings(dataset_key, study_id=study_id, per_item=per_item)
    else:
        complete = store.complete_comparisons(dataset_key, study_id=study_id, per_item=per_item)
    return unseen_judgments(state, complete)


@dataclass(frozen=True)
class RoundProgress:
    """How far the open request is when the lead wants to decide.

    Attributes:
        requested: tasks in the open request.
        judged: of those, how many have a complete stored answer the protocol has not seen.
        extra: complete stored answers outside the request (annotators may judge more).
    """

    requested: int
    judged: int
    extra: int

    @property
    def open(self) -> int:
        """Requested tasks without a complete answer yet."""
        return self.requested - self.judged


def round_progress(state: ProtocolState, fed: list[Judgment]) -> RoundProgress:
    """Where the open request stands, given ``fed`` (from :func:`stored_judgments`)."""
    requested = {_key(t) for t in next_request(state).tasks}
    judged = sum(_judgment_key(j) in requested for j in fed)
    return RoundProgress(len(requested), judged, len(fed) - judged)


OpenRequests = Literal["keep", "withdraw"]
"""What deciding part-way does with the open request's unjudged tasks: keep them queued (asked
again first), or withdraw them (no longer asked for, unless nothing else is left)."""


@dataclass(frozen=True)
class DecidedEarly:
    """A round decided before its request was complete.

    Attributes:
        state: the state after the round.
        progress: the request as it stood when the lead decided.
        kept: tasks of that request still unjudged that the next request asks for again.
        withdrawn: tasks of that request still unjudged that the lead withdrew.
    """

    state: ProtocolState
    progress: RoundProgress
    kept: int
    withdrawn: int


def decide_now(state: ProtocolState, fed: list[Judgment], open_requests: OpenRequests = "keep") -> DecidedEarly:
    """Feed ``fed`` and decide the round now, however much of the request is judged. ``keep``:
    says how many of the open request's unjudged tasks the next request keeps (all, unless the
    decisions made some pairs no longer matter or the budget ran out); ``withdraw``: withdraws
    them, and says how many (the next request keeps those it cannot do without)."""
    progress = round_progress(state, fed)
    fed_keys = {_judgment_key(j) for j in fed}
    unjudged = [t for t in next_request(state).tasks if _key(t) not in fed_keys]
    after = decide_round(apply_judgments(state, fed))
    withdrawn = 0
    if open_requests == "withdraw":
        after = withdraw_requests(after, unjudged)
        withdrawn = len(unjudged)
    kept = len({_key(t) for t in unjudged} & {_key(t) for t in next_request(after).tasks})
    return DecidedEarly(after, progress, kept, withdrawn)


def _judgment_key(judgment: Judgment) -> tuple[str, ...]:
    if isinstance(judgment, RatingJudgment):
        return (judgment.item_id, judgment.system)
    return (judgment.item_id, judgment.system_a, judgment.system_b)


def decide_stored(
    store: Store,
    dataset_key: str,
    state: ProtocolState,
    *,
    mode: Mode | None,
    study_id: int | None = None,
    per_item: int = 1,
    open_requests: OpenRequests = "keep",
    scale: RatingScale | None = None,
) -> DecidedEarly:
    """*Decide now*: feed the store's complete judgments the protocol has not seen
    (:func:`stored_judgments`) and decide the round (:func:`decide_now`), for a study in ``mode``
    ``live`` only.

    Raises:
        SettingsError: ``mode`` is not ``live`` (a replay's judgments come from its data: none is fed),
            or a stored rating lies far off ``scale`` (:func:`refuse_off_scale`).
    """
    if mode != "live":
        raise SettingsError.single("replay_study", REPLAY_NOT_FED)
    fed = stored_judgments(store, dataset_key, state, study_id=study_id, per_item=per_item)
    refuse_off_scale(study_id, scale, rating_scores(fed), "the store")
    return decide_now(state, fed, open_requests)


def refuse_off_scale(study_id: int | None, scale: RatingScale | None, scores: npt.NDArray[np.float64], where: str) -> None:
    """Refuse ratings in ``where`` that lie farther off the study's scale than the scale is wide (50
    or 1e308 on a 1-5 scale): no judgment made through prefeval is, so the store was changed by
    other means, and such a number would move every mean, or overflow, without a word.

    Raises:
        SettingsError: naming the study, the first such score and the scale.
    """
    if scale is None or len(scores) == 0:
        return
    width = max(scale.high - scale.low, 1.0)
    off = scores[~((scores >= scale.low - width) & (scores <= scale.high + width))]
    if len(off):
        study = "the study" if study_id is None else f"study {study_id}"
        message = (
            f"{study} cannot be used: {where} holds {len(off):,} rating(s) far off its scale {scale.describe()} "
            f"(e.g. {off[0]:g}), which no judgment made through prefeval is: the store was changed by other means"
        )
        raise SettingsError.single("bad_study", message)


def rating_scores(judgments: list[Judgment]) -> npt.NDArray[np.float64]:
    """The scores of the rating judgments among ``judgments``."""
    return np.array([j.score for j in judgments if isinstance(j, RatingJudgment)], dtype=np.float64)
