"""A study's requests in Label Studio and its answers back: as files (``export`` / ``import``, for a
project the lead sets up by hand) or straight from a server with ``label-studio-sdk`` (``push`` /
``pull``, the optional ``labelstudio`` extra). One route for ``prefeval labelstudio``.

**Push** creates the study's project (title :func:`project_title`, prefeval's labeling config with
the study's criterion in its heading) or reuses it, and adds only the open request's tasks the
project does not hold yet (either side shown as A): a task left unanswered in round 1 and asked
for again in round 2 stays one task, so nobody answers it twice. **Pull** reads the project's JSON
export (every task) and stores each answer once however often it is pulled, the annotator named
by the e-mail Label Studio's users API gives for the user id. An annotator has one judgment per
request, across tasks, projects and pulls: an answer edited in Label Studio replaces the one
stored before (the latest wins; the earlier is kept in the store, marked undone). Task data,
config and checks: :mod:`prefeval_core.annotation.labelstudio`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from prefeval_core.annotation.blind import BlindKey
from prefeval_core.annotation.labelstudio import (
    LabelStudioImport,
    LabelStudioProject,
    RatingControl,
    comparison_project,
    labeling_config,
    rating_control,
    rating_project,
    read_label_studio_export,
    study_tasks,
    tasks_in_project,
)
from prefeval_core.annotation.rating_scale import RatingScale
from prefeval_core.data.dataset import Dataset
from prefeval_core.errors import PrefevalError
from prefeval_core.protocol import next_request
from prefeval_core.store import ImportResult, Store, open_store
from prefeval_core.vocabulary.tasks import ComparisonTask, RatingTask, Task
from prefeval_core.workflow.request_files import blind_key
from prefeval_core.workflow.studies import Study, resume_study, study_criterion, study_parts

MISSING_SDK = "talking to a Label Studio server needs label-studio-sdk: pip install 'prefeval[labelstudio]'"


class LabelStudioError(PrefevalError):
    """The Label Studio server cannot be reached or refuses a call (each problem says which)."""


class LabelStudioApi(Protocol):
    """The few calls push and pull make on a Label Studio server (:func:`connect` gives one)."""

    def find_project(self, title: str) -> tuple[int, str] | None:
        """The id and labeling config of the project titled ``title``, or ``None``."""

    def create_project(self, title: str, config: str, instructions: str) -> int:
        """A new project; its id."""

    def set_config(self, project: int, config: str) -> None:
        """Replace the project's labeling config."""

    def task_data(self, project: int) -> list[Any]:
        """The ``data`` of every task in the project."""

    def import_tasks(self, project: int, tasks: Sequence[dict[str, Any]]) -> None:
        """Add ``tasks`` (each ``{"data": {...}}``) to the project."""

    def export_json(self, project: int) -> bytes:
        """The project's JSON export of every task, answered or not."""

    def user_emails(self) -> dict[str, str]:
        """The e-mail of each user id (as a string)."""


@dataclass(frozen=True)
class StudyProject:
    """A study's open request as a Label Studio project.

    Attributes:
        study: the study's id.
        project: the config and tasks (of the whole request, or only those a server lacks).
        unit: ``ratings`` or ``comparisons``.
        control: how the config asks (``choices`` for comparisons, else :data:`RatingControl`).
        requested: tasks in the open request.
    """

    study: int
    project: LabelStudioProject
    unit: str
    control: RatingControl | str
    requested: int


@dataclass(frozen=True)
class Pushed:
    """What a push did: the Label Studio ``project`` id (``created`` or reused), the tasks
    ``added`` and those of the open request it ``already_had``."""

    study: int
    project: int
    title: str
    created: bool
    added: int
    already_had: int
    unit: str
    control: RatingControl | str

    def to_json(self) -> dict[str, Any]:
        return dict(vars(self))


