"""Hostile input reaches neither the terminal nor the interpreter's limits (issue 22, item 4):
names are printed escaped, ids are ASCII digits, deep JSON and gzip bombs are refused cheaply."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from prefeval_core.annotation.left_right import left_right, make_comparison
from prefeval_core.cli import main
from prefeval_core.data.json_rows import line_too_deep
from prefeval_core.store import open_store
from prefeval_core.workflow import StudySetup
from prefeval_core.workflow.studies import begin_study

HOSTILE = "\x1b]0;pwned\x07\x1b[31m"


def test_names_from_the_store_reach_the_terminal_escaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.test_requests_cli import study_data

    monkeypatch.setenv("PREFEVAL_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("PREFEVAL_DATABASE_URL", raising=False)
    data = study_data()
    store = open_store(tmp_path)
    setup = StudySetup(human="human", unit="comparisons", mode="live", budget=200, batch=10)
    study = begin_study(store, data, data.load(), setup, f"study {HOSTILE}")
    judgments = []
    for k in range(10):
        item = f"i{k:02d}"
        left, _ = left_right(0, data.key, item, "good", "middle")
        for who in ("kim", f"lee{HOSTILE}"):
            judgments.append(make_comparison(data.key, item, "good", "middle", "left", who, left, study_id=study.id))
    store.add_many(judgments)
    for command in (["studies", "list"], ["studies", "agreement", str(study.id)]):
        assert main(command) == 0
        out = capsys.readouterr().out
        assert "\x1b" not in out and "\x07" not in out
        assert "\\x1b]0;pwned\\x07\\x1b[31m" in out


@pytest.mark.parametrize("study_id", ["\u0663", "\uff13", "\u0967"])  # Arabic-Indic, full-width, Devanagari three
def test_ids_are_ascii_digits_only(study_id: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["studies", "show", study_id])
    assert exit_.value.code == 2
    assert "expected an integer" in capsys.readouterr().err


def test_line_too_deep_counts_brackets_outside_strings() -> None:
    assert line_too_deep('{"a": "[[[[[[[[", "b": [[1]]}', 3) is None
    assert line_too_deep('{"a": "\\"[[[", "b": [[1]]}', 2) == 1
    assert line_too_deep('{"a": 1,\n "b": [[[1]]]}', 3) == 2


def test_a_deep_batch_line_is_refused_with_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    batch = tmp_path / "deep.jsonl"
    good = json.dumps({"n": [4, 1, 5]})
    batch.write_text(good + "\n" + '{"n": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    assert main(["decide", "--batch", str(batch), "--json"]) == 1
    err = capsys.readouterr().err
    assert "deep.jsonl" in err and "line 2" in err and "nested" in err and "Traceback" not in err


def test_a_deep_jsonl_upload_is_refused_with_its_line() -> None:
    from prefeval_core.data.reading import read_table_bytes
    from prefeval_core.errors import MalformedFileError

    data = b'{"item_id": "a", "system": "s", "score": 1}\n{"item_id": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n"
    with pytest.raises(MalformedFileError) as error:
        read_table_bytes("deep.jsonl", data)
    (problem,) = error.value.problems
    assert (problem.file, problem.line) == ("deep.jsonl", 2)


_MEASURE = """
import resource, sys, zlib
from prefeval_core.data.reading import read_table_bytes
from prefeval_core.errors import FileTooLargeError
packer = zlib.compressobj(9, zlib.DEFLATED, 31)
parts = [packer.compress(b"item_id,system,rater,score\\n")]
chunk = b"0" * (1 << 20)
parts += [packer.compress(chunk) for _ in range(int(sys.argv[1]))]
bomb = b"".join(parts) + packer.flush()
del parts, chunk
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    read_table_bytes("bomb.csv.gz", bomb)
except FileTooLargeError:
    pass
else:
    raise SystemExit("not refused")
print(len(bomb), (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024)
"""


@pytest.mark.parametrize("expanded_mib", [201, 1024])
def test_a_refused_gzip_bomb_stays_small_in_memory(expanded_mib: int) -> None:
    """The peak resident memory of a process grows by well under 200 MiB while it refuses a
    0.2-1 MiB gzip file that expands to 201 MiB or 1 GiB (ru_maxrss is in KiB on Linux)."""
    done = subprocess.run([sys.executable, "-c", _MEASURE, str(expanded_mib)], capture_output=True, text=True, check=True)
    size, growth = map(int, done.stdout.split())
    assert size < 1.1 * (1 << 20)
    assert growth < 32 << 20, f"peak memory grew by {growth / 2**20:.0f} MiB refusing a {expanded_mib} MiB bomb"


def test_a_deep_conversation_cell_in_a_csv_is_refused_with_its_place() -> None:
    """A CSV cell is JSON to the arena reader: nested 100,000 deep it is refused, not a RecursionError."""
    from prefeval_core.data.dataset import load_dataset
    from prefeval_core.errors import DataError

    deep = "[" * 100_000 + "]" * 100_000
    data = f"question_id,model_a,model_b,winner,conversation_a,conversation_b\nq1,x,y,tie,{deep},[]\n".encode()
    with pytest.raises(DataError, match=r"b\.csv, row 1 \(line 2\), column 'conversation_a': expected a JSON list"):
        load_dataset([("b.csv", data)], kinds={"b.csv": "arena"})


def test_a_deep_session_file_is_refused_with_its_line() -> None:
    from prefeval_core.workflow.session import SessionFileError, session_from_json

    with pytest.raises(SessionFileError) as error:
        session_from_json('{"prefeval_session": 2,\n "metrics": ' + "[" * 100_000 + "]" * 100_000 + "}", "s.json")
    (problem,) = error.value.problems
    assert (problem.file, problem.line) == ("s.json", 2) and "nested too deeply" in problem.message


def test_an_empty_store_file_is_refused_by_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "annotations.sqlite").write_bytes(b"")
    monkeypatch.setenv("PREFEVAL_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("PREFEVAL_DATABASE_URL", raising=False)
    assert main(["studies", "list", "--json"]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and f"the store {tmp_path / 'annotations.sqlite'} is an empty file (0 bytes)" in captured.err
