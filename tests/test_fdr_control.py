"""Error control ``fdr`` (method.md §13): e-BH exact cases, the stopped e-values it uses, the
settings that refuse it, and the false discovery rate on simulated all-pairs studies with true ties
and real differences."""

from __future__ import annotations

import argparse
import math

import numpy as np
import pytest

import prefeval_core.api as pe
from prefeval_core.cli import build_parser
from prefeval_core.errors import SettingsError
from prefeval_core.protocol import ERROR_CONTROL_RULES
from prefeval_core.protocol.fdr_control import ebh_directions, ebh_rejections, stopped_log_e
from prefeval_core.protocol.run import replay_source, run_protocol
from prefeval_core.protocol.settings import ProtocolSettings, Question
from prefeval_core.protocol.simulation import HUMAN, simulate_discoveries, tied_top_study
from prefeval_core.protocol.state import new_state
from prefeval_core.protocol.table import build_study_table
from prefeval_core.vocabulary.outcomes import BETTER, TIE, WORSE
from prefeval_core.workflow.setup import setup_fields
from prefeval_core.workflow.views import decision_paths


def test_ebh_exact_case() -> None:
    # m = 5 nulls, gamma = 0.1: thresholds m / (gamma k) = 50, 25, 16.7, 12.5, 10. Sorted e-values
    # 60, 30, 14, 11, 0.5: k = 1 and 2 pass, k = 3 (14 < 16.7) fails, k = 4 (11 < 12.5) fails:
    # k* = 2, the set is the two e-values >= 25.
    e = np.array([14.0, 60.0, 0.5, 30.0, 11.0])
    family = np.ones(5, dtype=bool)
    assert ebh_rejections(np.log(e), family, 0.1).tolist() == [False, True, False, True, False]
    # 14 -> 17: now k = 3 passes (17 >= 16.7) and the set grows to three.
    e[0] = 17.0
    assert ebh_rejections(np.log(e), family, 0.1).tolist() == [True, True, False, True, False]
    # e-BH passes where the step-up reaches further than the first step: 5 e-values of 11 all
    # pass at k = 5 (11 >= 10) although none reaches 50.
    assert ebh_rejections(np.log(np.full(5, 11.0)), family, 0.1).all()
    # Outside the family nothing is rejected and m counts the family only.
    outside = np.array([True, True, False, True, True])
    assert ebh_rejections(np.log(e), outside, 0.1).tolist() == [True, True, False, True, True]  # m = 4: 40, 20, 13.3, 10


def test_ebh_directions_and_stopped_values() -> None:
    gamma = 0.1
    # Three pairs, m = 6: thresholds 60, 30, 20, 15, 12, 10. Pair 0 was decided ">" with a frozen
    # e-value of 70; its current value (5) no longer counts. Pair 1: 35 against "B not better"
    # decides "<" as the 2nd rejection. Pair 2: 19 and 18 on its two sides: only the larger side
    # counts, and 19 < 20 stops e-BH at k = 2 (with both sides, 18 >= 15 would reject both at k = 4).
    current = np.log(np.array([[5.0, 1.0], [0.5, 35.0], [19.0, 18.0]]))
    frozen = np.log(np.array([[70.0, 0.2], [np.nan, np.nan], [np.nan, np.nan]]))
    decisions = np.array([BETTER, TIE, TIE], dtype=np.int8)
    log_e = stopped_log_e(current, frozen, decisions, np.zeros(3, dtype=bool))
    np.testing.assert_allclose(np.exp(log_e), [[70.0, 0.0], [0.0, 35.0], [19.0, 0.0]])
    assert ebh_directions(log_e, np.ones(3, dtype=bool), decisions, gamma).tolist() == [BETTER, WORSE, TIE]
    # With pair 2 at 21 against 1, k = 3 passes (21 >= 20): all three decided.
    current[2] = np.log([21.0, 1.0])
    log_e = stopped_log_e(current, frozen, decisions, np.zeros(3, dtype=bool))
    assert ebh_directions(log_e, np.ones(3, dtype=bool), decisions, gamma).tolist() == [BETTER, WORSE, BETTER]
    # An equivalent pair enters with e-values 0.
    log_e = stopped_log_e(current, frozen, decisions, np.array([False, False, True]))
    assert np.isneginf(log_e[2]).all()


def test_fdr_is_registered_and_refused_for_top_k() -> None:
    assert not ERROR_CONTROL_RULES["fdr"].per_pair
    with pytest.raises(SettingsError, match="false discovery rate") as raised:
        ProtocolSettings(budget=10, model="human_only", question=Question("top-k", 1), error_control="fdr", futility=None)
    assert raised.value.problems[0].column == "error_control"
    for statistic in ("sign", "mean"):
        ProtocolSettings(budget=10, model="human_only", statistic=statistic, error_control="fdr", futility=0.05)


def test_fdr_is_offered_by_the_cli_and_the_form_and_runs_through_the_door() -> None:
    subparsers = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    control = next(a for a in subparsers.choices["replay"]._actions if "--error-control" in a.option_strings)
    assert "fdr" in (control.choices or ())
    assert "fdr" in setup_fields()["error_control"].setting.words()
    run = pe.replay(pe.load_sample("summeval"), "human:relevance", error_control="fdr", statistic="mean", futility=0.05, budget=900)
    state = run.run.state
    assert state.settings.error_control == "fdr" and (state.decisions != TIE).any()
    found = decision_paths(state)
    assert found.lower is None and found.upper is None and found.paths  # the e-BH threshold moves with the other pairs


@pytest.mark.parametrize("statistic", ["sign", "mean"])
def test_decisions_kept_across_looks_are_the_last_ebh_set(statistic: str) -> None:
    # Every pair decided at some round is in the e-BH set of the last round's stopped e-values
    # (module docstring): replaying the last look on the recorded values gives the same decisions.
    table = build_study_table(tied_top_study(6, 2, 80, gap=0.6, seed=5), HUMAN)
    settings = ProtocolSettings(
        budget=table.cost_available(), batch=5, model="human_only", seed=5, unit="ratings",
        error_control="fdr", statistic=statistic, futility=0.05,  # type: ignore[arg-type]
    )  # fmt: skip
    state = run_protocol(new_state(table, settings), replay_source(table))
    status = state.status
    assert (status.decision != TIE).sum() >= 3
    log_e = stopped_log_e(status.log_evidence, status.log_evidence, status.decision, status.equivalent)
    last = ebh_directions(log_e, np.ones(table.n_pairs, dtype=bool), np.full(table.n_pairs, TIE, dtype=np.int8), settings.gamma)
    assert last.tolist() == status.decision.tolist()


@pytest.mark.slow
@pytest.mark.parametrize("statistic", ["mean", "sign"])
def test_fdr_holds_with_true_ties_and_real_differences(statistic: str) -> None:
    # Six systems: two tied at the top, four tied 0.5 lower (7 tied pairs, 8 real differences).
    # The FDR stays <= gamma + 2 Monte-Carlo s.e.; the full cell (>= 1,000 runs, against Holm) is
    # bench/bench_question_control.py.
    runs = 200
    result = simulate_discoveries(n_systems=6, n_tied=2, n_items=40, gap=0.5, statistic=statistic, runs=runs, batch=10, gamma=0.1, seed=700)
    assert result.fdr <= 0.1 + 2 * max(result.fdr_standard_error, math.sqrt(0.1 * 0.9 / runs))
    assert result.power > 0.0
