"""What the store keeps, as frozen values: judgments of both kinds, tasks, studies.

* A **comparison** is one human judgment of two outputs on one item (a pairwise study, the
  A/B screen): ``outcome`` in canonical pair order (``system_a < system_b``) with the codes of
  method.md §1, 0 ``>`` (A better), 1 ``=``, 2 ``<`` (B better). ``label`` says more about an
  outcome where the screen offers it: ``"both_bad"`` is a tie whose outputs were both bad.
  ``left_system`` is the system shown on the left (for a request file: in column A).
* A **rating** is one human score of one output ``(item, system)`` on the study's scale
  (e.g. 1–5, higher is better) in a scalar study.

Each judgment belongs to a dataset (its key, e.g. ``sample:summeval``), optionally to a study,
and to a **request**: the task ``(study, dataset, item, system(s))`` it answers, named by
:func:`request_id_for` unless the caller gives its own stable id. Its **identity** makes storing
idempotent (a unique index over the judgments that are not undone):

* judged in the app (``origin="app"``): the request id and the annotator — an annotator
  answers a request once (again only after undoing it);
* read from a file (``origin="import"``): a hash of the content (request, annotator, answer),
  so importing a file twice, or twice at once, stores each judgment once;
* migrated from a version-0 store (``origin="legacy"``): the old row id, so that no row is lost.

Times are UTC ISO 8601 strings with milliseconds; undo marks a judgment (``undone_at``) and
never deletes it.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from typing import ClassVar, Final, Literal

from prefeval_core.errors import BadValueError
from prefeval_core.vocabulary.outcomes import TIE
from prefeval_core.vocabulary.tasks import ComparisonTask, RatingTask, Task

JudgmentKind = Literal["comparison", "rating"]
"""What a judgment is: a comparison of two outputs, or a rating of one output."""
Origin = Literal["app", "import", "legacy"]
"""Where a judgment came from: judged in the app, read from a file, or migrated from a version-0 store."""
ComparisonLabel = Literal["both_bad"]
"""Extra meaning of a comparison's outcome: ``both_bad`` is a tie (``=``) where both outputs were bad."""
StateKind = Literal["start", "round", "feed", "undo"]
"""What a study record is: the study's start, a round decided, judgments fed in, an undo."""

ORIGINS: Final[tuple[Origin, ...]] = ("app", "import", "legacy")
COMPARISON_LABELS: Final[tuple[ComparisonLabel, ...]] = ("both_bad",)


