"""What the campaign checks for each hostile upload, and the figures it adds up.

For one upload: it goes through ``load_dataset`` and through ``python -m prefeval_core validate``
in-process; an accepted file also goes through ``describe`` and through every CSV export of
the data layer (the dataset's frames through :func:`~prefeval_core.data.safe_csv.to_safe_csv`, and,
where a name could be a formula or holds control characters, ``metrics --out``). Counted:
tracebacks, refusals with a problem that does not name the file, flawed files (duplicate
columns, ragged rows) that were accepted, cells of any export that a spreadsheet would run as a
formula, export rows that do not read back as written, and control characters that reached the
terminal raw.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import re
import time
import traceback
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Literal

import pandas as pd

from prefeval_core.annotation.blind import BlindKey
from prefeval_core.annotation.labelstudio import read_label_studio_export
from prefeval_core.annotation.requests import read_annotated_requests
from prefeval_core.cli import main as cli_main
from prefeval_core.data.dataset import Dataset, load_dataset
from prefeval_core.data.limits import MAX_BYTES
from prefeval_core.data.safe_csv import restore_cell, starts_formula, to_safe_csv
from prefeval_core.errors import DataError
from tests.reliability.upload_corpus import (
    CAMPAIGN_SECRET,
    LABEL_STUDIO_DATASET,
    LABEL_STUDIO_SYSTEMS,
    REQUEST_DATASET,
    REQUEST_SYSTEMS,
    HostileUpload,
)

Result = Literal["accepted", "refused", "traceback"]
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\Z")
"""A plain number, which a spreadsheet reads as a number even with a leading sign."""


@dataclass(frozen=True)
class UploadOutcome:
    """What happened to one upload (counts are per upload)."""

    index: int
    case: str
    expect: str
    result: Result
    seconds: float
    unexpected: bool = False
    unnamed_refusal: bool = False
    flaw_accepted: bool = False
    cli_traceback: bool = False
    raw_control_characters: int = 0
    formula_cells: int = 0
    export_mismatches: int = 0
    exports: int = 0
    detail: str = ""


FAILURE_COUNTS = (
    "tracebacks",
    "cli_tracebacks",
    "hangs",
    "unnamed_refusals",
    "flawed_accepted",
    "unexpected",
    "raw_control_characters",
    "formula_cells",
    "export_mismatches",
)
"""The counts of :class:`CampaignFigures` that must be zero."""


@dataclass
class CampaignFigures:
    """The campaign's totals (see :func:`add`)."""

    uploads: int = 0
    accepted: int = 0
    refused: int = 0
    tracebacks: int = 0
    hangs: int = 0
    unnamed_refusals: int = 0
    flawed_accepted: int = 0
    unexpected: int = 0
    cli_tracebacks: int = 0
    raw_control_characters: int = 0
    exports: int = 0
    formula_cells: int = 0
    export_mismatches: int = 0
    slowest_seconds: float = 0.0
    slowest_case: str = ""
    failures: list[str] = field(default_factory=list)

    def add(self, outcome: UploadOutcome) -> None:
        self.uploads += 1
        self.accepted += outcome.result == "accepted"
        self.refused += outcome.result == "refused"
        self.tracebacks += outcome.result == "traceback"
        self.unnamed_refusals += outcome.unnamed_refusal
        self.flawed_accepted += outcome.flaw_accepted
        self.unexpected += outcome.unexpected
        self.cli_tracebacks += outcome.cli_traceback
        self.raw_control_characters += outcome.raw_control_characters
        self.exports += outcome.exports
        self.formula_cells += outcome.formula_cells
        self.export_mismatches += outcome.export_mismatches
        if outcome.seconds > self.slowest_seconds:
            self.slowest_seconds, self.slowest_case = outcome.seconds, f"{outcome.index} ({outcome.case})"
        bad = [
            f.name
            for f in fields(outcome)
            if f.name in ("unexpected", "unnamed_refusal", "flaw_accepted", "cli_traceback") and getattr(outcome, f.name)
        ]
        if outcome.result == "traceback" or bad or outcome.raw_control_characters or outcome.formula_cells or outcome.export_mismatches:
            summary = f"#{outcome.index} {outcome.case} ({outcome.expect}, {outcome.result}) {', '.join(bad)} {outcome.detail}"
            self.failures.append(summary[:2000])

    def add_hang(self, index: int, case: str) -> None:
        self.uploads += 1
        self.hangs += 1
        self.failures.append(f"#{index} {case}: no answer within the time limit")

    @property
    def clean(self) -> bool:
        """No failure of any kind (every count in :data:`FAILURE_COUNTS` is zero)."""
        return not any(getattr(self, name) for name in FAILURE_COUNTS)

    def table(self) -> str:
        rows = [
            ("uploads", self.uploads),
            ("  accepted", self.accepted),
            ("  refused (DataError)", self.refused),
            ("tracebacks (load_dataset)", self.tracebacks),
            ("tracebacks (validate/describe CLI)", self.cli_tracebacks),
            ("hangs (no answer in the time limit)", self.hangs),
            ("refusals that do not name their file", self.unnamed_refusals),
            ("duplicate-column/ragged files accepted", self.flawed_accepted),
            ("outcome other than the expected one", self.unexpected),
            ("control characters printed raw", self.raw_control_characters),
            ("CSV exports written", self.exports),
            ("formula cells in any export", self.formula_cells),
            ("export rows not read back as written", self.export_mismatches),
        ]
        lines = [f"{label:<42} {value:>8,}" for label, value in rows]
        lines.append(f"{'slowest upload':<42} {self.slowest_seconds:>8.2f} s  #{self.slowest_case}")
        return "\n".join(lines)


