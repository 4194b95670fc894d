"""The protocol with the metric models of the decision engine (full model, known mu) on tiny data."""

from __future__ import annotations

import pytest

from prefeval_core.protocol import ProtocolSettings, is_finished, new_state, replay_source, run_protocol, state_from_json, state_to_json
from prefeval_core.protocol.ideal_metric import IDEAL_MU_ROWS
from tests.protocol_fixtures import comparison_table, same_state

GT, EQ, LT = 0, 1, 2


@pytest.mark.parametrize("model", ["full", "known_mu"])
def test_clear_pair_decided_in_round_one_all_tie_pair_waits_with_a_metric(model: str) -> None:
    table = comparison_table({("a", "b"): ([GT] * 30, [GT] * 30), ("a", "c"): ([EQ] * 25, [EQ] * 25)})
    mu = IDEAL_MU_ROWS if model == "known_mu" else None
    settings = ProtocolSettings(
        budget=1000,
        batch=10,
        model=model,
        mu=mu,
        seed=3,
        metrics=("metric",),
        error_control="none",
        futility=None,  # type: ignore[arg-type]
    )
    rounds = []
    state = run_protocol(new_state(table, settings), replay_source(table), progress=rounds.append)
    assert rounds[0].decisions[0] == GT  # 10 human ">" plus 20 metric ">" on the rest
    assert [r.pair_outcomes_used()[1] for r in rounds] == [10, 20, 25]
    assert all(r.decisions[1] == EQ for r in rounds)
    assert is_finished(state) and state.cost_used == 35


def test_same_seed_same_run_with_the_full_model() -> None:
    table = comparison_table({("a", "b"): ([GT, EQ, LT, GT] * 10, [GT, EQ, GT, GT] * 10), ("b", "c"): ([LT, EQ] * 20, [LT, LT] * 20)})
    settings = ProtocolSettings(budget=60, batch=5, seed=11, metrics=("metric",), error_control="none", futility=None)
    first = run_protocol(new_state(table, settings), replay_source(table))
    second = run_protocol(new_state(table, settings), replay_source(table))
    assert same_state(first, second)
    assert same_state(state_from_json(state_to_json(first), table), first)
    assert first.cost_used <= 60
