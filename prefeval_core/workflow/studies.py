"""Studies as records: a protocol run written to the store as it happens, listed and
resumed by the dashboard (after a reload, in another browser, after a server restart) and the CLI.

A study record holds the data choice (uploaded files included, so a team member on another
machine, or the same server after a restart, loads the same data), the study setup and the
judgments per item; its trail holds every state the protocol went through, with the request
open at that state. The protocol state is restored against the study table the setup rebuilds
from the data, so a state can never be applied to other data (the table's fingerprint is
checked).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from prefeval_core.annotation.rating_scale import RatingScale, rating_scale
from prefeval_core.data.dataset import Dataset
from prefeval_core.data.schema import validated
from prefeval_core.errors import SettingsError
from prefeval_core.protocol import (
    ProtocolState,
    StudyTable,
    next_request,
    replay_source,
    run_protocol,
    state_from_json,
    state_to_json,
)
from prefeval_core.store import StateKind, Store, StudyRecord, StudySummary, open_store
from prefeval_core.store.session_data import load_data, save_data
from prefeval_core.store.study_details import StudyDetails, all_details, details, rename, set_archived, set_details
from prefeval_core.vocabulary.tasks import ComparisonTask
from prefeval_core.workflow.feed import OpenRequests, decide_now, rating_scores, refuse_off_scale, stored_judgments
from prefeval_core.workflow.session import DataChoice
from prefeval_core.workflow.setup import StudySetup
from prefeval_core.workflow.setup_schema import SetupDocument
from prefeval_core.workflow.status import judge_role, study_status
from prefeval_core.workflow.study import start_study, study_table

RECORD_VERSION = 1
"""Version of the JSON a study record's setup holds (``{"version", "data", "setup"}``)."""


@dataclass(frozen=True)
class Study:
    """A study being worked on: its record, the data choice and setup it was made with, its
    table and current protocol state."""

    record: StudyRecord
    data: DataChoice
    setup: StudySetup
    table: StudyTable
    state: ProtocolState
    details: StudyDetails | None = None
    """The criterion, guidelines, kind and archive mark (``None``: a study stored before they were kept)."""
    scale: RatingScale | None = None
    """The scale ratings are asked on (the human rater's in the study's data, :func:`study_scale`);
    ``None`` in a comparison study."""

    @property
    def id(self) -> int:
        return self.record.id

    @property
    def criterion(self) -> str:
        """What the annotators judge: the study's criterion, else the one its human rater names."""
        return self.details.criterion if self.details is not None else default_criterion(self.setup.human)

    @property
    def guidelines(self) -> str:
        """The guidelines (Markdown) shown with the criterion; empty when the lead gave none."""
        return "" if self.details is None else self.details.guidelines


def study_scale(dataset: Dataset, setup: StudySetup, table: StudyTable) -> RatingScale | None:
    """The scale a study's ratings are asked on: its human rater's in ``dataset``; ``None`` when it
    asks for comparisons."""
    return rating_scale(dataset, setup.human) if table.unit == "ratings" else None


def request_scale(dataset: Dataset, state: ProtocolState) -> RatingScale | None:
    """The scale a protocol asking for ratings asks on (its human rater's in ``dataset``); ``None``
    when it asks for comparisons."""
    return rating_scale(dataset, state.settings.human or "") if state.table.unit == "ratings" else None


NEUTRAL_CRITERION = "overall quality"
"""What annotators judge when the human rater's name states no criterion (``human``, ``human::alice``)."""


def default_criterion(human: str) -> str:
    """The criterion a human rater's name states: the part after ``human:`` up to the next colon
    (``human:relevance`` -> ``relevance``, ``human:mqm:rater1`` -> ``mqm``); :data:`NEUTRAL_CRITERION`
    when that part is missing or empty (``human``, ``human::alice``: "judge the human" asks
    nothing); any other name is its own criterion (``fluency``)."""
    parts = [part.strip() for part in human.split(":")]
    if parts[0].lower() == "human" or not parts[0]:
        return parts[1] if len(parts) > 1 and parts[1] else NEUTRAL_CRITERION
    return human.strip()


def _setup_json(data: DataChoice, setup: StudySetup) -> str:
    return json.dumps({"version": RECORD_VERSION, "data": data.to_json(), "setup": setup.as_dict()}, allow_nan=False)


def _request_json(state: ProtocolState) -> str:
    tasks = [
        {"item_id": t.item_id, "system_a": t.system_a, "system_b": t.system_b}
        if isinstance(t, ComparisonTask)
        else {"item_id": t.item_id, "system": t.system}
        for t in next_request(state).tasks
    ]
    return json.dumps({"round": state.round + 1, "unit": state.table.unit, "tasks": tasks})