def check_importer_upload(upload: HostileUpload) -> UploadOutcome:
    """A Label Studio export (:mod:`prefeval_core.annotation.labelstudio`) or a filled-in request file
    (:mod:`prefeval_core.annotation.requests`) through its importer."""
    started = time.perf_counter()
    detail = ""
    unnamed = False
    try:
        if upload.reader == "labelstudio":
            key = BlindKey(CAMPAIGN_SECRET)
            read_label_studio_export(upload.name, upload.data, LABEL_STUDIO_DATASET, systems=LABEL_STUDIO_SYSTEMS, key=key)
        else:
            read_annotated_requests(upload.name, upload.data, REQUEST_DATASET, systems=REQUEST_SYSTEMS, key=BlindKey(CAMPAIGN_SECRET))
        result: Result = "accepted"
    except DataError as exc:
        result = "refused"
        unnamed = any(problem.file is None or upload.name not in problem.file for problem in exc.problems)
        detail = str(exc.problems[0])[:300]
    except Exception:
        result = "traceback"
        detail = traceback.format_exc()[-1500:]
    unexpected = (upload.expect == "accept" and result != "accepted") or (upload.expect == "refuse" and result != "refused")
    return UploadOutcome(
        index=upload.index, case=upload.case, expect=upload.expect, result=result, seconds=time.perf_counter() - started,
        unexpected=unexpected, unnamed_refusal=unnamed, detail=detail,
    )  # fmt: skip


def check_upload(upload: HostileUpload, workdir: Path) -> UploadOutcome:
    """Everything the campaign does with one upload (``workdir``: a scratch folder)."""
    if upload.reader != "dataset":
        return check_importer_upload(upload)
    started = time.perf_counter()
    max_bytes = upload.max_bytes or MAX_BYTES
    details: list[str] = []
    dataset: Dataset | None = None
    unnamed = False
    try:
        dataset = load_dataset([(upload.name, upload.data)], max_bytes=max_bytes)
        result: Result = "accepted"
    except DataError as exc:
        result = "refused"
        unnamed = any(problem.file is None or upload.name not in problem.file for problem in exc.problems)
        if unnamed:
            details.append("unnamed: " + "; ".join(str(p) for p in exc.problems if p.file is None or upload.name not in p.file))
        else:
            details.append(str(exc.problems[0])[:300])
    except Exception:
        result = "traceback"
        details.append(traceback.format_exc()[-1500:])
    unexpected = (upload.expect == "accept" and result != "accepted") or (upload.expect == "refuse" and result != "refused")
    path = workdir / upload.name
    path.write_bytes(upload.data)
    cli_args = ["--max-mb", repr(max_bytes / 1024**2)]
    cli_broken, controls = _cli(["validate", str(path), *cli_args], 0 if result == "accepted" else 1, details)
    formula = mismatches = exports = 0
    if dataset is not None:
        broken, more = _cli(["describe", str(path), *cli_args], 0, details)
        cli_broken, controls = cli_broken or broken, controls + more
        for frame in (dataset.ratings, dataset.preferences, dataset.texts):
            if not frame.empty:
                cells, wrong = export_problems(frame, to_safe_csv(frame))
                formula, mismatches, exports = formula + cells, mismatches + wrong, exports + 1
        if _has_risky_names(dataset):
            cells, wrong, broken = _metrics_export(dataset, workdir, details)
            formula, mismatches, exports, cli_broken = formula + cells, mismatches + wrong, exports + 1, cli_broken or broken
    path.unlink()
    return UploadOutcome(
        index=upload.index,
        case=upload.case,
        expect=upload.expect,
        result=result,
        seconds=time.perf_counter() - started,
        unexpected=unexpected,
        unnamed_refusal=unnamed,
        flaw_accepted=upload.flaw is not None and result == "accepted",
        cli_traceback=cli_broken,
        raw_control_characters=controls,
        formula_cells=formula,
        export_mismatches=mismatches,
        exports=exports,
        detail=" | ".join(details),
    )


