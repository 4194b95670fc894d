"""A study's open request as a file for annotators, and the file, filled in, back as judgments:
one route for the Annotate page and ``prefeval requests``.

The file is blind (:mod:`prefeval_core.annotation.blind`): an opaque token per row instead of system names,
keyed with the study's secret from the store (which also fixes the side shown as A, never a
column), a digest of each row as shown, rows in blind order. CSV is formula-safe; JSONL keeps
every text exactly. Reading back takes a blind file (checked with the same key), an older blind
file, or one that names the systems (:mod:`prefeval_core.annotation.requests`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from prefeval_core.annotation.blind import BlindKey
from prefeval_core.annotation.rating_scale import RatingScale
from prefeval_core.annotation.requests import (
    blind_requests,
    export_requests_csv,
    export_requests_jsonl,
    read_annotated_requests,
    read_rated_requests,
)
from prefeval_core.data.dataset import Dataset
from prefeval_core.protocol import next_request
from prefeval_core.store import Store, open_store
from prefeval_core.store.records import Judgment
from prefeval_core.vocabulary.tasks import Task
from prefeval_core.workflow.studies import Study

RequestFileFormat = Literal["csv", "jsonl"]


def request_files(
    tasks: Sequence[Task],
    dataset: Dataset,
    key: str,
    *,
    study_id: int | None,
    seed: int,
    formats: Sequence[RequestFileFormat] = ("csv", "jsonl"),
    secret: BlindKey | None = None,
) -> dict[RequestFileFormat, bytes]:
    """The blind request file of ``tasks`` on ``dataset`` (its data key ``key``), for ``study_id``,
    in each of ``formats``; comparisons shown in the keyed left/right order of ``seed``; keyed
    with ``secret``, the scope's key (default :func:`blind_key` in :func:`~prefeval_core.store.open_store`;
    a cache of the files passes it, so that files of another store are never served)."""
    secret = secret or blind_key(None, key, study_id)
    frame = blind_requests(tasks, key, key=secret, texts=dataset.texts, sources=dataset.sources, study_id=study_id, seed=seed)
    return {f: export_requests_csv(frame) if f == "csv" else export_requests_jsonl(frame) for f in formats}


def blind_key(store: Store | None, key: str, study_id: int | None) -> BlindKey:
    """The key of the blind files of ``study_id`` (of the data ``key`` outside studies) in ``store``
    (default :func:`~prefeval_core.store.open_store`)."""
    return BlindKey((store or open_store()).secret(key, study_id))


def fill_in_instructions(scale: RatingScale | None, criterion: str | None = None) -> str:
    """What annotators do with the file: label comparisons (``scale`` None) or score ratings on
    ``scale``, judging ``criterion`` (e.g. "relevance") where given, else overall quality."""
    keep = "The file names no system; leave `request_id`, the texts and `digest` as exported."
    if scale is None:
        which = f"Which output is better in {criterion}? " if criterion else ""
        return which + "Fill the `label` column with > (A better), = or < (or A / tie / B, or both bad). " + keep
    what = f"Rate the {criterion} of each output" if criterion else "Rate each output"
    return f"{what}: fill the `score` column ({scale.describe()}). " + keep


def judged_requests(
    name: str,
    data: bytes,
    key: str,
    *,
    systems: Sequence[str],
    scale: RatingScale | None,
    annotator: str = "",
    study_id: int | None = None,
    store: Store | None = None,
    latest_wins: bool = False,
    criterion: str | None = None,
) -> list[Judgment]:
    """The judgments in a filled-in request file ``name`` (its bytes ``data``) of the data ``key``:
    comparisons when ``scale`` is None, else ratings on ``scale``; ``annotator`` where the file's
    ``annotator`` column is empty; each carrying ``criterion`` (the study's); checked with the
    scope's secret in ``store`` (default :func:`~prefeval_core.store.open_store`). Two different
    answers by one annotator to one request are refused, or with ``latest_wins`` the later row counts.

    Raises:
        DataError: the file's problems (rows not as exported, conflicting answers, ...), each
            naming its row and column.
    """
    secret = blind_key(store, key, study_id)
    read: Sequence[Judgment]
    if scale is None:
        read = read_annotated_requests(
            name, data, key, annotator=annotator, systems=systems, study_id=study_id, key=secret, latest_wins=latest_wins
        )
    else:
        bounds = (scale.low, scale.high)
        read = read_rated_requests(
            name, data, key, annotator=annotator, systems=systems, study_id=study_id, scale=bounds, key=secret, latest_wins=latest_wins
        )
    return [replace(judgment, criterion=criterion) for judgment in read]


@dataclass(frozen=True)
class StudyRequestFile:
    """A study's open request as a file (:func:`study_request_file`).

    Attributes:
        content: the file's bytes.
        tasks: the tasks in it (outputs to rate, or pairs of outputs to compare).
        unit: what a task is, ``ratings`` or ``comparisons``.
        instructions: what annotators do with the file (:func:`fill_in_instructions`).
    """

    content: bytes
    tasks: int
    unit: str
    instructions: str


def study_request_file(study: Study, dataset: Dataset, file_format: RequestFileFormat, *, seed: int) -> StudyRequestFile:
    """The blind request file of the study's open request on its ``dataset``, comparisons in the
    keyed left/right order of ``seed`` (keyed with the secret of the default store)."""
    tasks = next_request(study.state).tasks
    content = request_files(tasks, dataset, study.data.key, study_id=study.id, seed=seed, formats=(file_format,))[file_format]
    instructions = fill_in_instructions(study.scale, study.criterion)
    return StudyRequestFile(content, len(tasks), study.table.unit, instructions)


@dataclass(frozen=True)
class StoredFile:
    """What importing a filled-in request file did (:func:`import_request_file`).

    Attributes:
        study: the study's id.
        judgments: the judgments the file holds.
        added: those new to the store.
        already_there: those it held already (a file imported twice adds nothing).
    """

    study: int
    judgments: int
    added: int
    already_there: int


def import_request_file(
    store: Store, study: Study, dataset: Dataset, name: str, data: bytes, *, annotator: str = "", latest_wins: bool = False
) -> StoredFile:
    """Store the judgments of a filled-in request file ``name`` (its bytes ``data``) of ``study``
    (as :func:`judged_requests` reads them), each carrying the study's criterion; each is stored
    once however often the file comes in.

    Raises:
        DataError: the file's problems, each naming its row and column.
    """
    judgments = judged_requests(
        name,
        data,
        study.data.key,
        systems=dataset.systems,
        scale=study.scale,
        annotator=annotator,
        study_id=study.id,
        store=store,
        latest_wins=latest_wins,
        criterion=study.criterion,
    )
    stored = store.add_many(judgments)
    return StoredFile(study.id, len(judgments), stored.added, stored.already_there)
