"""A seeded generator of hostile upload files: the reader's fuzz corpus, generated, never stored.

``hostile_upload(index, seed=..., scale=...)`` builds upload number ``index`` from scratch, so
any single case can be rebuilt (``python bench/reliability/uploads.py --show INDEX``) and a
worker process can build its own cases. Case ``index`` comes from builder
``index % len(BUILDERS)``, with a random generator seeded by ``(seed, index)``.

Each upload says what must happen to it: ``"accept"`` (a valid file, however odd: it must
load), ``"refuse"`` (a ``DataError`` naming the file), or ``"either"`` (random damage: any
outcome but a traceback or a hang). ``flaw`` marks the files whose acceptance would be a silent
misreading: duplicated column names and ragged rows.

``scale="fast"`` keeps every file small (big cases are checked against a small ``max_bytes``
instead of the real 200 MiB limit), for the test suite; ``"full"`` builds the real big cases
(a 201 MiB file, a gzip bomb that expands past 200 MiB, a 20,000-column file).
"""

from __future__ import annotations

import gzip
import io
import json
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Literal

import numpy as np
import pandas as pd

Expect = Literal["accept", "refuse", "either"]
Flaw = Literal["duplicate_column", "ragged"] | None
Scale = Literal["fast", "full"]
Format = Literal["csv", "tsv", "semicolon", "jsonl", "json", "parquet"]
Reader = Literal["dataset", "labelstudio", "requests"]
"""What reads an upload: the data layer (``load_dataset``), the Label Studio importer, or the
reader of filled-in request files."""


@dataclass(frozen=True)
class HostileUpload:
    """One generated upload: ``case`` (the builder's name), file ``name`` and ``data``, what
    must happen (``expect``), the silent-misreading ``flaw`` it carries if any, the size
    limit to load it with (``None``: the default) and what reads it."""

    index: int
    case: str
    name: str
    data: bytes
    expect: Expect
    flaw: Flaw = None
    max_bytes: int | None = None
    reader: Reader = "dataset"


@dataclass(frozen=True)
class _Made:
    """What a builder returns (the index and case name are added by :func:`hostile_upload`)."""

    suffix: str
    data: bytes
    expect: Expect
    flaw: Flaw = None
    max_bytes: int | None = None
    reader: Reader = "dataset"


Builder = Callable[[np.random.Generator, Scale], _Made]

FORMULA_NAMES = (
    "=cmd|' /C calc'!A0",
    '=HYPERLINK("http://127.0.0.1:9/x","click")',
    "+1+1",
    "-2+3",
    "@SUM(1,1)",
    "\t=1+1",
    "\r=1+1",
    " =1+1",
    "\u200b=1+1",
    "\uff1d1+1",
    "'=1+1",
    "\n@SUM(2)",
)
MARKUP_NAMES = (
    "![x](http://127.0.0.1:9/f.png)",
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "**bold** _it_ `code`",
    "[link](javascript:alert(1))",
    "# heading",
    "a | b | c",
    "&lt;escaped&gt;",
)
TERMINAL_NAMES = (
    "\x1b[2J\x1b[Hcleared",
    "\x1b]0;owned\x07title",
    "\x1b]8;;http://127.0.0.1:9/\x1b\\link\x1b]8;;\x1b\\",
    "\x9b31mred",
    "\u202eevil\u202c",
    "bell\x07",
    "back\x08\x08space",
    "nul\x00byte",
    "line\rfeed",
    "two\nlines",
)
PAYLOAD_NAMES = tuple({name.strip(): name for name in FORMULA_NAMES + MARKUP_NAMES + TERMINAL_NAMES}.values())
"""The payloads, one per name as read (names are stripped of surrounding white space)."""

# ---------------------------------------------------------------------------------------------
# Building blocks


def _ratings(rng: np.random.Generator, n_items: int | None = None, n_systems: int | None = None) -> pd.DataFrame:
    """A small valid long ratings table (all cells text): a human rater and a metric."""
    n_items = n_items or int(rng.integers(3, 9))
    n_systems = n_systems or int(rng.integers(2, 6))
    rows = [
        (f"i{i}", f"S{s}", rater, f"{rng.integers(1, 6)}" if rater == "human" else f"{rng.random():.3f}")
        for rater in ("human", "bleu")
        for i in range(n_items)
        for s in range(n_systems)
    ]
    return pd.DataFrame(rows, columns=["item_id", "system", "rater", "score"])


def _preferences(rng: np.random.Generator) -> pd.DataFrame:
    labels = [">", "=", "<", "A", "B", "tie", "1", "0", "-1"]
    rows = [
        (f"i{i}", f"S{a}", f"S{b}", rater, labels[int(rng.integers(len(labels)))])
        for rater in ("human", "judge")
        for i in range(int(rng.integers(2, 6)))
        for a in range(3)
        for b in range(a + 1, 3)
    ]
    return pd.DataFrame(rows, columns=["item_id", "system_a", "system_b", "rater", "label"])


def _with_names(frame: pd.DataFrame, column: str, names: list[str]) -> pd.DataFrame:
    """``frame`` with the distinct values of ``column`` renamed to ``names`` (cycled)."""
    distinct = list(dict.fromkeys(frame[column]))
    mapping = {old: names[k % len(names)] + ("" if k < len(names) else f"#{k}") for k, old in enumerate(distinct)}
    return frame.assign(**{column: frame[column].map(mapping)})


def _csv(frame: pd.DataFrame, sep: str = ",") -> bytes:
    # With CRLF the csv module quotes a cell holding a bare CR too (a valid file, unlike LF's).
    return frame.to_csv(index=False, sep=sep, lineterminator="\r\n").encode("utf-8")


def _encode(frame: pd.DataFrame, fmt: Format) -> tuple[str, bytes]:
    if fmt == "csv":
        return ".csv", _csv(frame)
    if fmt == "tsv":
        return ".tsv", _csv(frame, "\t")
    if fmt == "semicolon":
        return ".txt", _csv(frame, ";")
    if fmt == "jsonl":
        return ".jsonl", frame.to_json(orient="records", lines=True, force_ascii=False).encode("utf-8")
    if fmt == "json":
        return ".json", frame.to_json(orient="records", force_ascii=False).encode("utf-8")
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return ".parquet", buffer.getvalue()


