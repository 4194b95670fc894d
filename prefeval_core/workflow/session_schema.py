"""The schema of a session file (version 2, :func:`prefeval_core.workflow.session.session_to_json`).

Checked before anything is built from the file: types (no text where a number belongs),
finite numbers, bounds, option names (the core's ``Literal`` types), the number and size of
the files it carries (:data:`MAX_FILES`, base64 within
:data:`~prefeval_core.data.limits.MAX_BYTES`). The protocol state inside is checked by its own
schema (:class:`~prefeval_core.protocol.state_schema.StateDocument`); what needs the data
(names of raters, systems and items, indices within the study table) is checked at restore.
"""

from __future__ import annotations

import base64
import binascii
from typing import Annotated, Any, Final, Literal

from pydantic import Discriminator, Field, StrictInt, StrictStr, Tag, field_validator

from prefeval_core.data.formats import InputKind
from prefeval_core.data.limits import MAX_BYTES
from prefeval_core.data.schema import StrictModel
from prefeval_core.protocol.state_schema import Name, OutcomeCode, Seed, StateDocument, Threshold
from prefeval_core.store.records import ComparisonLabel, Origin
from prefeval_core.vocabulary.levels import DEFAULT_GAMMA
from prefeval_core.workflow.setup_schema import SetupDocument

SESSION_VERSION: Final = 2
"""Version 2: a study setup and a protocol state of format 2 (version 1 files are refused with a message)."""
MAX_FILES: Final = 50
"""Files a session may carry (uploads plus computed ratings)."""
MAX_BASE64_CHARS: Final = (MAX_BYTES + 2) // 3 * 4
Text = Annotated[StrictStr, Field(max_length=10_000)]
RowId = Annotated[StrictInt, Field(ge=0, lt=2**63)]


class FileDocument(StrictModel):
    """An uploaded file: its name and its bytes in base64."""

    name: Name
    base64: Annotated[StrictStr, Field(max_length=MAX_BASE64_CHARS)]

    @field_validator("base64")
    @classmethod
    def _decodes(cls, value: str) -> str:
        try:
            base64.b64decode(value, validate=True)
        except binascii.Error:
            raise ValueError("not valid base64") from None
        return value

    def content(self) -> bytes:
        return base64.b64decode(self.base64, validate=True)


class DataDocument(StrictModel):
    """:class:`~prefeval_core.workflow.session.DataChoice` as saved."""

    kind: Literal["sample", "upload"]
    name: Name
    files: Annotated[list[FileDocument], Field(max_length=MAX_FILES)] = Field(default_factory=list)
    kinds: list[Annotated[tuple[Name, InputKind], Field(strict=False)]] = Field(default_factory=list)
    rater_columns: list[Annotated[tuple[Name, list[Name]], Field(strict=False)]] = Field(default_factory=list)
    computed: Annotated[list[FileDocument], Field(max_length=MAX_FILES)] = Field(default_factory=list)


class CheckDocument(StrictModel):
    """:class:`~prefeval_core.workflow.metric_check.MetricCheck` as saved."""

    human: Name
    metric: Name
    eps: Threshold = 0.0
    gamma: Annotated[float, Field(gt=0.0, lt=1.0)] = DEFAULT_GAMMA
    seed: Seed = 0


class _Attribution(StrictModel):
    """The keyword fields of both judgment kinds (:class:`~prefeval_core.store.records.Attribution`)."""

    dataset: Name
    item_id: Name
    annotator: Name
    created_at: Text
    study_id: RowId | None = None
    request_id: Text = ""
    origin: Origin = "app"
    identity: Text = ""
    id: RowId | None = None
    undone_at: Text | None = None
    criterion: Text | None = None


class ComparisonDocument(_Attribution):
    """:class:`~prefeval_core.store.records.Comparison` as saved."""

    kind: Literal["comparison"] = "comparison"
    system_a: Name
    system_b: Name
    outcome: OutcomeCode
    left_system: Name
    label: ComparisonLabel | None = None


class RatingDocument(_Attribution):
    """:class:`~prefeval_core.store.records.Rating` as saved."""

    kind: Literal["rating"] = "rating"
    system: Name
    score: float


def _judgment_kind(value: Any) -> str:
    """Files written before ratings were saved hold comparisons without a ``kind``."""
    if isinstance(value, dict):
        return str(value.get("kind", "comparison"))
    return "comparison"


JUDGMENT_TAGS: Final = frozenset({"comparison", "rating"})
"""The judgment kinds, as pydantic names them in the location of an error."""
JudgmentDocument = Annotated[
    Annotated[ComparisonDocument, Tag("comparison")] | Annotated[RatingDocument, Tag("rating")], Discriminator(_judgment_kind)
]


class SessionDocument(StrictModel):
    """A whole session file."""

    prefeval_session: Literal[2]
    saved_at: Text = ""
    data: DataDocument
    human: Name | None = None
    metrics: list[Name] = Field(default_factory=list)
    setup: SetupDocument | None = None
    check: CheckDocument | None = None
    protocol: StateDocument | None = None
    annotations: list[JudgmentDocument] = Field(default_factory=list)
