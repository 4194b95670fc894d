"""What people judge, into the store and out: one judgment stored the moment it is made, the last
one undone, a judged request file imported, all judgments exported with attribution.

The shells open the store (:func:`~prefeval_core.workflow.studies.study_store`) and hand it to
these functions. A judgment made through an annotator's link passes the link's token (``link``):
the store checks it as it writes, so a withdrawn link stores nothing, whenever its page was drawn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from prefeval_core.annotation.left_right import Choice, left_right, make_comparison
from prefeval_core.annotation.rating_scale import RatingScale
from prefeval_core.store import (
    Comparison,
    ExportFormat,
    ImportResult,
    Judgment,
    JudgmentKind,
    Rating,
    Store,
    StudyRecord,
    utc_now,
)
from prefeval_core.vocabulary.tasks import ComparisonTask, RatingTask
from prefeval_core.workflow.request_files import judged_requests
from prefeval_core.workflow.studies import study_criterion

__all__ = [
    "Choice",
    "ExportFormat",
    "ImportResult",
    "Judgment",
    "JudgmentKind",
    "Store",
    "StudyRecord",
    "export_judgments",
    "import_judged_requests",
    "record_comparison",
    "record_rating",
    "shown_sides",
    "undo_last",
]


def shown_sides(seed: int, dataset_key: str, task: ComparisonTask) -> tuple[str, str]:
    """``(left_system, right_system)``: the side each output of ``task`` is shown on, a coin flip
    seeded by ``seed`` and the item and pair (the same on every rerun and restart)."""
    return left_right(seed, dataset_key, task.item_id, task.system_a, task.system_b)


def record_comparison(
    store: Store,
    dataset_key: str,
    task: ComparisonTask,
    choice: Choice,
    left: str,
    annotator: str,
    *,
    study_id: int | None,
    criterion: str | None,
    link: str | None = None,
) -> Comparison:
    """Store at once what ``annotator`` clicked on ``task`` shown with ``left`` on the left
    (judging ``criterion``); returns the comparison as stored. ``link``: the token of the
    annotator link it is made through (``None``: the lead's page).

    Raises:
        AccessError: ``link`` was withdrawn (or is not ``annotator``'s in ``study_id``) by the time
            of storing; nothing is stored.
    """
    comparison = make_comparison(dataset_key, task.item_id, task.system_a, task.system_b, choice, annotator, left, study_id=study_id)
    return store.add(replace(comparison, criterion=criterion), link=link)


def record_rating(
    store: Store,
    dataset_key: str,
    task: RatingTask,
    score: float,
    annotator: str,
    *,
    study_id: int | None,
    criterion: str | None,
    link: str | None = None,
) -> Rating:
    """Store at once ``annotator``'s ``score`` of ``task``'s output (judging ``criterion``); returns
    the rating as stored. ``link``: as for :func:`record_comparison`.

    Raises:
        AccessError: as :func:`record_comparison`.
    """
    rating = Rating(dataset_key, task.item_id, task.system, score, annotator, utc_now(), study_id=study_id, criterion=criterion)
    return store.add(rating, link=link)


def undo_last(
    store: Store, dataset_key: str, annotator: str, kind: JudgmentKind, *, study_id: int | None, link: str | None = None
) -> Judgment | None:
    """Mark ``annotator``'s newest judgment of ``kind`` that counts as undone (kept, marked);
    returns it, or ``None`` when there is nothing to undo. ``link``: as for :func:`record_comparison`.

    Raises:
        AccessError: as :func:`record_comparison`; nothing is undone.
    """
    return store.undo_last(dataset_key, annotator, study_id=study_id, kind=kind, link=link)


def import_judged_requests(
    store: Store,
    name: str,
    data: bytes,
    dataset_key: str,
    *,
    systems: Sequence[str],
    scale: RatingScale | None,
    annotator: str,
    study_id: int | None,
) -> ImportResult:
    """Store every judgment of a filled-in request file (:func:`~prefeval_core.workflow.request_files.judged_requests`)
    in one transaction, each carrying the study's criterion (none outside a study); says how many were new.

    Raises:
        DataError: the file's problems; nothing is stored then.
        SettingsError: no study ``study_id``.
    """
    criterion = study_criterion(store, study_id)
    judgments = judged_requests(
        name, data, dataset_key, systems=systems, scale=scale, annotator=annotator, study_id=study_id, store=store, criterion=criterion
    )
    return store.add_many(judgments)


def export_judgments(store: Store, fmt: ExportFormat, dataset_key: str, *, study_id: int | None) -> bytes:
    """Every judgment of the data (of ``study_id`` where given), undone ones marked, with attribution, as a file."""
    return store.export(fmt, dataset_key, study_id=study_id)
