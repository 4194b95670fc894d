"""The protocol's pure steps on tiny hand-made data (method.md §5), human-only model (exact)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefeval_core.protocol import (
    Annotation,
    ProtocolError,
    ProtocolSettings,
    apply_annotations,
    closest_first,
    decide_round,
    is_finished,
    new_state,
    next_request,
    protocol_result,
    replay_source,
    run_protocol,
    state_from_json,
    state_to_json,
    undo_round,
)
from tests.protocol_fixtures import make_table

GT, EQ, LT = 0, 1, 2


def human_only(budget: int, batch: int = 10, seed: int = 0, **kw) -> ProtocolSettings:
    return ProtocolSettings(budget=budget, batch=batch, model="human_only", seed=seed, **kw)


def test_clear_pair_is_decided_in_round_one_and_all_tie_pair_waits_for_its_pool() -> None:
    table = make_table({("a", "b"): ([GT] * 30, None), ("a", "c"): ([EQ] * 25, None)})
    state = new_state(table, human_only(budget=1000))
    source = replay_source(table)
    rounds = []
    state = run_protocol(state, source, progress=rounds.append)
    first = rounds[0]
    # n = (10, 0, 0): theta = 1 - 2**-11 > 0.975
    assert first.pairs[0].decision == GT and first.pairs[0].theta == pytest.approx(1 - 2.0**-11)
    assert [len(r.pairs[0].revealed) for r in rounds] == [10, 10, 10]
    # all ties: theta = 1/2 every round; undecided until 10 + 10 + 5 = all 25 are revealed
    assert [len(r.pairs[1].revealed) for r in rounds] == [10, 20, 25]
    assert all(r.pairs[1].theta == pytest.approx(0.5) and r.pairs[1].undecided for r in rounds)
    assert is_finished(state) and state.round == 3 and state.human_used == 35


def test_round_robin_when_the_budget_runs_out() -> None:
    table = make_table({("a", "b"): ([EQ] * 9, None), ("a", "c"): ([EQ] * 9, None), ("b", "c"): ([EQ] * 9, None)})
    state = new_state(table, human_only(budget=4, batch=2))
    request = next_request(state)
    assert [item.pair for item in request.items] == [0, 0, 1, 2]
    state = run_protocol(state, replay_source(table))
    assert state.human_used == 4 and state.budget_left == 0 and is_finished(state)
    with pytest.raises(ProtocolError, match="budget"):
        apply_annotations(state, [Annotation("i008", "a", "b", GT)])


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
    table = make_table({(systems[0], systems[k + 1]): (o, None) for k, o in enumerate(outcomes)})
    state = run_protocol(new_state(table, human_only(budget, batch, seed, policy=policy)), replay_source(table))
    assert state.human_used <= budget
    assert is_finished(state)
    for pair in state.pairs:
        items = [r.item_id for r in pair.revealed]
        assert len(items) == len(set(items))  # nothing revealed twice
        if pair.undecided and state.budget_left > 0:
            assert not pair.unrevealed_pool()  # an undecided pair stops only when its pool is empty


def test_same_seed_same_run_and_the_seed_changes_the_order() -> None:
    rng = np.random.default_rng(7)
    pairs = [("a", "b"), ("a", "c"), ("b", "c")]
    table = make_table({pair: (rng.integers(0, 3, 40).tolist(), rng.integers(0, 3, 40).tolist()) for pair in pairs})
    runs = [run_protocol(new_state(table, human_only(60, 5, seed)), replay_source(table)) for seed in (3, 3, 4)]
    assert runs[0] == runs[1]
    assert [r.item_id for r in runs[0].pairs[0].revealed] != [r.item_id for r in runs[2].pairs[0].revealed]


def test_state_json_round_trip_is_lossless() -> None:
    table = make_table({("a", "b"): ([GT, LT, EQ, GT] * 5, [GT, GT, EQ, -1] * 5), ("a", "c"): ([LT] * 7, None)})
    mu = ((0.8, 0.25, 0.1), (0.1, 0.5, 0.1), (0.1, 0.25, 0.8))
    state = new_state(table, ProtocolSettings(budget=12, batch=3, model="known_mu", mu=mu, seed=5, human="h", metric="m", eps_human=0.25))
    state = apply_annotations(state, [Annotation("i000", "a", "b", GT), Annotation("new-item", "c", "a", GT)])
    restored = state_from_json(state_to_json(state))
    assert restored == state
    human_state = run_protocol(new_state(table, human_only(30, 3)), replay_source(table), max_rounds=2)
    assert state_from_json(state_to_json(human_state)) == human_state
    assert human_state.pairs[0].history[-1].theta == state_from_json(state_to_json(human_state)).pairs[0].history[-1].theta


def test_live_annotations_flip_to_the_canonical_pair_and_refuse_conflicts() -> None:
    table = make_table({("a", "b"): ([-1] * 4, [GT, GT, LT, EQ])}, metric_rater="m")
    state = new_state(table, human_only(10, 2), pool="all")
    assert sorted(state.pairs[0].pool) == ["i000", "i001", "i002", "i003"]
    request = next_request(state)
    assert len(request) == 2 and request.round == 1
    state = apply_annotations(state, [Annotation(request.items[0].item_id, "b", "a", GT), Annotation("extra", "a", "b", EQ)])
    first = state.pairs[0].revealed[0]
    assert first.outcome == LT and first.round == 1  # "b > a" is "<" of (a, b)
    same = apply_annotations(state, [Annotation("extra", "a", "b", EQ)])
    assert same == state  # a repeated identical outcome is ignored
    with pytest.raises(ProtocolError, match="already has outcome"):
        apply_annotations(state, [Annotation("extra", "a", "b", GT)])
    with pytest.raises(ProtocolError, match="no pair"):
        apply_annotations(state, [Annotation("i000", "a", "z", GT)])
    with pytest.raises(ProtocolError, match="outcome code"):
        apply_annotations(state, [Annotation("i000", "a", "b", 3)])


def test_counts_follow_the_revealed_items() -> None:
    # metric rated i000..i003; human reveals i000 (>) and i001 (=) and an unrated item
    table = make_table({("a", "b"): ([GT, EQ, LT, LT], [GT, LT, LT, EQ])})
    state = new_state(table, human_only(10))
    state = apply_annotations(state, [Annotation("i000", "a", "b", GT), Annotation("i001", "a", "b", EQ), Annotation("x", "a", "b", LT)])
    counts = state.counts()
    assert counts.n.tolist() == [[1, 1, 1]]
    expected_K = np.zeros((3, 3), dtype=int)
    expected_K[GT, GT] = 1  # metric >, human >
    expected_K[LT, EQ] = 1  # metric <, human =
    assert counts.K[0].tolist() == expected_K.tolist()
    assert counts.m.tolist() == [[0, 1, 1]]  # unrevealed i002 (<) and i003 (=)


def test_undo_reverts_open_annotations_then_whole_rounds() -> None:
    table = make_table({("a", "b"): ([GT, LT] * 10, None), ("a", "c"): ([GT] * 20, None)})
    state0 = new_state(table, human_only(100, 4))
    source = replay_source(table)
    state1 = run_protocol(state0, source, max_rounds=1)
    state2 = run_protocol(state1, source, max_rounds=1)
    opened = apply_annotations(state2, source(next_request(state2)))
    assert undo_round(opened) == state2
    assert undo_round(state2) == state1
    assert undo_round(undo_round(state2)) == state0
    assert undo_round(state0) == state0


def test_decide_round_only_touches_pairs_with_new_outcomes() -> None:
    table = make_table({("a", "b"): ([EQ] * 10, None), ("a", "c"): ([EQ] * 10, None)})
    state = new_state(table, human_only(100, 2))
    state = decide_round(apply_annotations(state, [Annotation("i000", "a", "b", EQ)]))
    assert len(state.pairs[0].history) == 1 and state.pairs[1].history == ()
    assert state.round == 1


def test_closest_first_policy_prefers_pairs_near_a_decision() -> None:
    table = make_table({("a", "b"): ([GT] * 40, None), ("a", "c"): ([EQ] * 40, None), ("b", "c"): ([LT] * 40, None)})
    state = run_protocol(new_state(table, human_only(1000, 4, policy="closest_first")), replay_source(table), max_rounds=1)
    # after 4 outcomes: theta = 1 - 2**-5 for (a, b), 2**-5 for (b, c) (both undecided, close), 1/2 for (a, c)
    assert state.decisions.tolist() == [EQ, EQ, EQ]
    assert closest_first(state).tolist() == [8, 0, 8]


def test_protocol_result_against_the_full_human_evaluation() -> None:
    table = make_table({("a", "b"): ([GT] * 30, None), ("a", "c"): ([EQ] * 25, None)})
    state = run_protocol(new_state(table, human_only(1000)), replay_source(table))
    result = protocol_result(state, table)
    assert result.outcomes.tolist() == [GT, EQ]
    assert result.comparison.error_types.tolist() == ["correct_significant", "correct_undecided"]
    assert result.human_used.tolist() == [10, 25] and result.human_available.tolist() == [30, 25]
    assert result.annotation_fraction == pytest.approx(35 / 55)
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
    table = make_table({("a", "bcdef"[k]): (o, None) for k, o in enumerate(outcomes)})
    state = run_protocol(new_state(table, human_only(budget, batch, seed)), replay_source(table), max_rounds=rounds)
    if not is_finished(state):  # leave an open round too
        state = apply_annotations(state, replay_source(table)(next_request(state)))
    assert state_from_json(state_to_json(state)) == state
