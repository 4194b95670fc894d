"""Reading files: formats, compression, encodings, limits, and the messages for bad files."""

from __future__ import annotations

import io
import json

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from prefeval_core.data import delimited, json_rows
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


# --- hostile files (issue 14): every failure a DataError naming file, line/row and column ---------


def test_long_fields_are_read_not_refused() -> None:
    long = "word " * 30_000 + "end"  # 150,003 characters: past the csv module's default 131,072
    text = f'item_id,system,output\ni1,A,"{long}"\ni2,A,"{long[:3_000_000]}, with a comma\nand a line"\n'
    table = read_table_bytes("t.csv", text.encode())
    assert table.frame["output"].str.len().tolist() == [len(long), len(long) + len(", with a comma\nand a line")]
    assert [table.line_of(0), table.line_of(1)] == [2, 3]


def test_a_three_megabyte_field() -> None:
    field = "x" * 3_000_000
    table = read_table_bytes("t.csv", f"item_id,output\ni1,{field}\ni2,short\n".encode())
    assert len(table.frame.loc[0, "output"]) == 3_000_000 and table.line_of(1) == 3


def test_utf16_with_an_odd_byte_count_names_the_line() -> None:
    data = RATINGS_CSV.encode("utf-16")[:-1]
    with pytest.raises(UnsupportedFormatError) as info:
        read_table_bytes("u.csv", data)
    (problem,) = info.value.problems
    assert problem.file == "u.csv" and problem.line == 13 and "not valid UTF-16 (truncated data" in problem.message


def test_utf16_big_endian_with_bom_and_utf16_without_bom() -> None:
    assert len(read_table_bytes("b.csv", "\ufeff".encode("utf-16-be") + RATINGS_CSV.encode("utf-16-be")).frame) == 12
    with pytest.raises(UnsupportedFormatError, match=r"n\.csv, line 1: the file is full of NUL bytes, like UTF-16"):
        read_table_bytes("n.csv", RATINGS_CSV.encode("utf-16-le"))
    with pytest.raises(UnsupportedFormatError, match=r"w\.csv, line 1: the file is UTF-32"):
        read_table_bytes("w.csv", RATINGS_CSV.encode("utf-32"))


@pytest.mark.parametrize(
    ("row", "fields"),
    [("i9,A,human\n", 3), ("i9,A,human,3,\n", 5), ("i9\n", 1)],
)
def test_ragged_rows_are_errors_naming_the_line(row: str, fields: int) -> None:
    bad = RATINGS_CSV + row + "i10,A,human,3\n"
    with pytest.raises(MalformedFileError) as info:
        read_table_bytes("m.csv", bad.encode())
    (problem,) = info.value.problems
    assert str(problem).startswith(f"m.csv: cannot parse the file as comma-separated values: line 14 (row 13) has {fields} fields")


def test_many_ragged_rows_are_listed_up_to_the_cap() -> None:
    bad = "a,b\n" + "1,2,3\n" * 30
    with pytest.raises(MalformedFileError) as info:
        read_table_bytes("m.csv", bad.encode())
    assert len(info.value.problems) == 21 and "... and 10 more rows" in info.value.problems[-1].message
    assert "line 21 (row 20)" in info.value.problems[19].message


def test_an_unclosed_quote_is_an_error_not_a_swallowed_file() -> None:
    bad = 'item_id,system,output\ni1,A,fine\ni2,A,"never closed\ni3,A,lost\ni4,A,lost\n'
    with pytest.raises(MalformedFileError) as info:
        read_table_bytes("q.csv", bad.encode())
    (problem,) = info.value.problems
    assert (problem.file, problem.row, problem.line) == ("q.csv", 2, 3) and "never closed" in problem.message


