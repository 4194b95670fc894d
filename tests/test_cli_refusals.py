"""What an outside audit of the command line found (2026-11-29), each as the case that showed it:
a question that needs no judgment, a file to write into a folder that does not exist, a store
changed by other means, an export's file given as FILE, a system no human judged, a score typed
wrong, a name of megabytes. Every one is a one-line message, never a traceback or a silent change."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from prefeval_core.cli import main
from prefeval_core.cli._terminal import MAX_LINE
from prefeval_core.data.limits import MAX_SCORE
from tests.test_requests_cli import begin, data_dir, quality  # noqa: F401  (data_dir is a fixture)

SAMPLE = str(Path(__file__).resolve().parents[1] / "sample_data" / "summeval")


def relevance_csv(path: Path, *, change: dict[int, str] | None = None, extra: str = "") -> Path:
    """The bundled SummEval sample's human relevance ratings as one long file, row ``k`` of the
    data given the score ``change[k]`` (a typing error), ``extra`` rows appended."""
    import prefeval_core as pe

    ratings = pe.load_sample("summeval").ratings
    rows = ratings[ratings["rater"] == "human:relevance"].reset_index(drop=True)
    lines = [f"{r.item_id},{r.system},human:relevance,{r.score:g}" for r in rows.itertuples()]
    for k, score in (change or {}).items():
        item, system, rater, _ = lines[k].split(",")
        lines[k] = f"{item},{system},{rater},{score}"
    path.write_text("item_id,system,rater,score\n" + "\n".join(lines) + "\n" + extra)
    return path


def test_top_k_for_every_system_is_a_usage_message(capsys: pytest.CaptureFixture[str]) -> None:
    for k in ("16", "17"):  # the sample has 16 systems
        assert main(["replay", "--data", SAMPLE, "--human", "human:relevance", "--question", "top-k", "--k", k]) == 1
        assert "k must be smaller than the number of systems (16)" in capsys.readouterr().err
    assert main(["replay", "--data", SAMPLE, "--human", "human:relevance", "--question", "top-k", "--k", "15", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["summary"]["k"] == 15


def test_a_report_into_a_missing_folder_is_refused_before_the_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "no such folder" / "report.html"
    assert main(["diagnose", "--data", SAMPLE, "--human", "human:relevance", "--metric", "rougeL", "--html", str(target)]) == 1
    assert "cannot write the file (no folder" in capsys.readouterr().err and not target.parent.exists()
    texts = tmp_path / "texts.csv"
    texts.write_text("item_id,system,output\ni1,A,a cat\n")
    assert main(["metrics", "--texts", str(texts), "--metrics", "bleu", "--out", str(target)]) == 1
    assert "cannot write the file (no folder" in capsys.readouterr().err
    assert main(["metrics", "--texts", str(texts), "--metrics", "bleu", "--out", str(tmp_path / "m.csv")]) == 1
    assert "texts.csv: nothing to compare the outputs with: give a references file (--references)" in capsys.readouterr().err
    references = tmp_path / "references.csv"
    references.write_text("item_id,reference\ni1,a cat\n")
    texts.write_text("item_id,system,output\ni1,A,a cat\ni2,A,a dog\ni3,B,a cow\n")
    assert (
        main(["metrics", "--texts", str(texts), "--references", str(references), "--metrics", "bleu", "--out", str(tmp_path / "m.csv")])
        == 0
    )
    assert "2 outputs have nothing to compare with and get no rating (items i2, i3)" in capsys.readouterr().err


def test_a_typed_wrong_score_is_flagged_and_an_absurd_one_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    typo = relevance_csv(tmp_path / "typo.csv", change={0: "50"})  # 50 for 5.0 on a 1-5 scale
    assert main(["validate", str(typo), "--human", "human:relevance"]) == 0
    out = capsys.readouterr().out
    assert "has 1 score(s) far outside the rest (e.g. 50 for system" in out and "0 errors, 1 warnings" in out
    assert main(["replay", "--data", str(typo), "--human", "human:relevance", "--question", "top-k"]) == 0
    assert "far outside the rest" in capsys.readouterr().err  # a run shows the data's warnings too
    clean = relevance_csv(tmp_path / "clean.csv")
    assert main(["validate", str(clean), "--human", "human:relevance"]) == 0
    assert "0 errors, 0 warnings" in capsys.readouterr().out
    huge = relevance_csv(tmp_path / "huge.csv", change={3: "1e308"})
    assert main(["validate", str(huge)]) == 1
    assert f"row 4 (line 5), column 'score': expected a score of at most {MAX_SCORE:g} in size, found '1e308'" in capsys.readouterr().out


def test_a_system_no_human_judged_is_named_not_dropped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = relevance_csv(tmp_path / "ratings.csv", extra="i-extra,ZZZ,rougeL,0.5\n")
    assert main(["replay", "--data", str(data), "--human", "human:relevance", "--question", "top-k"]) == 0
    assert "ZZZ: no judgment by human:relevance, so the study leaves it out" in capsys.readouterr().out


def test_a_megabyte_name_is_cut_in_messages(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = relevance_csv(tmp_path / "ratings.csv", extra=f"i-extra,{'S' * 1_000_000},human:relevance,3\n")
    assert main(["validate", str(data)]) == 0  # warnings that name the system: it shares no item with the others
    err = capsys.readouterr()
    longest = max(len(line) for line in (err.out + err.err).splitlines())
    assert longest < MAX_LINE + 100 and "(cut: " in err.out


def test_a_store_changed_by_other_means_is_refused(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    study = begin(data_dir, "ratings")
    request = data_dir / "round1.csv"
    assert main(["requests", "export", str(study), str(request)]) == 0  # FILE is the file to write, as --out
    capsys.readouterr()
    lines = request.read_text().splitlines()
    header = lines[0].split(",")
    score, output = header.index("score"), header.index("output")
    filled = [lines[0]]
    for line in lines[1:]:
        cells = line.split(",")
        cells[score] = str(2 + quality(cells[output]))
        filled.append(",".join(cells))
    (data_dir / "filled.csv").write_text("\n".join(filled) + "\n")
    assert main(["requests", "import", str(study), str(data_dir / "filled.csv"), "--annotator", "ann"]) == 0
    database = sqlite3.connect(data_dir / "annotations.sqlite")
    database.execute("update ratings set score = 1e308 where id = (select max(id) from ratings)")
    database.commit()
    capsys.readouterr()
    assert main(["studies", "step", str(study)]) == 1
    assert "the store holds 1 rating(s) far off its scale" in capsys.readouterr().err
    database.execute("update ratings set score = 3 where id = (select max(id) from ratings)")
    database.commit()
    assert main(["studies", "step", str(study)]) == 0
    (state_id, state_json) = database.execute("select id, state_json from study_states order by id desc limit 1").fetchone()
    state = json.loads(state_json)
    state["reveals"][0][1] = 1e300
    database.execute("update study_states set state_json = ? where id = ?", (json.dumps(state), state_id))
    (setup_json,) = database.execute("select setup_json from studies where id = ?", (study,)).fetchone()
    database.execute("update studies set setup_json = 'null' where id = ?", (study,))
    database.commit()
    capsys.readouterr()
    assert main(["studies", "show", str(study)]) == 1
    assert "its record is not a JSON object" in capsys.readouterr().err
    database.execute("update studies set setup_json = ? where id = ?", (setup_json, study))
    database.commit()
    assert main(["studies", "show", str(study)]) == 1
    assert "its saved state holds 1 rating(s) far off its scale" in capsys.readouterr().err


def test_an_export_takes_its_file_once(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    study = begin(data_dir, "ratings")
    assert main(["requests", "export", str(study), str(data_dir / "a.csv"), "--out", str(data_dir / "b.csv")]) == 2
    assert "give the file to write once" in capsys.readouterr().err
    assert main(["requests", "import", str(study)]) == 2
    assert main(["labelstudio", "export", str(study), "extra.json"]) == 2
    assert "takes no file" in capsys.readouterr().err


def test_a_kind_must_be_one_that_exists(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = relevance_csv(tmp_path / "ratings.csv")
    assert main(["describe", str(data), "--kind", "ratings.csv=bogus"]) == 1
    assert "--kind 'ratings.csv=bogus': expected FILE=KIND with KIND one of ratings, wide_ratings" in capsys.readouterr().err
    assert main(["describe", str(data), "--kind", "ratings.csv"]) == 1
    assert main(["describe", str(data), "--kind", "other.csv=ratings"]) == 0
    assert "warning: --kind other.csv: no file of that name was given" in capsys.readouterr().err


def test_validate_names_every_unknown_rater_and_takes_comma_lists(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", SAMPLE, "--human", "nope", "--metric", "nope2"]) == 1
    out = capsys.readouterr().out
    assert "no rater named 'nope' " in out and "no rater named 'nope2' " in out and "2 errors" in out
    assert main(["validate", SAMPLE, "--human", "human:relevance", "--metric", "rougeL,gpt-4-0314-rts:relevance"]) == 0


def test_reproduce_names_an_unknown_metric_before_any_run(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reproduce", "--data", SAMPLE, "--human", "human:relevance", "--metrics", "nope", "--seeds", "2"]) == 1
    captured = capsys.readouterr()
    assert "no rater named 'nope'" in captured.err and "human only" not in captured.err  # no run reported its progress


def test_a_human_rater_is_not_checked_as_its_own_metric(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diagnose", "--data", SAMPLE, "--human", "human:relevance", "--metric", "human:relevance"]) == 1
    assert "cannot also be the metric checked against it" in capsys.readouterr().err


def test_an_option_the_question_does_not_use_is_said_to_be_ignored(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["replay", "--data", SAMPLE, "--human", "human:relevance", "--question", "top-k", "--baseline", "M8", "--ideal-items", "5"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "warning: --baseline is ignored: only the baseline question uses it (the question is top-k)" in err
    assert "warning: --ideal-items is ignored" in err
    assert main(["replay", "--data", SAMPLE, "--human", "human:relevance", "--k", "3"]) == 0
    assert "warning: --k is ignored" in capsys.readouterr().err