def _fmt(rng: np.random.Generator, formats: tuple[Format, ...] = ("csv", "tsv", "semicolon", "jsonl", "json", "parquet")) -> Format:
    return formats[int(rng.integers(len(formats)))]


def _gz(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def _digits(rng: np.random.Generator, n: int) -> str:
    return str(int(rng.integers(1, 10))) + "".join(map(str, rng.integers(0, 10, n - 1)))


@cache
def _gzip_bomb(expanded: int) -> bytes:
    """A gzip stream of ``expanded`` zero bytes after a CSV header, built without holding them."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    parts = [packer.compress(b"item_id,system,rater,score\n")]
    chunk = b"0" * (1 << 20)
    for _ in range(expanded // len(chunk) + 1):
        parts.append(packer.compress(chunk))
    parts.append(packer.flush())
    return b"".join(parts)


def _parquet_bytes(table: object) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    assert isinstance(table, pa.Table)
    buffer = io.BytesIO()
    pq.write_table(table, buffer, compression="none")
    return buffer.getvalue()


# ---------------------------------------------------------------------------------------------
# Builders: one per kind of hostile file. Each returns the file and what must happen to it.


def valid_any_format(rng: np.random.Generator, scale: Scale) -> _Made:
    suffix, data = _encode(_ratings(rng), _fmt(rng))
    if rng.random() < 0.3:
        return _Made(suffix + ".gz", _gz(data), "accept")
    return _Made(suffix, data, "accept")


def valid_preferences(rng: np.random.Generator, scale: Scale) -> _Made:
    suffix, data = _encode(_preferences(rng), _fmt(rng))
    return _Made(suffix, data, "accept")


def wrong_encoding(rng: np.random.Generator, scale: Scale) -> _Made:
    codec = ["latin-1", "cp1252", "utf-16-le", "utf-16-be", "shift_jis", "gb18030"][int(rng.integers(6))]
    names = ["日本語", "ｶﾀｶﾅ", "漢字"] if codec in ("shift_jis", "gb18030") else ["Café", "Müller", "naïve", "smörgåsbord"]
    return _Made(".csv", _csv(_with_names(_ratings(rng), "system", names)).decode().encode(codec), "refuse")


def utf16_with_bom(rng: np.random.Generator, scale: Scale) -> _Made:
    text = "\ufeff" + _csv(_with_names(_ratings(rng), "system", ["Café", "日本語", "Ωmega"])).decode()
    return _Made(".csv", text.encode(["utf-16-le", "utf-16-be"][int(rng.integers(2))]), "accept")


def utf16_odd_bytes(rng: np.random.Generator, scale: Scale) -> _Made:
    data = _csv(_ratings(rng)).decode().encode("utf-16")
    cut = int(rng.integers(3, len(data) // 2)) * 2 + 1
    return _Made(".csv", data[:cut], "refuse")


def utf16_lone_surrogate(rng: np.random.Generator, scale: Scale) -> _Made:
    data = bytearray(_csv(_ratings(rng)).decode().encode("utf-16-le"))
    at = int(rng.integers(30, len(data) // 2)) * 2
    data[at : at + 2] = b"\x00\xd8"  # a high surrogate with no low one after it
    return _Made(".csv", b"\xff\xfe" + bytes(data), "refuse")


def utf32(rng: np.random.Generator, scale: Scale) -> _Made:
    return _Made(".csv", _csv(_ratings(rng)).decode().encode("utf-32"), "refuse")


def invalid_utf8(rng: np.random.Generator, scale: Scale) -> _Made:
    data = bytearray(_csv(_ratings(rng)))
    bad = [b"\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\xe2\x82", b"\xf8\x88\x80\x80\x80", b"\x80"][int(rng.integers(6))]
    at = int(rng.integers(len(data) // 3, len(data)))
    return _Made(".csv", bytes(data[:at]) + bad + bytes(data[at:]), "refuse")


def byte_order_marks(rng: np.random.Generator, scale: Scale) -> _Made:
    variant = int(rng.integers(4))
    body = _csv(_ratings(rng))
    if variant == 0:
        return _Made(".csv", b"\xef\xbb\xbf" + body, "accept")
    if variant == 1:
        return _Made(".csv", b"\xef\xbb\xbf\xef\xbb\xbf" + body, "accept")  # a stray second mark is dropped from the name
    if variant == 2:
        return _Made(".csv", b"\xef\xbb\xbf", "refuse")
    return _Made(".csv", body[:40] + b"\xef\xbb\xbf" + body[40:], "either")


def gzip_ok_and_damaged(rng: np.random.Generator, scale: Scale) -> _Made:
    packed = _gz(_csv(_ratings(rng)))
    variant = int(rng.integers(4))
    if variant == 0:
        return _Made(".csv.gz", packed[: int(rng.integers(10, len(packed) - 1))], "refuse")
    if variant == 1:
        return _Made(".csv.gz", packed + bytes(rng.integers(0, 256, 20, dtype=np.uint8)), "either")
    if variant == 2:
        return _Made(".csv.gz", _gz(packed), "refuse")  # compressed twice
    return _Made("", packed, "accept")  # no suffix: gzip and delimiter found from the content


def gzip_bomb(rng: np.random.Generator, scale: Scale) -> _Made:
    if scale == "full":
        return _Made(".csv.gz", _gzip_bomb(201 << 20), "refuse")
    return _Made(".csv.gz", _gzip_bomb(3 << 20), "refuse", max_bytes=2 << 20)


def oversize(rng: np.random.Generator, scale: Scale) -> _Made:
    if scale == "full":
        return _Made(".csv", b"item_id,system,rater,score\n" + b"i,S,h,1\n" * ((201 << 20) // 8), "refuse")
    return _Made(".csv", _csv(_ratings(rng, 40, 5)), "refuse", max_bytes=512)


def empty_and_header_only(rng: np.random.Generator, scale: Scale) -> _Made:
    choices = [
        (".csv", b""),
        (".csv", b"   \n\n\t\n"),
        (".csv", b"item_id,system,rater,score\n"),
        (".csv", b"item_id,system,rater,score\n\n\n"),
        (".tsv", b"\r\n\r\n"),
        (".json", b"[]"),
        (".json", b"  [ ]  "),
        (".jsonl", b"{}\n"),
        (".jsonl", b"\n\n"),
        (".parquet", b""),
        (".csv.gz", _gz(b"")),
    ]
    suffix, data = choices[int(rng.integers(len(choices)))]
    return _Made(suffix, data, "refuse")


def binary_junk(rng: np.random.Generator, scale: Scale) -> _Made:
    magic = [b"", b"\x89PNG\r\n\x1a\n", b"%PDF-1.7\n", b"\x7fELF\x02\x01\x01", b"PK\x03\x04", b"PAR1", b"\x1f\x8b\x08\x00"]
    junk = magic[int(rng.integers(len(magic)))] + rng.integers(0, 256, int(rng.integers(1, 5000)), dtype=np.uint8).tobytes()
    suffix = [".csv", ".tsv", ".json", ".jsonl", ".parquet", ".txt", ""][int(rng.integers(7))]
    return _Made(suffix, junk, "either")


def control_character_junk(rng: np.random.Generator, scale: Scale) -> _Made:
    """Valid UTF-8 made of control characters, delimiters and quotes."""
    alphabet = [*"\x00\x01\x07\x08\x0b\x0c\x1b\x7f,;|\t\"'\r\n ", "\u2028", "\u202e", "\x85"]
    text = "".join(alphabet[int(k)] for k in rng.integers(0, len(alphabet), int(rng.integers(1, 3000))))
    return _Made([".csv", ".tsv", ".jsonl", ".json"][int(rng.integers(4))], text.encode(), "either")


def text_scores(rng: np.random.Generator, scale: Scale) -> _Made:
    frame = _ratings(rng)
    bad = ["three", "3,5", "½", "３", "1_000", "0x10", "3 stars", "--1", "1e", "true", "[1]", "1.2.3"]
    at = rng.integers(0, len(frame), int(rng.integers(1, 4)))
    frame.loc[at, "score"] = [bad[int(k)] for k in rng.integers(0, len(bad), len(at))]
    suffix, data = _encode(frame, _fmt(rng, ("csv", "tsv", "jsonl", "json", "parquet")))
    return _Made(suffix, data, "refuse")


def infinite_scores(rng: np.random.Generator, scale: Scale) -> _Made:
    frame = _ratings(rng)
    frame.loc[int(rng.integers(len(frame))), "score"] = ["inf", "-inf", "Infinity", "-Infinity", "1e309", "-1e400"][int(rng.integers(6))]
    suffix, data = _encode(frame, _fmt(rng, ("csv", "tsv", "jsonl", "parquet")))
    return _Made(suffix, data, "refuse")


def nan_scores(rng: np.random.Generator, scale: Scale) -> _Made:
    frame = _ratings(rng)
    at = rng.integers(0, len(frame), int(rng.integers(1, 3)))
    frame.loc[at, "score"] = [["nan", "NaN", "NA", "null", "", "None"][int(k)] for k in rng.integers(0, 6, len(at))]
    suffix, data = _encode(frame, _fmt(rng, ("csv", "tsv", "jsonl", "parquet")))
    return _Made(suffix, data, "either")  # skipped with a warning, unless a pair loses all its items


def extreme_finite_scores(rng: np.random.Generator, scale: Scale) -> _Made:
    frame = _ratings(rng)
    extremes = ["1e15", "-1e15", "-0", "1e-320", "4.9e-324", "0.1e1", "+7", ".5", "5."]
    at = rng.integers(0, len(frame), 3)
    frame.loc[at, "score"] = [extremes[int(k)] for k in rng.integers(0, len(extremes), 3)]
    huge = bool(rng.integers(2))  # past MAX_SCORE: representable, but its square overflows
    if huge:
        frame.loc[int(at[0]), "score"] = ["1e308", "-1e308", "1e16"][int(rng.integers(3))]
    suffix, data = _encode(frame, _fmt(rng, ("csv", "tsv", "parquet")))
    return _Made(suffix, data, "refuse" if huge else "accept")


def long_digit_numbers(rng: np.random.Generator, scale: Scale) -> _Made:
    digits = _digits(rng, int(rng.integers(4_301, 6_000)))
    frame = _ratings(rng)
    variant = int(rng.integers(5))
    if variant == 0:  # a 5,000-digit score in a CSV: not a finite number
        frame.loc[0, "score"] = digits
        return _Made(".csv", _csv(frame), "refuse")
    if variant == 1:  # a 5,000-digit item name in a CSV is just a long name
        frame["item_id"] = frame["item_id"].where(frame["item_id"] != "i0", digits)
        return _Made(".csv", _csv(frame), "accept")
    if variant == 2:  # a 5,000-digit JSON number literal
        records = frame.to_dict("records")
        text = "\n".join(json.dumps(r) for r in records).replace('"score": "' + records[0]["score"] + '"', f'"score": {digits}', 1)
        return _Made(".jsonl", text.encode(), "refuse")
    if variant == 3:
        text = json.dumps(frame.to_dict("records")).replace('"i0"', digits, 1)
        return _Made(".json", text.encode(), "refuse")
    refs = pd.DataFrame({"item_id": ["i0", "i1"], "ref_index": [digits, "0"], "reference": ["a", "b"]})
    return _Made(".csv", _csv(refs), "refuse")


def deep_json(rng: np.random.Generator, scale: Scale) -> _Made:
    depth = int([9, 50, 999, 5_000, 100_000][int(rng.integers(5))])
    deep = "[" * depth + "1" + "]" * depth
    row = {"item_id": "i1", "system": "S1", "rater": "human", "score": "1"}
    variant = int(rng.integers(4))
    if variant == 0:
        return _Made(".json", ("[" + json.dumps(row)[:-1] + f', "notes": {deep}}}]').encode(), "refuse")
    if variant == 1:
        return _Made(".jsonl", (json.dumps(row)[:-1] + f', "notes": {deep}}}\n').encode(), "refuse")
    if variant == 2:
        return _Made(".json", deep.encode(), "refuse")
    nested = '{"a":' * depth + "1" + "}" * depth
    return _Made(".jsonl", (json.dumps(row) + "\n" + nested + "\n").encode(), "refuse")


def shallow_nested_json(rng: np.random.Generator, scale: Scale) -> _Made:
    frame = _ratings(rng)
    records = frame.to_dict("records")
    for record in records:
        record["meta"] = {"tags": ["a", 1, None, True], "n": {"m": 1.5}}
    if rng.random() < 0.5:
        return _Made(".jsonl", "\n".join(json.dumps(r) for r in records).encode(), "accept")
    return _Made(".json", json.dumps(records).encode(), "accept")


def json_constants(rng: np.random.Generator, scale: Scale) -> _Made:
    records = _ratings(rng).to_dict("records")
    constant = ["NaN", "Infinity", "-Infinity", "null", "true", "false"][int(rng.integers(6))]
    text = "\n".join(json.dumps(r) for r in records)
    text = text.replace(f'"score": "{records[0]["score"]}"', f'"score": {constant}', 1)
    expect: Expect = "either" if constant in ("NaN", "null") else "refuse"
    return _Made(".jsonl", text.encode(), expect)


def json_wrong_shapes(rng: np.random.Generator, scale: Scale) -> _Made:
    choices = [
        (".json", b'{"item_id": "i1"}'),
        (".json", b'"just a string"'),
        (".json", b"42"),
        (".json", b'[{"item_id": "i1"}, [1, 2]]'),
        (".json", b'[{"item_id": "i1"},]'),
        (".jsonl", b'{"item_id": "i1"}\n[1, 2]\n'),
        (".jsonl", b'{"item_id": "i1"}\n{"item_id": \n'),
        (".jsonl", b'{"item_id": "i1"} {"item_id": "i2"}\n'),
        (".json", b"[" + b'{"a": 1},' * 10 + b"\n"),
        (".jsonl", b'{"a": "\\ud800"}\n'),
    ]
    suffix, data = choices[int(rng.integers(len(choices)))]
    return _Made(suffix, data, "refuse")


def json_line_separators(rng: np.random.Generator, scale: Scale) -> _Made:
    frame = _with_names(_ratings(rng), "system", ["a\u2028b", "c\u2029d", "e\x85f", "g\x1ch"])
    return _Made(".jsonl", frame.to_json(orient="records", lines=True, force_ascii=False).encode(), "accept")


def json_duplicate_keys(rng: np.random.Generator, scale: Scale) -> _Made:
    records = _ratings(rng).to_dict("records")
    text = "\n".join(json.dumps(r) for r in records)
    row = int(rng.integers(len(records)))
    lines = text.split("\n")
    lines[row] = lines[row][:-1] + ', "score": "5"}'
    if rng.random() < 0.5:
        return _Made(".jsonl", "\n".join(lines).encode(), "refuse", "duplicate_column")
    return _Made(".json", ("[" + ",".join(lines) + "]").encode(), "refuse", "duplicate_column")


def ragged_rows(rng: np.random.Generator, scale: Scale) -> _Made:
    sep = [",", "\t", ";"][int(rng.integers(3))]
    lines = _csv(_ratings(rng), sep).decode().splitlines()
    variant = int(rng.integers(5))
    rows = rng.integers(1, len(lines), int(rng.integers(1, 4)))
    for row in rows:
        if variant == 0:
            lines[row] += sep + "extra"
        elif variant == 1:
            lines[row] = lines[row].rsplit(sep, 1)[0]
        elif variant == 2:
            lines[row] += sep
        elif variant == 3:
            lines[row] = sep.join(lines[row].split(sep)[:1])
        else:
            lines[row] += (sep + "x") * 50
    suffix = {",": ".csv", "\t": ".tsv", ";": ".txt"}[sep]
    return _Made(suffix, ("\n".join(lines) + "\n").encode(), "refuse", "ragged")


def trailing_delimiter_everywhere(rng: np.random.Generator, scale: Scale) -> _Made:
    lines = _csv(_ratings(rng)).decode().splitlines()
    header_too = rng.random() < 0.5
    text = "\n".join((line + "," if (k > 0 or header_too) else line) for k, line in enumerate(lines)) + "\n"
    if header_too:  # an unnamed empty last column: consistent, read and ignored
        return _Made(".csv", text.encode(), "accept")
    return _Made(".csv", text.encode(), "refuse", "ragged")


def duplicate_columns(rng: np.random.Generator, scale: Scale) -> _Made:
    frame = _ratings(rng)
    header = ["item_id", "system", "rater", "score"]
    variant = int(rng.integers(5))
    other = frame["score"].to_numpy()[::-1]
    if variant == 0:
        names, extra = [*header, "score"], other
    elif variant == 1:
        names, extra = [*header, " score "], other
    elif variant == 2:
        names, extra = [*header, "Score"], other
    elif variant == 3:
        names, extra = ["item_id", "system", "system", "rater", "score"], None
    else:
        names, extra = ["item_id", "system", "rater", "score", "SCORE"], other
    rows = frame.to_numpy().tolist()
    if extra is not None:
        rows = [[*r, e] for r, e in zip(rows, extra, strict=True)]
    elif variant == 3:
        rows = [[r[0], r[1], r[1], r[2], r[3]] for r in rows]
    fmt = _fmt(rng, ("csv", "tsv", "parquet"))
    if fmt == "parquet":
        import pyarrow as pa

        table = pa.Table.from_arrays([pa.array([str(r[k]) for r in rows]) for k in range(len(names))], names=names)
        return _Made(".parquet", _parquet_bytes(table), "refuse", "duplicate_column")
    sep = "\t" if fmt == "tsv" else ","
    text = sep.join(names) + "\n" + "".join(sep.join(map(str, r)) + "\n" for r in rows)
    return _Made(".tsv" if fmt == "tsv" else ".csv", text.encode(), "refuse", "duplicate_column")


def duplicate_wide_rater_columns(rng: np.random.Generator, scale: Scale) -> _Made:
    n = int(rng.integers(3, 8))
    text = "item_id,system,BLEU,COMET,BLEU\n" + "".join(f"i{k},S{k % 2},{rng.random():.2f},0.5,{rng.random():.2f}\n" for k in range(n))
    return _Made(".csv", text.encode(), "refuse", "duplicate_column")


def unnamed_columns(rng: np.random.Generator, scale: Scale) -> _Made:
    frame = _ratings(rng)
    text = "item_id,system,rater,score,,\n" + "".join(",".join(r) + ",x,\n" for r in frame.to_numpy().tolist())
    return _Made(".csv", text.encode(), "accept")


def quoting(rng: np.random.Generator, scale: Scale) -> _Made:
    frame = _ratings(rng)
    variant = int(rng.integers(6))
    text = _csv(frame).decode()
    if variant == 0:  # a quote that is never closed, in the last row
        return _Made(".csv", (text.rstrip("\n") + '"\n' + text.split("\n", 1)[1]).replace("\n", '\n"', 1).encode(), "refuse")
    if variant == 1:  # an unclosed quote in the middle swallows the rest
        lines = text.splitlines()
        at = int(rng.integers(1, len(lines) - 1))
        lines[at] = lines[at].replace(",", ',"', 1)
        return _Made(".csv", ("\n".join(lines) + "\n").encode(), "refuse")
    if variant == 2:  # quotes inside an unquoted field are literal
        return _Made(".csv", text.replace("S1", 'S"1', 1).encode(), "either")
    if variant == 3:  # quoted names with delimiters, line breaks and doubled quotes: all valid
        named = _with_names(frame, "system", ["a,b", "c\nd", 'e""f', "g\r\nh", "i\rj"])
        return _Made(".csv", _csv(named), "accept")
    if variant == 4:
        return _Made(".csv", text.replace("\n", "\r").encode(), "accept")  # old Mac line ends
    return _Made(".csv", "".join(line + ("\r\n" if k % 2 else "\n") for k, line in enumerate(text.splitlines())).encode(), "accept")


def nul_bytes(rng: np.random.Generator, scale: Scale) -> _Made:
    data = bytearray(_csv(_ratings(rng)))
    for _ in range(int(rng.integers(1, 4))):
        data.insert(int(rng.integers(len(data))), 0)
    return _Made(".csv", bytes(data), "either")


def delimiter_confusion(rng: np.random.Generator, scale: Scale) -> _Made:
    frame = _ratings(rng)
    header = "item_id,system,rater,score\n"
    body = "".join(";".join(r) + "\n" for r in frame.to_numpy().tolist())
    return _Made(".csv", (header + body).encode(), "refuse", "ragged")


def unrelated_columns(rng: np.random.Generator, scale: Scale) -> _Made:
    text = "a,b,c\n" + "".join(f"{k},{k * 2},x\n" for k in range(int(rng.integers(1, 20))))
    return _Made([".csv", ".tsv", ""][int(rng.integers(3))], text.encode(), "refuse")


def long_fields(rng: np.random.Generator, scale: Scale) -> _Made:
    """Long documents are legitimate: a 131,073+ character cell must be read, not refused."""
    length = int(rng.integers(131_073, 400_000 if scale == "fast" else 3_000_000))
    frame = _ratings(rng)
    variant = int(rng.integers(3))
    if variant == 0:
        frame["comment"] = ["x" * length if k == 0 else "short" for k in range(len(frame))]
    elif variant == 1:
        frame["comment"] = ['quoted, "long"\n' * (length // 16) if k == 1 else "" for k in range(len(frame))]
    else:
        frame["system"] = frame["system"].where(frame["system"] != "S0", "S" * length)
    return _Made(".csv", _csv(frame), "accept")


def wide_file(rng: np.random.Generator, scale: Scale) -> _Made:
    variant = int(rng.integers(3))
    if variant == 0:  # the campaign's 20,000-column file
        n = 20_000 if scale == "full" or rng.random() < 0.5 else 1_001
        header = "item_id,system," + ",".join(f"r{k}" for k in range(n))
        rows = "".join(f"i{i},S{i % 2}," + ",".join("0.5" for _ in range(n)) + "\n" for i in range(4))
        return _Made(".csv", (header + "\n" + rows).encode(), "refuse")
    if variant == 1:  # 998 raters: within the limit, and loads
        header = "item_id,system," + ",".join(f"r{k}" for k in range(998))
        rows = "".join(f"i{i},S{s}," + ",".join(f"{rng.random():.2f}" for _ in range(998)) + "\n" for i in range(3) for s in range(2))
        return _Made(".csv", (header + "\n" + rows).encode(), "accept")
    keys = [{f"k{k}": k for k in range(1_001)}]
    return _Made(".jsonl", json.dumps(keys[0]).encode(), "refuse")


def huge_line(rng: np.random.Generator, scale: Scale) -> _Made:
    n = 100_000
    variant = int(rng.integers(3))
    if variant == 0:  # the campaign's single line of 100,000 fields
        return _Made(".csv", ",".join(str(k) for k in range(n)).encode(), "refuse")
    if variant == 1:  # a data line with 100,000 fields under a normal header
        text = _csv(_ratings(rng)).decode() + ",".join("1" for _ in range(n)) + "\n"
        return _Made(".csv", text.encode(), "refuse", "ragged")
    return _Made(".csv", ("x" * int(rng.integers(1 << 20, 4 << 20))).encode(), "refuse")  # one long line, one column


def many_lines(rng: np.random.Generator, scale: Scale) -> _Made:
    variant = int(rng.integers(3))
    if variant == 0:  # millions of JSON objects: bounded before Python builds them
        return _Made(".jsonl", b"{}\n" * 1_000_001, "refuse")
    if variant == 1:
        return _Made(".json", b"[" + b'{"a":1},' * 1_000_000 + b'{"a":1}]', "refuse")
    lines = 2_000_000 if scale == "full" else 50_000
    return _Made(".csv", b"item_id\n" + b"a\n" * lines, "refuse")


def many_systems(rng: np.random.Generator, scale: Scale) -> _Made:
    rows = "".join(f"i{k % 3},S{k},human,{k % 5}\n" for k in range(2_001))
    return _Made(".csv", ("item_id,system,rater,score\n" + rows).encode(), "refuse")


def damaged_parquet(rng: np.random.Generator, scale: Scale) -> _Made:
    import pyarrow as pa

    frame = _ratings(rng)
    data = bytearray(_parquet_bytes(pa.Table.from_pandas(frame, preserve_index=False)))
    variant = int(rng.integers(5))
    if variant == 0:
        return _Made(".parquet", bytes(data[: int(rng.integers(4, len(data) - 1))]), "refuse")
    if variant == 1:  # bytes flipped in the pages (a page may still decode)
        for at in rng.integers(4, len(data) // 2, int(rng.integers(1, 6))):
            data[int(at)] ^= 0xFF
        return _Made(".parquet", bytes(data), "either")
    if variant == 2:  # the footer's length field
        data[-8:-4] = rng.integers(0, 256, 4, dtype=np.uint8).tobytes()
        return _Made(".parquet", bytes(data), "refuse")
    if variant == 3:  # invalid UTF-8 inside a string column's plain page
        at = bytes(data).find(b"S0")
        data[at : at + 2] = b"\xff\xfe"
        return _Made(".parquet", bytes(data), "either")
    return _Made(".parquet", bytes(data[: len(data) // 2]) + bytes(data[len(data) // 2 + 7 :]), "refuse")


def odd_parquet(rng: np.random.Generator, scale: Scale) -> _Made:
    import pyarrow as pa

    n = int(rng.integers(3, 7))
    variant = int(rng.integers(3))
    base = {"item_id": pa.array([f"i{k}" for k in range(n)] * 2), "system": pa.array(["A"] * n + ["B"] * n)}
    if variant == 0:
        table = pa.table(base | {"rater": pa.array(["human"] * 2 * n), "score": pa.array(np.arange(2 * n, dtype=np.float64))})
        return _Made(".parquet", _parquet_bytes(table), "accept")
    if variant == 1:
        nested = pa.array([[k, k + 1] for k in range(2 * n)])
        table = pa.table(base | {"rater": pa.array(["human"] * 2 * n), "score": pa.array(np.ones(2 * n)), "tags": nested})
        return _Made(".parquet", _parquet_bytes(table), "accept")
    wide = {f"c{k}": pa.array(["1"] * 2) for k in range(1_500)}
    return _Made(".parquet", _parquet_bytes(pa.table(wide)), "refuse")


def payload_names(rng: np.random.Generator, scale: Scale) -> _Made:
    """Formula, markup and terminal-escape payloads as system, rater and item names: valid."""
    frame = _ratings(rng, n_systems=4)
    pool = list(PAYLOAD_NAMES)
    rng.shuffle(pool)
    frame = _with_names(frame, "system", pool[:4])
    if rng.random() < 0.5:
        frame = frame.assign(rater=frame["rater"].map({"human": "human", "bleu": pool[4]}))
    if rng.random() < 0.5:
        frame = _with_names(frame, "item_id", pool[5:])
    fmt = _fmt(rng, ("csv", "jsonl", "json", "parquet"))
    suffix, data = _encode(frame, fmt)
    return _Made(suffix, data, "accept")


def payload_preferences(rng: np.random.Generator, scale: Scale) -> _Made:
    frame = _preferences(rng)
    pool = list(PAYLOAD_NAMES)
    rng.shuffle(pool)
    mapping = {"S0": pool[0], "S1": pool[1], "S2": pool[2]}
    frame = frame.assign(system_a=frame["system_a"].map(mapping), system_b=frame["system_b"].map(mapping))
    return _Made(".csv", _csv(frame), "accept")


def value_errors(rng: np.random.Generator, scale: Scale) -> _Made:
    variant = int(rng.integers(5))
    if variant == 0:
        frame = _preferences(rng)
        frame.loc[0, "label"] = ["maybe", "2", ">>", "A+", ""][int(rng.integers(5))]
        return _Made(".csv", _csv(frame), "refuse" if frame.loc[0, "label"] else "either")
    if variant == 1:
        frame = _preferences(rng)
        frame.loc[0, "system_b"] = frame.loc[0, "system_a"]
        return _Made(".csv", _csv(frame), "refuse")
    if variant == 2:
        frame = _ratings(rng)
        frame.loc[int(rng.integers(len(frame))), ["item_id", "system", "rater"][int(rng.integers(3))]] = "  "
        return _Made(".csv", _csv(frame), "refuse")
    frame = _ratings(rng)
    copy = frame.iloc[[0]].copy()
    if variant == 3:
        copy["score"] = "999"
        return _Made(".csv", _csv(pd.concat([frame, copy])), "refuse")  # conflicting duplicate
    return _Made(".csv", _csv(pd.concat([frame, copy])), "accept")  # an exact duplicate is dropped with a warning


def unicode_names(rng: np.random.Generator, scale: Scale) -> _Made:
    names = ["e\u0301cole", "\u00e9cole", "日本語", "🤖 bot", "Ω", "ﬁ", "\u0130", "a\u200db"]
    frame = _with_names(_ratings(rng, n_systems=4), "system", names[int(rng.integers(3)) :])
    return _Made(".csv", _csv(frame), "accept")


def ambiguous_aliases(rng: np.random.Generator, scale: Scale) -> _Made:
    frame = _ratings(rng)
    frame["value"] = "not this"
    return _Made(".csv", _csv(frame), "accept")


def random_mutation(rng: np.random.Generator, scale: Scale) -> _Made:
    """A valid file of any format with a few random byte edits."""
    suffix, data = _encode(_ratings(rng), _fmt(rng))
    buffer = bytearray(data)
    inserts = [b'"', b",", b"\n", b"\r", b"\x00", b"\xff", b"{", b"[", b"]", b"}", b"\\", b"\t", b";", b"'"]
    for _ in range(int(rng.integers(1, 6))):
        op = int(rng.integers(5))
        at = int(rng.integers(len(buffer))) if buffer else 0
        if op == 0 and buffer:
            buffer[at] = int(rng.integers(256))
        elif op == 1:
            buffer[at:at] = inserts[int(rng.integers(len(inserts)))]
        elif op == 2 and buffer:
            del buffer[at : at + int(rng.integers(1, 20))]
        elif op == 3:
            del buffer[at:]
        else:
            buffer[at:at] = buffer[at : at + int(rng.integers(1, 200))]
    packed = bytes(buffer)
    if rng.random() < 0.2:
        return _Made(suffix + ".gz", _gz(packed), "either")
    return _Made(suffix, packed, "either")


# ---------------------------------------------------------------------------------------------
# The field's own formats: WMT MQM error files, Chatbot-Arena battles, Label Studio exports.

_MQM_HEADER = ["system", "doc", "doc_id", "seg_id", "rater", "source", "target", "category", "severity"]
_SEVERITIES = ["Major", "Minor", "Neutral", "No-error", "critical", "no_error"]
_CATEGORIES = ["Accuracy/Mistranslation", "Fluency/Punctuation", "Non-translation!", "Style/Awkward", "No-error"]


def _mqm(rng: np.random.Generator) -> pd.DataFrame:
    rows = []
    for seg in range(1, int(rng.integers(2, 6))):
        for system in ("S0", "S1", "S2"):
            for rater in ("r1", "r2"):
                for _ in range(int(rng.integers(1, 4))):
                    category = _CATEGORIES[int(rng.integers(len(_CATEGORIES)))]
                    severity = _SEVERITIES[int(rng.integers(len(_SEVERITIES)))]
                    rows.append((system, "talk.1", str(seg), str(seg), rater, f"Source {seg}.", f"Ziel <v>{seg}</v>.", category, severity))
    return pd.DataFrame(rows, columns=_MQM_HEADER)


def mqm_files(rng: np.random.Generator, scale: Scale) -> _Made:
    """WMT MQM error files (tab-separated, Google's layout): valid, or with one flaw named by the refusal."""
    frame = _mqm(rng)
    variant = int(rng.integers(6))
    if variant == 1:  # a severity MQM does not have
        frame.loc[int(rng.integers(len(frame))), "severity"] = ["Severe", "5", "", "majr"][int(rng.integers(4))]
    elif variant == 2:  # a needed column missing (still recognised by its other columns)
        frame = frame.drop(columns=["severity" if rng.random() < 0.5 else "seg_id"]).drop(columns=["doc"])
    elif variant == 3:
        frame.loc[int(rng.integers(len(frame))), ["system", "rater", "seg_id"][int(rng.integers(3))]] = " "
    elif variant == 4:  # a row with fields missing
        text = _csv(frame, "\t").decode().split("\r\n")
        at = int(rng.integers(1, len(text) - 1))
        text[at] = "\t".join(text[at].split("\t")[:5])
        return _Made(".tsv", "\r\n".join(text).encode(), "refuse", flaw="ragged")
    elif variant == 5:  # MQM Viewer's column names
        frame = frame.rename(columns={"doc_id": "docSegId", "seg_id": "globalSegId"})
    return _Made(".tsv", _csv(frame, "\t"), "accept" if variant in (0, 5) else "refuse")


def _battles(rng: np.random.Generator) -> list[dict[str, object]]:
    winners = ["model_a", "model_b", "tie", "tie (bothbad)", "Model_A", "TIE"]
    models = ["gpt-4", "vicuna-13b", "koala-13b"]
    battles: list[dict[str, object]] = []
    for k in range(int(rng.integers(4, 20))):
        a, b = rng.choice(len(models), size=2, replace=False)
        battles.append(
            {"question_id": f"q{k % 5}", "model_a": models[a], "model_b": models[b], "judge": f"arena_user_{k}",
             "winner": winners[int(rng.integers(len(winners)))], "turn": 1, "anony": True, "tstamp": 1.0 + k}
        )  # fmt: skip
    return battles


def arena_files(rng: np.random.Generator, scale: Scale) -> _Made:
    """Chatbot-Arena battles as a JSON array, JSON lines or CSV: valid, or with one flaw."""
    battles = _battles(rng)
    variant = int(rng.integers(6))
    expect: Expect = "accept"
    if variant == 1:
        battles[int(rng.integers(len(battles)))]["winner"] = ["model_c", "draw", "", "a"][int(rng.integers(4))]
        expect = "refuse"
    elif variant == 2:
        battles[0]["model_b"] = battles[0]["model_a"]
        expect = "refuse"
    elif variant == 3:
        for battle in battles:
            battle["conversation_a"] = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]
            battle["conversation_b"] = "not a conversation" if battle is battles[-1] else []
        expect = "refuse"
    fmt = ["json", "jsonl", "csv"][int(rng.integers(3))]
    if fmt == "json":
        data = json.dumps(battles).encode()
    elif fmt == "jsonl":
        data = "".join(json.dumps(b) + "\n" for b in battles).encode()
    else:
        data = pd.DataFrame(battles).to_csv(index=False).encode()
    if variant == 4:  # cut short: broken JSON, or a ragged CSV row
        data = data[: int(len(data) * rng.uniform(0.3, 0.95))]
        return _Made("." + fmt, data, "refuse" if fmt == "json" else "either")  # lines may end where a row ends
    return _Made("." + fmt, data, expect)


LABEL_STUDIO_DATASET = "upload:hostile"
"""The data key the campaign's Label Studio exports were made for (no study)."""
LABEL_STUDIO_SYSTEMS = ("A", "B", "C")
CAMPAIGN_SECRET = b"the hostile-upload campaign's key"
"""The secret the campaign's blind files are keyed with (a study's, in use)."""


def label_studio_exports(rng: np.random.Generator, scale: Scale) -> _Made:
    """Label Studio JSON exports of a prefeval project: valid, or with one flaw (a task prefeval
    never exported, a changed task, an answer off the config, broken or JSON-MIN files, random bytes)."""
    from prefeval_core.annotation.labelstudio import CHOICE_LABELS, comparison_project
    from prefeval_core.vocabulary.tasks import ComparisonTask
    from tests.labelstudio_fixtures import Answer, choice, label_studio_export

    items = [f"i{k}" for k in range(int(rng.integers(2, 8)))]
    tasks_made = [ComparisonTask(i, a, b) for i in items for a, b in (("A", "B"), ("B", "C"))]
    from prefeval_core.annotation.blind import BlindKey

    project = comparison_project(tasks_made, LABEL_STUDIO_DATASET, key=BlindKey(CAMPAIGN_SECRET), seed=int(rng.integers(100)))
    tasks = json.loads(project.tasks_json())
    labels = list(CHOICE_LABELS.values())
    variant = int(rng.integers(7))
    if variant == 1:
        tasks.insert(int(rng.integers(len(tasks))), {"data": {"text": "made in Label Studio"}})
    elif variant == 2:
        tasks[int(rng.integers(len(tasks)))]["data"]["prefeval"]["item_id"] = "i999"
    elif variant == 3:
        labels = ["Maybe"]

    def answers(task: dict[str, object]) -> list[Answer]:  # up to two annotators, one answer each (two would conflict)
        users = rng.permutation(3)[: int(rng.integers(0, 3))] + 1
        return [Answer(choice(labels[int(rng.integers(len(labels)))]), user=int(u), minute=m) for m, u in enumerate(users)]

    data = label_studio_export(tasks, answers)
    if variant == 3 and b"Maybe" not in data:  # nobody answered: nothing off the config
        return _Made(".json", data, "accept", reader="labelstudio")
    if variant == 4:
        return _Made(".json", data[: int(len(data) * rng.uniform(0.1, 0.95))], "refuse", reader="labelstudio")
    if variant == 5:
        minimal = [{"id": k, "item_id": t["data"]["prefeval"]["item_id"], "preference": "Equal"} for k, t in enumerate(tasks)]
        return _Made(".json", json.dumps(minimal).encode(), "refuse", reader="labelstudio")
    if variant == 6:
        buffer = bytearray(data)
        for _ in range(int(rng.integers(1, 6))):
            buffer[int(rng.integers(len(buffer)))] = int(rng.integers(256))
        return _Made(".json", bytes(buffer), "either", reader="labelstudio")
    return _Made(".json", data, "accept" if variant == 0 else "refuse", reader="labelstudio")


REQUEST_DATASET = "upload:hostile-requests"
"""The data key the campaign's request files were made for (no study)."""
REQUEST_SYSTEMS = ("gpt-4", "llama", "mistral")


def filled_request_files(rng: np.random.Generator, scale: Scale) -> _Made:
    """Blind request files filled in by annotators (CSV or JSONL): valid, or with one flaw (a
    changed request id, outputs A and B swapped, a label off the scale, a column dropped, cut
    short, random bytes)."""
    from prefeval_core.annotation.blind import BlindKey
    from prefeval_core.annotation.requests import blind_requests, export_requests_csv, export_requests_jsonl
    from prefeval_core.vocabulary.tasks import ComparisonTask

    items = [f"i{k}" for k in range(int(rng.integers(2, 6)))]
    pairs = [("gpt-4", "llama"), ("gpt-4", "mistral"), ("llama", "mistral")]
    tasks = [ComparisonTask(i, a, b) for i in items for a, b in pairs]
    texts = pd.DataFrame([{"item_id": i, "system": s, "output": f"{s} on {i}"} for i in items for s in REQUEST_SYSTEMS])
    frame = blind_requests(tasks, REQUEST_DATASET, key=BlindKey(CAMPAIGN_SECRET), texts=texts, seed=int(rng.integers(100)))
    frame["label"] = rng.choice([">", "=", "<", "A", "tie", "B", ""], size=len(frame))
    row = int(rng.integers(len(frame)))
    variant = int(rng.integers(7))
    if variant == 1:
        frame.loc[row, ["request_id", "label"]] = [f"{int(rng.integers(2**62)):032x}", ">"]
    elif variant == 2:
        frame.loc[row, ["output_a", "output_b", "label"]] = [frame.loc[row, "output_b"], frame.loc[row, "output_a"], ">"]
    elif variant == 3:
        frame.loc[row, "label"] = str(rng.choice(["maybe", "2", ">>", "a better"]))
    elif variant == 4:
        frame = frame.drop(columns=str(rng.choice(["request_id", "digest", "label", "item_id"])))
    jsonl = bool(rng.integers(2))
    data = export_requests_jsonl(frame) if jsonl else export_requests_csv(frame)
    suffix = ".jsonl" if jsonl else ".csv"
    if variant == 5:  # cut short: a line may end where a row ends
        return _Made(suffix, data[: int(len(data) * rng.uniform(0.2, 0.95))], "either", reader="requests")
    if variant == 6:
        buffer = bytearray(data)
        for _ in range(int(rng.integers(1, 6))):
            buffer[int(rng.integers(len(buffer)))] = int(rng.integers(256))
        return _Made(suffix, bytes(buffer), "either", reader="requests")
    return _Made(suffix, data, "accept" if variant == 0 else "refuse", reader="requests")


BUILDERS: tuple[Builder, ...] = (
    valid_any_format,
    valid_preferences,
    wrong_encoding,
    utf16_with_bom,
    utf16_odd_bytes,
    utf16_lone_surrogate,
    utf32,
    invalid_utf8,
    byte_order_marks,
    gzip_ok_and_damaged,
    gzip_bomb,
    oversize,
    empty_and_header_only,
    binary_junk,
    control_character_junk,
    text_scores,
    infinite_scores,
    nan_scores,
    extreme_finite_scores,
    long_digit_numbers,
    deep_json,
    shallow_nested_json,
    json_constants,
    json_wrong_shapes,
    json_line_separators,
    json_duplicate_keys,
    ragged_rows,
    trailing_delimiter_everywhere,
    duplicate_columns,
    duplicate_wide_rater_columns,
    unnamed_columns,
    quoting,
    nul_bytes,
    delimiter_confusion,
    unrelated_columns,
    long_fields,
    wide_file,
    huge_line,
    many_lines,
    many_systems,
    damaged_parquet,
    odd_parquet,
    payload_names,
    payload_preferences,
    value_errors,
    unicode_names,
    ambiguous_aliases,
    mqm_files,
    arena_files,
    label_studio_exports,
    filled_request_files,
    random_mutation,
    random_mutation,
    random_mutation,
)
"""Every kind of hostile file; random byte edits appear three times (the widest net)."""


def hostile_upload(index: int, *, seed: int = 0, scale: Scale = "fast") -> HostileUpload:
    """Upload number ``index`` of the corpus for ``seed`` (see the module docstring)."""
    builder = BUILDERS[index % len(BUILDERS)]
    made = builder(np.random.default_rng([seed, index]), scale)
    name = f"upload{index:05d}{made.suffix}"
    return HostileUpload(index, builder.__name__, name, made.data, made.expect, made.flaw, made.max_bytes, made.reader)