def test_line_ends_blank_lines_and_stray_quotes_keep_line_numbers() -> None:
    cr_only = 'item_id,system,output\ri1,A,x\r\ri2,A,"quoted\rline"\ri3,A,y\r'
    table = read_table_bytes("cr.csv", cr_only.encode())
    assert [table.line_of(i) for i in range(3)] == [2, 4, 6] and table.frame.loc[1, "output"] == "quoted\rline"
    stray = 'item_id,system,output\ni1,A,ab"c\n\ni2,A,"x\ny"\ni3,A,z\n'  # a literal quote inside an unquoted field
    table = read_table_bytes("s.csv", stray.encode())
    assert table.frame["output"].tolist() == ['ab"c', "x\ny", "z"]
    assert [table.line_of(i) for i in range(3)] == [2, 4, 6]


def test_a_file_of_one_line_without_a_line_end() -> None:
    with pytest.raises(EmptyFileError, match=r"o\.csv: the file has a header but no data rows"):
        read_table_bytes("o.csv", b"x" * 2_000_000)
    assert len(read_table_bytes("o.csv", b"a,b\n1,2").frame) == 1


@pytest.mark.parametrize(
    ("header", "column"),
    [("item_id,score,system,rater,score", "score"), ("item_id,system,rater, score ,score", "score"), ("a,,b,", None)],
)
def test_duplicate_column_names_are_errors(header: str, column: str | None) -> None:
    data = (header + "\n" + ",".join("1" for _ in header.split(",")) + "\n").encode()
    if column is None:  # empty names are not duplicates: they get their position
        assert list(read_table_bytes("e.csv", data).frame.columns) == ["a", "Unnamed: 1", "b", "Unnamed: 3"]
        return
    with pytest.raises(MalformedFileError) as info:
        read_table_bytes("d.csv", data)
    (problem,) = info.value.problems
    assert problem.file == "d.csv" and problem.column == column and "occurs 2 times" in problem.message


def test_duplicate_keys_in_json_and_parquet() -> None:
    with pytest.raises(MalformedFileError, match=r"d\.jsonl, line 2, column 'score': the key 'score' appears twice"):
        read_table_bytes("d.jsonl", b'{"score": 1}\n{"score": 1, "score": 2}\n')
    table = pa.Table.from_arrays([pa.array(["1"]), pa.array(["2"])], names=["score", "score"])
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    with pytest.raises(MalformedFileError, match=r"d\.parquet, column 'score': the column name 'score' occurs 2 times"):
        read_table_bytes("d.parquet", buffer.getvalue())


def test_wide_files_are_refused_before_parsing() -> None:
    header = ",".join(f"c{k}" for k in range(20_000))
    with pytest.raises(FileTooLargeError, match=r"w\.csv: the header has 20,000 comma-separated fields; the limit is 1,000 columns"):
        read_table_bytes("w.csv", (header + "\n" + ",".join("1" for _ in range(20_000)) + "\n").encode())
    with pytest.raises(FileTooLargeError, match=r"w\.jsonl, line 1: the rows have more than 1,000 distinct keys"):
        read_table_bytes("w.jsonl", json.dumps({f"k{k}": k for k in range(1_001)}).encode())
    buffer = io.BytesIO()
    pq.write_table(pa.table({f"c{k}": [1] for k in range(1_001)}), buffer)
    with pytest.raises(FileTooLargeError, match=r"w\.parquet: the file has 1,001 columns; the limit is 1,000"):
        read_table_bytes("w.parquet", buffer.getvalue())


def test_too_many_cells_are_refused_before_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(delimited, "MAX_CELLS", 40)
    with pytest.raises(FileTooLargeError, match=r"c\.csv: the file has 13 lines of 4 columns; the limit is 40 cells"):
        read_table_bytes("c.csv", RATINGS_CSV.encode())


