"""``prefeval requests export|import``: a study's open request as a blind file, filled in by
annotators who see only the texts, back into the store; ``studies step`` decides with it."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from prefeval_core.cli import main
from prefeval_core.store import open_store
from prefeval_core.workflow.session import DataChoice
from prefeval_core.workflow.setup import StudySetup
from prefeval_core.workflow.studies import begin_study

SYSTEMS = ("good", "middle", "poor")
QUALITY = {"good": 3, "middle": 2, "poor": 1}


def study_data(items: int = 30) -> DataChoice:
    texts = "".join(f"i{k:02d},{s},quality {QUALITY[s]} text {k}\n" for k in range(items) for s in SYSTEMS)
    ratings = "".join(f"i{k:02d},{s},human,{2 + QUALITY[s]}\n" for k in range(3) for s in SYSTEMS)
    files = (
        ("texts.csv", ("item_id,system,output\n" + texts).encode()),
        ("ratings.csv", ("item_id,system,rater,score\n" + ratings).encode()),
    )
    return DataChoice("upload", "requests-cli", files)


def quality(text: str) -> int:
    return int(text.split()[1])


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PREFEVAL_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("PREFEVAL_DATABASE_URL", raising=False)
    return tmp_path


def begin(data_dir: Path, unit: str) -> int:
    data = study_data()
    setup = StudySetup(human="human", unit=unit, mode="live", budget=200, batch=10)  # type: ignore[arg-type]
    return begin_study(open_store(data_dir), data, data.load(), setup).id


def test_a_comparison_request_goes_out_blind_and_comes_back_as_the_studys_judgments(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = begin(data_dir, "comparisons")
    out = data_dir / "round1.csv"
    assert main(["requests", "export", str(study), "--out", str(out), "--seed", "4", "--json"]) == 0
    exported = json.loads(capsys.readouterr().out)
    assert (exported["tasks"], exported["unit"], exported["file"]) == (30, "comparisons", str(out))
    assert "leave `request_id`, the texts and `digest` as exported" in exported["instructions"]
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert len(rows) == 30 and not any(s in out.read_text() for s in SYSTEMS)
    for row in rows:  # the annotator reads the texts only
        row["label"] = ">" if quality(row["output_a"]) > quality(row["output_b"]) else "<"
    filled = data_dir / "filled.csv"
    with filled.open("w", newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    assert main(["requests", "import", str(study), str(filled), "--annotator", "kim", "--json"]) == 0
    imported = json.loads(capsys.readouterr().out)
    assert (imported["judgments"], imported["added"], imported["already_there"]) == (30, 30, 0)
    assert main(["requests", "import", str(study), str(filled), "--annotator", "kim"]) == 0
    assert f"study #{study}: 30 judgments in filled.csv; 0 new, 30 already stored" in capsys.readouterr().out
    stored = open_store(data_dir).comparisons(study_data().key, study_id=study)
    assert {c.annotator for c in stored} == {"kim"}
    assert all(c.outcome == (0 if QUALITY[c.system_a] > QUALITY[c.system_b] else 2) for c in stored)
    assert main(["studies", "step", str(study), "--json"]) == 0
    stepped = json.loads(capsys.readouterr().out)
    assert stepped["round"] == 1 and stepped["cost_used"] == 30
    changed = data_dir / "changed.csv"
    with changed.open("w", newline="") as stream:  # kim answers the first request again, the other way round
        writer = csv.DictWriter(stream, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows([*rows, {**rows[0], "label": "<" if rows[0]["label"] == ">" else ">"}])
    assert main(["requests", "import", str(study), str(changed), "--annotator", "kim"]) == 1
    assert "changed.csv, row 31 (line 32), column 'label': a different answer to the request of row 1" in capsys.readouterr().err
    assert main(["requests", "import", str(study), str(changed), "--annotator", "kim", "--latest-wins", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["judgments"] == 30


def test_a_rating_request_as_jsonl(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    study = begin(data_dir, "ratings")
    out = data_dir / "round1.jsonl"
    assert main(["requests", "export", str(study), "--out", str(out)]) == 0
    assert "fill the `score` column (" in capsys.readouterr().out
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows and set(rows[0]) == {"request_id", "item_id", "source", "output", "score", "annotator", "digest"}
    filled = data_dir / "filled.jsonl"
    filled.write_text("".join(json.dumps(row | {"score": 2 + quality(row["output"])}) + "\n" for row in rows))
    assert main(["requests", "import", str(study), str(filled), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["added"] == len(rows)
    ratings = open_store(data_dir).ratings(study_data().key, study_id=study)
    assert len(ratings) == len(rows) and all(r.score == 2 + QUALITY[r.system] for r in ratings)


def test_bad_files_are_one_line_errors(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    study = begin(data_dir, "comparisons")
    assert main(["requests", "export", str(study), "--out", str(data_dir / "round1.xlsx")]) == 1
    assert "round1.xlsx: write the requests as .csv or .jsonl, not '.xlsx'" in capsys.readouterr().err
    assert main(["requests", "import", str(study), str(data_dir / "missing.csv")]) == 1
    assert "missing.csv: cannot read the file (No such file or directory)" in capsys.readouterr().err
    (data_dir / "tampered.csv").write_text("request_id,left,item_id,label\n" + "0" * 32 + ",first,i00,>\n")
    assert main(["requests", "import", str(study), str(data_dir / "tampered.csv")]) == 1
    err = capsys.readouterr().err
    assert "tampered.csv, row 1 (line 2), column 'request_id'" in err and "not one of a comparison of item 'i00'" in err


def test_imported_judgments_carry_the_studys_criterion(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from prefeval_core.protocol import next_request
    from prefeval_core.workflow.judgments import import_judged_requests
    from prefeval_core.workflow.labelstudio import import_label_studio_export, label_studio_project
    from prefeval_core.workflow.studies import resume_study
    from tests.labelstudio_fixtures import Answer, choice, label_studio_export

    data, store = study_data(), open_store(data_dir)
    setup = StudySetup(human="human", unit="comparisons", mode="live", budget=200, batch=10)
    study = begin_study(store, data, data.load(), setup, criterion="relevance").id
    out = data_dir / "round1.csv"
    assert main(["requests", "export", str(study), "--out", str(out)]) == 0
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    filled = io.StringIO()
    writer = csv.DictWriter(filled, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows([{**row, "label": ">"} for row in rows[:5]])
    (data_dir / "filled.csv").write_text(filled.getvalue())
    assert main(["requests", "import", str(study), str(data_dir / "filled.csv"), "--annotator", "kim"]) == 0  # the CLI
    dataset = data.load()
    imported = import_judged_requests(  # the Annotate page's "As files"
        store, "filled.csv", filled.getvalue().encode(), data.key, systems=dataset.systems, scale=None, annotator="lee", study_id=study
    )
    assert imported.added == 5
    tasks = next_request(resume_study(store, study, dataset).state).tasks[:3]
    project = label_studio_project(store, tasks, dataset, data.key, None, study_id=study, seed=0, criterion="relevance")
    export = label_studio_export(json.loads(project.tasks_json()), lambda task: [Answer(choice("Equal"), user=9)])
    stored = import_label_studio_export(store, "export.json", export, data.key, systems=dataset.systems, study_id=study, scale=None)
    assert stored.stored.added == 3
    judged = open_store(data_dir).comparisons(data.key, study_id=study)
    assert len(judged) == 13 and {c.origin for c in judged} == {"import"}
    assert {c.criterion for c in judged} == {"relevance"}, sorted({(c.annotator, c.criterion) for c in judged})
    exported = list(csv.DictReader(io.StringIO(store.export("csv", data.key, study_id=study).decode())))
    assert {(r["annotator"], r["origin"], r["criterion"]) for r in exported} == {
        ("kim", "import", "relevance"),
        ("lee", "import", "relevance"),
        ("labelstudio:9", "import", "relevance"),
    }
