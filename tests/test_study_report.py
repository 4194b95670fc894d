"""The report a lead sends: summary first, under 1 MB for a 16-system study; what the judge bought."""

from __future__ import annotations

import re

import pytest

import prefeval_core.api as pe
from prefeval_core.diagnostics.metric_report import metric_report
from prefeval_core.workflow.judges import compare_judges
from prefeval_core.workflow.study_report import judge_bought, study_report_html

JUDGE = "gpt-4-0314-rts:relevance"


def test_a_16_system_report_opens_with_the_summary_and_stays_under_a_megabyte() -> None:
    data = pe.load_sample("summeval")
    run = pe.replay(data, "human:relevance", JUDGE, question="top-k", k=3)
    state, result = run.run.state, run.run.result
    assert len(state.table.systems) == 16
    judges = compare_judges(data, "human:relevance", (JUDGE, "gpt-3.5-turbo-0301-rts:relevance", "rougeL"), k=3)
    bought = judge_bought(state)
    html = study_report_html("study", state, result, judges=judges, metric=metric_report(data, "human:relevance", JUDGE), bought=bought)
    assert len(html.encode()) < 1_000_000
    headings = re.findall(r"<h2>(.*?)</h2>", html)
    assert headings[:4] == ["Summary", "Leaderboard", "Judges: a verdict on each", "Settings"]
    summary = html[html.index("<h2>Summary</h2>") : html.index("<h2>Leaderboard</h2>")]
    for term in ("Question", "Answer", "Cost", "What the judge bought", "Error control", run.summary["answer_words"]):
        assert term in summary, term
    assert "<script" not in html and "[[" not in html and "\\_" not in html  # no code, no raw lists, no markdown escapes
    assert "sample_data" not in html and "system_a" not in html
    assert "at the top-3 boundary (the question" in html  # the k its verdicts are read at, said


@pytest.mark.parametrize(
    ("error_control", "why"),
    [
        ("question", "the judge does not enter"),  # the default: the exact pool test of the human differences
        ("spending", "the judge only predicts which pairs are futile"),
    ],
)
def test_what_the_judge_bought_is_the_run_against_human_judgments_only(error_control: str, why: str) -> None:
    data = pe.load_sample("summeval")
    options = dict(question="top-k", k=3, budget=700, error_control=error_control)
    run = pe.replay(data, "human:relevance", JUDGE, **options)  # type: ignore[arg-type]
    human_only = pe.replay(data, "human:relevance", JUDGE, model="human_only", **options)  # type: ignore[arg-type]
    bought = judge_bought(run.run.state)
    assert bought is not None and bought.cost_with == run.summary["cost_used"]
    rounds_equal = human_only.run.state.round <= run.run.state.round
    assert rounds_equal and bought.cost_without == human_only.run.state.cost_used
    words = bought.words()
    assert f"({bought.cost_with:,} with it, {bought.cost_without:,} with human judgments only)" in words
    assert why in words and "human judgments alone" in words  # neither rule lets the judge decide a pair
    assert bought.ruled_out_with == int((~run.run.state.members).sum())  # a tier question counts systems, not pairs
    assert f"ruled out {abs(bought.ruled_out_with - (bought.ruled_out_without or 0))} " in words
    assert judge_bought(human_only.run.state) is None
    assert run.summary["judge_role"] == bought.why and human_only.summary["judge_role"] is None  # replay --json says the same


def test_with_the_pool_mean_clt_statistic_the_judge_is_inside_the_test_and_the_report_says_so() -> None:
    data = pe.load_sample("summeval")
    options = dict(question="top-k", k=1, error_control="question", statistic="pool_mean_clt", budget=900)
    run = pe.replay(data, "human:relevance", JUDGE, **options)  # type: ignore[arg-type]
    bought = judge_bought(run.run.state)
    assert bought is not None and "control variate" in bought.words()
    human_only = pe.replay(data, "human:relevance", JUDGE, model="human_only", **options)  # type: ignore[arg-type]
    assert bought.cost_without == human_only.run.state.cost_used  # both runs to their end
    assert bought.cost_with == run.run.state.cost_used < bought.cost_without  # the judge inside saved ratings
    html = study_report_html("study", run.run.state, run.run.result, bought=bought)
    settings = html[html.index("<h2>Settings</h2>") :]
    assert "asymptotic; the metric as control variate" in settings and "asymptotically" in html


def test_a_study_bought_one_rating_at_a_time_says_so_and_counts_its_units(summeval) -> None:  # type: ignore[no-untyped-def]
    data = summeval
    options = dict(question="top-k", k=1, error_control="question", statistic="pool_mean", ratings_per_request="one_pooled")
    run = pe.replay(data, "human:relevance", model="human_only", budget=600, **options)  # type: ignore[arg-type]
    assert run.run.state.table.annotator_units and run.run.state.cost_used <= 600
    html = study_report_html("study", run.run.state, run.run.result)
    settings = html[html.index("<h2>Settings</h2>") :]
    assert "every rating the study paid in the pool" in settings and "16 / 300 (item, annotator) units" in settings
