"""Helpers of the Streamlit page tests (AppTest): paths, a private annotation folder, fresh caches."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import ClassVar

import pytest
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
PAGES = ROOT / "pages"
PAGE_FILES = ("data.py", "metric_check.py", "protocol.py", "annotate.py", "report.py")
TIMEOUT = 120  # seconds per run: the first JAX compilation and cold imports happen inside a run


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private annotation store for the test (``PREFEVAL_DATA_DIR``)."""
    folder = tmp_path / "prefeval_data"
    monkeypatch.setenv("PREFEVAL_DATA_DIR", str(folder))
    yield folder


def page(name: str) -> AppTest:
    """An AppTest of one page file, run alone (every page calls ``ensure_state``)."""
    return AppTest.from_file(str(PAGES / name), default_timeout=TIMEOUT)


def run_ok(at: AppTest) -> AppTest:
    """Run (or rerun) and assert that nothing failed: no exception, no error message."""
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def metric_values(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def shown(markdown: str) -> str:
    """Markdown source as the user reads it (the pages backslash-escape data)."""
    return re.sub(r"\\(.)", r"\1", markdown)


class _RecordingStorage(MemoryMediaFileStorage):
    """AppTest's in-memory media storage, kept reachable so tests can read downloads."""

    instances: ClassVar[list[MemoryMediaFileStorage]] = []

    def __init__(self, media_endpoint: str) -> None:
        super().__init__(media_endpoint)
        _RecordingStorage.instances.append(self)


@pytest.fixture
def downloads(monkeypatch: pytest.MonkeyPatch) -> Callable[[AppTest, str], bytes]:
    """``read(at, label)``: the bytes a download button of the last run would send."""
    _RecordingStorage.instances.clear()
    monkeypatch.setattr("streamlit.testing.v1.app_test.MemoryMediaFileStorage", _RecordingStorage)

    def read(at: AppTest, label: str) -> bytes:
        (button,) = [b for b in at.get("download_button") if b.label == label]
        file_id = button.proto.url.rsplit("/", 1)[-1].split(".")[0]
        return bytes(_RecordingStorage.instances[-1].get_file(file_id).content)

    return read


def start_protocol(budget: int, *, batch: int | None = None, mode: str | None = None, unit: str | None = None, **choices: str) -> AppTest:
    """The Protocol page after *Start protocol* with these settings (others: defaults); ``choices``
    sets select boxes by label (e.g. ``Question="top-k"``)."""
    at = run_ok(page("protocol.py"))
    if mode is not None:
        at.radio[0].set_value(mode)
    if unit is not None:
        choices["A paid judgment is"] = unit
    for label, value in choices.items():
        next(s for s in at.selectbox if s.label == label).set_value(value)
    next(n for n in at.number_input if n.label.startswith("Budget")).set_value(budget)
    if batch is not None:
        next(n for n in at.number_input if n.label.startswith("Batch")).set_value(batch)
    at.button[0].click()  # the settings form's "Start protocol"
    return run_ok(at)


def page_with_protocol(name: str, source: AppTest) -> AppTest:
    """Another page (not yet run) whose session holds ``source``'s protocol and settings."""
    at = page(name)
    for key in ("pe.protocol", "pe.setup"):
        at.session_state[key] = source.session_state[key]
    return at
