"""The field-format registry: a new format is one module and one registry entry (docs/architecture.md).

A toy format registered in a fixture is detected, read, declarable with ``--kind`` and listed in
the choices ``prefeval validate --help`` prints; the built-in formats keep their order.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from pydantic import TypeAdapter, ValidationError

from prefeval_core.cli import main
from prefeval_core.data.dataset import detect_kind, load_dataset, parse_tables
from prefeval_core.data.field_formats import FIELD_FORMATS, FieldFormat, input_kinds
from prefeval_core.data.formats import InputKind, ParsedTable
from prefeval_core.data.reading import RawTable
from prefeval_core.workflow.session import DataChoice, SessionFileError, SessionSnapshot, session_from_json, session_to_json

TOY_CSV = b"toy_item,toy_system,toy_score\ni1,s1,1\ni1,s2,2\ni2,s1,3\ni2,s2,1\n"


def _detect(raw: RawTable) -> bool:
    return {"toy_item", "toy_system", "toy_score"} <= set(raw.frame.columns)


def _read(raw: RawTable) -> tuple[ParsedTable, ...]:
    frame = raw.frame
    ratings = pd.DataFrame(
        {
            "item_id": frame["toy_item"].to_numpy(),
            "system": frame["toy_system"].to_numpy(),
            "rater": "human:toy",
            "score": frame["toy_score"].astype(float).to_numpy(),
        }
    )
    return (ParsedTable(raw.name, "ratings", ratings, (), (f"{raw.name}: toy scores",)),)


@pytest.fixture
def toy_format(monkeypatch: pytest.MonkeyPatch) -> Iterator[FieldFormat]:
    entry = FieldFormat("toy", "Toy scores", "toy_item, toy_system, toy_score", _detect, _read)
    monkeypatch.setitem(FIELD_FORMATS, "toy", entry)
    yield entry


def test_the_built_in_formats_in_detection_order() -> None:
    assert list(FIELD_FORMATS) == ["mqm", "arena"]
    assert input_kinds()[-2:] == ("mqm", "arena")
    assert "toy" not in input_kinds()


def test_a_registered_format_is_detected_and_read(toy_format: FieldFormat) -> None:
    raw = RawTable("t.csv", pd.read_csv(io.BytesIO(TOY_CSV), dtype=str), None)
    assert detect_kind(raw) == "toy"
    (table,) = parse_tables(raw)
    assert table.kind == "ratings" and table.notes == ("t.csv: toy scores",)
    dataset = load_dataset([("t.csv", TOY_CSV)])
    assert "human:toy" in dataset.raters
    assert set(dataset.systems) == {"s1", "s2"}


def test_a_registered_format_can_be_declared(toy_format: FieldFormat) -> None:
    dataset = load_dataset([("scores.csv", TOY_CSV)], kinds={"scores.csv": "toy"})
    assert "human:toy" in dataset.raters
    assert TypeAdapter(InputKind).validate_python("toy") == "toy"
    with pytest.raises(ValidationError, match=r"unknown file kind; expected one of ratings, .*, arena"):
        TypeAdapter(InputKind).validate_python("bogus")


def test_validate_lists_and_reads_a_registered_format(toy_format: FieldFormat, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["validate", "--help"])
    assert exit_.value.code == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert "mqm, arena, toy" in help_text and "toy: Toy scores" in help_text
    path = tmp_path / "t.csv"
    path.write_bytes(TOY_CSV)
    assert main(["validate", str(path)]) == 0
    assert "t.csv: toy scores" in capsys.readouterr().out


def test_a_session_file_declares_only_registered_kinds(toy_format: FieldFormat) -> None:
    upload = DataChoice("upload", "mine", files=(("t.csv", TOY_CSV),), kinds=(("t.csv", "toy"),))
    text = session_to_json(SessionSnapshot(data=upload, human="human:toy", metrics=()))
    assert session_from_json(text).data.kinds == (("t.csv", "toy"),)
    with pytest.raises(SessionFileError, match=r"data\.kinds\[0\]\[1\]: .*unknown file kind"):
        session_from_json(text.replace('"toy"', '"bogus"'))
