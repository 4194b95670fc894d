"""The ``validate`` and ``describe`` commands and the package's import hygiene."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

from prefeval_core.cli import main
from prefeval_core.data.safe_csv import restore_cell, starts_formula
from tests.data_helpers import RATINGS_CSV, gz

ROOT = Path(__file__).resolve().parents[1]


def test_help_lists_the_subcommands() -> None:
    result = subprocess.run([sys.executable, "-m", "prefeval_core", "--help"], capture_output=True, text=True, cwd=ROOT, check=True)
    assert "validate" in result.stdout and "describe" in result.stdout


def test_validate_good_file(tmp_path, capsys) -> None:
    path = tmp_path / "ratings.csv"
    path.write_text(RATINGS_CSV)
    assert main(["validate", str(path)]) == 0
    out = capsys.readouterr().out
    assert "0 errors, 1 warnings" in out
    assert "metric 'bleu' rated 1 items that no human rater rated" in out


def test_validate_bad_file_exits_nonzero_and_names_the_cell(tmp_path, capsys) -> None:
    path = tmp_path / "ratings.csv"
    path.write_text(RATINGS_CSV.replace("i2,B,human,5", "i2,B,human,five"))
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert "error: ratings.csv, row 5 (line 6), column 'score': expected a number (a score; higher is better), found 'five'" in out


def test_validate_json_report(tmp_path, capsys) -> None:
    path = tmp_path / "empty.csv"
    path.write_text("")
    assert main(["validate", str(path), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False
    assert report["problems"][0]["kind"] == "empty_file" and report["problems"][0]["file"] == "empty.csv"


def test_validate_checks_the_chosen_raters(tmp_path, capsys) -> None:
    path = tmp_path / "ratings.csv"
    path.write_text(RATINGS_CSV)
    assert main(["validate", str(path), "--human", "humans"]) == 1
    assert "no rater named 'humans' in the data; did you mean 'human'" in capsys.readouterr().out


def test_describe_json(tmp_path, capsys) -> None:
    path = tmp_path / "ratings.csv"
    path.write_text(RATINGS_CSV)
    assert main(["describe", str(path), "--human", "human", "--metric", "bleu", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["systems"] == ["A", "B", "C"]
    assert summary["items"] == 3
    assert {r["name"]: r["pairs"] for r in summary["raters"]} == {"bleu": 3, "human": 3}
    ab = summary["pairs"][0]
    assert (ab["system_a"], ab["system_b"], ab["human_items"], ab["metric_items"], ab["joint_items"], ab["metric_only_items"]) == (
        "A",
        "B",
        2,
        3,
        2,
        1,
    )
    assert summary["coverage"][0] == {"system_a": "A", "system_b": "B", "items": {"bleu": 3, "human": 2}}


def test_describe_wide_file_with_rater_columns(tmp_path, capsys) -> None:
    path = tmp_path / "wide.tsv"
    path.write_text("item_id\tsystem\tBLEU\thuman\tcomment\ni1\tA\t1\t2\tx\ni1\tB\t2\t1\ty\n")
    assert main(["describe", str(path), "--rater-columns", "BLEU,human", "--json"]) == 0
    assert [r["name"] for r in json.loads(capsys.readouterr().out)["raters"]] == ["BLEU", "human"]


def test_errors_on_stderr_without_traceback(tmp_path, capsys) -> None:
    path = tmp_path / "p.csv"
    path.write_text("item_id,system_a,system_b,rater,label\ni1,X,Y,judge,??\n")
    assert main(["describe", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: p.csv, row 1 (line 2), column 'label'") and "Traceback" not in err


def test_a_bad_option_is_named_as_a_setting_not_a_column(tmp_path, capsys) -> None:
    path = tmp_path / "ratings.csv"
    path.write_text(RATINGS_CSV)
    argv = ["replay", "--data", str(path), "--human", "human", "--statistic", "sign", "--error-control", "spending", "--delta", "0.5"]
    assert main(argv) == 1
    err = capsys.readouterr().err.splitlines()[-1]  # after the data's warnings
    assert err.startswith("error: setting 'delta': ") and "column" not in err


def test_core_imports_without_streamlit() -> None:
    # Block streamlit, then import every module of the core.
    code = (
        "import sys, pkgutil, importlib\n"
        "sys.modules['streamlit'] = None\n"
        "import prefeval_core\n"
        "for m in pkgutil.walk_packages(prefeval_core.__path__, 'prefeval_core.'):\n"
        "    if m.name != 'prefeval_core.__main__':\n"
        "        importlib.import_module(m.name)\n"
        "print('ok')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


# --- hostile input through the commands (issue 14) ----------------------------------------------


def test_validate_ends_in_a_message_not_a_traceback(tmp_path, capsys) -> None:
    cases = {
        "wide.csv": ("item_id,system," + ",".join(f"r{k}" for k in range(20_000)) + "\n").encode(),
        "odd.csv": RATINGS_CSV.encode("utf-16")[:-1],
        "deep.json": b"[" * 100_000 + b"]" * 100_000,
        "digits.jsonl": b'{"score": ' + b"9" * 5_000 + b"}\n",
        "ragged.csv": (RATINGS_CSV + "i9,A\n").encode(),
        "bomb.csv.gz": gz(b"item_id,system,rater,score\n" + b"0" * 3_000_000),
    }
    for name, data in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        assert main(["validate", str(path), "--max-mb", "2"]) == 1
        out = capsys.readouterr().out
        assert out.startswith(f"error: {name}") and "Traceback" not in out, out


def test_names_with_terminal_escapes_are_printed_escaped(tmp_path, capsys) -> None:
    path = tmp_path / "r.csv"
    path.write_bytes("item_id,system,rater,score\r\ni1,\x1b]0;owned\x07,human,1\r\ni1,B,human,2\r\ni1,B,judge\x9b,2\r\n".encode())
    assert main(["describe", str(path)]) == 0
    out = capsys.readouterr().out
    assert "\\x1b]0;owned\\x07" in out and "judge\\x9b" in out and "\x1b" not in out and "\x9b" not in out
    assert main(["validate", str(path)]) == 0
    out = capsys.readouterr().out
    assert "judge\\x9b" in out and "\x9b" not in out
    bad = tmp_path / "p.csv"
    bad.write_bytes(b"item_id,system_a,system_b,rater,label\ni1,X,Y,judge,\x1b[2J\n")
    assert main(["describe", str(bad)]) == 1  # the error goes through the CLI's own handler
    err = capsys.readouterr().err
    assert "\\x1b[2J" in err and "\x1b" not in err


def test_metrics_out_is_formula_safe_and_exact_in_jsonl(tmp_path) -> None:
    names = ["=cmd|' /C calc'!A0", "\t=1+1", "plain\r=2+2", "@SUM(1)"]
    texts = tmp_path / "texts.jsonl"
    texts.write_text("".join(json.dumps({"item_id": "i1", "system": s, "output": "the cat sat"}) + "\n" for s in names))
    references = tmp_path / "references.csv"
    references.write_text("item_id,reference\ni1,the cat sat down\n")
    out = tmp_path / "ratings.csv"
    assert main(["metrics", "--texts", str(texts), "--references", str(references), "--metrics", "chrf", "--out", str(out)]) == 0
    rows = list(csv.reader(io.StringIO(out.read_bytes().decode(), newline="")))
    assert rows[0] == ["item_id", "system", "rater", "score"] and len(rows) == 5
    assert not any(starts_formula(cell) for row in rows for cell in row)
    assert sorted(restore_cell(row[1]) for row in rows[1:]) == sorted(n.strip() for n in names)  # names are read stripped
    exact = tmp_path / "ratings.jsonl"
    assert main(["metrics", "--texts", str(texts), "--references", str(references), "--metrics", "chrf", "--out", str(exact)]) == 0
    assert sorted(json.loads(line)["system"] for line in exact.read_text().splitlines()) == sorted(n.strip() for n in names)


def test_validate_names_the_files_in_findings_about_the_whole_data(tmp_path, capsys) -> None:
    path = tmp_path / "ratings.csv"
    path.write_text(RATINGS_CSV)
    assert main(["validate", str(path), "--human", "humans", "--json"]) == 1
    (problem,) = [p for p in json.loads(capsys.readouterr().out)["problems"] if p["severity"] == "error"]
    assert problem["file"] == "ratings.csv" and problem["kind"] == "unknown_name"


def test_describe_keeps_its_columns_aligned_for_long_rater_names(tmp_path, capsys) -> None:
    long_name = "gpt-3.5-turbo-0301-h2h-swapped:consistency"  # 42 characters, as in SummEval
    path = tmp_path / "r.csv"
    path.write_text(f"item_id,system,rater,score\ni1,A,human,1\ni1,B,human,2\ni1,A,{long_name},3\ni1,B,{long_name},4\n")
    assert main(["describe", str(path)]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("  ")]
    assert len(rows) == 2
    assert len({row.index("scalar") for row in rows}) == 1, rows
