"""Protocol page: start, step two rounds (budget and decisions change), undo; save and restore the session."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from prefeval_core.annotation.left_right import make_comparison
from prefeval_core.decision import human_only_theta
from prefeval_core.protocol import ProtocolState
from prefeval_core.store import Rating, open_store, utc_now
from prefeval_core.workflow.session import DataChoice
from tests.data_helpers import annotated_comparisons_csv, crowd_csv
from tests.page_fixtures import data_dir, downloads, metric_values, page, page_with_protocol, run_ok, shown, start_protocol  # noqa: F401
from tests.protocol_fixtures import same_state

pytestmark = [pytest.mark.page, pytest.mark.usefixtures("data_dir")]


def test_two_rounds_change_budget_and_decisions_and_undo_restores() -> None:
    at = start_protocol(2000, unit="comparisons", **{"Error control": "spending"})  # per pair: pairs decided in round 1
    assert (metric_values(at)["Comparisons used"], metric_values(at)["Decided pairs"]) == ("0", "0 / 120")
    at.button(key="pe_next").click()
    run_ok(at)
    first: ProtocolState = at.session_state["pe.protocol"]
    values = metric_values(at)
    assert (values["Round"], values["Comparisons used"]) == ("1", "1,200")  # 10 items x 120 pairs
    decided_after_one = int(values["Decided pairs"].split(" / ")[0])
    assert 0 < decided_after_one < 120
    at.button(key="pe_next").click()
    run_ok(at)
    values = metric_values(at)
    assert (values["Round"], values["Comparisons used"]) == ("2", "2,000")  # never beyond the budget
    assert int(values["Decided pairs"].split(" / ")[0]) > decided_after_one
    assert at.button(key="pe_next").disabled  # the budget is spent
    at.button(key="pe_undo").click()
    run_ok(at)
    assert same_state(at.session_state["pe.protocol"], first)
    for tab, charts in [("Decisions across rounds", 1), ("Win rates", 2), ("Decided so far", 1)]:  # only the open tab is drawn
        at.session_state["pe.w.protocol_tab"] = tab
        run_ok(at)
        assert len(at.get("plotly_chart")) == charts


def test_a_ratings_study_counts_ratings_and_states_the_top_k_answer() -> None:
    at = start_protocol(0, Question="top-k")
    at.button(key="pe_run").click()
    run_ok(at)
    protocol: ProtocolState = at.session_state["pe.protocol"]
    values = metric_values(at)
    assert (protocol.settings.error_control, protocol.settings.statistic) == ("question", "pool_mean")  # the default
    assert protocol.table.unit == "ratings" and values["Ratings used"] == f"{protocol.cost_used:,}"
    out = int((~protocol.members).sum())
    assert 0 < out < 16 and values["Systems ruled out"] == f"{out} / 16"  # a tier question counts systems, not pairs
    assert 0 < protocol.cost_used < 1600  # a top-1 question does not need every rating
    assert "The best system" in at.info[0].value or "is the best system" in at.info[0].value  # the answer comes first
    board = at.dataframe[0].value  # the leaderboard is the first tab
    assert list(board.columns[:2]) == ["system", "mean human score"] and len(board) == 16
    assert board["P(top 1)"].sum() == pytest.approx(1.0)
    assert list(board["mean human score"]) == sorted(board["mean human score"], reverse=True)
    at.session_state["pe.w.protocol_tab"] = "Pairs"
    run_ok(at)
    # the reference is the pool's own mean difference: one best system, not the sign tests' tier of four
    grid = protocol.table.grid
    assert grid is not None
    best = protocol.table.systems[int(np.argmax(np.nanmean(grid.scores, axis=1)))]
    assert f"Full evaluation's top-1 tier: {best}." in shown(" ".join(m.value for m in at.markdown))
    assert metric_values(at)["Tier members left out"] == "0" and "Correct decisions" not in metric_values(at)
    assert not any("Error types over" in c.value for c in at.caption)  # no pair verdicts where no pair was asked
    at.session_state["pe.w.protocol_tab"] = "Decided so far"
    run_ok(at)
    # closed testing decides no pair: the systems ruled out, in order, and no DAG of systems without edges
    (ruled_out,) = [d.value for d in at.dataframe if "ruled out after round" in d.value]
    assert sorted(ruled_out["system"]) == sorted(s for s, m in zip(protocol.table.systems, protocol.members, strict=True) if not m)
    assert list(ruled_out["ruled out after round"]) == sorted(ruled_out["ruled out after round"])
    assert f"{out} of 16 systems ruled out so far" in " ".join(c.value for c in at.caption) and not at.get("plotly_chart")
    at.session_state["pe.w.protocol_tab"] = "Decisions across rounds"
    run_ok(at)
    (chart,) = at.get("plotly_chart")
    assert "Systems that can still be the best" in json.loads(chart.proto.spec)["layout"]["title"]["text"]


@pytest.mark.parametrize(
    ("error_control", "statistic", "tier"), [("spending", "sign", "M0, M17, M22, M23"), ("question", "pool_mean_clt", "M23.")]
)
def test_other_rules_run_from_the_form_against_their_own_reference(error_control: str, statistic: str, tier: str) -> None:
    at = start_protocol(0, Question="top-k", **{"Error control": error_control, "Statistic": statistic})
    at.button(key="pe_run").click()
    run_ok(at)
    protocol: ProtocolState = at.session_state["pe.protocol"]
    assert (protocol.settings.error_control, protocol.settings.statistic) == (error_control, statistic)
    assert 0 < protocol.cost_used <= 1600
    at.session_state["pe.w.protocol_tab"] = "Pairs"
    run_ok(at)
    assert f"Full evaluation's top-1 tier: {tier}" in shown(" ".join(m.value for m in at.markdown))


def test_save_and_restore_the_session(downloads) -> None:  # noqa: F811
    at = start_protocol(1500)
    at.button(key="pe_next").click()
    run_ok(at)
    protocol = at.session_state["pe.protocol"]
    choice = at.session_state["pe.data"]
    item = choice.load().items[0]
    judged = [
        make_comparison(choice.key, item, "M0", "M1", "tie", "ann", left_system="M1"),
        Rating(choice.key, item, "M0", 4.0, "ann", utc_now()),
    ]
    open_store().add_many(judged)
    report = run_ok(page_with_protocol("report.py", at))
    saved = downloads(report, "Save session (JSON)")
    assert json.loads(saved)["protocol"]["round"] == 1
    assert sorted(a["kind"] for a in json.loads(saved)["annotations"]) == ["comparison", "rating"]  # both judgment kinds

    fresh = run_ok(page("report.py"))
    assert fresh.session_state["pe.protocol"] is None
    fresh.file_uploader(key="pe.w.restore").set_value(("prefeval-session.json", saved, "application/json"))
    run_ok(fresh)
    assert same_state(fresh.session_state["pe.protocol"], protocol)
    assert fresh.session_state["pe.setup"] == at.session_state["pe.setup"]
    assert (fresh.session_state["pe.human"], fresh.session_state["pe.metrics"]) == ("human:relevance", ("rougeL",))
    assert "Restored the session" in fresh.success[0].value


def test_a_damaged_session_file_is_explained() -> None:
    at = run_ok(page("report.py"))
    at.file_uploader(key="pe.w.restore").set_value(("s.json", b'{"prefeval_session": 2, "data": {"kind": "x"}}', "application/json"))
    at.run()
    assert not at.exception
    assert "at data.kind: Input should be 'sample' or 'upload'" in shown(at.error[0].value)
    at.file_uploader(key="pe.w.restore").set_value(("old.json", b'{"prefeval_session": 1, "data": {}}', "application/json"))
    at.run()
    assert "this prefeval reads version 2" in at.error[0].value


def test_html_report_is_offline_and_has_the_protocol(downloads) -> None:  # noqa: F811
    at = start_protocol(1500)
    at.button(key="pe_next").click()
    report = run_ok(page_with_protocol("report.py", run_ok(at)))
    report.button(key="pe_report").click()
    run_ok(report)
    html = downloads(report, "Download the HTML report (offline, self-contained)").decode()
    headings = re.findall(r"<h2>(.*?)</h2>", html)
    assert headings[:2] == ["Summary", "Leaderboard"] and "<script" not in html and len(html) < 1_000_000  # no figures asked for
    report.toggle(key="pe.w.report_figures").set_value(True)
    report.button(key="pe_report").click()
    run_ok(report)
    html = downloads(report, "Download the HTML report (offline, self-contained)").decode()
    assert re.findall(r"<h2>(.*?)</h2>", html)[:2] == ["Summary", "Leaderboard"] and "Significance DAGs" in html
    assert html.count("Plotly.newPlot") >= 3 and html.count("plotly.js v") <= 2  # the bundle once (its banner)
    assert not re.search(r"<script[^>]*\ssrc=|<link[^>]*\shref=[\"']?https?:", html)  # plotly.js inlined, nothing fetched
    results = downloads(report, "Results as CSV").decode().splitlines()
    assert results[0].startswith("system A,system B,human outcomes") and len(results) == 121


def test_the_report_page_shows_no_results_before_the_first_round() -> None:
    started = run_ok(start_protocol(1500))
    assert started.session_state["pe.protocol"] is not None and not started.session_state["pe.protocol"].records
    report = run_ok(page_with_protocol("report.py", started))
    assert "No round of the protocol has been decided yet" in report.info[0].value
    assert not [d for d in report.dataframe if "human outcomes" in d.value]  # no table of untouched pairs at the prior


def test_before_the_end_the_page_says_how_the_judge_enters_the_decisions() -> None:
    at = start_protocol(1500)
    protocol: ProtocolState = at.session_state["pe.protocol"]
    assert protocol.settings.metrics and not protocol.records  # the sample's default judge, nothing decided yet
    said = [c.value.replace("\\", "") for c in at.caption if c.value.startswith("The judge \\(")]  # shown escaped
    assert len(said) == 1 and "the judge does not enter" in said[0] and "pool" in said[0]  # the default: human judgments decide
    assert any("the leaderboard fills in after the first round" in i.value for i in at.info)  # no table of blanks before it
    assert not [d for d in at.dataframe if "P(top 1)" in d.value.columns]
    at.button(key="pe_next").click()
    assert [d for d in run_ok(at).dataframe if "P(top 1)" in d.value.columns]


def test_run_to_the_end_stops_at_the_budget() -> None:
    at = start_protocol(2500, unit="comparisons")
    at.button(key="pe_run").click()
    run_ok(at)
    protocol: ProtocolState = at.session_state["pe.protocol"]
    assert protocol.cost_used == 2500 and protocol.round >= 3
    assert "The protocol has finished: the budget is spent" in " ".join(c.value for c in at.caption)
    assert "with human judgments only) and decided" in shown(" ".join(c.value for c in at.caption))  # what the judge bought
    assert at.button(key="pe_run").disabled


def _theta_and_title(at: AppTest) -> tuple[float, str]:
    """``theta`` written on the detailed win-rate figure and its title."""
    (chart,) = [c for c in at.get("plotly_chart") if "Posterior win rates" in c.proto.spec]
    spec = json.loads(chart.proto.spec)
    (shaded,) = [t for t in spec["data"] if t.get("name", "").startswith("θ = P(p> > p<) = ")]
    return float(shaded["name"].rsplit("= ", 1)[1]), spec["layout"]["title"]["text"]


def test_the_detailed_win_rates_are_the_full_model_posterior_that_decides() -> None:
    # the paper's rule: the full model's θ decides (under spending the table shows the human-only θ)
    at = start_protocol(2000, unit="comparisons", **{"Error control": "none"})
    at.button(key="pe_next").click()
    run_ok(at)
    protocol: ProtocolState = at.session_state["pe.protocol"]
    human_only = human_only_theta(protocol.revealed_counts().n)
    full = protocol.status.theta
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
    caption = " ".join(c.value for c in at.caption)
    assert "under the full model" in caption and "differs from the table's θ by Monte-Carlo error" in caption


def test_the_baselines_tab_compares_the_run_with_ppi_and_bradley_terry() -> None:
    at = start_protocol(0, unit="comparisons")
    at.button(key="pe_run").click()
    run_ok(at)
    at.session_state["pe.w.protocol_tab"] = "Baselines"
    run_ok(at)
    at.button(key="pe_baselines").click()
    run_ok(at)
    frame = at.dataframe[-1].value
    assert frame["method"].iloc[0] == "prefeval protocol (this run)"
    assert {"PPI++ (rougeL)", "Bradley–Terry", "CLT (human only)"} <= set(frame["method"])
    assert (frame[["correct", "inversion", "omission", "insertion"]].sum(axis=1) == 120).all()


def test_with_several_metrics_the_win_rates_show_what_each_contributes() -> None:
    at = page("protocol.py")
    at.session_state["pe.human"] = "human:relevance"
    at.session_state["pe.metrics"] = ("gpt-4-0314-rts:relevance", "gpt-3.5-turbo-0301-rts:relevance")
    run_ok(at)
    next(n for n in at.number_input if n.label.startswith("Budget")).set_value(600)
    next(s for s in at.selectbox if s.label == "A paid judgment is").set_value("comparisons")
    at.button[0].click()
    run_ok(at)
    at.button(key="pe_next").click()
    run_ok(at)
    assert at.session_state["pe.protocol"].table.k == 2
    at.session_state["pe.w.protocol_tab"] = "Win rates"
    run_ok(at)
    frame = at.dataframe[-1].value
    assert list(frame["evidence"][:2]) == ["all metrics", "human judgments only"]
    assert {"without gpt-4-0314-rts:relevance", "gpt-3.5-turbo-0301-rts:relevance alone"} <= set(frame["evidence"])
    assert frame["θ = P(p> > p<)"].between(0, 1).all()


def test_the_net_win_rate_runs_from_the_form_as_the_core_runs_it() -> None:
    at = start_protocol(0, Question="top-k", **{"Error control": "question", "Statistic": "pool_sign_clt"})
    at.button(key="pe_run").click()
    run_ok(at)
    protocol: ProtocolState = at.session_state["pe.protocol"]
    assert protocol.settings.statistic == "pool_sign_clt"
    from prefeval_core.protocol import new_state, replay_source, run_protocol

    again = run_protocol(new_state(protocol.table, protocol.settings), replay_source(protocol.table))
    assert again.cost_used == protocol.cost_used and np.array_equal(again.decisions, protocol.decisions)
    assert np.array_equal(again.members, protocol.members)


def test_the_page_says_why_a_crowd_rated_unequally_often_is_bought_whole(downloads) -> None:  # noqa: F811
    at = page("protocol.py")
    at.session_state["pe.data"] = DataChoice("upload", "crowd", files=(("crowd.csv", crowd_csv(uneven=True)),))
    run_ok(at)
    next(s for s in at.selectbox if s.label == "Question").set_value("top-k")
    at.button[0].click()  # the settings form's "Start protocol"
    run_ok(at)
    protocol: ProtocolState = at.session_state["pe.protocol"]
    assert protocol.table.ratings_per_request == "all"
    captions = shown(" ".join(c.value for c in at.caption))
    assert "A request bought all annotators' judgments at once, not one at a time: the outputs of" in captions
    assert "rated 2 to 3 times" in captions
    report = page_with_protocol("report.py", at)
    report.session_state["pe.data"] = at.session_state["pe.data"]
    run_ok(report).button(key="pe_report").click()
    html = downloads(run_ok(report), "Download the HTML report (offline, self-contained)").decode()
    settings = html.split("<h2>Settings</h2>")[1]  # the report says it too
    assert "not one at a time: the outputs of 'human:q' were rated 2 to 3 times" in settings


def _annotated_comparisons_page(**choices: str) -> AppTest:
    """The Protocol page on a comparisons file whose three annotators are kept apart, after *Start
    protocol* with these select boxes set (by label; others: defaults)."""
    at = page("protocol.py")
    at.session_state["pe.data"] = DataChoice("upload", "annotated", files=(("p.csv", annotated_comparisons_csv()[0]),))
    run_ok(at)
    for label, value in choices.items():
        next(s for s in at.selectbox if s.label == label).set_value(value)
    next(b for b in at.button if b.label == "Start protocol").click()  # not a study already on these data
    return run_ok(at)


def test_the_page_says_a_comparisons_replay_bought_every_annotator_and_buys_one_when_asked() -> None:
    every = _annotated_comparisons_page()
    protocol: ProtocolState = every.session_state["pe.protocol"]
    assert protocol.table.unit == "comparisons" and protocol.table.ratings_per_request == "all"
    captions = shown(" ".join(c.value for c in every.caption))
    assert "A request bought all annotators' judgments at once (up to 3 comparisons" in captions
    assert "'A request buys' on the Protocol page" in captions
    one = _annotated_comparisons_page(**{"A request buys": "one"})
    protocol = one.session_state["pe.protocol"]
    assert protocol.table.ratings_per_request == "one" and protocol.table.cost_available() == 7 * 3 + 1
    assert "A request bought all annotators' judgments" not in shown(" ".join(c.value for c in one.caption))
