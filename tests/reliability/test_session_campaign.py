"""The tampered-session campaign's fast subset: every mutation kind twice through the core
(``session_from_json`` and every restore check), and once through the app's restore uploader
(Report & session page, Streamlit AppTest). The full campaign is
``python bench/reliability/sessions.py``; figures in docs/reliability.md."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.page_fixtures import data_dir, page, run_ok  # noqa: F401
from tests.reliability.session_checks import SessionFigures, SessionOutcome, check_app, check_core
from tests.reliability.session_corpus import KINDS, MUTATIONS, Tampered, tampered_session

SEED = 20261123


def test_fast_subset_through_the_core() -> None:
    figures = SessionFigures()
    for index in range(2 * len(MUTATIONS)):
        figures.add(check_core(tampered_session(index, seed=SEED)))
    report = figures.table() + "\n" + "\n".join(figures.failures[:20])
    assert figures.clean, report
    assert figures.kinds == set(KINDS) and len(KINDS) >= 90
    assert figures.results["refused"] >= 170 and figures.results["restored"] >= 14, report


def test_the_checks_can_fail() -> None:
    """The zeros mean something: a harmful file restored, a harmless one refused, a refusal
    without the mutation's path, and an exception are each counted as failures."""
    harmful = Tampered(0, "k", "b", b'{"prefeval_session": 2, "data": {"kind": "sample", "name": "summeval"}}', "refuse", None)
    assert check_core(harmful).failure == "silent acceptance"
    harmless = Tampered(1, "k", "b", b"{}", "restore", None)
    assert check_core(harmless).failure == "a harmless change was refused"
    elsewhere = Tampered(2, "k", "b", b'{"prefeval_session": 2, "data": null}', "refuse", "human")
    assert check_core(elsewhere).failure.startswith("no problem names the path human")
    figures = SessionFigures()
    figures.add(SessionOutcome(3, "k", "b", "refuse", "traceback", 0.1, "traceback", "ValueError"))
    assert not figures.clean and figures.results["traceback"] == 1


@pytest.mark.page
@pytest.mark.usefixtures("data_dir")
def test_every_mutation_kind_through_the_app_uploader() -> None:
    """No exception in the app, a visible message naming the file and the path, and a refused
    file changes nothing: neither the session nor the store (:func:`check_app`)."""
    at = run_ok(page("report.py"))
    figures = SessionFigures()
    for index in range(len(MUTATIONS)):
        figures.add(check_app(at, tampered_session(index, seed=SEED)))
    assert figures.clean, figures.table() + "\n" + "\n".join(figures.failures)
    assert figures.kinds == set(KINDS) and figures.results["restored"] >= 9
    valid = tampered_session(KINDS.index("reindented"), seed=SEED)
    assert check_app(at, replace(valid, expect="refuse")).failure.startswith("no message naming the file")  # the check can fail