def utc_now() -> str:
    """Now as UTC ISO 8601 with milliseconds (the store's time stamps)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _digest(parts: list[object]) -> str:
    """A 128-bit hex hash of a JSON list: unambiguous for any text (no separator to collide with)."""
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode()).hexdigest()[:32]


def request_id_for(dataset: str, study_id: int | None, item_id: str, systems: tuple[str, ...]) -> str:
    """The id of a task: judging ``systems`` (one for a rating, a canonical pair for a
    comparison) on ``item_id`` of ``dataset``, for ``study_id`` (``None``: outside any study).
    Stable across rounds and processes."""
    return _digest(["request", dataset, study_id, item_id, *systems])


def _bad(column: str, message: str) -> BadValueError:
    return BadValueError.single("bad_value", message, column=column)


def _check_text(judgment: object, names: tuple[str, ...]) -> None:
    for name in names:
        value = getattr(judgment, name)
        if not isinstance(value, str) or not value.strip():
            raise _bad(name, f"{name} must be a non-empty text, got {value!r}")
        if "\x00" in value:  # PostgreSQL text cannot hold NUL; refuse it on both engines alike
            raise _bad(name, f"{name} must not contain a NUL character")


def _check_common(judgment: Comparison | Rating) -> None:
    _check_text(judgment, ("dataset", "item_id", "annotator", "created_at"))
    for name in ("study_id", "id"):
        value = getattr(judgment, name)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            raise _bad(name, f"{name} must be a whole number or empty, got {value!r}")
    if judgment.origin not in ORIGINS:
        raise _bad("origin", f"origin must be one of {', '.join(ORIGINS)}, got {judgment.origin!r}")
    if judgment.undone_at is not None:
        _check_text(judgment, ("undone_at",))


@dataclass(frozen=True, kw_only=True)
class Attribution:
    """Where a judgment belongs and how the store knows it (the keyword fields of both kinds).

    Attributes:
        study_id: the study it was made for, or ``None``.
        request_id: the task it answers (default :func:`request_id_for` of the task).
        origin: ``app``, ``import`` or ``legacy`` (decides the identity, see the module docstring).
        identity: what makes it unique among the judgments that count (computed when empty).
        id: row id in the store (``None`` before storing).
        undone_at: when it was undone, or ``None`` while it counts.
        criterion: what the annotator was asked to judge (the study's criterion, e.g.
            ``relevance``), or ``None`` where not recorded (judgments stored before version 2).
    """

    study_id: int | None = None
    request_id: str = ""
    origin: Origin = "app"
    identity: str = ""
    id: int | None = None
    undone_at: str | None = None
    criterion: str | None = None

    def _attribute(self, kind: JudgmentKind, dataset: str, task: Task, annotator: str, answer: list[object]) -> None:
        """Fill in the request id and the identity where empty (called once the values are checked)."""
        if not self.request_id:
            object.__setattr__(self, "request_id", request_id_for(dataset, self.study_id, task.item_id, task.systems))
        if self.identity:
            return
        if self.origin == "legacy":
            if self.id is None:
                raise _bad("id", "a judgment migrated from a version-0 store needs its old row id")
            object.__setattr__(self, "identity", f"legacy:{self.id}")
            return
        parts: list[object] = [kind, self.origin, self.request_id, annotator]
        object.__setattr__(self, "identity", _digest(parts + answer if self.origin == "import" else parts))


@dataclass(frozen=True)
class Comparison(Attribution):
    """One human judgment of a pair of outputs on one item (keyword fields: :class:`Attribution`).

    Attributes:
        dataset: key of the dataset the item belongs to.
        item_id: the item.
        system_a, system_b: the pair in canonical order (``system_a < system_b``).
        outcome: 0 ``>`` (A better), 1 ``=``, 2 ``<`` (B better), canonical order.
        annotator: who judged.
        left_system: the system whose output was shown on the left (``system_a`` or ``system_b``).
        created_at: UTC time stamp, ISO 8601.
        label: ``"both_bad"`` for a tie whose outputs were both bad, else ``None``.

    Raises:
        BadValueError: a value of the wrong kind (the problem names the column).
    """

    dataset: str
    item_id: str
    system_a: str
    system_b: str
    outcome: int
    annotator: str
    left_system: str
    created_at: str
    label: ComparisonLabel | None = None

    kind: ClassVar[Literal["comparison"]] = "comparison"

    def __post_init__(self) -> None:
        _check_common(self)
        _check_text(self, ("system_a", "system_b", "left_system"))
        if not self.system_a < self.system_b:
            raise _bad("system_b", f"a comparison's pair must be canonical (system_a < system_b), got ({self.system_a}, {self.system_b})")
        if self.left_system not in (self.system_a, self.system_b):
            raise _bad("left_system", f"left_system {self.left_system!r} is not one of the pair ({self.system_a}, {self.system_b})")
        if not isinstance(self.outcome, int) or isinstance(self.outcome, bool) or self.outcome not in (0, 1, 2):
            raise _bad("outcome", f"outcome must be 0 (>), 1 (=) or 2 (<), got {self.outcome!r}")
        if self.label is not None and (self.label not in COMPARISON_LABELS or self.outcome != TIE):
            raise _bad("label", f"label must be empty or 'both_bad' on a tie (outcome 1), got {self.label!r} on outcome {self.outcome}")
        self._attribute(self.kind, self.dataset, self.task, self.annotator, [self.outcome, self.label])

    @property
    def task(self) -> ComparisonTask:
        return ComparisonTask(self.item_id, self.system_a, self.system_b)


@dataclass(frozen=True)
class Rating(Attribution):
    """One human score of one output (keyword fields: :class:`Attribution`).

    Attributes:
        dataset: key of the dataset the item belongs to.
        item_id: the item.
        system: the system whose output was rated.
        score: the score on the study's scale (higher is better), finite.
        annotator: who rated.
        created_at: UTC time stamp, ISO 8601.

    Raises:
        BadValueError: a value of the wrong kind (the problem names the column).
    """

    dataset: str
    item_id: str
    system: str
    score: float
    annotator: str
    created_at: str

    kind: ClassVar[Literal["rating"]] = "rating"

    def __post_init__(self) -> None:
        _check_common(self)
        _check_text(self, ("system",))
        if isinstance(self.score, bool) or not isinstance(self.score, int | float) or not math.isfinite(self.score):
            raise _bad("score", f"score must be a finite number, got {self.score!r}")
        object.__setattr__(self, "score", float(self.score))
        self._attribute(self.kind, self.dataset, self.task, self.annotator, [self.score])

    @property
    def task(self) -> RatingTask:
        return RatingTask(self.item_id, self.system)


Judgment = Comparison | Rating
_FIELDS: Final[dict[JudgmentKind, tuple[str, ...]]] = {
    "comparison": tuple(f.name for f in fields(Comparison)),
    "rating": tuple(f.name for f in fields(Rating)),
}


def judgment_fields(kind: JudgmentKind) -> tuple[str, ...]:
    """The fields of a judgment of ``kind``, in declaration order."""
    return _FIELDS[kind]


def judgment_values(judgment: Judgment) -> dict[str, object]:
    """The judgment's fields as a dict (every value is a scalar: no deep copy as in ``asdict``)."""
    return {name: getattr(judgment, name) for name in _FIELDS[judgment.kind]}


