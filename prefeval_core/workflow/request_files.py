"""A study's open request as a file for annotators, and the file, filled in, back as judgments:
one route for the Annotate page and ``prefeval requests``.

The file is blind (:mod:`prefeval_core.blind`): a request id per row instead of system names,
pairs in the app's left/right order for the seed, rows in blind order. CSV is formula-safe;
JSONL keeps every text exactly. Reading back takes a blind file or one that names the systems
(:mod:`prefeval_core.requests`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from prefeval_core.data.dataset import Dataset
from prefeval_core.requests import (
    blind_requests,
    export_requests_csv,
    export_requests_jsonl,
    read_annotated_requests,
    read_rated_requests,
)
from prefeval_core.store.records import Judgment
from prefeval_core.tasks import Task
from prefeval_core.workflow.rating_scale import RatingScale

RequestFileFormat = Literal["csv", "jsonl"]


def request_files(
    tasks: Sequence[Task],
    dataset: Dataset,
    key: str,
    *,
    study_id: int | None,
    seed: int,
    formats: Sequence[RequestFileFormat] = ("csv", "jsonl"),
) -> dict[RequestFileFormat, bytes]:
    """The blind request file of ``tasks`` on ``dataset`` (its data key ``key``), for ``study_id``,
    in each of ``formats``; comparisons shown in the left/right order of ``seed``."""
    frame = blind_requests(tasks, key, texts=dataset.texts, sources=dataset.sources, study_id=study_id, seed=seed)
    return {f: export_requests_csv(frame) if f == "csv" else export_requests_jsonl(frame) for f in formats}


def fill_in_instructions(scale: RatingScale | None) -> str:
    """What annotators do with the file: label comparisons (``scale`` None) or score ratings on ``scale``."""
    keep = "The file names no system; leave `request_id`{} as exported."
    if scale is None:
        return "Fill the `label` column with > (A better), = or < (or A / tie / B). " + keep.format(" and `left`")
    return f"Fill the `score` column ({scale.describe()}). " + keep.format("")


def judged_requests(
    name: str,
    data: bytes,
    key: str,
    *,
    systems: Sequence[str],
    scale: RatingScale | None,
    annotator: str = "",
    study_id: int | None = None,
) -> list[Judgment]:
    """The judgments in a filled-in request file ``name`` (its bytes ``data``) of the data ``key``:
    comparisons when ``scale`` is None, else ratings on ``scale``; ``annotator`` where the file's
    ``annotator`` column is empty.

    Raises:
        DataError: the file's problems, each naming its row and column.
    """
    if scale is None:
        return list(read_annotated_requests(name, data, key, annotator=annotator, systems=systems, study_id=study_id))
    bounds = (scale.low, scale.high)
    return list(read_rated_requests(name, data, key, annotator=annotator, systems=systems, study_id=study_id, scale=bounds))
