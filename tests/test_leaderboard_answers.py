"""The leaderboard, the answer in names for each question kind, and honest stop reasons."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

import prefeval_core.api as pe
from prefeval_core.diagnostics.leaderboard import leaderboard
from prefeval_core.protocol import QUESTION_KINDS, ProtocolState, Question
from prefeval_core.protocol.result import protocol_result
from prefeval_core.protocol.stop import futile_pairs, stop_reason
from prefeval_core.vocabulary.outcomes import BETTER, TIE, WORSE
from prefeval_core.workflow.answers import (
    Decided,
    exclusion_words,
    exclusions,
    exclusions_frame,
    leaderboard_frame,
    study_leaderboard,
    system_status,
)
from prefeval_core.workflow.study_report import study_report_html
from prefeval_core.workflow.views import NOT_PAIRWISE_WORDS, pairs_frame, study_status

SYSTEMS = ("a", "b", "c", "d")
PAIR_NAMES = [("a", "b"), ("a", "c"), ("a", "d"), ("b", "c"), ("b", "d"), ("c", "d")]
PAIRS = np.array([[SYSTEMS.index(a), SYSTEMS.index(b)] for a, b in PAIR_NAMES], dtype=np.int64)


def decided(
    question: Question, finished: bool = False, members: list[bool] | None = None, equivalent: tuple[str, ...] = (), **codes: int
) -> Decided:
    decisions = np.array([codes.get(a + b, TIE) for a, b in PAIR_NAMES], dtype=np.int8)
    mask = np.array(members if members is not None else [True] * 4)
    shown = np.array([a + b in equivalent for a, b in PAIR_NAMES]) if equivalent else None
    return Decided(SYSTEMS, PAIRS, decisions, mask, question, finished, shown)


@pytest.mark.parametrize(
    ("d", "words"),
    [
        (
            decided(Question("all-pairs"), ab=BETTER, ac=BETTER, ad=BETTER, bd=BETTER, cd=BETTER),
            "a > {b, c} > d; 1 pair cannot be separated yet.",
        ),
        (
            decided(Question("all-pairs"), True, ab=BETTER),
            "a > b; c and d cannot be placed with the judgments available (no pair decided); "
            "5 pairs cannot be separated with the judgments available.",
        ),
        (decided(Question("all-pairs")), "No pair has a significant winner yet."),
        (
            # `>` between tiers is the longest chain: a vs c is open though a > b > c, and the words say so
            decided(Question("all-pairs"), ab=BETTER, bc=BETTER),
            "a > b > c; d cannot be placed yet (no pair decided); 4 pairs cannot be separated yet, 1 of them across the tiers (a vs c).",
        ),
        (
            # equivalence is not transitive: b ≈ c, c ≈ d, b ≈ d but a ≈ b only; a direction within δ counts
            decided(Question("all-pairs"), True, equivalent=("ab", "bc", "bd", "cd"), ab=BETTER),
            # c and d are placed by their equivalences, not called unplaceable
            "a > b; practically equal within the margin: {b, c, d}, {a, b} (4 pairs equivalent); "
            "2 pairs cannot be separated with the judgments available.",
        ),
        (
            decided(Question("all-pairs"), True, equivalent=("ab", "ac", "ad", "bc", "bd", "cd")),
            "practically equal within the margin: {a, b, c, d} (6 pairs equivalent); every pair is decided.",
        ),
        (
            decided(Question("baseline", baselines=("d",)), equivalent=("cd",), ad=BETTER),
            "a beats d; none loses to d; c is equivalent to d within the margin; b cannot be separated from d yet.",
        ),
        (
            decided(Question("baseline", baselines=("d",)), ad=BETTER, bd=BETTER),
            "a and b beat d; none loses to d; c cannot be separated from d yet.",
        ),
        (decided(Question("baseline", baselines=("b",)), ab=BETTER, bc=BETTER, bd=WORSE), "a and d beat b; c loses to b."),
        (decided(Question("top-k", k=1), True, [True, False, False, False]), "a is the best system."),
        (
            decided(Question("top-k", k=1), False, [True, True, True, False], equivalent=("ab", "ac", "bc")),
            "The best system is one of a, b and c, practically equal within the margin.",
        ),
        (
            decided(Question("top-k", k=2), False, [True, True, True, True], equivalent=("bc",), ab=BETTER, ac=BETTER, ad=BETTER),
            "a is among the best two; the last place goes to one of b, c and d, which cannot be separated yet; "
            "of them {b, c} are practically equal within the margin.",
        ),
        (
            decided(Question("top-k", k=2), False, [True, True, True, False], ab=BETTER, ac=BETTER),
            "a is among the best two; the last place goes to one of b and c, which cannot be separated yet.",
        ),
        (
            decided(Question("top-k", k=3), True, [True, True, True, True]),
            "The best three are among a, b, c and d, which cannot be separated with the judgments available.",
        ),
    ],
)
def test_the_answer_in_names(d: Decided, words: str) -> None:
    assert QUESTION_KINDS[d.question.kind].words(d) == words


def test_a_system_in_a_cycle_shares_its_tier_and_undecided_systems_are_apart() -> None:
    d = decided(Question("all-pairs"), ab=BETTER, bc=BETTER, ac=WORSE)  # a > b > c > a
    assert QUESTION_KINDS["all-pairs"].words(d).startswith("{a, b, c}; d cannot be placed yet")
    assert system_status(d) == ("undecided",) * 4


def test_statuses_follow_the_question() -> None:
    top = decided(Question("top-k", k=2), False, [True, True, True, False], ab=BETTER, ac=BETTER)
    assert system_status(top) == ("sure", "in", "in", "out")
    base = decided(Question("baseline", baselines=("d",)), ad=BETTER, cd=WORSE)
    assert system_status(base) == ("better", "undecided", "worse", "baseline")
    # an equivalent pair is decided: a system whose open pairs are all equivalent is settled
    pairs = decided(Question("all-pairs"), equivalent=("ab", "ac", "bc"), ad=BETTER, bd=BETTER, cd=BETTER)
    assert system_status(pairs) == ("settled",) * 4
    assert system_status(decided(Question("all-pairs"), ad=BETTER, bd=BETTER, cd=BETTER)) == ("undecided",) * 3 + ("settled",)


def test_every_question_kind_says_its_answer_and_statuses() -> None:
    questions = [Question("all-pairs"), Question("top-k", k=2), Question("baseline", baselines=("d",))]
    assert [q.kind for q in questions] == list(QUESTION_KINDS)
    for question in questions:
        d = decided(question, ab=BETTER)
        assert QUESTION_KINDS[question.kind].words(d).endswith("."), question.kind
        assert len(system_status(d)) == len(SYSTEMS) and QUESTION_KINDS[question.kind].status_words.startswith("Status:")


# --- the leaderboard -------------------------------------------------------------------------


def revealed_cells(state: ProtocolState) -> pd.DataFrame:
    table = state.table
    slots = np.flatnonzero(state.reveals.round > 0)
    width = len(table.items)
    return pd.DataFrame({"system": [table.systems[s // width] for s in slots], "item_id": [table.items[s % width] for s in slots]})


def test_leaderboard_means_equal_a_pandas_recount_on_summeval() -> None:
    data = pe.load_sample("summeval")
    run = pe.replay(data, "human:relevance", question="top-k", k=3, budget=600)
    state = run.run.state
    board = study_leaderboard(state)
    ratings = data.ratings[data.ratings["rater"] == "human:relevance"]
    recount = revealed_cells(state).merge(ratings, on=["system", "item_id"]).groupby("system")["score"].agg(["mean", "size"])
    assert len(recount) == len(board.systems) and recount["size"].sum() == state.cost_used
    for system, score, spent in zip(board.systems, board.score, board.spent, strict=True):
        assert score == pytest.approx(recount.loc[system, "mean"], abs=1e-9)
        assert spent == recount.loc[system, "size"]
    assert list(board.score) == sorted(board.score, reverse=True)
    assert np.all((board.low <= board.score) & (board.score <= board.high))
    assert board.p_top.sum() == pytest.approx(3.0)
    assert set(board.status) <= {"sure", "in", "out"}
    assert list(leaderboard_frame(board).columns[:2]) == ["system", "mean human score"]
    frame = run.leaderboard()  # the notebook API: the same table
    assert list(frame["system"]) == list(board.systems) and frame["P(top 3)"].tolist() == board.p_top.tolist()
    rows = run.summary["leaderboard"]  # and replay --json
    assert [r["system"] for r in rows] == list(board.systems) and run.summary["leaderboard_k"] == 3


def test_leaderboard_win_rates_equal_a_pandas_recount_on_pandalm() -> None:
    data = pe.load_sample("pandalm")
    run = pe.replay(data, "human", budget=300)
    state = run.run.state
    table = state.table
    rows = np.flatnonzero(state.reveals.round > 0)
    shown = pd.DataFrame(
        {
            "item_id": [table.items[i] for i in table.row_item[rows]],
            "system_a": [table.pairs[p][0] for p in table.row_pair[rows]],
            "system_b": [table.pairs[p][1] for p in table.row_pair[rows]],
        }
    )
    prefs = data.preferences[data.preferences["rater"] == "human"]
    # the data may name a pair in either order: put each comparison in the table's order
    flipped = prefs.rename(columns={"system_a": "system_b", "system_b": "system_a"}).assign(outcome=lambda f: 2 - f["outcome"])
    both = pd.concat([prefs, flipped])
    merged = shown.merge(both, on=["item_id", "system_a", "system_b"])
    assert len(merged) == len(rows)
    points = pd.concat(
        [
            pd.DataFrame({"system": merged["system_a"], "point": 1 - merged["outcome"] / 2}),
            pd.DataFrame({"system": merged["system_b"], "point": merged["outcome"] / 2}),
        ]
    )
    recount = points.groupby("system")["point"].agg(["mean", "size"])
    board = study_leaderboard(state)
    assert board.kind == "win rate"
    for system, score, spent in zip(board.systems, board.score, board.spent, strict=True):
        assert score == pytest.approx(recount.loc[system, "mean"], abs=1e-12)
        assert spent == recount.loc[system, "size"]


def test_p_top_k_matches_an_independent_bootstrap() -> None:
    rng = np.random.default_rng(5)
    n_systems, n_items, k = 5, 40, 2
    truth = np.array([0.0, 0.1, 0.15, 0.3, 0.5])
    scores = truth[:, None] + rng.normal(0, 1, (n_systems, n_items))
    seen = rng.random((n_systems, n_items)) < 0.8
    points, weights = np.where(seen, scores, 0.0), seen.astype(float)
    board = leaderboard(list("vwxyz"), points, weights, seen.sum(axis=1), kind="mean score", k=k, draws=4000, seed=1)
    # independent: one item at a time, a different generator, ranks by pandas
    other = np.random.default_rng(99)
    hits = np.zeros(n_systems)
    draws = 3000
    for _ in range(draws):
        pick = other.integers(0, n_items, n_items)
        frame = pd.DataFrame({"s": np.repeat(np.arange(n_systems), n_items), "x": scores[:, pick].ravel(), "w": seen[:, pick].ravel()})
        means = frame[frame["w"]].groupby("s")["x"].mean()
        hits[means.nlargest(k).index.to_numpy()] += 1
    expected = pd.Series(hits / draws, index=list("vwxyz"))
    for system, p in zip(board.systems, board.p_top, strict=True):
        error = np.sqrt(expected[system] * (1 - expected[system]) * (1 / draws + 1 / 4000)) + 1e-3
        assert abs(p - expected[system]) < 4 * error, system


def test_a_finite_pool_shrinks_the_resamples_by_the_share_left_and_covers_the_pool_mean() -> None:
    rng = np.random.default_rng(3)
    scores = rng.normal(0.0, 1.0, (3, 60))
    seen = rng.random((3, 60)) < np.array([[1.0], [0.5], [0.2]])  # all, about half and a fifth of each pool
    points, weights = np.where(seen, scores, 0.0), seen.astype(float)
    plain = leaderboard(list("abc"), points, weights, seen.sum(axis=1), kind="mean score", seed=4)
    pooled = leaderboard(list("abc"), points, weights, seen.sum(axis=1), kind="mean score", seed=4, pool=np.full(3, 60.0))
    assert pooled.finite_pool and "finite pool" in pooled.method() and not plain.finite_pool
    left = np.sqrt(1 - seen.sum(axis=1) / 60)[[list("abc").index(s) for s in pooled.systems]]
    # the same resamples, each deviation from the score times sqrt(1 - revealed / pool): so are the quantiles
    order = [plain.systems.index(s) for s in pooled.systems]
    np.testing.assert_allclose(pooled.low, pooled.score + left * (plain.low[order] - plain.score[order]), atol=1e-12)
    np.testing.assert_allclose(pooled.high, pooled.score + left * (plain.high[order] - plain.score[order]), atol=1e-12)
    whole = pooled.systems.index("a")  # its pool all revealed: nothing left to estimate
    assert pooled.low[whole] == pooled.high[whole] == pooled.score[whole]
    # coverage of the pool's own mean when half of a 200-item pool is revealed in a uniform order
    covered = []
    for _ in range(300):
        pool_scores = rng.normal(0.0, 1.0, 200)
        half = rng.permutation(200) < 100
        board = leaderboard(["s"], np.where(half, pool_scores, 0.0)[None], half[None].astype(float), np.array([100]),
                            kind="mean score", draws=800, seed=int(rng.integers(1 << 30)), pool=np.array([200.0]))  # fmt: skip
        covered.append(board.low[0] <= pool_scores.mean() <= board.high[0])
    assert 0.90 <= np.mean(covered) <= 0.985  # 0.95 ± 2.5 s.e. (about 0.0126 each) and the bootstrap's own bias


def test_under_a_pool_statistic_the_leaderboard_never_gives_a_system_ruled_out_on_its_whole_pool_a_chance() -> None:
    # WMT21 TED top-3 (bundled sample): the last exclusions come as the pools run out, where the
    # exact pool test knows the pool means; items as a sample of many gave them P(top 3) of ~0.2
    state = pe.replay(pe.load_sample("wmt21_ted"), "human", question="top-k", k=3, seed=0).run.state
    board = study_leaderboard(state)
    assert board.finite_pool and "finite pool" in board.method()
    grid = state.table.grid
    assert grid is not None
    revealed = (state.reveals.round.reshape(grid.requestable.shape) > 0).sum(axis=1) == grid.requestable.sum(axis=1)
    whole = np.array([revealed[state.table.systems.index(s)] for s in board.systems])
    assert whole.any()
    np.testing.assert_array_equal(board.low[whole], board.high[whole])
    out = np.array([status == "out" for status in board.status])
    assert (board.p_top[out & whole] == 0).all() and (out & whole).any()
    mean = study_leaderboard(pe.replay(pe.load_sample("wmt21_ted"), "human", question="top-k", k=3, statistic="mean").run.state)
    assert not mean.finite_pool  # the mean statistic's estimand reaches beyond the study's items


def test_the_leaderboard_is_seeded() -> None:
    points = np.arange(12.0).reshape(3, 4)
    weights = np.ones((3, 4))
    first = leaderboard("abc", points, weights, np.ones(3, dtype=np.int64), kind="mean score", seed=3)
    again = leaderboard("abc", points, weights, np.ones(3, dtype=np.int64), kind="mean score", seed=3)
    np.testing.assert_array_equal(first.low, again.low)
    assert first.systems == ("c", "b", "a") and "seed 3" in first.method()


# --- stop reasons ----------------------------------------------------------------------------


def test_a_futility_stop_is_named_with_its_pairs_and_without_futility_the_pairs_are_exhausted() -> None:
    data = pe.load_sample("summeval")
    futile = pe.replay(data, "human:relevance", futility=0.05)
    state = futile.run.state
    assert stop_reason(state) == "futile" == futile.summary["stop_reason"]
    pairs = futile_pairs(state)
    assert pairs and [list(p) for p in pairs] == futile.summary["futile_pairs"]
    index = [state.table.pairs.index(p) for p in pairs]
    assert np.all(state.decisions[index] == TIE) and np.all(state.status.futile[index])
    words = study_status(state).stop_words
    assert words.startswith("stopped as futile (β = 0.05): ") and f"{pairs[0][0]} vs {pairs[0][1]}" in words
    off = pe.replay(data, "human:relevance", futility=None)
    assert off.summary["stop_reason"] == "exhausted"
    assert study_status(off.run.state).stop_words.startswith("no judgment left can decide")


@pytest.mark.parametrize(("sample", "human"), [("summeval", "human:relevance"), ("pandalm", "human")])
def test_the_cost_to_settle_bounds_what_the_run_without_the_stop_buys(sample: str, human: str) -> None:
    # The stop gives up the pairs' remaining items; the run with it off buys at most those (on the
    # same item order the two runs are the same until the stop), and leaves nothing to settle.
    data = pe.load_sample(sample)
    stopped, off = pe.replay(data, human, futility=0.05), pe.replay(data, human, futility=None)
    bound = stopped.summary["cost_to_settle"]
    assert stopped.summary["stop_reason"] == "futile" and bound > 0
    assert 0 < off.summary["cost_used"] - stopped.summary["cost_used"] <= bound
    assert off.summary["cost_to_settle"] == 0
    assert f"at most {bound:,} more {stopped.summary['cost_unit']}" in study_status(stopped.run.state).stop_words


def test_a_tier_question_lists_its_exclusions_in_order_with_the_cost_by_then() -> None:
    run = pe.replay(pe.load_sample("summeval"), "human:relevance", question="top-k")  # question-level control
    state = run.run.state
    found = exclusions(state)
    # counted from the rounds by hand: the first round after which a system is no longer a member
    spent = np.cumsum([record.cost for record in state.records])
    expected = {}
    for number, record in enumerate(state.records):
        for s in np.flatnonzero(~record.members):
            expected.setdefault(state.table.systems[s], (record.round, int(spent[number])))
    assert {e.system: (e.round, e.cost) for e in found} == expected and len(found) >= 5
    assert [e.round for e in found] == sorted(e.round for e in found)
    assert {e.system for e in found} == {s for s, member in zip(state.table.systems, state.members, strict=True) if not member}
    assert run.summary["ruled_out"] == [{"system": e.system, "round": e.round, "cost": e.cost} for e in found]
    board = run.leaderboard()
    assert set(board.loc[board["status"] == "out", "system"]) == {e.system for e in found}
    frame = exclusions_frame(state)
    assert list(frame.columns) == ["system", "ruled out after round", "ratings used by then"] and len(frame) == len(found)
    assert "closed testing" in exclusion_words(state) and "cannot be the best" in exclusion_words(state)
    assert set(pairs_frame(state)["decision"]) == {NOT_PAIRWISE_WORDS}  # no pair is said to be "undecided" where none is asked
    all_pairs = pe.replay(pe.load_sample("summeval"), "human:relevance", budget=300)
    assert exclusions(all_pairs.run.state) == () and "ruled_out" not in all_pairs.summary


def test_the_report_shows_a_tier_s_exclusions_and_the_pair_matrix_only_where_pairs_are_decided() -> None:
    data = pe.load_sample("summeval")

    def headings(**options: object) -> list[str]:
        state = pe.replay(data, "human:relevance", **options).run.state  # type: ignore[arg-type]
        return re.findall(r"<h2>(.*?)</h2>", study_report_html("r", state, protocol_result(state)))

    closed = headings(question="top-k")  # question-level: closed testing decides no pair
    assert "Ruled out" in closed and "Decisions" not in closed
    state = pe.replay(data, "human:relevance", question="top-k").run.state
    summary = study_report_html("r", state, protocol_result(state))
    assert "top-1 tier" in summary and "Of its scored pairs" not in summary  # no verdict on pairs it never asked
    per_pair = headings(question="top-k", error_control="spending")  # per pair: the tier follows from pair decisions
    assert "Ruled out" in per_pair and "Decisions" in per_pair
    assert "Ruled out" not in headings(budget=300) and "Decisions" in headings(budget=300)
