"""A dashboard session as data: which data, which raters, protocol settings and state,
annotations; saved to and restored from one JSON file.

The JSON is self-contained: uploaded files travel inside it (base64), so a session restores
on another machine. The protocol's state is kept as the JSON the protocol itself writes
(opaque here). Restoring checks the format and says what is wrong instead of failing later.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Final, Literal

from prefeval_core.bundled import SAMPLES_DIR  # a clone's sample_data/, or the installed copy
from prefeval_core.data.dataset import Dataset, load_dataset
from prefeval_core.data.formats import InputKind
from prefeval_core.data.reading import MAX_BYTES
from prefeval_core.errors import DataError, Problem
from prefeval_core.store import Comparison, utc_now

DEFAULT_SAMPLE: Final = "summeval"
SESSION_VERSION: Final = 2
"""Version 2: a study setup and the protocol state of round 2 (version 1 files are refused with a message)."""


class SessionFileError(DataError):
    """A session file that cannot be restored (not JSON, wrong version, missing fields)."""


def sample_names() -> tuple[str, ...]:
    """The bundled samples (folders with a ratings or preferences file: not the corpus or the model), sorted."""
    return tuple(sorted({f.parent.name for f in SAMPLES_DIR.glob("*/*") if f.name.startswith(("ratings.", "preferences."))}))


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
    def from_json(cls, value: Mapping[str, Any]) -> DataChoice:
        files = _files_from_json(value.get("files", []))
        computed = _files_from_json(value.get("computed", []))
        kinds = tuple((str(n), k) for n, k in value.get("kinds", []))
        columns = tuple((str(n), tuple(map(str, c))) for n, c in value.get("rater_columns", []))
        kind = value["kind"]
        if kind not in ("sample", "upload"):
            raise ValueError(f"data kind must be 'sample' or 'upload', got {kind!r}")
        return cls(kind, str(value["name"]), files, kinds, columns, computed)


def _files_to_json(files: tuple[tuple[str, bytes], ...]) -> list[dict[str, str]]:
    return [{"name": n, "base64": base64.b64encode(d).decode("ascii")} for n, d in files]


def _files_from_json(values: list[dict[str, str]]) -> tuple[tuple[str, bytes], ...]:
    return tuple((str(f["name"]), base64.b64decode(f["base64"], validate=True)) for f in values)


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
        annotations: the dataset's stored annotations (those that count) at saving time.
        saved_at: UTC time stamp, ISO 8601.
    """

    data: DataChoice
    human: str | None
    metrics: tuple[str, ...] = ()
    setup: Mapping[str, Any] | None = None
    check: Mapping[str, Any] | None = None
    protocol: Any = None
    annotations: tuple[Comparison, ...] = ()
    saved_at: str = field(default_factory=utc_now)


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
        "annotations": [asdict(a) for a in snapshot.annotations],
    }
    return json.dumps(value, ensure_ascii=False, indent=1, allow_nan=False)


def session_from_json(text: str | bytes, file_name: str = "session.json") -> SessionSnapshot:
    """Read a session file written by :func:`session_to_json`.

    Raises:
        SessionFileError: not JSON, not a prefeval session, a newer version, or a field missing
            or of the wrong type (the message names it).
    """
    try:
        value = json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        line = getattr(error, "lineno", None)
        raise SessionFileError.single("malformed", f"not a JSON file ({error})", file=file_name, line=line) from None
    if not isinstance(value, dict) or "prefeval_session" not in value:
        raise SessionFileError.single("unsupported", "not a prefeval session file (no 'prefeval_session' field)", file=file_name)
    if value["prefeval_session"] != SESSION_VERSION:
        message = f"session format version {value['prefeval_session']!r}; this prefeval reads version {SESSION_VERSION}"
        raise SessionFileError.single("unsupported", message, file=file_name)
    try:
        annotations = tuple(Comparison(**a) for a in value.get("annotations", []))
        return SessionSnapshot(
            data=DataChoice.from_json(value["data"]),
            human=value.get("human"),
            metrics=tuple(value.get("metrics") or ()),
            setup=value.get("setup"),
            check=value.get("check"),
            protocol=value.get("protocol"),
            annotations=annotations,
            saved_at=str(value.get("saved_at", "")),
        )
    except (KeyError, TypeError, ValueError) as error:
        problem = Problem("error", "malformed", f"the session file is incomplete or damaged: {type(error).__name__}: {error}", file_name)
        raise SessionFileError([problem]) from None
