"""A request as a Label Studio project, and Label Studio's JSON export back into the store
(formats and checks: :mod:`prefeval_core.annotation.labelstudio`). Both are keyed with the
scope's secret in the store, like the request files (:func:`~prefeval_core.workflow.request_files.blind_key`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from prefeval_core.annotation.labelstudio import (
    LabelStudioImport,
    LabelStudioProject,
    comparison_project,
    rating_project,
    read_label_studio_export,
)
from prefeval_core.annotation.rating_scale import RatingScale
from prefeval_core.data.dataset import Dataset
from prefeval_core.store import ImportResult, Store
from prefeval_core.vocabulary.tasks import ComparisonTask, RatingTask, Task
from prefeval_core.workflow.request_files import blind_key


def label_studio_project(
    store: Store,
    tasks: Sequence[Task],
    dataset: Dataset,
    dataset_key: str,
    scale: RatingScale | None,
    *,
    study_id: int | None,
    seed: int,
    criterion: str | None = None,
) -> LabelStudioProject:
    """The comparisons of ``tasks`` (``scale`` None; outputs in the keyed left/right order of
    ``seed``) or its ratings on ``scale`` as a Label Studio project, its heading naming ``criterion``."""
    key = blind_key(store, dataset_key, study_id)
    if scale is None:
        pairs = [t for t in tasks if isinstance(t, ComparisonTask)]
        return comparison_project(
            pairs, dataset_key, key=key, texts=dataset.texts, sources=dataset.sources, study_id=study_id, seed=seed, criterion=criterion
        )
    outputs = [t for t in tasks if isinstance(t, RatingTask)]
    return rating_project(
        outputs, dataset_key, scale, key=key, texts=dataset.texts, sources=dataset.sources, study_id=study_id, criterion=criterion
    )


@dataclass(frozen=True)
class LabelStudioImported:
    """A Label Studio export read (``loaded``: its judgments, tasks, unanswered and skipped ones)
    and stored (``stored``: how many were new, how many already there)."""

    loaded: LabelStudioImport
    stored: ImportResult


def import_label_studio_export(
    store: Store,
    name: str,
    data: bytes,
    dataset_key: str,
    *,
    systems: Collection[str],
    study_id: int | None,
    scale: RatingScale | None,
    known: Collection[Task] | None = None,
    latest_wins: bool = False,
) -> LabelStudioImported:
    """Store every judgment of Label Studio's JSON export ``data`` (file ``name``) of a project
    exported for ``dataset_key`` and ``study_id``, in one transaction (arguments as
    :func:`~prefeval_core.annotation.labelstudio.read_label_studio_export`).

    Raises:
        DataError: not a JSON export, or an answer that cannot be taken; nothing is stored then.
    """
    key = blind_key(store, dataset_key, study_id)
    loaded = read_label_studio_export(
        name, data, dataset_key, study_id=study_id, systems=systems, scale=scale, known=known, key=key, latest_wins=latest_wins
    )
    return LabelStudioImported(loaded, store.add_many(loaded.judgments))
