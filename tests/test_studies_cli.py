"""``studies``: the CLI lists, shows and steps the studies the dashboard records (one store, one layer)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prefeval_core.cli import main
from prefeval_core.session import DataChoice
from prefeval_core.store import open_store
from prefeval_core.workflow import StudySetup
from prefeval_core.workflow.studies import begin_study


def test_list_show_and_step_a_replay_study(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PREFEVAL_DATA_DIR", str(tmp_path))
    choice = DataChoice.sample("wmt21_ted")
    setup = StudySetup("human", unit="comparisons", batch=20)
    study = begin_study(open_store(tmp_path), choice, choice.load(), setup, "TED check")
    assert main(["studies", "--json"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)
    assert (listed["id"], listed["name"], listed["dataset"], listed["rounds"]) == (study.id, "TED check", "sample:wmt21_ted", 0)
    assert main(["studies", "step", str(study.id), "--json"]) == 0
    stepped = json.loads(capsys.readouterr().out)
    assert stepped["round"] == 1 and stepped["cost_used"] == 91 * 20  # 91 pairs, 20 comparisons each
    assert main(["studies", "show", str(study.id), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["round"] == 1  # recorded: a new process sees the step
    assert main(["studies", "show", "999"]) == 1  # no such study: a one-line error
    assert "999" in capsys.readouterr().err