def test_json_numbers_depth_and_text() -> None:
    digits = "7" * 5_000
    with pytest.raises(MalformedFileError, match=r"n\.jsonl, line 2: a number with 5,000 characters; the limit is 100"):
        read_table_bytes("n.jsonl", b'{"score": 1}\n{"score": ' + digits.encode() + b"}\n")
    with pytest.raises(MalformedFileError, match=r"n\.json, line 3: a number with 5,000 characters"):
        read_table_bytes("n.json", b'[{"score": 1},\n\n {"score": ' + digits.encode() + b"}]")
    too_deep = r"d\.jsonl, (row 1 \(line 1\), column 'x'|line 1): .*(nested deeper|nested too deeply)"
    for depth in (9, 100_000):
        deep = "[" * depth + "1" + "]" * depth
        with pytest.raises(MalformedFileError, match=too_deep):
            read_table_bytes("d.jsonl", ('{"x": ' + deep + "}\n").encode())
    table = read_table_bytes("t.jsonl", b'{"score": 0.50, "n": 1e5, "ok": true, "none": null, "x": NaN, "list": [1, "a", {"b": 2.5}]}\n')
    assert table.frame.iloc[0].tolist() == ["0.50", "1e5", "true", "", "NaN", '[1,"a",{"b":2.5}]']
    with pytest.raises(MalformedFileError, match=r"s\.jsonl, row 2 \(line 2\), column 'a': a \\u escape that is half of a character"):
        read_table_bytes("s.jsonl", b'{"a": "x"}\n{"a": "\\ud800"}\n')


def test_jsonl_lines_split_only_at_line_feeds() -> None:
    table = read_table_bytes("l.jsonl", '{"a": "x\u2028y\x85z"}\n{"a": "w"}\r\n'.encode())
    assert table.frame["a"].tolist() == ["x\u2028y\x85z", "w"] and table.line_of(1) == 2


def test_damaged_parquet_pages_and_text() -> None:
    frame = pd.DataFrame({"item_id": ["i1", "i2"], "system": ["S0", "S1"]})
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), buffer, compression="none")
    data = bytearray(buffer.getvalue())
    at = bytes(data).find(b"S0")
    data[at : at + 2] = b"\xff\xfe"  # invalid UTF-8 inside a string page
    with pytest.raises(UnsupportedFormatError, match=r"p\.parquet: cannot read the Parquet data \(ArrowInvalid"):
        read_table_bytes("p.parquet", bytes(data))
    with pytest.raises(UnsupportedFormatError, match=r"p\.parquet: cannot read the Parquet data"):
        read_table_bytes("p.parquet", bytes(data[: len(data) // 2]) + bytes(data[len(data) // 2 + 7 :]))


def test_archives_and_double_compression_are_named() -> None:
    with pytest.raises(UnsupportedFormatError, match=r"x\.csv: a ZIP archive \(an Excel workbook\?\)"):
        read_table_bytes("x.csv", b"PK\x03\x04rest")
    with pytest.raises(UnsupportedFormatError, match=r"g\.csv\.gz: the file is compressed twice"):
        read_table_bytes("g.csv.gz", gz(gz(RATINGS_CSV.encode())))


def test_paths_that_are_not_files_are_named(tmp_path) -> None:
    (tmp_path / "sub").mkdir()
    with pytest.raises(UnsupportedFormatError, match=r"sub: cannot read the file \(not a regular file\)"):
        read_table(tmp_path / "sub")
    with pytest.raises(UnsupportedFormatError, match=r"zero: cannot read the file \(not a regular file\)"):
        read_table("/dev/zero")
    with pytest.raises(UnsupportedFormatError, match=r"gone\.csv: cannot read the file \(there is no such file\)"):
        read_table(tmp_path / "gone.csv")


def test_json_rows_are_bounded_before_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(json_rows, "MAX_JSON_ROWS", 10)
    with pytest.raises(FileTooLargeError, match=r"j\.jsonl: the file has 11 lines; JSON is limited to 10 rows"):
        read_table_bytes("j.jsonl", b"{}\n" * 11)
    with pytest.raises(FileTooLargeError, match=r"j\.json: the file has 11 objects"):
        read_table_bytes("j.json", b"[" + b"{}," * 10 + b"{}]")


def test_parquet_cells_read_as_text() -> None:
    columns = {"f": [3.0, float("nan"), None, 0.5], "i": [1, None, -5, 7], "b": [True, False, None, True], "t": ["x", None, "", "y"]}
    table = pa.table(columns)
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    frame = read_table_bytes("p.parquet", buffer.getvalue()).frame
    assert frame.to_numpy().tolist() == [["3", "1", "true", "x"], ["", "", "false", ""], ["", "-5", "", ""], ["0.5", "7", "true", "y"]]
