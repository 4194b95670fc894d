"""``studies``: the CLI lists, shows and steps the studies the dashboard records (one store, one layer)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prefeval_core.cli import main
from prefeval_core.protocol.settings import Question
from prefeval_core.store import open_store
from prefeval_core.workflow import StudySetup
from prefeval_core.workflow.session import DataChoice
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
    top = begin_study(open_store(tmp_path), choice, choice.load(), setup.with_(question=Question("top-k", 1)), "TED best")
    assert main(["studies", "step", str(top.id)]) == 0  # a tier question says how many systems are ruled out
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1].startswith("0 of 91 pairs decided; ") and " of 14 systems ruled out; " in lines[-1]
    judged = begin_study(open_store(tmp_path), choice, choice.load(), setup.with_(metrics=("chrF",)), "TED with a judge")
    assert main(["studies", "show", str(judged.id)]) == 0  # a study with a judge says how it enters the decisions
    assert capsys.readouterr().out.splitlines()[-1].startswith("the judge (chrF): under question error control")
    assert main(["studies", "show", str(judged.id), "--json"]) == 0
    assert "the judge does not enter" in json.loads(capsys.readouterr().out)["judge_role"]
    assert main(["studies", "show", "999"]) == 1  # no such study: a one-line error
    assert "999" in capsys.readouterr().err


def test_agreement_of_a_live_studys_annotators(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from prefeval_core.annotation.agreement import comparison_agreement
    from prefeval_core.annotation.left_right import left_right, make_comparison
    from prefeval_core.annotation.position_bias import position_bias
    from tests.test_requests_cli import study_data

    monkeypatch.setenv("PREFEVAL_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("PREFEVAL_DATABASE_URL", raising=False)
    data = study_data()
    store = open_store(tmp_path)
    study = begin_study(store, data, data.load(), StudySetup(human="human", unit="comparisons", mode="live", budget=200, batch=10))
    assert main(["studies", "agreement", str(study.id), "--json"]) == 0
    empty = json.loads(capsys.readouterr().out)
    assert empty == {"study": study.id, "metric": None, "comparisons": None, "ratings": None, "position_bias": []}
    judgments = []
    for k in range(20):
        item = f"i{k:02d}"
        for a, b in (("good", "middle"), ("middle", "poor")):
            left, _ = left_right(0, data.key, item, a, b)
            judgments.append(make_comparison(data.key, item, a, b, "left" if left == a else "right", "kim", left, study_id=study.id))
            judgments.append(make_comparison(data.key, item, a, b, "left", "lee", left, study_id=study.id))  # always the left one
    store.add_many(judgments)
    assert main(["studies", "agreement", str(study.id), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    expected = comparison_agreement(judgments)
    assert shown["comparisons"]["alpha"] == pytest.approx(expected.alpha) and shown["ratings"] is None
    assert [a["annotator"] for a in shown["comparisons"]["per_annotator"]] == ["kim", "lee"]
    sides = {s["annotator"]: s for s in shown["position_bias"]}
    assert sides["lee"]["left_share"] == 1.0 and sides["lee"]["p_value"] == pytest.approx(position_bias(judgments)[1].p_value)
    assert main(["studies", "agreement", str(study.id)]) == 0
    text = capsys.readouterr().out
    assert f"study #{study.id}, agreement on comparisons" in text and "lee: the left output won 40 of 40 decisive comparisons" in text


def test_report_of_a_stored_study(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PREFEVAL_DATA_DIR", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    choice = DataChoice.sample("summeval")
    setup = StudySetup("human:relevance", question=Question("top-k", 1))
    study = begin_study(open_store(tmp_path), choice, choice.load(), setup, "Summaries <b>best</b>")
    assert main(["studies", "step", str(study.id), "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)["answer"]
    assert main(["studies", "report", str(study.id), "--json"]) == 0
    written = Path(json.loads(capsys.readouterr().out)["file"])
    assert written == Path(f"study-{study.id}.html")
    html = written.read_text(encoding="utf-8")
    assert answer in html and "Summaries &lt;b&gt;best&lt;/b&gt;" in html and "<b>best</b>" not in html  # the name escaped
    assert main(["studies", "report", str(study.id), "--out", str(tmp_path / "missing" / "r.html")]) == 1
    assert "cannot write the file" in capsys.readouterr().err
