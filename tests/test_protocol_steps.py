"""The protocol's pure steps on tiny hand-made data (method.md §5, §12), human-only model (exact)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefeval_core.errors import SettingsError
from prefeval_core.protocol import (
    ComparisonJudgment,
    ProtocolError,
    ProtocolSettings,
    Question,
    RatingJudgment,
    apply_judgments,
    closest_first,
    decide_round,
    is_finished,
    new_state,
    next_request,
    pairs_that_matter,
    protocol_result,
    replay_source,
    run_protocol,
    state_from_json,
    state_to_json,
    stop_reason,
    undo_round,
)
from prefeval_core.protocol.state import PairStatus, ProtocolState
from prefeval_core.workflow.answers import answer_words
from tests.protocol_fixtures import comparison_table, ratings_table, same_state

GT, EQ, LT = 0, 1, 2


def human_only(budget: int, batch: int = 10, seed: int = 0, unit: str = "comparisons", **kw) -> ProtocolSettings:
    kw = {"error_control": "none", "futility": None, **kw}  # the paper's rule unless a test says otherwise
    return ProtocolSettings(budget=budget, batch=batch, model="human_only", seed=seed, unit=unit, **kw)  # type: ignore[arg-type]


def revealed_per_pair(state) -> list[int]:
    return state.pair_outcomes_used().tolist()


def test_clear_pair_is_decided_in_round_one_and_all_tie_pair_waits_for_its_pool() -> None:
    table = comparison_table({("a", "b"): ([GT] * 30, None), ("a", "c"): ([EQ] * 25, None)}, metric=None)
    rounds = []
    state = run_protocol(new_state(table, human_only(budget=1000)), replay_source(table), progress=rounds.append)
    first = rounds[0]
    # n = (10, 0, 0): theta = 1 - 2**-11 > 0.975
    assert first.decisions[0] == GT and first.status.theta[0] == pytest.approx(1 - 2.0**-11)
    assert [revealed_per_pair(r)[0] for r in rounds] == [10, 10, 10]
    # all ties: theta = 1/2 every round; undecided until 10 + 10 + 5 = all 25 are revealed
    assert [revealed_per_pair(r)[1] for r in rounds] == [10, 20, 25]
    assert all(r.status.theta[1] == pytest.approx(0.5) and r.decisions[1] == EQ for r in rounds)
    assert is_finished(state) and state.round == 3 and state.cost_used == 35
    assert stop_reason(state) == "exhausted"


def test_round_robin_when_the_budget_runs_out() -> None:
    table = comparison_table({("a", "b"): ([EQ] * 9, None), ("a", "c"): ([EQ] * 9, None), ("b", "c"): ([EQ] * 9, None)}, metric=None)
    state = new_state(table, human_only(budget=4, batch=2))
    request = next_request(state)
    assert [(t.system_a, t.system_b) for t in request.tasks] == [("a", "b"), ("a", "b"), ("a", "c"), ("b", "c")]
    assert request.cost == 4
    state = run_protocol(state, replay_source(table))
    assert state.cost_used == 4 and state.budget_left == 0 and is_finished(state)
    with pytest.raises(ProtocolError, match="budget"):
        apply_judgments(state, [ComparisonJudgment("i008", "a", "b", GT)])


@pytest.mark.property
@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from([GT, EQ, LT]), min_size=1, max_size=30), min_size=1, max_size=5),
    st.integers(min_value=0, max_value=80),
    st.integers(min_value=1, max_value=12),
    st.integers(min_value=0, max_value=3),
    st.sampled_from(["paper", "closest_first"]),
)
def test_budget_never_exceeded_and_run_ends(outcomes, budget, batch, seed, policy) -> None:
    systems = "abcdef"
    table = comparison_table({(systems[0], systems[k + 1]): (o, None) for k, o in enumerate(outcomes)}, metric=None)
    state = run_protocol(new_state(table, human_only(budget, batch, seed, policy=policy)), replay_source(table))
    assert state.cost_used <= budget
    assert is_finished(state)
    left = state.rows_left()
    if state.budget_left > 0:
        assert np.all((state.decisions != EQ) | (left == 0))  # an undecided pair stops only when its items run out


def test_same_seed_same_run_and_the_seed_changes_the_order() -> None:
    rng = np.random.default_rng(7)
    pairs = [("a", "b"), ("a", "c"), ("b", "c")]
    table = comparison_table({pair: (rng.integers(0, 3, 40).tolist(), rng.integers(0, 3, 40).tolist()) for pair in pairs})
    runs = [run_protocol(new_state(table, human_only(60, 5, seed)), replay_source(table)) for seed in (3, 3, 4)]
    assert same_state(runs[0], runs[1])
    first = [next_request(new_state(table, human_only(60, 5, seed))).tasks for seed in (3, 4)]
    assert first[0] != first[1]


def test_state_json_round_trip_is_lossless_and_tied_to_its_table() -> None:
    table = comparison_table({("a", "b"): ([GT, LT, EQ, GT] * 5, [GT, GT, EQ, -1] * 5), ("a", "c"): ([LT] * 7 + [-1] * 13, None)})
    mu = ((0.8, 0.25, 0.1), (0.1, 0.5, 0.1), (0.1, 0.25, 0.8))
    settings_ = ProtocolSettings(
        budget=12, batch=3, model="known_mu", mu=mu, seed=5, human="h", metrics=("m",), eps_human=0.25, error_control="none", futility=None
    )
    state = run_protocol(new_state(table, settings_), replay_source(table), max_rounds=1)
    state = apply_judgments(state, [ComparisonJudgment("i019", "a", "b", GT), ComparisonJudgment("i001", "c", "a", GT)])
    restored = state_from_json(state_to_json(state), table)
    assert same_state(restored, state) and restored.settings == state.settings
    other = comparison_table({("a", "b"): ([GT] * 20, None)})
    with pytest.raises(SettingsError, match="other data"):
        state_from_json(state_to_json(state), other)


def test_live_judgments_flip_to_the_canonical_pair_and_refuse_conflicts() -> None:
    table = comparison_table({("a", "b"): ([-1] * 4, [GT, GT, LT, EQ])}, requestable="all")
    state = new_state(table, human_only(10, 2))
    request = next_request(state)
    assert len(request) == 2 and request.round == 1
    item = request.tasks[0].item_id
    state = apply_judgments(state, [ComparisonJudgment(item, "b", "a", GT), ComparisonJudgment("i003", "a", "b", EQ)])
    rounds, outcome = state.row_reveals
    row = table.items.index(item)
    assert outcome[row] == LT and rounds[row] == 1  # "b > a" is "<" of (a, b)
    same = apply_judgments(state, [ComparisonJudgment("i003", "a", "b", EQ)])
    assert same_state(same, state)  # a repeated identical judgment is ignored
    with pytest.raises(ProtocolError, match="already has"):
        apply_judgments(state, [ComparisonJudgment("i003", "a", "b", GT)])
    with pytest.raises(ProtocolError, match="no pair"):
        apply_judgments(state, [ComparisonJudgment("i000", "a", "z", GT)])
    with pytest.raises(ProtocolError, match="outcome code"):
        apply_judgments(state, [ComparisonJudgment("i000", "a", "b", 3)])
    with pytest.raises(ProtocolError, match="not part of this study"):
        apply_judgments(state, [ComparisonJudgment("nowhere", "a", "b", GT)])
    with pytest.raises(ProtocolError, match="comparisons, not ratings"):
        apply_judgments(state, [RatingJudgment("i000", "a", 3.0)])


def test_counts_follow_the_revealed_items() -> None:
    # metric rated i000..i003; the human reveals i000 (>) and i001 (=)
    table = comparison_table({("a", "b"): ([GT, EQ, LT, LT], [GT, LT, LT, EQ])})
    state = new_state(table, human_only(10))
    state = apply_judgments(state, [ComparisonJudgment("i000", "a", "b", GT), ComparisonJudgment("i001", "a", "b", EQ)])
    counts = state.revealed_counts().triples(0)
    assert counts.n.tolist() == [[1, 1, 0]]
    expected_K = np.zeros((3, 3), dtype=int)
    expected_K[GT, GT] = 1  # metric >, human >
    expected_K[LT, EQ] = 1  # metric <, human =
    assert counts.K[0].tolist() == expected_K.tolist()
    assert counts.m.tolist() == [[0, 1, 1]]  # unrevealed i002 (<) and i003 (=)
    assert state.revealed_counts(before_round=1).n.tolist() == [[0, 0, 0]]
    assert state.human_outcome_counts().tolist() == [[1, 1, 0]]  # the same n, without the metric patterns


def test_undo_reverts_open_judgments_then_whole_rounds() -> None:
    table = comparison_table({("a", "b"): ([GT, LT] * 10, None), ("a", "c"): ([GT] * 20, None)}, metric=None)
    state0 = new_state(table, human_only(100, 4))
    source = replay_source(table)
    state1 = run_protocol(state0, source, max_rounds=1)
    state2 = run_protocol(state1, source, max_rounds=1)
    opened = apply_judgments(state2, source(next_request(state2)))
    assert opened.open_reveals == 4
    assert same_state(undo_round(opened), state2)
    assert same_state(undo_round(state2), state1)
    assert same_state(undo_round(undo_round(state2)), state0)
    assert undo_round(state0) is state0


def test_decide_round_only_touches_pairs_with_new_judgments() -> None:
    table = comparison_table({("a", "b"): ([EQ] * 10, None), ("a", "c"): ([EQ] * 10, None)}, metric=None)
    state = new_state(table, human_only(100, 2))
    state = decide_round(apply_judgments(state, [ComparisonJudgment("i000", "a", "b", EQ)]))
    assert state.records[0].pairs.tolist() == [0]
    assert state.status.last_round.tolist() == [1, 0] and state.round == 1


def test_closest_first_policy_prefers_pairs_near_a_decision() -> None:
    table = comparison_table({("a", "b"): ([GT] * 40, None), ("a", "c"): ([EQ] * 40, None), ("b", "c"): ([LT] * 40, None)}, metric=None)
    state = run_protocol(new_state(table, human_only(1000, 4, policy="closest_first")), replay_source(table), max_rounds=1)
    # after 4 outcomes: theta = 1 - 2**-5 for (a, b), 2**-5 for (b, c) (both undecided, close), 1/2 for (a, c)
    assert state.decisions.tolist() == [EQ, EQ, EQ]
    assert closest_first(state, pairs_that_matter(state)).tolist() == [8, 0, 8]


def test_protocol_result_against_the_full_human_evaluation() -> None:
    table = comparison_table({("a", "b"): ([GT] * 30, None), ("a", "c"): ([EQ] * 25 + [-1] * 5, None)}, metric=None)
    state = run_protocol(new_state(table, human_only(1000)), replay_source(table))
    result = protocol_result(state)
    assert result.outcomes.tolist() == [GT, EQ]
    assert result.comparison.error_types.tolist() == ["correct_significant", "correct_undecided"]
    assert result.human_used.tolist() == [10, 25] and result.human_available.tolist() == [30, 25]
    assert result.annotation_fraction == pytest.approx(35 / 55)
    assert (result.unit, result.cost_used, result.cost_available) == ("comparisons", 35, 55)
    # the all-tie pair saw all its outcomes: identical posterior, KLD 0
    assert result.comparison.kld[1] == pytest.approx(0.0)


@pytest.mark.property
@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from([GT, EQ, LT]), min_size=1, max_size=15), min_size=1, max_size=4),
    st.integers(min_value=0, max_value=40),
    st.integers(min_value=1, max_value=6),
    st.integers(min_value=0, max_value=5),
    st.integers(min_value=0, max_value=2**31),
)
def test_json_round_trip_after_any_number_of_rounds(outcomes, budget, batch, rounds, seed) -> None:
    table = comparison_table({("a", "bcdef"[k]): (o, None) for k, o in enumerate(outcomes)}, metric=None)
    state = run_protocol(new_state(table, human_only(budget, batch, seed)), replay_source(table), max_rounds=rounds)
    # the status a run carries from round to round is the one its records give from scratch
    afresh = ProtocolState(state.settings, state.table, state.reveals, state.records, state.withdrawn)
    for name in PairStatus.__dataclass_fields__:
        np.testing.assert_array_equal(getattr(state.status, name), getattr(afresh.status, name), err_msg=name)
    if not is_finished(state):  # leave an open round too
        state = apply_judgments(state, replay_source(table)(next_request(state)))
    assert same_state(state_from_json(state_to_json(state), table), state)


# --- ratings studies (method.md §12): one rating serves every pair -----------------------


def test_one_rating_serves_every_pair_of_its_system() -> None:
    table = ratings_table({"a": [3, 2, 1], "b": [2, 2, 2], "c": [1, 2, 3]})
    assert table.unit == "ratings" and table.n_pairs == 3
    state = new_state(table, human_only(100, unit="ratings"))
    state = apply_judgments(state, [RatingJudgment("i000", s, v) for s, v in (("a", 3.0), ("b", 2.0), ("c", 1.0))])
    assert state.cost_used == 3
    assert state.pair_outcomes_used().tolist() == [1, 1, 1]  # three pair outcomes from three ratings
    _, outcome = state.row_reveals
    assert sorted(outcome[outcome >= 0].tolist()) == [GT, GT, GT]  # a > b, a > c, b > c on item 0
    with pytest.raises(ProtocolError, match="ratings of single outputs"):
        apply_judgments(state, [ComparisonJudgment("i000", "a", "b", GT)])
    with pytest.raises(ProtocolError, match="finite"):
        apply_judgments(state, [RatingJudgment("i001", "a", float("nan"))])


def test_a_ratings_round_asks_the_next_items_of_one_order_for_every_system_that_matters() -> None:
    clear = {"a": [5.0] * 40, "b": [1.0] * 40, "c": [3.0] * 40}
    table = ratings_table(clear)
    state = new_state(table, human_only(10_000, batch=5, unit="ratings", seed=2))
    request = next_request(state)
    per_system = {s: [t.item_id for t in request.tasks if t.system == s] for s in "abc"}
    assert per_system["a"] == per_system["b"] == per_system["c"] and len(per_system["a"]) == 5
    state = run_protocol(state, replay_source(table))
    # every pair is decided after one round of 5 items: 15 ratings of the 120 buy the whole answer
    assert state.round == 1 and state.cost_used == 15 and stop_reason(state) == "answered"
    assert protocol_result(state).cost_fraction == pytest.approx(15 / 120)


def test_top_k_excludes_systems_and_stops_rating_them() -> None:
    # a is clearly best; b and c tie below it; d is clearly worst
    rng = np.random.default_rng(0)
    scores = {"a": [9.0] * 60, "b": list(5 + rng.integers(0, 2, 60)), "c": list(5 + rng.integers(0, 2, 60)), "d": [1.0] * 60}
    table = ratings_table(scores)
    settings_ = human_only(10_000, batch=10, unit="ratings", question=Question("top-k", 1))
    state = run_protocol(new_state(table, settings_), replay_source(table))
    result = protocol_result(state)
    assert result.top_k is not None
    assert result.top_k.answer.members == ("a",) and result.top_k.exact_match
    assert answer_words(state) == "a is the best system."
    assert stop_reason(state) == "answered"
    # after round 1 only a remains: nobody is rated again
    assert state.round == 1 and state.cost_used == 40


def test_baseline_question_decides_only_the_baseline_pairs() -> None:
    table = comparison_table({("a", "b"): ([GT] * 20, None), ("a", "c"): ([LT] * 20, None), ("b", "c"): ([LT] * 20, None)}, metric=None)
    settings_ = human_only(1000, batch=5, question=Question("baseline", baselines=("c",)))
    state = run_protocol(new_state(table, settings_), replay_source(table))
    assert state.pair_outcomes_used().tolist() == [0, 5, 5]  # (a, b) is never asked
    result = protocol_result(state)
    assert result.pairs == (("a", "c"), ("b", "c")) and result.outcomes.tolist() == [LT, LT]
    assert result.cost_available == 40


def test_max_rounds_stops_the_run_and_says_so() -> None:
    table = comparison_table({("a", "b"): ([EQ] * 50, None)}, metric=None)
    state = run_protocol(new_state(table, human_only(1000, batch=5, max_rounds=2)), replay_source(table))
    assert state.round == 2 and stop_reason(state) == "max_rounds" and is_finished(state)


def test_judgments_cost_what_their_annotators_cost_and_the_budget_counts_them() -> None:
    table = ratings_table({"a": [3, 2, 1, 3], "b": [2, 2, 2, 1]})
    grid = table.grid
    assert grid is not None
    grid.cost[:] = 3  # three annotators behind every score
    state = new_state(table, human_only(7, batch=4, unit="ratings"))
    request = next_request(state)
    assert request.cost <= 7 and len(request) == 2  # two ratings fit a budget of 7 judgments
    state = run_protocol(state, replay_source(table))
    assert state.cost_used == 6
