"""Question kinds and error controls through their registries alone: a kind registered in a fixture
runs a replay end to end, is saved and restored; saved states of earlier versions still load; the
saved state and the protocol's settings accept what the registries hold."""

from __future__ import annotations

import json
from typing import Any

import pytest

from prefeval_core.cli import main
from prefeval_core.errors import SettingsError
from prefeval_core.protocol import (
    ERROR_CONTROL_RULES,
    ErrorControlRule,
    ProtocolSettings,
    Question,
    new_state,
    protocol_result,
    replay_source,
    run_protocol,
    state_from_json,
    state_to_json,
)
from prefeval_core.workflow.answers import answer_words, status_words, study_leaderboard
from tests.protocol_fixtures import comparison_table, same_state
from tests.toy_question import toy_question  # noqa: F401

GT, EQ, LT = 0, 1, 2
TABLE_PAIRS = {("a", "b"): ([GT] * 6, None), ("a", "c"): ([GT, EQ] * 3, None), ("b", "c"): ([LT, EQ, GT] * 2, None)}

SAVED_BEFORE = [
    # state_to_json as the code before the question kinds' registry wrote it (top-k with spending; baseline with question control)
    '{"format":2,"table":"783ff5d86e7f5284","settings":{"budget":12,"batch":3,"gamma":0.05,"model":"human_only","mu":null,'
    '"sampler":"fast","policy":"paper","seed":1,"human":null,"metrics":[],"eps_human":0.0,"eps_metric":0.0,'
    '"question":{"kind":"top-k","k":1,"baselines":[]},"unit":"comparisons","error_control":"spending","futility":0.05,'
    '"max_rounds":null,"statistic":"sign","delta":null,"metric":null},"round":1,"reveals":[[0,0.0,1,1],[2,0.0,1,1],[4,0.0,1,1],'
    '[8,0.0,1,1],[9,1.0,1,1],[11,1.0,1,1],[13,1.0,1,1],[16,1.0,1,1],[17,0.0,1,1]],"records":[{"round":1,"pairs":[0,1,2],'
    '"theta":[0.9375,0.75,0.75],"decision":[1,1,1],"p_mean":[[0.6666666666666666,0.16666666666666666,0.16666666666666666],'
    "[0.3333333333333333,0.5,0.16666666666666666],[0.3333333333333333,0.5,0.16666666666666666]],"
    '"log_evidence":[[null,null],[null,null],[null,null]],"log_numerator":[[0.0,0.0],[0.0,0.0],[0.0,0.0]],'
    '"futile":[false,false,false],"members":[true,true,true],"cost":9}]}',
    '{"format":2,"table":"783ff5d86e7f5284","settings":{"budget":12,"batch":3,"gamma":0.05,"model":"human_only","mu":null,'
    '"sampler":"fast","policy":"paper","seed":1,"human":null,"metrics":[],"eps_human":0.0,"eps_metric":0.0,'
    '"question":{"kind":"baseline","k":1,"baselines":["c"]},"unit":"comparisons","error_control":"question","futility":null,'
    '"max_rounds":null,"statistic":"sign","delta":null,"metric":null},"round":1,"reveals":[[8,0.0,1,1],[9,1.0,1,1],[11,1.0,1,1],'
    '[13,1.0,1,1],[16,1.0,1,1],[17,0.0,1,1]],"records":[{"round":1,"pairs":[1,2],"theta":[0.75,0.75],"decision":[1,1],'
    '"p_mean":[[0.3333333333333333,0.5,0.16666666666666666],[0.3333333333333333,0.5,0.16666666666666666]],'
    '"log_evidence":[[0.1622863966657716,-0.19382391845045022],[0.1622863966657716,-0.19382391845045022]],'
    '"log_numerator":[[0.0,0.0],[0.0,0.0]],"futile":[false,false],"equivalent":[false,false],"members":[true,true,true],"cost":6}]}',
    # the earliest settings of format 2: no question, error control, round limit, statistic or margin yet
    '{"format":2,"table":"783ff5d86e7f5284","settings":{"budget":12,"batch":3,"gamma":0.05,"model":"human_only","mu":null,'
    '"sampler":"fast","policy":"paper","seed":1,"human":null,"metric":null,"eps_human":0.0,"eps_metric":0.0,"unit":"comparisons"},'
    '"round":0,"reveals":[],"records":[]}',
]