def begin_study(
    store: Store,
    data: DataChoice,
    dataset: Dataset,
    setup: StudySetup,
    name: str = "",
    *,
    state: ProtocolState | None = None,
    criterion: str = "",
    guidelines: str = "",
) -> Study:
    """Create a study for ``setup`` on ``data`` and write its first state: round 0 and the first
    request, or ``state`` (a run restored from a session file continues as a new study). Its
    criterion (default: :func:`default_criterion` of the human rater) and guidelines are stored
    with it; its kind follows the setup's mode (live or replay)."""
    table = study_table(dataset, setup) if state is None else state.table
    state = start_study(table, setup) if state is None else state
    label = name.strip() or f"{setup.question.describe()} ({setup.human}{', ' + ', '.join(setup.metrics) if setup.metrics else ''})"
    record = store.create_study(data.key, table.fingerprint, label, _setup_json(data, setup), judgments_per_item=setup.judgments_per_item)
    store.append_state(record.id, state.round, state_to_json(state), _request_json(state), "start", cost=state.cost_used)
    meta = set_details(store.db, record.id, criterion.strip() or default_criterion(setup.human), guidelines, setup.mode)
    return Study(record, data, setup, table, state, meta, study_scale(dataset, setup, table))


def state_key(state: ProtocolState) -> str:
    """What identifies a protocol state: its lossless JSON, as a study's trail stores it (the key of caches by state)."""
    return state_to_json(state)


def record_state(store: Store, study_id: int, state: ProtocolState, kind: StateKind = "round") -> None:
    """Write ``state`` to the study's trail (after a round, or after feeding judgments)."""
    store.append_state(study_id, state.round, state_to_json(state), _request_json(state), kind, cost=state.cost_used)


def undo_study(store: Store, study_id: int, table: StudyTable) -> ProtocolState | None:
    """Go back one state (the trail keeps the undone one); ``None`` when nothing is left to undo."""
    back = store.undo_state(study_id)
    return None if back is None else state_from_json(back.state_json, table)


def study_parts(record: StudyRecord) -> tuple[DataChoice, StudySetup]:
    """The data choice and the setup a study was made with.

    Raises:
        SettingsError: a record written by another version of prefeval, or damaged.
    """
    try:
        value: dict[str, Any] = json.loads(record.setup_json)
        if not isinstance(value, dict):
            raise SettingsError.single("bad_study", f"study {record.id} cannot be read: its record is not a JSON object")
        if value.get("version") != RECORD_VERSION:
            raise SettingsError.single("bad_study", f"study {record.id} was written by another version of prefeval")
        validated(SetupDocument, value["setup"], error=SettingsError, file=None, prefix="setup")  # the session file's checks
        return DataChoice.from_json(value["data"]), StudySetup.from_dict(value["setup"])
    except (KeyError, TypeError, ValueError) as error:
        if isinstance(error, SettingsError):
            raise
        raise SettingsError.single("bad_study", f"study {record.id} cannot be read: {error}") from None


def resume_study(store: Store, study_id: int, dataset: Dataset, *, table: StudyTable | None = None) -> Study:
    """The study with this id, at its latest state, on ``dataset`` (loaded from :func:`study_parts`'
    data choice by the caller, who may cache it, as the study's ``table``).

    Raises:
        SettingsError: no such study, or the data or setup no longer give the table the study was
            made on.
    """
    record = store.study(study_id)
    data, setup = study_parts(record)
    table = study_table(dataset, setup) if table is None else table
    if table.fingerprint != record.dataset_fingerprint:
        raise SettingsError.single("bad_study", f"study {study_id} was made on other data than these (the data changed)")
    latest = store.latest_state(study_id)
    state = start_study(table, setup) if latest is None else state_from_json(latest.state_json, table)
    scale = study_scale(dataset, setup, table)
    refuse_off_scale(study_id, scale, state.reveals.value[state.reveals.round > 0], "its saved state")
    return Study(record, data, setup, table, state, details(store.db, study_id), scale)


def study_store(where: Store | str | Path | None = None) -> Store:
    """``where`` itself when it is a store, else the store in that folder (SQLite), or for ``None``
    the dashboard's (``$PREFEVAL_DATABASE_URL``, else SQLite in ``$PREFEVAL_DATA_DIR``, else ``./prefeval_data``).

    Raises:
        SettingsError: a database URL that is not PostgreSQL or SQLite.
        StoreError: the database cannot be reached, or its schema is newer than this prefeval.
    """
    return where if isinstance(where, Store) else open_store(where)


def load_study(store: Store, study_id: int) -> tuple[Study, Dataset]:
    """The study with this id at its latest state (:func:`resume_study`) and the data it was made on, loaded.

    Raises:
        SettingsError: no such study, or its data changed since.
        DataError: its data can no longer be loaded.
    """
    data, _ = study_parts(store.study(study_id))
    dataset = data.load()
    return resume_study(store, study_id, dataset), dataset


