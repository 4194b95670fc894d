"""Protocol page: start, step two rounds (budget and decisions change), undo; save and restore the session."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from prefeval_core.decision import human_only_theta
from prefeval_core.protocol import ProtocolState
from tests.page_fixtures import data_dir, downloads, metric_values, page, page_with_protocol, run_ok, start_protocol  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.page, pytest.mark.usefixtures("data_dir")]


def test_two_rounds_change_budget_and_decisions_and_undo_restores() -> None:
    at = start_protocol(2000)
    assert (metric_values(at)["Budget spent"], metric_values(at)["Budget left"]) == ("0", "2,000")
    assert metric_values(at)["Decided pairs"] == "0 / 120"
    at.button(key="pe_next").click()
    run_ok(at)
    first: ProtocolState = at.session_state["pe.protocol"]
    values = metric_values(at)
    assert (values["Round"], values["Budget spent"], values["Budget left"]) == ("1", "1,200", "800")  # 10 items x 120 pairs
    decided_after_one = int(values["Decided pairs"].split(" / ")[0])
    assert 0 < decided_after_one < 120
    at.button(key="pe_next").click()
    run_ok(at)
    values = metric_values(at)
    assert (values["Round"], values["Budget spent"], values["Budget left"]) == ("2", "2,000", "0")  # never beyond the budget
    assert int(values["Decided pairs"].split(" / ")[0]) > decided_after_one
    assert at.button(key="pe_next").disabled  # the budget is spent
    at.button(key="pe_undo").click()
    run_ok(at)
    assert at.session_state["pe.protocol"] == first
    for tab, charts in [("θ across rounds", 1), ("Win rates", 2), ("Decided so far", 1)]:  # only the open tab is drawn
        at.session_state["pe.w.protocol_tab"] = tab
        run_ok(at)
        assert len(at.get("plotly_chart")) == charts


def test_save_and_restore_the_session(downloads) -> None:  # noqa: F811
    at = start_protocol(1500)
    at.button(key="pe_next").click()
    run_ok(at)
    protocol = at.session_state["pe.protocol"]
    report = run_ok(page_with_protocol("report.py", at))
    saved = downloads(report, "Save session (JSON)")
    assert json.loads(saved)["protocol"]["round"] == 1

    fresh = run_ok(page("report.py"))
    assert fresh.session_state["pe.protocol"] is None
    fresh.file_uploader(key="pe.w.restore").set_value(("prefeval-session.json", saved, "application/json"))
    run_ok(fresh)
    assert fresh.session_state["pe.protocol"] == protocol
    assert fresh.session_state["pe.settings"] == at.session_state["pe.settings"]
    assert (fresh.session_state["pe.human"], fresh.session_state["pe.metric"]) == ("human:relevance", "rougeL")
    assert "Restored the session" in fresh.success[0].value


def test_a_damaged_session_file_is_explained() -> None:
    at = run_ok(page("report.py"))
    at.file_uploader(key="pe.w.restore").set_value(("s.json", b'{"prefeval_session": 1, "data": {"kind": "x"}}', "application/json"))
    at.run()
    assert not at.exception
    assert "incomplete or damaged" in at.error[0].value


def test_html_report_is_offline_and_has_the_protocol(downloads) -> None:  # noqa: F811
    at = start_protocol(1500)
    at.button(key="pe_next").click()
    report = run_ok(page_with_protocol("report.py", run_ok(at)))
    report.button(key="pe_report").click()
    run_ok(report)
    html = downloads(report, "Download the HTML report (offline, self-contained)").decode()
    assert "<h2>Protocol</h2>" in html and "Significance DAGs" in html
    assert not re.search(r"<script[^>]*\ssrc=|<link[^>]*\shref=[\"']?https?:", html)  # plotly.js inlined, nothing fetched
    results = downloads(report, "Results as CSV").decode().splitlines()
    assert results[0].startswith("system A,system B,human outcomes") and len(results) == 121


def test_run_to_the_end_stops_at_the_budget() -> None:
    at = start_protocol(2500)
    at.button(key="pe_run").click()
    run_ok(at)
    protocol: ProtocolState = at.session_state["pe.protocol"]
    assert protocol.human_used == 2500 and protocol.round >= 3
    assert metric_values(at)["Budget left"] == "0"
    assert "The protocol has finished" in at.info[0].value
    assert at.button(key="pe_run").disabled


def _theta_and_title(at: AppTest) -> tuple[float, str]:
    """``theta`` written on the detailed win-rate figure and its title."""
    (chart,) = [c for c in at.get("plotly_chart") if "Posterior win rates" in c.proto.spec]
    spec = json.loads(chart.proto.spec)
    (shaded,) = [t for t in spec["data"] if t.get("name", "").startswith("θ = P(p> > p<) = ")]
    return float(shaded["name"].rsplit("= ", 1)[1]), spec["layout"]["title"]["text"]


def test_the_detailed_win_rates_are_the_full_model_posterior_that_decides() -> None:
    at = start_protocol(2000)
    at.button(key="pe_next").click()
    run_ok(at)
    protocol: ProtocolState = at.session_state["pe.protocol"]
    human_only = human_only_theta(np.array([p.human_counts() for p in protocol.pairs]))
    full = np.array([p.theta for p in protocol.pairs])
    chosen = int(np.argmax(np.abs(full - human_only)))  # the pair where the metric moved θ most
    assert abs(full[chosen] - human_only[chosen]) > 0.1
    at.session_state["pe.w.protocol_tab"] = "Win rates"
    run_ok(at)
    at.selectbox(key="pe.w.detail_pair").set_value(chosen)
    run_ok(at)
    plotted, title = _theta_and_title(at)
    # 4000 posterior draws: the share with p> > p< is within 4 s.e. (<= 0.032) of the decision's exact θ
    assert plotted == pytest.approx(full[chosen], abs=0.032)
    assert abs(plotted - human_only[chosen]) > 0.1 - 0.032
    assert "(posterior samples)" in title
    assert "The posterior the decisions use" in " ".join(c.value for c in at.caption)
