"""Metric check page: the judges side by side, each with a verdict and the rule behind it."""

from __future__ import annotations

import pytest

from tests.page_fixtures import data_dir, page, run_ok  # noqa: F401

pytestmark = [pytest.mark.page, pytest.mark.usefixtures("data_dir")]


def test_the_judges_tab_gives_a_verdict_per_judge() -> None:
    at = run_ok(page("metric_check.py"))
    at.session_state["pe.w.check_tab"] = "Judges side by side"
    run_ok(at)
    frame = at.dataframe[0].value
    judges = at.multiselect(key="pe.w.judges").value
    assert list(frame["judge"]) == judges and len(judges) >= 2  # the checked metric and the LLM judges of its dimension
    assert set(frame["verdict"]) <= {"use it", "use with care", "don't"}
    caption = " ".join(c.value for c in at.caption)
    assert "not item wins" in caption and "use with care" in caption and "only" in caption  # bundled SummEval: means only
