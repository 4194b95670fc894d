"""Arguments and helpers shared by the commands."""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, cast

from prefeval_core.cli._terminal import print_safe
from prefeval_core.errors import SettingsError, UnsupportedFormatError
from prefeval_core.workflow.input_kinds import MAX_BYTES, file_kinds_help, input_kinds

if TYPE_CHECKING:
    from prefeval_core.protocol import ProtocolState
    from prefeval_core.workflow.datasets import Dataset, InputKind
    from prefeval_core.workflow.setup import StudySetup
    from prefeval_core.workflow.studies import Study

INT_LIMIT: Final = 2**63
"""Integer options are below 2^63 (seeds, budgets and counts become int64 in numpy)."""
MAX_MB: Final = 1024**2
"""The largest ``--max-mb`` (1 TiB): a limit, not an allocation, but past this it means nothing."""


def add_loading_options(parser: argparse.ArgumentParser) -> None:
    """Options that say how to read files: wide rater columns, kind overrides, size limit."""
    parser.add_argument(
        "--rater-columns",
        metavar="COLS",
        help="comma-separated rater columns of wide ratings files (item_id, system, one column per rater); "
        "default: every column but the keys",
    )
    parser.add_argument(
        "--kind",
        action="append",
        default=[],
        metavar="FILE=KIND",
        help=f"what a file holds, overriding detection; KIND is one of {file_kinds_help()}",
    )
    parser.add_argument("--max-mb", type=megabytes, default=MAX_BYTES / 1024**2, help="size limit per file in MiB (default %(default).0f)")


def add_data_option(parser: argparse.ArgumentParser) -> None:
    """``--data DIR_OR_FILES...``: a folder laid out like shared/data/* or explicit files."""
    parser.add_argument(
        "--data",
        nargs="+",
        required=True,
        metavar="PATH",
        help="a data folder (ratings.csv, preferences.csv, ...), files, or sample:NAME for a bundled sample",
    )
    add_loading_options(parser)


def add_files_option(parser: argparse.ArgumentParser) -> None:
    """Data as positional ``FILE...`` or as ``--data PATH...`` (like the other commands); both may be given."""
    parser.add_argument("files", nargs="*", metavar="FILE", help="data files or folders (or give them with --data)")
    parser.add_argument(
        "--data", nargs="+", action="extend", default=[], metavar="PATH", help="data files or folders, or sample:NAME for a bundled sample"
    )
    add_loading_options(parser)


def files_from_args(args: argparse.Namespace) -> list[str]:
    """The paths of :func:`add_files_option`; none at all is a usage error (exit 2)."""
    paths = [*args.files, *args.data]
    if not paths:
        print(f"prefeval {args.command}: error: give data files or folders (FILE... or --data PATH...)", file=sys.stderr)
        raise SystemExit(2)
    return paths