def settings(question: Question, **kw: Any) -> ProtocolSettings:
    kw = {"error_control": "none", "futility": None, **kw}
    return ProtocolSettings(budget=12, batch=3, model="human_only", seed=1, question=question, **kw)


@pytest.mark.parametrize("saved", SAVED_BEFORE)
def test_a_state_saved_before_still_loads(saved: str) -> None:
    table = comparison_table(TABLE_PAIRS, metric=None)
    state = state_from_json(saved, table)
    written = json.loads(state_to_json(state))
    assert all(written["settings"][name] == value for name, value in json.loads(saved)["settings"].items())
    assert written["reveals"] == json.loads(saved)["reveals"]
    run_protocol(state, replay_source(table))  # and it goes on


def test_the_saved_state_checks_kinds_and_rules_against_the_registries() -> None:
    saved = json.loads(SAVED_BEFORE[0])
    table = comparison_table(TABLE_PAIRS, metric=None)
    saved["settings"]["question"]["kind"] = "toy"
    with pytest.raises(SettingsError, match=r"settings\.question\.kind: Input should be 'all-pairs' or 'top-k' or 'baseline', got 'toy'"):
        state_from_json(json.dumps(saved), table)
    saved["settings"]["question"]["kind"] = "top-k"
    saved["settings"]["error_control"] = "toy"
    with pytest.raises(SettingsError, match=r"settings\.error_control: Input should be 'spending' or 'anytime'"):
        state_from_json(json.dumps(saved), table)


def test_a_registered_error_control_is_accepted_by_the_settings_and_the_saved_state(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SettingsError, match="unknown error_control 'toy'"):
        settings(Question(), error_control="toy")
    none = ERROR_CONTROL_RULES["none"]
    rule = ErrorControlRule("toy", "a toy rule", "a toy rule, in words", per_pair=True, futility=True, decide=none.decide)
    monkeypatch.setitem(ERROR_CONTROL_RULES, "toy", rule)
    table = comparison_table(TABLE_PAIRS, metric=None)
    state = run_protocol(new_state(table, settings(Question(), error_control="toy")), replay_source(table))
    assert state_from_json(state_to_json(state), table).settings.error_control == "toy"


@pytest.mark.usefixtures("toy_question")
def test_a_registered_question_runs_is_saved_and_restored() -> None:
    table = comparison_table(TABLE_PAIRS, metric=None)
    toy = Question("toy")  # type: ignore[arg-type]  # a kind only the registry knows
    state = run_protocol(new_state(table, settings(toy)), replay_source(table), max_rounds=1)
    restored = state_from_json(state_to_json(state), table)
    assert same_state(restored, state) and restored.settings.question == toy
    state = run_protocol(restored, replay_source(table))
    result = protocol_result(state)
    assert result.pairs == (("a", "b"), ("a", "c"))  # the toy kind's pairs: those of the first system
    assert answer_words(state).startswith("Toy answer: ") and result.answer is not None and result.top_k is None
    assert study_leaderboard(state, draws=10).status == ("toy",) * 3 and status_words("toy") == "Status: toy."


@pytest.mark.usefixtures("toy_question")
def test_a_registered_question_replays_from_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["replay", "--data", "sample:pandalm", "--human", "human", "--question", "toy", "--budget", "150", "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    summary = out["summary"]
    first = min(p["system_a"] for p in out["pairs"])
    assert all(first in (p["system_a"], p["system_b"]) for p in out["pairs"])
    assert summary["question"] == "toy" and summary["answer_words"].startswith("Toy answer: ")
    assert isinstance(summary["toy_agree"], int) and {row["status"] for row in summary["leaderboard"]} == {"toy"}
    assert "k" not in summary and "exact_match" not in summary
