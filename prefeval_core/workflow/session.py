"""A dashboard session as data: which data, which raters, protocol settings and state,
annotations; saved to and restored from one JSON file.

The JSON is self-contained: uploaded files travel inside it (base64), so a session restores
on another machine. The protocol's state is kept as the JSON the protocol itself writes.
Reading checks the whole file against its schema (:mod:`prefeval_core.workflow.session_schema`) before
anything is built, and names the JSON path of what is wrong; what needs the data is checked by
:func:`prefeval_core.workflow.session_restore.restore_session`.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Final, Literal

from prefeval_core.data.bundled import SAMPLES_DIR, sample_names  # a clone's sample_data/, or the installed copy
from prefeval_core.data.dataset import Dataset, load_dataset
from prefeval_core.data.formats import InputKind
from prefeval_core.data.reading import MAX_BYTES
from prefeval_core.data.schema import at_path, load_json, validated
from prefeval_core.errors import DataError, PrefevalError, SettingsError
from prefeval_core.protocol import ProtocolState, state_to_dict
from prefeval_core.store import Comparison, Judgment, Rating, Store, utc_now
from prefeval_core.store.records import judgment_values
from prefeval_core.workflow.metric_check import MetricCheck
from prefeval_core.workflow.session_schema import (
    JUDGMENT_TAGS,
    SESSION_VERSION,
    DataDocument,
    JudgmentDocument,
    RatingDocument,
    SessionDocument,
)
from prefeval_core.workflow.setup import StudySetup

DEFAULT_SAMPLE: Final = "summeval"


class SessionFileError(DataError):
    """A session file that cannot be restored: not JSON, past a bound, against the schema, or
    contradicting its data (each problem names the file and the JSON path of the value)."""


@dataclass(frozen=True)
class DataChoice:
    """Which data a session works on: a bundled sample, or uploaded files.

    Attributes:
        kind: ``"sample"`` or ``"upload"``.
        name: the sample's folder name, or a label for the uploaded files.
        files: uploaded ``(file name, bytes)``, in upload order (empty for a sample).
        kinds: ``(file name, table kind)`` overrides of the data layer's detection.
        rater_columns: ``(file name, rater columns)`` of wide ratings files.
        computed: ``(file name, bytes)`` of ratings files computed in the app from the texts
            (text metrics), loaded together with the data; they do not change :attr:`key`.
    """

    kind: Literal["sample", "upload"]
    name: str
    files: tuple[tuple[str, bytes], ...] = ()
    kinds: tuple[tuple[str, InputKind], ...] = ()
    rater_columns: tuple[tuple[str, tuple[str, ...]], ...] = ()
    computed: tuple[tuple[str, bytes], ...] = ()

    @classmethod
    def sample(cls, name: str = DEFAULT_SAMPLE) -> DataChoice:
        return cls("sample", name)

    @property
    def key(self) -> str:
        """A stable identity of the items and texts: ``sample:<name>``, or ``upload:<sha256 prefix
        of names and bytes>`` (annotations are filed under it)."""
        if self.kind == "sample":
            return f"sample:{self.name}"
        digest = hashlib.sha256()
        for file_name, data in sorted(self.files):
            digest.update(file_name.encode() + b"\0" + hashlib.sha256(data).digest())
        return f"upload:{digest.hexdigest()[:16]}"

    def load(self, *, max_bytes: int = MAX_BYTES) -> Dataset:
        """The dataset (raises the data layer's :class:`DataError` on bad input); ``max_bytes``
        limits each file, compressed and decompressed."""
        if self.kind == "sample":
            if self.name not in sample_names():
                raise SessionFileError.single(
                    "unknown_sample", f"no bundled sample named '{self.name}'; known: {', '.join(sample_names())}"
                )
            return load_dataset([SAMPLES_DIR / self.name, *self.computed], name=self.name, max_bytes=max_bytes)
        if not self.files:
            raise SessionFileError.single("no_files", "no files were uploaded")
        return load_dataset(
            [*self.files, *self.computed],
            kinds=dict(self.kinds) or None,
            rater_columns=dict(self.rater_columns) or None,
            name=self.name,
            max_bytes=max_bytes,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "files": _files_to_json(self.files),
            "kinds": [list(k) for k in self.kinds],
            "rater_columns": [[n, list(c)] for n, c in self.rater_columns],
            "computed": _files_to_json(self.computed),
        }

    @classmethod
    def from_json(cls, value: Any) -> DataChoice:
        """Inverse of :meth:`to_json` (a study record's data), checked against the session
        file's schema; raises :class:`SettingsError` naming the path of a bad value."""
        return cls.from_document(validated(DataDocument, value, error=SettingsError, file=None, prefix="data"))

    @classmethod
    def from_document(cls, document: DataDocument) -> DataChoice:
        """The data choice of a checked session file."""
        return cls(
            document.kind,
            document.name,
            tuple((f.name, f.content()) for f in document.files),
            tuple((n, k) for n, k in document.kinds),
            tuple((n, tuple(c)) for n, c in document.rater_columns),
            tuple((f.name, f.content()) for f in document.computed),
        )


def _files_to_json(files: tuple[tuple[str, bytes], ...]) -> list[dict[str, str]]:
    return [{"name": n, "base64": base64.b64encode(d).decode("ascii")} for n, d in files]


@dataclass(frozen=True)
class SessionSnapshot:
    """Everything needed to bring a dashboard session back.

    Attributes:
        data: the data choice (uploads included).
        human: the human rater, e.g. ``"human:relevance"``.
        metrics: the metric raters (empty: human only).
        setup: the study setup (:meth:`prefeval_core.workflow.StudySetup.as_dict`), or ``None``.
        check: the metric check settings (human, metric, eps, gamma, seed), or ``None``.
        protocol: the protocol's own JSON state (restored against the study table the setup
            rebuilds), or ``None`` before a run.
        annotations: the dataset's stored judgments (those that count, comparisons and ratings) at saving time.
        saved_at: UTC time stamp, ISO 8601.
    """

    data: DataChoice
    human: str | None
    metrics: tuple[str, ...] = ()
    setup: Mapping[str, Any] | None = None
    check: Mapping[str, Any] | None = None
    protocol: Any = None
    annotations: tuple[Judgment, ...] = ()
    saved_at: str = field(default_factory=utc_now)


def session_snapshot(
    store: Store,
    data: DataChoice,
    human: str | None,
    metrics: tuple[str, ...],
    setup: StudySetup | None,
    check: MetricCheck | None,
    protocol: ProtocolState | None,
) -> SessionSnapshot:
    """A session as data, saved now: its choices and protocol state, and the judgments of its
    data in ``store`` (those that count, comparisons then ratings)."""
    return SessionSnapshot(
        data=data,
        human=human,
        metrics=metrics,
        setup=None if setup is None else setup.as_dict(),
        check=None if check is None else asdict(check),
        protocol=None if protocol is None else state_to_dict(protocol),
        annotations=(*store.comparisons(data.key), *store.ratings(data.key)),
    )


def session_to_json(snapshot: SessionSnapshot) -> str:
    """The snapshot as a JSON text (UTF-8 safe, stable key order)."""
    value = {
        "prefeval_session": SESSION_VERSION,
        "saved_at": snapshot.saved_at,
        "data": snapshot.data.to_json(),
        "human": snapshot.human,
        "metrics": list(snapshot.metrics),
        "setup": None if snapshot.setup is None else dict(snapshot.setup),
        "check": None if snapshot.check is None else dict(snapshot.check),
        "protocol": snapshot.protocol,
        "annotations": [{"kind": a.kind, **judgment_values(a)} for a in snapshot.annotations],
    }
    return json.dumps(value, ensure_ascii=False, indent=1, allow_nan=False)


def session_from_json(text: str | bytes, file_name: str = "session.json") -> SessionSnapshot:
    """Read a session file written by :func:`session_to_json`, checked against its schema first.

    Raises:
        SessionFileError: larger than the upload limit, not JSON, nested too deeply, a number too
            long or not finite, a repeated key, not a prefeval session, another version, or a
            value of the wrong type or out of bounds (each problem names the JSON path).
    """
    value = load_json(text, file=file_name, error=SessionFileError, max_bytes=MAX_BYTES)
    if not isinstance(value, dict) or "prefeval_session" not in value:
        raise SessionFileError.single("unsupported", "not a prefeval session file (no 'prefeval_session' field)", file=file_name)
    if value["prefeval_session"] != SESSION_VERSION:
        message = f"session format version {value['prefeval_session']!r}; this prefeval reads version {SESSION_VERSION}"
        raise SessionFileError.single("unsupported", message, file=file_name, path="prefeval_session")
    document = validated(SessionDocument, value, error=SessionFileError, file=file_name, tags=JUDGMENT_TAGS)
    return SessionSnapshot(
        data=DataChoice.from_document(document.data),
        human=document.human,
        metrics=tuple(document.metrics),
        setup=value.get("setup"),
        check=value.get("check"),
        protocol=value.get("protocol"),
        annotations=tuple(_judgment(a, index, file_name) for index, a in enumerate(document.annotations)),
        saved_at=document.saved_at,
    )


def _judgment(document: JudgmentDocument, index: int, file_name: str) -> Judgment:
    """The stored judgment (its own checks: canonical pair, left system, label on a tie)."""
    values = document.model_dump(exclude={"kind"})
    try:
        return Rating(**values) if isinstance(document, RatingDocument) else Comparison(**values)
    except PrefevalError as error:
        raise at_path(error, SessionFileError, file=file_name, prefix=f"annotations[{index}]") from None