def raw_control_characters(text: str) -> int:
    """Characters in CLI output that a terminal would act on (everything not printable but
    the line ends the CLI writes itself)."""
    return sum(1 for c in text if not c.isprintable() and c != "\n")


def _cli(argv: list[str], expected_code: int, details: list[str]) -> tuple[bool, int]:
    """Run a CLI command in-process: (ended in an exception or an unexpected exit code, raw
    control characters printed)."""
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli_main(argv)
    except BaseException:
        details.append(f"{argv[0]}: " + traceback.format_exc()[-1500:])
        return True, 0
    controls = raw_control_characters(out.getvalue() + err.getvalue())
    if controls:
        details.append(f"{argv[0]} printed {controls} raw control characters")
    if code != expected_code:
        details.append(f"{argv[0]} exit code {code}, expected {expected_code}: {err.getvalue()[:300]}")
        return True, controls
    return False, controls


def export_problems(frame: pd.DataFrame, data: bytes) -> tuple[int, int]:
    """(formula cells, mismatching cells or rows) of a CSV export of ``frame``, read back the
    way a spreadsheet splits rows (CR, LF or CRLF outside quotes end a row)."""
    rows = list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))
    formula = sum(starts_formula(cell) and not _NUMBER.match(cell) for row in rows for cell in row)
    if len(rows) != len(frame) + 1 or any(len(row) != frame.shape[1] for row in rows):
        return formula, 1 + abs(len(rows) - len(frame) - 1)
    header = [restore_cell(c) for c in rows[0]]
    mismatches = int(header != [str(c) for c in frame.columns])
    for index, column in enumerate(frame.columns):
        if pd.api.types.is_numeric_dtype(frame[column]):
            continue
        written = [restore_cell(row[index]) for row in rows[1:]]
        mismatches += sum(a != str(b) for a, b in zip(written, frame[column].tolist(), strict=True))
    return formula, mismatches


def _names(dataset: Dataset) -> Iterable[str]:
    yield from dataset.systems
    yield from dataset.raters
    yield from dataset.items


def _has_risky_names(dataset: Dataset) -> bool:
    return any(starts_formula(n.lstrip("'")) or not n.isprintable() for n in _names(dataset))


def _metrics_export(dataset: Dataset, workdir: Path, details: list[str]) -> tuple[int, int, bool]:
    """``metrics --out`` on texts and references named after the dataset's systems and items
    (written as JSONL, which keeps names exact): (formula cells, mismatches, CLI broken)."""
    pairs = [(item, system) for item in dataset.items[:6] for system in dataset.systems[:4]]
    texts = workdir / "texts.jsonl"
    references = workdir / "references.jsonl"
    out = workdir / "metric_ratings.csv"
    texts.write_text("".join(json.dumps({"item_id": i, "system": s, "output": f"{s} wrote this"}) + "\n" for i, s in pairs))
    references.write_text("".join(json.dumps({"item_id": i, "reference": f"{i} is the reference"}) + "\n" for i in dataset.items[:6]))
    argv = ["metrics", "--texts", str(texts), "--references", str(references), "--metrics", "chrf", "--out", str(out)]
    broken, _ = _cli(argv, 0, details)
    if broken:
        return 0, 0, True
    data = out.read_bytes()
    frame = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False).map(restore_cell)
    frame.columns = [restore_cell(c) for c in frame.columns]
    expected_names = {s for _, s in pairs}
    cells, mismatches = export_problems(frame, data)
    mismatches += int(set(frame["system"]) != expected_names)
    for path in (texts, references, out):
        path.unlink()
    return cells, mismatches, False
