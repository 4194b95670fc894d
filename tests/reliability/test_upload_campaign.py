"""The hostile-upload campaign's fast subset: 320 generated uploads (every kind of hostile file),
each through ``load_dataset``, ``validate`` and, when accepted, ``describe`` and the CSV
exports. The full campaign (2,600 uploads, a subprocess watchdog) is
``python bench/reliability/uploads.py``; figures in docs/reliability.md."""

from __future__ import annotations

import contextlib
import io
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from tests.reliability.upload_checks import CampaignFigures, UploadOutcome, check_upload, export_problems, raw_control_characters
from tests.reliability.upload_corpus import BUILDERS, hostile_upload

FAST_UPLOADS = 320
SEED = 20261123
TIME_LIMIT_SECONDS = 30


@contextlib.contextmanager
def _time_limit(seconds: int) -> Iterator[None]:
    """Raise ``TimeoutError`` in the main thread after ``seconds`` (the in-process watchdog)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise TimeoutError(f"no answer within {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_fast_subset_of_hostile_uploads(tmp_path: Path) -> None:
    figures = CampaignFigures()
    cases: set[str] = set()
    for index in range(FAST_UPLOADS):
        upload = hostile_upload(index, seed=SEED, scale="fast")
        cases.add(upload.case)
        try:
            with _time_limit(TIME_LIMIT_SECONDS):
                figures.add(check_upload(upload, tmp_path))
        except TimeoutError:
            figures.add_hang(index, upload.case)
    report = figures.table() + "\n" + "\n".join(figures.failures[:20])
    assert figures.clean, report
    assert cases == {b.__name__ for b in BUILDERS}
    # The corpus really exercises both sides: valid-but-odd files load, hostile ones are refused.
    assert figures.accepted >= 80 and figures.refused >= 150, report
    assert figures.exports >= 100, report


def test_the_checks_can_fail() -> None:
    """The campaign's zeros mean something: each check catches what it is for."""
    frame = pd.DataFrame({"system": ["\t=1+1", "a\r=1+1", "-2+3", "ok"], "score": [1.0, -2.0, 3.0, 4.0]})
    naive = frame.to_csv(index=False).encode()  # pandas' own writer: neither neutralised nor CR-quoted
    formula, mismatches = export_problems(frame, naive)
    assert formula == 3 and mismatches >= 1
    assert raw_control_characters("error: x.csv: rater '\x1b[2J' \u202e\n") == 2
    figures = CampaignFigures()
    figures.add(UploadOutcome(index=1, case="c", expect="either", result="traceback", seconds=0.1))
    figures.add(UploadOutcome(index=2, case="c", expect="refuse", result="accepted", seconds=0.1, unexpected=True))
    assert not figures.clean and figures.tracebacks == 1 and figures.unexpected == 1 and len(figures.failures) == 2


def test_the_watchdog_stops_a_hang() -> None:
    with pytest.raises(TimeoutError), _time_limit(1):
        threading.Event().wait(5)


def test_the_corpus_is_reproducible() -> None:
    first = [hostile_upload(i, seed=SEED) for i in range(0, 150, 7)]
    again = [hostile_upload(i, seed=SEED) for i in range(0, 150, 7)]
    assert first == again
    assert hostile_upload(3, seed=SEED).data != hostile_upload(3, seed=SEED + 1).data


def test_the_cli_escapes_terminal_payloads_in_names(tmp_path: Path) -> None:
    from prefeval_core.cli import main

    path = tmp_path / "r.csv"
    path.write_text('item_id,system,rater,score\r\ni1,"\x1b[2Jx",human,1\r\ni1,B\u202e,human,2\r\n', newline="")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["describe", str(path)]) == 0
    text = out.getvalue()
    assert "\\x1b[2Jx" in text and "B\\u202e" in text and raw_control_characters(text) == 0