@dataclass(frozen=True)
class ImportResult:
    """What storing several judgments did: ``added`` new ones, ``already_there`` (identical
    identity among the judgments that count, including repeats within the batch, or, when
    superseding, an answer older than the one that counts) and ``replaced`` (earlier answers a
    newer one superseded, marked undone)."""

    added: int
    already_there: int
    replaced: int = 0


@dataclass(frozen=True)
class StudyRecord:
    """A study (a replay or live protocol run) as the store knows it.

    Attributes:
        id: the study's id in the store.
        dataset: key of the dataset it runs on.
        dataset_fingerprint: a hash of the data's content (opaque here), to notice changed data.
        name: shown to people ("resume study ...").
        setup_json: the study's setup, JSON text written by the protocol (opaque here).
        judgments_per_item: how many different annotators judge each requested item (>= 1).
        created_at: UTC time stamp, ISO 8601.
    """

    id: int
    dataset: str
    dataset_fingerprint: str
    name: str
    setup_json: str
    judgments_per_item: int
    created_at: str


@dataclass(frozen=True)
class StudyState:
    """One record of a study's trail (append-only).

    Attributes:
        id: the record's id (increasing in the order written).
        study_id: its study.
        round: the protocol's round at this state (0 at the start).
        kind: ``start``, ``round``, ``feed`` or ``undo``.
        state_json: the protocol's state, JSON text (opaque here).
        request_json: the request open at this state (JSON text), or ``None``.
        cost: the cost spent so far in the study's unit (ratings or comparisons), if given.
        restores: for an ``undo`` record, the id of the record whose state it brings back.
        created_at: UTC time stamp, ISO 8601.
    """

    id: int
    study_id: int
    round: int
    kind: StateKind
    state_json: str
    request_json: str | None
    cost: float | None
    restores: int | None
    created_at: str


@dataclass(frozen=True)
class StudySummary:
    """A line of the list of studies: the study and where it stands (its newest record)."""

    study: StudyRecord
    rounds: int
    cost: float | None
    records: int
    updated_at: str
