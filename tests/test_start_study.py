"""Starting a live study outside the dashboard: ``prefeval studies start`` and ``pe.start_study``
write the record the Protocol page writes (live, criterion, first request open)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import prefeval_core as pe
from prefeval_core.cli import main
from prefeval_core.errors import SettingsError
from prefeval_core.store import open_store
from prefeval_core.workflow.studies import study_details

TEXTS = "item_id,system,output\n" + "".join(f"i{k},{s},{s} answer {k}\n" for k in range(6) for s in ("a", "b", "c"))
RATINGS = "item_id,system,rater,score\n" + "".join(f"i{k},{s},human:fluency,{k % 5 + 1}\n" for k in range(6) for s in ("a", "b", "c"))


def test_the_cli_starts_a_live_study_on_a_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PREFEVAL_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("PREFEVAL_DATABASE_URL", raising=False)
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "texts.csv").write_text(TEXTS)
    (folder / "ratings.csv").write_text(RATINGS)
    (folder / "notes.md").write_text("not a table")
    argv = [
        "studies",
        "start",
        "--data",
        str(folder),
        "--human",
        "human:fluency",
        "--batch",
        "2",
        "--per-item",
        "2",
        "--budget",
        "20",
        "--json",
    ]
    assert main(argv) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["round"] == 0 and shown["requested"] > 0 and shown["setup"]["mode"] == "live"
    store = open_store(tmp_path)
    assert study_details(store, shown["id"]).criterion == "fluency" and store.study(shown["id"]).judgments_per_item == 2
    (folder / "texts.csv").unlink()  # the study keeps its data
    assert main(["studies", "show", str(shown["id"]), "--json"]) == 0


def test_the_api_starts_a_live_study_and_returns_its_id(tmp_path: Path) -> None:
    study = pe.start_study(
        "sample:summeval", "human:relevance", "rougeL", budget=50, batch=2, criterion="relevance of the summary", store=tmp_path
    )
    view = pe.resume(study, store=tmp_path)
    assert view.study.setup.mode == "live" and view.study.criterion == "relevance of the summary"
    with pytest.raises(SettingsError, match="unknown study option"):
        pe.start_study("sample:summeval", "human:relevance", store=tmp_path, colour="red")
    with pytest.raises(SettingsError, match="give it alone"):
        pe.start_study(["sample:summeval", "x.csv"], "human:relevance", budget=50, store=tmp_path)
