"""Every page loads without exception on the default sample, alone and through the app's navigation."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.page_fixtures import (
    PAGE_FILES,
    ROOT,
    TIMEOUT,
    data_dir,  # noqa: F401 (a fixture)
    metric_values,
    page,
    run_ok,
)

pytestmark = [pytest.mark.page, pytest.mark.usefixtures("data_dir")]


@pytest.mark.parametrize("name", PAGE_FILES)
def test_page_loads_on_the_default_sample(name: str) -> None:
    at = run_ok(page(name))
    assert at.title[0].value
    if name == "data.py":
        assert metric_values(at) == {"Systems": "16", "Items": "100", "Raters": "17", "Texts": "yes"}
        assert at.selectbox(key="pe.w.human").value == "human:relevance"
        assert at.multiselect(key="pe.w.metrics").value == ["rougeL"]


def test_app_navigates_to_every_page() -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    run_ok(at)
    assert at.title[0].value == "Data"
    for name, title in [
        ("metric_check.py", "Metric check"),
        ("protocol.py", "Protocol"),
        ("annotate.py", "Annotate"),
        ("report.py", "Report & session"),
    ]:
        at.switch_page(f"pages/{name}")
        run_ok(at)
        assert at.title[0].value == title


def test_metric_check_tabs_show_their_figures() -> None:
    at = run_ok(page("metric_check.py"))
    assert len(at.get("plotly_chart")) == 3  # sign accuracy, Kendall tau, Favi box plot
    assert "rougeL favours M11" in at.markdown[0].value
    for tab, charts in [("Confusion of a pair", 1), ("Significance DAGs", 2)]:
        at.session_state["pe.w.check_tab"] = tab
        run_ok(at)
        assert len(at.get("plotly_chart")) == charts
    assert "drawn as a matrix: a coloured cell (row A, column B)" in at.caption[-1].value  # 16 systems: no arrows to point