@dataclass(frozen=True)
class Imported:
    """Answers read from Label Studio and stored: ``judgments`` read, ``added`` to the store,
    ``already_there``; ``tasks`` in the export, ``unanswered``, annotations ``skipped``;
    ``replaced``: earlier answers an edited one superseded."""

    study: int
    tasks: int
    judgments: int
    added: int
    already_there: int
    unanswered: int
    skipped: int
    replaced: int

    def to_json(self) -> dict[str, Any]:
        return dict(vars(self))


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
    users: Mapping[str, str] | None = None,
) -> LabelStudioImported:
    """Store every judgment of Label Studio's JSON export ``data`` (file ``name``) of a project
    exported for ``dataset_key`` and ``study_id``, in one transaction, one per request and
    annotator, each carrying the study's criterion (none outside a study): the latest answer
    replaces the one stored before (arguments as
    :func:`~prefeval_core.annotation.labelstudio.read_label_studio_export`; ``users``: the e-mail
    of each user id).

    Raises:
        DataError: not a JSON export, or an answer that cannot be taken; nothing is stored then.
        SettingsError: no study ``study_id``.
    """
    key = blind_key(store, dataset_key, study_id)
    loaded = read_label_studio_export(
        name, data, dataset_key, study_id=study_id, systems=systems, scale=scale, known=known, key=key, latest_wins=latest_wins,
        users=users,
    )  # fmt: skip
    criterion = study_criterion(store, study_id)
    loaded = replace(loaded, judgments=tuple(replace(judgment, criterion=criterion) for judgment in loaded.judgments))
    return LabelStudioImported(loaded, store.add_many(loaded.judgments, supersede=True))


def project_title(study_id: int, key: BlindKey) -> str:
    """The title of a study's project on a server: its id and a tag keyed with the study's secret
    (``key``), so that the same id in another store names another project; names no system."""
    return f"prefeval study {study_id} ({key.tag('labelstudio-project')})"


def _open(store: Store | None, study_id: int) -> tuple[Store, Study, Dataset]:
    store = store or open_store()
    data, _ = study_parts(store.study(study_id))
    dataset = data.load()
    return store, resume_study(store, study_id, dataset), dataset


def _project(store: Store, study: Study, dataset: Dataset, tasks: Sequence[Task], seed: int) -> StudyProject:
    scale = study.scale
    project = label_studio_project(store, tasks, dataset, study.data.key, scale, study_id=study.id, seed=seed, criterion=study.criterion)
    control: RatingControl | str = "choices" if scale is None else rating_control(scale)
    return StudyProject(study.id, project, study.table.unit, control, len(next_request(study.state).tasks))


def export_project(study_id: int, *, seed: int = 0, store: Store | None = None) -> StudyProject:
    """The open request of ``study_id`` as a Label Studio project (config and tasks, for a file);
    comparisons shown in the keyed left/right order of ``seed``."""
    store, study, dataset = _open(store, study_id)
    return _project(store, study, dataset, next_request(study.state).tasks, seed)


def _read(store: Store, study: Study, dataset: Dataset, name: str, data: bytes, *, latest_wins: bool, users: dict[str, str]) -> Imported:
    read = import_label_studio_export(
        store, name, data, study.data.key, systems=dataset.systems, study_id=study.id, scale=study.scale,
        known=study_tasks(study.table), latest_wins=latest_wins, users=users,
    )  # fmt: skip
    loaded, stored = read.loaded, read.stored
    return Imported(
        study.id, loaded.tasks, len(loaded.judgments), stored.added, stored.already_there, loaded.unanswered, loaded.skipped,
        stored.replaced,
    )  # fmt: skip


def import_export(
    study_id: int, name: str, data: bytes, *, latest_wins: bool = False, users: dict[str, str] | None = None, store: Store | None = None
) -> Imported:
    """Store the judgments of Label Studio's JSON export ``data`` (file ``name``) of the study's
    project, each once however often it is imported; ``users``: the e-mail of each user id.

    Raises:
        DataError: the export's problems (tasks not exported for this study, answers off the
            config, conflicting answers), each naming the task.
    """
    store, study, dataset = _open(store, study_id)
    return _read(store, study, dataset, name, data, latest_wins=latest_wins, users=users or {})


def push_round(api: LabelStudioApi, study_id: int, *, project: int | None = None, seed: int = 0, store: Store | None = None) -> Pushed:
    """Put the open request of ``study_id`` into its Label Studio project: ``project`` (an id), else
    the one titled :func:`project_title`, created when missing; its labeling config brought up
    to date (the criterion may have changed); only the tasks it lacks are added."""
    store, study, dataset = _open(store, study_id)
    key = blind_key(store, study.data.key, study.id)
    title = project_title(study_id, key)
    wanted = labeling_config(study.scale, study.criterion)
    found = api.find_project(title) if project is None else (project, None)
    created = found is None
    if found is None:
        project_id = api.create_project(title, wanted, _instructions(study))
    else:
        project_id = found[0]
        if found[1] != wanted:
            api.set_config(project_id, wanted)
    present = tasks_in_project(api.task_data(project_id), study.data.key, systems=dataset.systems, study_id=study.id, key=key)
    requested = next_request(study.state).tasks
    missing = [t for t in requested if t not in present]
    made = _project(store, study, dataset, missing, seed)
    if made.project.tasks:
        api.import_tasks(project_id, made.project.tasks)
    return Pushed(study.id, project_id, title, created, len(made.project.tasks), len(requested) - len(missing), made.unit, made.control)


