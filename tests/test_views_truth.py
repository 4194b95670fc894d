"""Views that never contradict the method: each plot draws the boundaries its decisions used."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import ndtr

import prefeval_core.api as pe
from prefeval_core.decision import human_only_theta
from prefeval_core.protocol.error_controls import theta_source
from prefeval_core.protocol.question_control import normal_theta
from prefeval_core.vocabulary.outcomes import BETTER, TIE, WORSE
from prefeval_core.workflow.views import (
    CONTROL_WORDS,
    decision_paths,
    pairs_frame,
    theta_history_figure,
    theta_words,
    win_rates_caption,
)


@pytest.mark.parametrize("control", ["none", "spending", "anytime"])
def test_a_pair_beyond_its_line_is_decided_under_each_error_control(control: str) -> None:
    run = pe.replay(pe.load_sample("summeval"), "human:relevance", error_control=control, futility=None, budget=900)
    state = run.run.state
    found = decision_paths(state)
    assert found.paths and found.lower < found.upper
    decided = 0
    for pair, path in found.paths.items():
        *before, (_, last) = path
        assert all(found.lower < y < found.upper for _, y in before), pair  # a decision is made once, at the last look
        expected = BETTER if last >= found.upper else WORSE if last <= found.lower else TIE
        assert int(state.decisions[pair]) == expected, (pair, path)
        decided += expected != TIE
    assert decided > 0
    figure = theta_history_figure(state)
    assert CONTROL_WORDS[control] in figure.layout.title.text
    assert sorted(shape.y0 for shape in figure.layout.shapes) == [found.lower, found.upper]


def test_dag_legend_counts_are_the_pairs_the_bullets_count() -> None:
    import numpy as np

    from prefeval_core.diagnostics.comparison import ERROR_LABELS
    from prefeval_core.diagnostics.metric_report import metric_report
    from prefeval_core.figures.dag import MATRIX_FROM, dag_figure, type_counts

    report = metric_report(pe.load_sample("summeval"), "human:relevance", "rougeL", samples=200)
    types, counts = np.unique(report.dags.naive_error_types, return_counts=True)
    bullets = {ERROR_LABELS[t]: int(n) for t, n in zip(types, counts, strict=True) if t != "correct_undecided"}  # type: ignore[index]
    legend = {kind: pairs for kind, (pairs, _) in type_counts(report.dags.metric, report.dags.human).items()}
    assert {ERROR_LABELS[k]: n for k, n in legend.items()} == bullets  # type: ignore[index]
    figure = dag_figure(report.dags.metric, title="naive", reference=report.dags.human)
    assert len(report.systems) >= MATRIX_FROM and figure.data[0].type == "heatmap"  # 16 systems: a matrix, not a tangle
    names = {t.name for t in figure.data if t.type == "scatter"}
    for label, n in bullets.items():
        assert any(name.startswith(f"{label}: {n} pair") for name in names), (label, names)


def test_undecided_systems_are_drawn_apart_from_the_best() -> None:
    from prefeval_core.diagnostics.partial_order import partial_order
    from prefeval_core.figures.dag import dag_figure, drawn_layers, layer_positions

    order = partial_order([("a", "b"), ("a", "c"), ("b", "c")], [BETTER, TIE, TIE], systems=["a", "b", "c", "d"])
    assert drawn_layers(order) == (("a",), ("b",), ("c", "d"))
    positions = layer_positions(order)
    assert positions["d"][1] < positions["a"][1] and positions["c"][1] == positions["d"][1] == -2.0
    assert dag_figure(order).layout.yaxis.ticktext[-1] == "no pair decided"


def test_nothing_is_scored_before_it_is_decided_and_top_k_scores_its_own_pairs() -> None:
    from prefeval_core.protocol import protocol_result
    from prefeval_core.workflow import start_study, study_table

    data = pe.load_sample("summeval")
    run = pe.replay(data, "human:relevance", question="top-k", k=3)
    fresh = start_study(study_table(data, run.setup), run.setup)
    assert not protocol_result(fresh).scored.any()  # round 0: no omission counted yet
    result = run.run.result
    scored = result.scored
    assert result.top_k is not None
    named = set(result.top_k.answer.members) | set(result.top_k.reference.members)
    assert 0 < scored.sum() < len(result.pairs)
    assert all((a in named or b in named) == keep for (a, b), keep in zip(result.pairs, scored, strict=True))


def test_under_question_control_no_fixed_line_is_drawn_and_the_title_says_why() -> None:
    run = pe.replay(pe.load_sample("summeval"), "human:relevance", error_control="question", futility=None, budget=900)
    found = decision_paths(run.run.state)
    assert found.lower is None and found.upper is None and found.paths
    figure = theta_history_figure(run.run.state)
    assert not figure.layout.shapes and "no fixed line" in figure.layout.title.text
    assert CONTROL_WORDS["question"] in figure.layout.title.text


@pytest.mark.parametrize(
    ("control", "statistic", "source", "words"),
    [
        ("question", None, "normal", "Φ(mean / s.e.)"),  # the default: pool_mean
        ("question", "sign", "human_only", "exact human-only posterior"),
        ("spending", None, "human_only", "exact human-only posterior"),
        ("none", None, "model", "Monte-Carlo error"),
    ],
)
def test_the_win_rate_caption_says_where_the_table_s_theta_comes_from(control: str, statistic: str | None, source: str, words: str) -> None:
    # with a judge in the model the plots show its posterior; the table's θ is that only where it decides
    options = {"error_control": control, "budget": 500} | ({} if statistic is None else {"statistic": statistic})
    state = pe.replay(pe.load_sample("summeval"), "human:relevance", "rougeL", **options).run.state  # type: ignore[arg-type]
    assert theta_source(state.settings) == source and words in win_rates_caption(state)
    last = state.records[-1]
    counts = state.revealed_counts(before_round=state.round + 1).subset(last.pairs)
    exact = human_only_theta(counts.n)
    if source == "human_only":  # the θ recorded is the closed form of the human outcomes, not the judge's posterior
        np.testing.assert_allclose(last.theta, exact, atol=1e-12)
    elif source == "model":
        assert np.max(np.abs(last.theta - exact)) > 0.01


def test_under_the_default_the_pairs_table_labels_theta_and_shows_the_rates_of_the_outcomes_revealed() -> None:
    run = pe.replay(pe.load_sample("summeval"), "human:relevance", budget=600)  # question-level, pool_mean
    state = run.run.state
    frame = pairs_frame(state)
    assert "θ ≈ P(Δ > 0)" in frame and "θ = P(p> > p<)" not in frame  # a score statistic's θ, not the outcome rates'
    last = state.records[-1]
    n = state.revealed_counts().n[last.pairs]
    np.testing.assert_allclose(last.p_mean, (n + 1) / (n.sum(axis=1, keepdims=True) + 3))  # not the prior's 1/3
    assert n.sum() > 0 and not np.allclose(last.p_mean, 1 / 3)
    spending = pe.replay(pe.load_sample("summeval"), "human:relevance", budget=600, error_control="spending").run.state
    assert "θ = P(p> > p<)" in pairs_frame(spending)


@pytest.mark.parametrize(
    ("statistic", "column"), [("pool_mean", "mean difference A − B (revealed)"), ("pool_sign", "net win rate A − B (revealed)")]
)
def test_a_score_statistic_s_pairs_table_shows_the_mean_its_test_has_seen(statistic: str, column: str) -> None:
    state = pe.replay(pe.load_sample("summeval"), "human:relevance", budget=600, statistic=statistic).run.state  # type: ignore[arg-type]
    frame = pairs_frame(state)
    S = len(state.table.systems)
    rated = state.reveals.round.reshape(S, -1) > 0
    scores = state.reveals.value.reshape(S, -1)
    expected = []
    for a, b in state.table.pair_systems:  # the revealed items both systems were rated on, counted by hand
        both = rated[a] & rated[b]
        d = scores[a, both] - scores[b, both]
        if statistic == "pool_sign":
            d = np.sign(d) * (np.abs(d) > state.table.eps_human)
        expected.append(d.mean() if both.any() else np.nan)
    np.testing.assert_allclose(frame[column], expected, atol=1e-12)
    assert np.isfinite(frame[column]).sum() > 0 and column in list(frame)[3:4]  # beside the outcomes revealed


def test_under_a_pool_statistic_theta_is_about_the_pool_and_certain_once_it_is_revealed() -> None:
    # θ ≈ Φ(mean / s.e.); for the pool's own mean the s.e. has the finite-population factor sqrt(1 - n / N)
    d = np.array([[0.5, -0.25, 1.0, 0.75, np.nan, np.nan, np.nan, np.nan], [0.5, -0.25, 1.0, 0.75, 0.0, 0.25, -0.5, 1.0]])
    revealed = d[0, :4]
    z = revealed.mean() / (revealed.std(ddof=1) / 2)
    np.testing.assert_allclose(normal_theta(d[:1]), [ndtr(z)])
    np.testing.assert_allclose(normal_theta(d[:1], np.array([8])), [ndtr(z / np.sqrt(0.5))])  # half the pool revealed
    assert normal_theta(d[1:], np.array([8])).tolist() == [1.0]  # the whole pool: its mean is known, and positive
    # a replay: every pair the pool test decided shows θ on its side of 1/2, beyond the two-sided 95 %
    state = pe.replay(pe.load_sample("wmt21_ted"), "human", seed=0).run.state
    theta, decisions = state.status.theta, state.decisions
    assert (decisions != TIE).sum() > 10
    assert (theta[decisions == BETTER] >= 0.975).all() and (theta[decisions == WORSE] <= 0.025).all()


def test_a_tier_question_s_rounds_show_the_systems_left_not_pairs_it_never_decides() -> None:
    state = pe.replay(pe.load_sample("summeval"), "human:relevance", question="top-k").run.state  # question-level
    figure = theta_history_figure(state)
    (trace,) = figure.data
    assert list(trace.y) == [16, *(int(r.members.sum()) for r in state.records)]
    assert list(trace.x) == list(np.cumsum([0, *(r.cost for r in state.records)]))
    named = sorted(name for note in figure.layout.annotations for name in note.text.split(", "))
    assert named == sorted(s for s, member in zip(state.table.systems, state.members, strict=True) if not member)
    assert "can still be the best" in figure.layout.title.text
    per_pair = pe.replay(pe.load_sample("summeval"), "human:relevance", question="top-k", error_control="spending").run.state
    assert "Each pair's path" in theta_history_figure(per_pair).layout.title.text  # pairs decide the tier there


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({}, "for the mean over the study's items (s.e. corrected for the items left); each pair alone, uncorrected"),
        ({"statistic": "mean"}, "θ ≈ P(Δ > 0): Φ(mean / s.e.) of the revealed differences, for the mean difference; each pair alone"),
        ({"error_control": "spending"}, "θ = P(p> > p<)"),
        ({"error_control": "none"}, "the paper's rule decides from it"),
    ],
)
def test_the_pairs_table_says_what_its_theta_is_and_whether_it_decides(options: dict[str, str], words: str) -> None:
    state = pe.replay(pe.load_sample("summeval"), "human:relevance", budget=300, **options).run.state  # type: ignore[arg-type]
    assert words in theta_words(state)
    assert ("do not read it" in theta_words(state)) == (state.settings.error_control != "none")


def test_with_several_metrics_the_win_rate_caption_says_only_the_first_is_drawn() -> None:
    # the plots draw the first metric's posterior (pair_counts); the decisions of the paper's rule use all of them
    state = pe.replay(pe.load_sample("summeval"), "human:relevance", ("rougeL", "chrF"), error_control="none", budget=300).run.state
    caption = win_rates_caption(state)
    assert "first metric, rougeL" in caption and "all 2 metrics at once" in caption and "by Monte-Carlo error (about" not in caption
    one = pe.replay(pe.load_sample("summeval"), "human:relevance", "rougeL", error_control="none", budget=300).run.state
    assert "first metric" not in win_rates_caption(one)
