"""What happens to a tampered session file in the core, and the campaign's figures.

:func:`check_core` reads the file (:func:`~prefeval_core.workflow.session.session_from_json`) and runs
every restore check (:func:`~prefeval_core.workflow.session_restore.restore_session`) on its
data. The outcome is ``restored``, ``refused`` or ``traceback`` (any other exception); it is a
failure when a harmful file is restored (a silent acceptance), a harmless one refused, a
refusal is not a :class:`~prefeval_core.workflow.session.SessionFileError` naming the file and the
mutation's JSON path, or anything raised a traceback.
"""

from __future__ import annotations

import re
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

from streamlit.testing.v1 import AppTest

from prefeval_core.data.dataset import Dataset
from prefeval_core.protocol import StudyTable
from prefeval_core.store import open_store
from prefeval_core.workflow import StudySetup, study_table
from prefeval_core.workflow.session import DataChoice, SessionFileError, session_from_json
from prefeval_core.workflow.session_restore import RestoredSession, restore_session, session_dataset
from tests.reliability.session_corpus import Tampered

FILE = "tampered-session.json"
Result = Literal["restored", "refused", "traceback"]

_DATASETS: dict[str, Dataset] = {}
_TABLES: dict[tuple[str, StudySetup], StudyTable] = {}


def _dataset(choice: DataChoice) -> Dataset:
    """Loaded once per data key (the app caches the same way)."""
    if choice.key not in _DATASETS:
        _DATASETS[choice.key] = choice.load()
    return _DATASETS[choice.key]


def _table(choice: DataChoice, dataset: Dataset, setup: StudySetup) -> StudyTable:
    key = (choice.key, setup)
    if key not in _TABLES:
        _TABLES[key] = study_table(dataset, setup)
    return _TABLES[key]


def unescaped(markdown: str) -> str:
    """Markdown as the user reads it (the app backslash-escapes what it shows)."""
    return re.sub(r"\\(.)", r"\1", markdown)


def restore_in_core(data: bytes, file: str = FILE) -> RestoredSession:
    """Read and check a session file as the app does, without the app."""
    snap = session_from_json(data, file)
    dataset = session_dataset(snap, file, lambda: _dataset(snap.data))
    return restore_session(snap, dataset, file=file, table_of=lambda setup: _table(snap.data, dataset, setup))


@dataclass(frozen=True)
class SessionOutcome:
    """What happened to one tampered file; ``failure`` says what was wrong (empty: as required)."""

    index: int
    kind: str
    base: str
    expect: str
    result: Result
    seconds: float
    failure: str = ""
    message: str = ""


def _refusal_failure(tampered: Tampered, error: SessionFileError) -> str:
    if tampered.expect == "restore":
        return "a harmless change was refused"
    if not error.problems or any(p.file != FILE for p in error.problems):
        return "a refusal does not name the file"
    if tampered.path is not None and not any(p.path and p.path.startswith(tampered.path) for p in error.problems):
        return f"no problem names the path {tampered.path} (paths: {[p.path for p in error.problems]})"
    return ""


def check_core(tampered: Tampered) -> SessionOutcome:
    start = time.perf_counter()
    result: Result
    failure = message = ""
    try:
        restore_in_core(tampered.data)
    except SessionFileError as error:
        result, message = "refused", str(error)
        failure = _refusal_failure(tampered, error)
    except Exception as error:  # the campaign counts what would have been a traceback
        result, message = "traceback", "".join(traceback.format_exception_only(error)).strip()
        failure = "traceback"
    else:
        result = "restored"
        failure = "silent acceptance" if tampered.expect == "refuse" else ""
    seconds = time.perf_counter() - start
    return SessionOutcome(tampered.index, tampered.kind, tampered.base, tampered.expect, result, seconds, failure, message[:300])


SESSION_KEYS = ("pe.data", "pe.human", "pe.metrics", "pe.setup", "pe.check", "pe.protocol", "pe.study")


def _session(at: AppTest) -> dict[str, Any]:
    return {key: at.session_state[key] for key in SESSION_KEYS}


def _stored() -> int:
    store = open_store()
    return len(store.comparisons(include_undone=True)) + len(store.ratings(include_undone=True))


def _changed(before: dict[str, Any], after: dict[str, Any]) -> bool:
    """Whether the session changed (a protocol state by identity: its arrays do not compare)."""
    return any(after[key] is not value and (hasattr(value, "reveals") or after[key] != value) for key, value in before.items())


def _app_failure(at: AppTest, tampered: Tampered, before: dict[str, Any], stored: int) -> str:
    message = unescaped(" ".join(e.value for e in at.error))
    if at.exception:
        return f"exception in the app: {[e.value for e in at.exception]}"
    if tampered.expect == "restore":
        restored = any("Restored the session" in s.value for s in at.success)
        return "" if restored and not message else f"a harmless change was not restored: {message}"
    if "could not be restored" not in message or FILE not in message:
        return f"no message naming the file: {message!r}"
    if tampered.path is not None and f"at {tampered.path}" not in message:
        return f"the message does not name the path {tampered.path}: {message!r}"
    if _changed(before, _session(at)):
        return "a refused file changed the session"
    if _stored() != stored:
        return "a refused file wrote to the store"
    return ""


def check_app(at: AppTest, tampered: Tampered) -> SessionOutcome:
    """Upload ``tampered`` to the Report & session page's restore uploader (``at``, already run
    once): no exception, a visible message naming the file and the path, and a refused file
    changes neither the session nor the store; a harmless one is restored."""
    before, stored = _session(at), _stored()
    start = time.perf_counter()
    at.file_uploader(key="pe.w.restore").set_value((FILE, tampered.data, "application/json"))
    at.run()
    seconds = time.perf_counter() - start
    failure = _app_failure(at, tampered, before, stored)
    result: Result = "traceback" if at.exception else "refused" if at.error else "restored"
    at.file_uploader(key="pe.w.restore").set_value(None)
    return SessionOutcome(tampered.index, tampered.kind, tampered.base, tampered.expect, result, seconds, failure)


@dataclass
class SessionFigures:
    """Counts of a campaign: outcomes per result, failures per reason, kinds seen."""

    results: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)
    kinds: set[str] = field(default_factory=set)
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def add(self, outcome: SessionOutcome) -> None:
        self.results[outcome.result] += 1
        self.kinds.add(outcome.kind)
        self.seconds = max(self.seconds, outcome.seconds)
        if outcome.failure:
            reason = outcome.failure.split(" (")[0]
            self.reasons[reason] += 1
            self.failures.append(f"#{outcome.index} {outcome.kind} on {outcome.base}: {outcome.failure}: {outcome.message}")

    @property
    def total(self) -> int:
        return sum(self.results.values())

    @property
    def clean(self) -> bool:
        return not self.failures

    def table(self) -> str:
        silent, harmless = self.reasons["silent acceptance"], self.reasons["a harmless change was refused"]
        other = sum(self.reasons.values()) - silent - harmless - self.reasons["traceback"]
        rows = [
            f"tampered sessions: {self.total} ({len(self.kinds)} mutation kinds)",
            f"  refused, naming the file and the JSON path: {self.results['refused'] - harmless - other}",
            f"  restored (harmless changes): {self.results['restored'] - silent}",
            f"  tracebacks: {self.results['traceback']}",
            f"  silent acceptances: {silent}",
            f"  harmless changes refused: {harmless}",
            f"  other failures (no file or path named, the session or the store changed): {other}",
            f"  slowest: {self.seconds:.2f} s",
        ]
        return "\n".join(rows)
