"""Reading files: formats, compression, encodings, limits, and the messages for bad files."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from prefeval_core.data.dataset import load_dataset
from prefeval_core.data.reading import read_table, read_table_bytes
from prefeval_core.errors import (
    EmptyFileError,
    FileTooLargeError,
    MalformedFileError,
    UnsupportedFormatError,
)
from tests.data_helpers import RATINGS_CSV, gz, parquet_bytes

EXPECTED = pd.read_csv(io.StringIO(RATINGS_CSV), dtype=str)


def _as_jsonl(frame: pd.DataFrame) -> bytes:
    return frame.to_json(orient="records", lines=True).encode()


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("r.csv", RATINGS_CSV.encode()),
        ("r.tsv", RATINGS_CSV.replace(",", "\t").encode()),
        ("r.txt", RATINGS_CSV.replace(",", ";").encode()),
        ("r.csv", b"\xef\xbb\xbf" + RATINGS_CSV.encode()),  # UTF-8 with BOM
        ("r.csv", RATINGS_CSV.encode("utf-16")),  # UTF-16 with BOM
        ("r.csv", RATINGS_CSV.replace("\n", "\r\n").encode()),
        ("r.jsonl", _as_jsonl(EXPECTED)),
        ("r.json", EXPECTED.to_json(orient="records").encode()),
        ("r.parquet", parquet_bytes(EXPECTED)),
        ("r.csv.gz", gz(RATINGS_CSV.encode())),
        ("r.tsv.gz", gz(RATINGS_CSV.replace(",", "\t").encode())),
        ("r.jsonl.gz", gz(_as_jsonl(EXPECTED))),
        ("r.parquet.gz", gz(parquet_bytes(EXPECTED))),
        ("upload", gz(RATINGS_CSV.encode())),  # no suffix: gzip and delimiter detected from content
    ],
)
def test_every_format_reads_the_same_table(name: str, data: bytes) -> None:
    table = read_table_bytes(name, data)
    assert list(table.frame.columns) == list(EXPECTED.columns)
    assert table.frame.astype(str).to_numpy().tolist() == EXPECTED.to_numpy().tolist()


def test_every_format_loads_the_same_ratings() -> None:
    reference = load_dataset([("r.csv", RATINGS_CSV.encode())]).ratings
    for name, data in [("r.jsonl", _as_jsonl(EXPECTED)), ("r.parquet", parquet_bytes(EXPECTED.astype({"score": float})))]:
        ratings = load_dataset([(name, data)]).ratings
        pd.testing.assert_frame_equal(ratings.reset_index(drop=True), reference.reset_index(drop=True), check_dtype=False)


def test_line_numbers_follow_multiline_quoted_cells() -> None:
    text = 'item_id,system,output\ni1,A,"two\nlines"\ni2,A,one\n'
    table = read_table_bytes("t.csv", text.encode())
    assert table.line_of(0) == 2
    assert table.line_of(1) == 4


def test_read_from_disk(tmp_path) -> None:
    path = tmp_path / "ratings.csv.gz"
    path.write_bytes(gz(RATINGS_CSV.encode()))
    assert len(read_table(path).frame) == len(EXPECTED)


@pytest.mark.parametrize("data", [b"", b"  \n\n"])
def test_empty_file(data: bytes) -> None:
    with pytest.raises(EmptyFileError, match=r"e\.csv: the file is empty"):
        read_table_bytes("e.csv", data)


def test_header_only_file() -> None:
    with pytest.raises(EmptyFileError, match=r"h\.csv: the file has a header but no data rows"):
        read_table_bytes("h.csv", b"item_id,system,rater,score\n")


def test_file_over_the_limit_is_refused_before_parsing(tmp_path) -> None:
    path = tmp_path / "big.csv"
    path.write_bytes(RATINGS_CSV.encode() * 10)
    with pytest.raises(FileTooLargeError, match=r"big\.csv: the file is .* MiB; the limit is"):
        read_table(path, max_bytes=100)


def test_gzip_that_expands_past_the_limit() -> None:
    bomb = gz(b"item_id,system,rater,score\n" + b"x" * 2_000_000)
    assert len(bomb) < 100_000
    with pytest.raises(FileTooLargeError, match=r"bomb\.csv\.gz \(decompressed\)"):
        read_table_bytes("bomb.csv.gz", bomb, max_bytes=1_000_000)


def test_damaged_gzip() -> None:
    with pytest.raises(UnsupportedFormatError, match=r"d\.csv\.gz: the gzip data is damaged"):
        read_table_bytes("d.csv.gz", gz(RATINGS_CSV.encode())[:40])


def test_row_with_too_many_fields_names_the_line() -> None:
    bad = RATINGS_CSV + "i9,A,human,3,extra\n"
    with pytest.raises(MalformedFileError, match=r"m\.csv: cannot parse the file as comma-separated values: .*line 14"):
        read_table_bytes("m.csv", bad.encode())


def test_not_utf8_names_the_line() -> None:
    bad = (RATINGS_CSV + "i4,Caf\xe9,human,3\n").encode("latin-1")
    with pytest.raises(UnsupportedFormatError, match=r"l\.csv, line 14: the file is not UTF-8 \(byte 0xe9 at line 14\)"):
        read_table_bytes("l.csv", bad)


def test_bad_jsonl_line() -> None:
    data = b'{"item_id": "i1", "system": "A", "rater": "h", "score": 1}\n{oops}\n'
    with pytest.raises(MalformedFileError, match=r"j\.jsonl, line 2: not a JSON object"):
        read_table_bytes("j.jsonl", data)


def test_damaged_parquet() -> None:
    with pytest.raises(UnsupportedFormatError, match=r"p\.parquet: cannot read the Parquet data"):
        read_table_bytes("p.parquet", b"PAR1 not really parquet")
