"""A loaded evaluation dataset: ratings, preferences and optional texts, checked.

``load_dataset`` takes files on disk, a folder laid out like ``shared/data/*``
(``ratings.csv``, ``preferences.csv``, ``texts.csv``, ``sources.csv``, ``references.csv``)
or uploaded ``(name, bytes)`` pairs, and returns a :class:`Dataset` or raises a
:class:`~prefeval_core.errors.DataError` that lists every error found.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Final, Literal, cast

import numpy as np
import pandas as pd

from prefeval_core.data.coverage import RaterCoverage, items_by_rater, scalar_coverage
from prefeval_core.data.field_formats import FIELD_FORMATS, detect_field_kind, parse_field_table
from prefeval_core.data.formats import InputKind, ParsedTable, TableKind, detect_table_kind, parse_table
from prefeval_core.data.limits import MAX_SYSTEMS
from prefeval_core.data.reading import MAX_BYTES, RawTable, read_table, read_table_bytes
from prefeval_core.errors import DataError, Problem, ValidationReport, raise_if_errors

RaterKind = Literal["scalar", "pairwise"]
_TABLE_SUFFIXES = (".csv", ".tsv", ".jsonl", ".ndjson", ".json", ".parquet", ".pq", ".txt")
_ANNOTATOR_NAME = re.compile(r"^(human:[^:]+):[^:]+$")


@dataclass(frozen=True)
class Dataset:
    """Everything loaded for one evaluation.

    Attributes:
        name: a label for the dataset (folder or first file name).
        ratings: scalar ratings ``item_id, system, rater, score``; higher is better; one row
            per (item, system, rater).
        preferences: native pairwise ratings ``item_id, system_a, system_b, rater, outcome``
            in canonical pair order, outcome codes 0/1/2 = ``>``/``=``/``<``.
        texts: ``item_id, system, output`` (empty frame when no texts were given).
        sources: ``item_id, source`` (empty when none).
        references: ``item_id, ref_index, reference`` (empty when none).
        report: the warnings found while loading (errors raise instead).
        notes: how each file was understood.
        rater_files: for each rater, the file it came from (for messages).
    """

    name: str
    ratings: pd.DataFrame
    preferences: pd.DataFrame
    texts: pd.DataFrame
    sources: pd.DataFrame
    references: pd.DataFrame
    report: ValidationReport = field(default_factory=ValidationReport)
    notes: tuple[str, ...] = ()
    rater_files: Mapping[str, str] = field(default_factory=dict)

    @cached_property
    def systems(self) -> tuple[str, ...]:
        """All systems, sorted (the canonical order of pairs)."""
        return _sorted_names(self.ratings["system"], self.preferences["system_a"], self.preferences["system_b"])

    @cached_property
    def items(self) -> tuple[str, ...]:
        return _sorted_names(self.ratings["item_id"], self.preferences["item_id"])

    @cached_property
    def raters(self) -> tuple[str, ...]:
        return _sorted_names(self.ratings["rater"], self.preferences["rater"])

    @cached_property
    def pairwise_raters(self) -> frozenset[str]:
        """Raters whose outcomes are natively pairwise."""
        return frozenset(_sorted_names(self.preferences["rater"]))

    def rater_kind(self, rater: str) -> RaterKind:
        return "pairwise" if rater in self.pairwise_raters else "scalar"

    @cached_property
    def human_raters(self) -> tuple[str, ...]:
        """Raters named ``human`` or ``human:<dimension>`` (the data's convention), excluding
        individual annotators ``human:<dimension>:<annotator>``."""
        return tuple(r for r in self.raters if is_human_rater(r) and r.count(":") <= 1)

    @cached_property
    def annotator_raters(self) -> tuple[str, ...]:
        """Individual annotators: ``human:<dimension>:<annotator>``, and ``human::<annotator>`` of
        ``human`` (how a ratings file's ``annotator`` column is kept)."""
        return tuple(r for r in self.raters if is_human_rater(r) and r.count(":") > 1)

    @cached_property
    def metric_raters(self) -> tuple[str, ...]:
        """Raters that are not human (metrics, LLM judges)."""
        return tuple(r for r in self.raters if not is_human_rater(r))

    @property
    def has_texts(self) -> bool:
        return not self.texts.empty

    def __repr__(self) -> str:  # short, for notebooks (the frames are attributes)
        humans = ", ".join(self.human_raters) or "none"
        return (
            f"<Dataset {self.name}: {len(self.systems)} systems, {len(self.items):,} items, {len(self.raters)} raters "
            f"(human: {humans}; {len(self.metric_raters)} metrics), {len(self.ratings):,} ratings, "
            f"{len(self.preferences):,} preferences{', texts' if self.has_texts else ''}>"
        )


def is_human_rater(rater: str) -> bool:
    """The data's naming convention: ``human``, ``human:<dimension>[:<annotator>]``."""
    return rater == "human" or rater.startswith("human:")


def _sorted_names(*columns: pd.Series) -> tuple[str, ...]:
    names: set[str] = set()
    for column in columns:
        names.update(column.unique().tolist())
    return tuple(sorted(str(n) for n in names))


Source = str | Path | tuple[str, bytes]
"""A file path, a folder path, or an uploaded file as ``(name, bytes)``."""


def load_dataset(
    sources: Sequence[Source] | Source,
    *,
    kinds: Mapping[str, InputKind] | None = None,
    rater_columns: Mapping[str, Sequence[str]] | None = None,
    max_bytes: int = MAX_BYTES,
    name: str | None = None,
) -> Dataset:
    """Load and check files or a folder of files.

    Args:
        sources: paths, folders (every table file inside is read) or ``(name, bytes)``
            uploads.
        kinds: per file name, what it holds, overriding detection (e.g. ``"wide_ratings"``,
            or a field's own format: ``"mqm"``, ``"arena"``).
        rater_columns: per file name, the rater columns of a wide ratings file.
        max_bytes: size limit per file, compressed and decompressed.
        name: the dataset's label (default: the folder or first file name).

    Raises:
        DataError: (a subclass naming the kind) with every error found, each naming file,
            row, line and column (dataset-wide errors name the files or folder given).
    """
    source_list: list[Source] = [sources] if isinstance(sources, (str, Path, tuple)) else list(sources)
    raws: list[RawTable] = []
    problems: list[Problem] = []
    for source in source_list:  # a file that cannot be read does not hide the problems of the others
        try:
            raws += _read_source(source, max_bytes)
        except DataError as error:
            problems += error.problems
    parsed = [table for raw in raws for table in parse_tables(raw, (kinds or {}).get(raw.name), (rater_columns or {}).get(raw.name))]
    del raws  # the raw cells are not needed any more; free them before the checks
    problems += [p for table in parsed for p in table.problems]
    raise_if_errors(problems)
    dataset = _assemble(parsed, name or _default_name(source_list))
    checks = check_dataset(dataset, files=", ".join(_source_name(s) for s in source_list))
    raise_if_errors(checks)
    report = ValidationReport(tuple(problems) + tuple(checks))
    return replace(dataset, report=report)


def detect_kind(raw: RawTable) -> InputKind:
    """Guess what a file holds from its columns (a field's own format first) and its name."""
    return detect_field_kind(raw) or detect_table_kind(raw)


def parse_tables(raw: RawTable, kind: InputKind | None = None, rater_columns: Sequence[str] | None = None) -> tuple[ParsedTable, ...]:
    """The tables of one file: a plain table (:func:`~prefeval_core.data.formats.parse_table`), or
    the several a field's own format holds (:mod:`~prefeval_core.data.field_formats`); ``kind``
    is detected when ``None``."""
    kind = kind or detect_kind(raw)
    if kind in FIELD_FORMATS:
        return parse_field_table(raw, kind)
    return (parse_table(raw, cast(TableKind, kind), rater_columns),)


def _default_name(sources: Sequence[Source]) -> str:
    first = sources[0] if sources else "dataset"
    if isinstance(first, tuple):
        return first[0]
    path = Path(first)
    return path.name if path.is_dir() else path.stem.removesuffix(".csv")


def _source_name(source: Source) -> str:
    return source[0] if isinstance(source, tuple) else Path(source).name


def table_files(folder: Path) -> list[Path]:
    """The files of ``folder`` that are read as tables (by their suffix, gzipped or not), by name."""
    return sorted(p for p in folder.iterdir() if p.is_file() and p.name.lower().removesuffix(".gz").endswith(_TABLE_SUFFIXES))


def _read_source(source: Source, max_bytes: int) -> list[RawTable]:
    if isinstance(source, tuple):
        return [read_table_bytes(source[0], source[1], max_bytes=max_bytes)]
    path = Path(source)
    if path.is_dir():
        return [read_table(p, max_bytes=max_bytes) for p in table_files(path)]
    return [read_table(path, max_bytes=max_bytes)]


def _assemble(parsed: Sequence[ParsedTable], name: str) -> Dataset:
    def frames(*kinds: str) -> list[pd.DataFrame]:
        return [t.frame for t in parsed if t.kind in kinds]

    ratings = _concat(frames("ratings", "wide_ratings"), ["item_id", "system", "rater", "score"])
    preferences = _concat(frames("preferences"), ["item_id", "system_a", "system_b", "rater", "outcome"])
    texts = _concat(frames("texts"), ["item_id", "system", "output"])
    sources_frame = _concat(frames("sources"), ["item_id", "source"])
    references = _concat(frames("references"), ["item_id", "ref_index", "reference"])
    sources_frame, references = _link_sources(sources_frame, references, texts)
    ratings = _with_annotator_means(ratings)
    rater_files = {r: t.name for t in parsed if t.kind in ("ratings", "wide_ratings", "preferences") for r in t.frame["rater"].unique()}
    notes = tuple(n for t in parsed for n in t.notes)
    return Dataset(name, ratings, preferences, texts, sources_frame, references, notes=notes, rater_files=rater_files)


def _concat(frames: list[pd.DataFrame], columns: list[str]) -> pd.DataFrame:
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame({c: pd.Series(dtype=np.int8 if c == "outcome" else float if c == "score" else str) for c in columns})
    return pd.concat(frames, ignore_index=True)


def _link_sources(sources: pd.DataFrame, references: pd.DataFrame, texts: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Key sources by item (via the texts' ``prompt_id`` where sources are per prompt) and
    take references from a sources file's ``reference`` column."""
    if "prompt_id" in sources.columns and "prompt_id" in texts.columns:
        links = texts[["item_id", "prompt_id"]].drop_duplicates("item_id")
        sources = links.merge(sources.drop(columns=["item_id"], errors="ignore"), on="prompt_id")
    if "reference" in sources.columns:
        extra = sources[["item_id", "reference"]].assign(ref_index=0)
        references = pd.concat([references, extra[["item_id", "ref_index", "reference"]]], ignore_index=True)
        references = references.drop_duplicates(["item_id", "ref_index"])
    keep = [c for c in ("item_id", "source", "prompt_id") if c in sources.columns]
    return sources[keep].reset_index(drop=True), references


def _with_annotator_means(ratings: pd.DataFrame) -> pd.DataFrame:
    """Add ``human:<dim>`` as the mean of ``human:<dim>:<annotator>`` raters where the data
    has the annotators but not their mean (method.md §2: annotators averaged first)."""
    raters = set(ratings["rater"].unique().tolist())
    groups: dict[str, list[str]] = {}
    for rater in raters:
        match = _ANNOTATOR_NAME.match(rater)
        if match and match.group(1) not in raters:
            groups.setdefault(match.group(1), []).append(rater)
    means = [
        ratings[ratings["rater"].isin(members)].groupby(["item_id", "system"], as_index=False)["score"].mean().assign(rater=dimension)
        for dimension, members in sorted(groups.items())
        if len(members) >= 2
    ]
    return pd.concat([ratings, *means], ignore_index=True) if means else ratings


def check_dataset(dataset: Dataset, *, files: str | None = None) -> list[Problem]:
    """Dataset-wide checks; ``files`` names the input in dataset-wide errors (default: the
    dataset's name).

    Errors: no ratings at all; more than :data:`~prefeval_core.data.limits.MAX_SYSTEMS`
    systems. Warnings: a scalar rater that rated only one system, two systems a rater rated
    on no common item, metric items that no human rated, no rater named as human, texts of
    unrated systems. The coverage warnings become
    :class:`~prefeval_core.errors.CoverageError` when the rater or pair is used
    (:func:`prefeval_core.pairs.preferences.pair_outcomes`, :func:`prefeval_core.pairs.counts.align_outcomes`):
    a dataset may hold raters a user never picks, e.g. single annotators.
    """
    where = files if files is not None else dataset.name
    if dataset.ratings.empty and dataset.preferences.empty:
        return [Problem("error", "no_ratings", "no ratings or preferences were found; expected a ratings or preferences file", where)]
    if len(dataset.systems) > MAX_SYSTEMS:
        message = f"the data names {len(dataset.systems):,} systems; the limit is {MAX_SYSTEMS:,}"
        message += " (is a column of another kind read as 'system'?)"
        return [Problem("error", "too_large", message, where, column="system")]
    problems: list[Problem] = []
    annotators = set(dataset.annotator_raters)  # a crowd worker rates a few outputs: their coverage is no problem
    for rater, coverage in scalar_coverage(dataset.ratings).items():
        if rater not in annotators:
            problems += _coverage_problems(rater, coverage, dataset.rater_files.get(rater))
    problems += _outlying_scores(dataset)
    humans = dataset.human_raters
    if not humans:
        problems.append(Problem("warning", "no_human", "no rater is named 'human' or 'human:<dimension>'; choose the human rater by name"))
    else:
        items = items_by_rater(dataset.ratings, dataset.preferences)
        human_items = np.unique(np.concatenate([items[h] for h in humans]))
        for rater in dataset.metric_raters:
            extra = len(np.setdiff1d(items[rater], human_items, assume_unique=True))
            if extra:
                problems.append(
                    Problem(
                        "warning",
                        "metric_only_items",
                        f"metric '{rater}' rated {extra:,} items that no human rater rated; they enter only as metric-only items",
                        dataset.rater_files.get(rater),
                    )
                )
    if dataset.has_texts:
        unrated = sorted(set(dataset.texts["system"].unique().tolist()) - set(dataset.systems))
        if unrated:
            problems.append(Problem("warning", "unrated_texts", f"texts of systems with no ratings: {', '.join(unrated)}"))
    return problems


OUTLYING_SPREADS: Final = 5.0
"""How far past the bulk of a human rater's scores one lies before it is flagged, in spreads of the
bulk (its 5th to 95th percentile): 50 among ratings from 1 to 5 is, the heavy tail of MQM penalties
is not."""


def _outlying_scores(dataset: Dataset) -> list[Problem]:
    """A warning per human rater or annotator with scores far outside the bulk of its own
    (:data:`OUTLYING_SPREADS`): a typing error such as 50 for 5.0 moves a mean, and so an answer."""
    ratings = dataset.ratings
    humans = ratings[ratings["rater"].isin([*dataset.human_raters, *dataset.annotator_raters])]
    problems: list[Problem] = []
    for rater, own in humans.groupby("rater", sort=False, observed=True):
        scores = own["score"].to_numpy(dtype=np.float64)
        if len(scores) < 20:
            continue
        low, high = np.quantile(scores, [0.05, 0.95])
        spread = high - low
        if spread <= 0:
            continue
        far = np.flatnonzero((scores < low - OUTLYING_SPREADS * spread) | (scores > high + OUTLYING_SPREADS * spread))
        if len(far):
            first = own.iloc[int(far[0])]
            message = (
                f"rater '{rater}' has {len(far):,} score(s) far outside the rest (e.g. {first['score']:g} for system {first['system']}, "
                f"item {first['item_id']}; 90 % of its scores lie between {low:g} and {high:g}): a typing error would move the answer"
            )
            problems.append(Problem("warning", "outlying_score", message, dataset.rater_files.get(rater), column="score"))
    return problems


def _coverage_problems(rater: str, coverage: RaterCoverage, file: str | None) -> list[Problem]:
    systems, shared = coverage.systems, coverage.shared
    if len(systems) < 2:
        return [
            Problem(
                "warning",
                "single_system",
                f"rater '{rater}' rated only one system ({systems[0]}); preferences need two or more",
                file,
                column="system",
            )
        ]
    a_idx, b_idx = np.nonzero(np.triu(shared == 0, k=1))
    return [
        Problem(
            "warning",
            "no_common_items",
            f"rater '{rater}' rated systems {systems[a]} and {systems[b]} on no common item; it gives that pair no outcome",
            file,
            column="item_id",
        )
        for a, b in zip(a_idx, b_idx)
    ]
