"""The question-level futility stop counts every decision a pair can still reach (method.md §13,
"Stopping the question"): with a margin, the chance that the pair is shown equivalent too."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from prefeval_core.protocol import question_control
from prefeval_core.protocol.run import replay_source, run_protocol
from prefeval_core.protocol.settings import ProtocolSettings, Question
from prefeval_core.protocol.simulation import tied_top_study
from prefeval_core.protocol.state import ProtocolState, new_state
from prefeval_core.protocol.table import build_study_table
from prefeval_core.sequential.betting import PairSequences
from prefeval_core.sequential.pool_clt import clt_pool_evidence


def test_a_pair_heading_to_equivalence_keeps_its_chance() -> None:
    # differences around 0 with a spread of about 1.3 on a 1-5 scale: no direction will be shown, but
    # both margins of δ = 0.5 will be, not yet after 50 of 200 items
    d = np.full((1, 200), np.nan)
    d[0, :50] = np.tile([2.0, -2.0, 1.0, -1.0, 0.0], 10)
    evidence = clt_pool_evidence(PairSequences(d=d, pool=np.array([200]), bound=np.array([4.0])), np.ones(d.shape, dtype=bool), delta=0.5)
    assert evidence.margins is not None
    left, goal = np.array([150]), np.full(1, float(np.log(2 * 10 / 0.05)))  # the partition's 2P / γ, P = 10 (P / γ for equivalence)
    directions = [
        question_control._predictive(n.z, n.observed, evidence.current[:, side], left, goal) for side, n in enumerate(evidence.nulls)
    ]
    margins = [
        question_control._predictive(n.z, n.observed, evidence.equivalence[:, side], left, goal - np.log(2.0))
        for side, n in enumerate(evidence.margins)
    ]
    assert np.all(evidence.equivalence < goal[0] - np.log(2.0))  # not equivalent yet
    assert max(directions[0][0], directions[1][0]) < 0.05
    assert min(margins[0][0], margins[1][0]) > 0.5


@pytest.mark.parametrize("statistic", ["pool_mean", "pool_mean_clt"])
def test_a_run_is_not_stopped_while_its_pairs_head_to_equivalence(monkeypatch: pytest.MonkeyPatch, statistic: str) -> None:
    # Four exactly tied systems, all-pairs with δ = 0.5: every pair ends equivalent. Counting only the
    # chance of a direction (the equivalence processes hidden from the stop) ended the run with half
    # of them undecided.
    def run() -> ProtocolState:
        table = build_study_table(tied_top_study(4, 4, 100, seed=0), "human")
        settings = ProtocolSettings(
            budget=table.cost_available(), batch=10, model="human_only", seed=0, question=Question(), unit="ratings",
            error_control="question", statistic=statistic, futility=0.05, delta=0.5,  # type: ignore[arg-type]
        )  # fmt: skip
        return run_protocol(new_state(table, settings), replay_source(table))

    counted = run()
    assert counted.status.equivalent.all()
    evidence = question_control.pair_evidence

    def without_margins(state: ProtocolState) -> question_control.PairEvidence:
        found = evidence(state)
        assert found.evidence is not None
        return dataclasses.replace(found, evidence=dataclasses.replace(found.evidence, margins=None))

    monkeypatch.setattr(question_control, "pair_evidence", without_margins)
    directions_only = run()
    assert directions_only.status.equivalent.sum() < counted.status.equivalent.sum()
    assert directions_only.cost_used < counted.cost_used