def step_study(store: Store, study: Study, *, progress: Callable[[str], None] | None = None, open_requests: OpenRequests = "keep") -> Study:
    """Move the study on by one step and record the new state: a replay study runs its next round;
    a live study takes the stored judgments that are complete (judged by enough annotators) and
    decides, keeping or withdrawing the open requests still unjudged
    (:func:`~prefeval_core.workflow.feed.decide_now`; ``progress`` hears how many judgments were
    new and requests withdrawn). A step that changes nothing records nothing."""
    if study.setup.mode == "replay":
        state = run_protocol(study.state, replay_source(study.table), max_rounds=1)
        kind: StateKind = "round"
    else:
        fed = stored_judgments(store, study.data.key, study.state, study_id=study.id, per_item=study.record.judgments_per_item)
        refuse_off_scale(study.id, study.scale, rating_scores(fed), "the store")
        early = decide_now(study.state, fed, open_requests) if fed else None
        if progress is not None:
            withdrawn = f", {early.withdrawn} open requests withdrawn" if early is not None and early.withdrawn else ""
            progress(f"study #{study.id}: {len(fed)} new complete judgments{withdrawn}")
        state = study.state if early is None else early.state
        kind = "feed"
    if state is not study.state:
        record_state(store, study.id, state, kind)
    return replace(study, state=state)


def study_json(study: Study) -> dict[str, Any]:
    """Where the study stands, as ``studies show --json`` prints it: its :class:`~prefeval_core.workflow.status.StudyStatus`
    fields, then ``id, name, dataset, stop_words, progress_words, requested`` (tasks in the open request), ``setup``
    and ``judge_role`` (how the study's metrics enter the decisions, in words; null without metrics)."""
    status = study_status(study.state)
    return asdict(status) | {
        "id": study.id,
        "name": study.record.name,
        "dataset": study.record.dataset,
        "stop_words": status.stop_words,
        "progress_words": status.progress_words,
        "requested": len(next_request(study.state)),
        "setup": study.setup.as_dict(),
        "judge_role": judge_role(study.state.settings),
    }


def list_studies(store: Store, dataset_key: str | None = None, *, archived: bool = False) -> list[StudySummary]:
    """The studies (of this data where given), newest first; archived ones only if ``archived``."""
    found = store.list_studies(dataset_key)
    if archived:
        return found
    kept = all_study_details(store)
    return [s for s in found if s.study.id not in kept or kept[s.study.id].archived_at is None]


def all_study_details(store: Store) -> dict[int, StudyDetails]:
    """Every study's details by id (studies stored before they were kept are absent)."""
    return all_details(store.db)


def study_details(store: Store, study_id: int) -> StudyDetails:
    """The study's details; for a study stored before they were kept, derived from its setup (and then stored).

    Raises:
        SettingsError: no such study.
    """
    found = details(store.db, study_id)
    if found is not None:
        return found
    record = store.study(study_id)
    _, setup = study_parts(record)
    return set_details(store.db, study_id, default_criterion(setup.human), "", setup.mode)


def study_criterion(store: Store, study_id: int | None) -> str | None:
    """The criterion the study's judgments carry (:func:`study_details`); ``None`` outside a study.

    Raises:
        SettingsError: no such study.
    """
    return None if study_id is None else study_details(store, study_id).criterion


def set_criterion(store: Store, study_id: int, criterion: str, guidelines: str) -> StudyDetails:
    """Change what the study's annotators are asked (judgments already stored keep the criterion they were made under).

    Raises:
        SettingsError: an empty criterion, or no such study.
    """
    return set_details(store.db, study_id, criterion, guidelines, study_details(store, study_id).kind)


def archive_study(store: Store, study_id: int, archived: bool = True) -> None:
    """Archive the study (hidden from the lists) or bring it back; nothing of it is deleted.

    Raises:
        SettingsError: no such study.
    """
    study_details(store, study_id)
    set_archived(store.db, study_id, archived)


def rename_study(store: Store, study_id: int, name: str) -> None:
    """Give the study another name.

    Raises:
        SettingsError: an empty name, or no such study.
    """
    rename(store.db, study_id, name)


def remember_data(store: Store, data: DataChoice) -> str:
    """Keep an uploaded data choice in the store; returns the digest an address can name."""
    return save_data(store.db, json.dumps(data.to_json(), allow_nan=False))


def recalled_data(store: Store, digest: str) -> DataChoice | None:
    """The data choice kept under ``digest``, or ``None`` (unknown digest).

    Raises:
        SettingsError: the kept JSON no longer reads as a data choice.
    """
    found = load_data(store.db, digest)
    return None if found is None else DataChoice.from_json(json.loads(found))