def pull_answers(
    api: LabelStudioApi, study_id: int, *, project: int | None = None, latest_wins: bool = False, store: Store | None = None
) -> Imported:
    """Store the answers in the study's Label Studio project (``project``, else the one titled
    :func:`project_title`), annotators named by their e-mail; ``studies step`` then feeds the
    complete ones to the protocol.

    Raises:
        LabelStudioError: no such project on the server.
        DataError: as :func:`import_export`.
    """
    store, study, dataset = _open(store, study_id)
    title = project_title(study_id, blind_key(store, study.data.key, study.id))
    if project is None:
        found = api.find_project(title)
        if found is None:
            raise LabelStudioError.single("labelstudio", f"the server has no project '{title}' (push the study's requests first)")
        project = found[0]
    return _read(store, study, dataset, f"label-studio-project-{project}.json", api.export_json(project), latest_wins=latest_wins,
                 users=api.user_emails())  # fmt: skip


def _instructions(study: Study) -> str:
    """The project's instructions: the criterion, then the lead's guidelines."""
    return "\n\n".join(part for part in (f"Judge the {study.criterion} of the outputs.", study.guidelines) if part)


# --- the server, through label-studio-sdk ------------------------------------------------------


def connect(url: str, token: str) -> LabelStudioApi:
    """A Label Studio server at ``url`` (e.g. ``http://127.0.0.1:8080``) with a user's API
    ``token`` (legacy token, or a personal access token).

    Raises:
        LabelStudioError: label-studio-sdk is not installed, or the server cannot be reached
            or refuses the token.
    """
    try:
        from label_studio_sdk import LabelStudio
    except ImportError:
        raise LabelStudioError.single("labelstudio", MISSING_SDK) from None
    server = _SdkServer(LabelStudio(base_url=url.rstrip("/"), api_key=token))
    server.user_emails()  # fails here, with one message, when the url or the token is wrong
    return server


@dataclass(frozen=True)
class _SdkServer:
    """:class:`LabelStudioApi` on ``label_studio_sdk.LabelStudio``; every failure is a :class:`LabelStudioError`."""

    client: Any

    def _call(self, what: str, call: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return call(*args, **kwargs)
        except Exception as error:  # the SDK raises httpx, ApiError and pydantic errors alike
            status = getattr(error, "status_code", None)
            detail = f"HTTP {status}: {getattr(error, 'body', '')}" if status is not None else f"{type(error).__name__}: {error}"
            raise LabelStudioError.single("labelstudio", f"Label Studio could not {what} ({detail})") from None

    def find_project(self, title: str) -> tuple[int, str] | None:
        projects = self._call("list the projects", lambda: [p for p in self.client.projects.list(title=title) if p.title == title])
        return None if not projects else (int(projects[0].id), str(projects[0].label_config or ""))

    def create_project(self, title: str, config: str, instructions: str) -> int:
        created = self._call(
            "create the project", self.client.projects.create, title=title, label_config=config, expert_instruction=instructions,
            show_instruction=True, show_skip_button=False,
        )  # fmt: skip
        return int(created.id)

    def set_config(self, project: int, config: str) -> None:
        self._call("update the labeling config", self.client.projects.update, id=project, label_config=config)

    def task_data(self, project: int) -> list[Any]:
        return self._call("list the tasks", lambda: [task.data for task in self.client.tasks.list(project=project, fields="task_only")])

    def import_tasks(self, project: int, tasks: Sequence[dict[str, Any]]) -> None:
        self._call("import the tasks", self.client.projects.import_tasks, id=project, request=list(tasks))

    def export_json(self, project: int) -> bytes:
        chunks: Iterable[bytes] = self._call(
            "export the project",
            lambda: list(self.client.projects.exports.download_sync(project, export_type="JSON", download_all_tasks=True)),
        )
        return b"".join(chunks)

    def user_emails(self) -> dict[str, str]:
        users = self._call("list the users (is the url or the token wrong?)", self.client.users.list)
        return {str(user.id): str(user.email or "") for user in users}