def loading_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of :func:`~prefeval_core.workflow.datasets.load_paths` that the
    options of :func:`add_loading_options` give: ``kinds`` (by file name), ``rater_columns``, ``max_bytes``."""
    kinds: dict[str, InputKind] = {}
    for spec in args.kind:
        file, _, kind = spec.partition("=")
        if not file or kind not in input_kinds():
            raise SettingsError.single(
                "bad_setting", f"--kind {spec!r}: expected FILE=KIND with KIND one of {', '.join(input_kinds())}", column="kind"
            )
        kinds[file.rsplit("/", 1)[-1]] = cast("InputKind", kind)
    columns = [c.strip() for c in args.rater_columns.split(",")] if args.rater_columns else None
    return {"kinds": kinds, "rater_columns": columns, "max_bytes": int(args.max_mb * 1024**2)}


WARNINGS_SHOWN: Final = 5
"""Data warnings a command that is not about the data prints before it says how many more there are."""


def load_from_args(paths: Sequence[str], args: argparse.Namespace, *, warn: bool = True) -> Dataset:
    """The data of ``paths`` as the loading options say; with ``warn`` its warnings go to stderr
    (the first :data:`WARNINGS_SHOWN`; ``validate`` lists all), so that a run never hides them."""
    from prefeval_core.workflow.datasets import load_paths  # pandas and the readers: not for a command's --help

    loading = loading_from_args(args)
    named = {Path(path).name for path in paths}
    if not any(Path(path).is_dir() for path in paths):
        for file in sorted(set(loading["kinds"]) - named):
            print_safe(f"warning: --kind {file}: no file of that name was given", file=sys.stderr)
    dataset = load_paths(paths, **loading)
    warnings = dataset.report.warnings if warn else ()
    for problem in warnings[:WARNINGS_SHOWN]:
        print_safe(f"warning: {problem}", file=sys.stderr)
    if len(warnings) > WARNINGS_SHOWN:
        progress(f"warning: {len(warnings) - WARNINGS_SHOWN} more (prefeval validate lists them all)")
    return dataset


def read_input_file(file: str) -> tuple[str, bytes]:
    """A file's name and bytes, at most one byte past the readers' limit (they refuse more).

    Raises:
        UnsupportedFormatError: the file cannot be read (missing, a folder, no permission).
    """
    path = Path(file)
    try:
        with path.open("rb") as stream:
            return path.name, stream.read(MAX_BYTES + 1)
    except OSError as error:
        raise UnsupportedFormatError.single("unsupported", f"cannot read the file ({error.strerror or error})", file=path.name) from None


def check_output_folder(path: str | Path) -> None:
    """Refuse, before any work is done, a file to write whose folder does not exist.

    Raises:
        UnsupportedFormatError: naming the file.
    """
    folder = Path(path).parent
    if not folder.is_dir():
        raise UnsupportedFormatError.single("unsupported", f"cannot write the file (no folder {str(folder)!r})", file=str(path))


def write_output_file(path: Path, content: bytes) -> None:
    """Write a file the command was asked for.

    Raises:
        UnsupportedFormatError: the file cannot be written (no such folder, no permission), naming it.
    """
    try:
        path.write_bytes(content)
    except OSError as error:
        raise UnsupportedFormatError.single("unsupported", f"cannot write the file ({error.strerror or error})", file=str(path)) from None


def write_study_report(path: str, title: str, state: ProtocolState, setup: StudySetup | None, design_note: str | None = None) -> None:
    """Write a study's report (HTML, as the dashboard's Report page; ``design_note`` in its settings)
    to ``path``; a file that cannot be written is named (:func:`write_output_file`)."""
    from prefeval_core.workflow.study_report import session_report_html  # pandas and plotly: only when asked

    write_output_file(Path(path), session_report_html(title, state, setup, design_note=design_note).encode("utf-8"))


def add_request_exchange_arguments(parser: argparse.ArgumentParser, *, file_help: str, out_default: str, out_help: str) -> None:
    """The arguments of a command that exports a study's open request and imports it judged
    (``labelstudio``, ``requests``): ``export|import STUDY [FILE] [--out] [--seed] [--latest-wins] [--json]``."""
    parser.add_argument("action", choices=("export", "import"), help="what to do")
    parser.add_argument("study", type=positive_int, help="the study's id (see `studies list`)")
    parser.add_argument("file", nargs="?", help=f"import: {file_help}; export: the file to write (or --out)")
    parser.add_argument("--out", help=f"export: {out_help} (default {out_default})")
    parser.set_defaults(out_default=out_default)
    parser.add_argument("--seed", type=seed_int, default=0, help="export: seed of the left/right order of comparisons (default 0)")
    parser.add_argument(
        "--latest-wins", action="store_true", help="import: of two different answers by one annotator to one request, the later counts"
    )
    parser.add_argument("--json", action="store_true", help="print JSON")


def export_target(args: argparse.Namespace) -> Path | None:
    """The file an ``export`` writes: FILE or ``--out``, else the command's default; ``None`` when both
    are given (the caller reports the usage error)."""
    if args.file is not None and args.out is not None:
        return None
    return Path(args.file or args.out or args.out_default)


def usage_error(message: str) -> int:
    """Print a usage error and return its exit status (2, as argparse's)."""
    print(f"error: {message}", file=sys.stderr)
    return 2


def open_study(study_id: int) -> tuple[Study, Dataset]:
    """A study recorded in the store (``$PREFEVAL_DATABASE_URL``, else SQLite in
    ``$PREFEVAL_DATA_DIR``), resumed where it stands, and its data."""
    from prefeval_core.workflow.studies import load_study, study_store  # the store (SQLAlchemy) only for study commands

    return load_study(study_store(), study_id)


def print_json(value: Any) -> None:
    json.dump(value, sys.stdout, indent=2, allow_nan=False)
    sys.stdout.write("\n")


def progress(message: str) -> None:
    """A progress line on stderr (stdout stays clean for --json)."""
    print(message, file=sys.stderr, flush=True)


# --- option types: a bad value is a one-line usage error (exit 2), never a traceback --------


def _number(text: str, kind: type[int] | type[float]) -> int | float:
    try:
        if not text.isascii():  # int("٣") is 3: ids and counts are written in ASCII digits only
            raise ValueError
        if kind is int:
            if len(text.strip().lstrip("+-")) > 20:
                raise ValueError
            number = int(text)
            if not -INT_LIMIT < number < INT_LIMIT:
                raise argparse.ArgumentTypeError(f"expected an integer below 2^63 in size, got {text!r}")
            return number
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {'an integer' if kind is int else 'a number'}, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def non_negative_int(text: str) -> int:
    value = int(_number(text, int))
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return value


def positive_int(text: str) -> int:
    value = int(_number(text, int))
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return value


def seed_int(text: str) -> int:
    """A seed: an integer in [0, 2^63)."""
    value = int(_number(text, int))
    if not 0 <= value < 2**63:
        raise argparse.ArgumentTypeError(f"expected a seed in [0, 2^63), got {text!r}")
    return value


def open_probability(text: str) -> float:
    """A level strictly between 0 and 1 (gamma, futility)."""
    value = float(_number(text, float))
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"expected a number strictly between 0 and 1, got {text!r}")
    return value


def fraction(text: str) -> float:
    """A share in (0, 1]."""
    value = float(_number(text, float))
    if not 0.0 < value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1], got {text!r}")
    return value


def int_in(low: int, high: int) -> Callable[[str], int]:
    """An integer option in ``[low, high]`` (a count whose size is memory or time)."""

    def integer(text: str) -> int:
        value = int(_number(text, int))
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"expected an integer from {low:,} to {high:,}, got {text!r}")
        return value

    integer.__name__ = f"int_in_{low}_{high}"
    integer.low, integer.high = low, high  # type: ignore[attr-defined]  # for the CLI argument campaign
    return integer


def megabytes(text: str) -> float:
    """A size limit in MiB: finite, > 0, at most :data:`MAX_MB`."""
    value = float(_number(text, float))
    if not 0 < value <= MAX_MB:
        raise argparse.ArgumentTypeError(f"expected a size in MiB above 0 and at most {MAX_MB:,}, got {text!r}")
    return value


def non_negative_float(text: str) -> float:
    value = float(_number(text, float))
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0, got {text!r}")
    return value


def positive_float(text: str) -> float:
    value = float(_number(text, float))
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a finite number > 0, got {text!r}")
    return value


def name_list(text: str) -> tuple[str, ...]:
    """Comma-separated names (empty entries dropped)."""
    return tuple(name.strip() for name in text.split(",") if name.strip())
