"""The notebook API: prefeval's main verbs with DataFrames in and out.

    import prefeval_core as pe

    data = pe.load_sample("summeval")      # or pe.load("my_folder"), pe.load(ratings=df, texts=df)
    run = pe.replay(data, human="human:relevance", metrics=["rougeL"], seed=0)
    run.to_frame()                         # one row per pair, as ``replay --json`` prints them
    pe.check_metric(data, "human:relevance", "rougeL").to_frame()
    pe.decide(pe.pair_counts(data, "human:relevance", "rougeL")).to_frame()

Every verb is a thin shell over the application layer (:mod:`prefeval_core.workflow`, the one
door of the shells): the numbers are those of the CLI and the dashboard for the same settings
and seed. Results are frozen dataclasses with ``.to_frame()``
and a one-line ``repr``; bad input raises the core's typed errors
(:class:`~prefeval_core.errors.DataError`, :class:`~prefeval_core.errors.SettingsError`).

Computations run in double precision (JAX's x64, switched on for the call only, as the CLI and
the dashboard set it for their whole process), so a notebook's own JAX settings are left alone.

Counts frames (:func:`pair_counts` out, :func:`decide` in) name outcomes ``a`` (A better, code 0,
``>``), ``tie`` (code 1, ``=``) and ``b`` (B better, code 2, ``<``) for a pair whose system A is
``system_a``: ``n_a, n_tie, n_b`` human outcomes on the revealed items, ``k_<metric>_<human>``
the confusion counts on them (rows = metric, columns = human, e.g. ``k_a_b``: the metric says A
better where the human says B better), ``m_a, m_tie, m_b`` the metric's outcomes on the items
without a revealed human outcome.
"""

from __future__ import annotations

import functools
import io
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, ParamSpec, TypeVar

import numpy as np
import numpy.typing as npt
import pandas as pd
import plotly.graph_objects as go
import pyarrow as pa
import pyarrow.parquet as pq

from prefeval_core.errors import DataError, settings_error
from prefeval_core.vocabulary.levels import DEFAULT_GAMMA
from prefeval_core.workflow import Replay, StudySetup, replay_json, run_replay, study_table
from prefeval_core.workflow.annotators import AnnotatorReport, study_annotators
from prefeval_core.workflow.answers import leaderboard_frame, study_leaderboard
from prefeval_core.workflow.datasets import Dataset, Source, TableKind, load_data
from prefeval_core.workflow.decisions import COUNT_COLUMNS as COUNT_COLUMNS  # the counts frame's columns, part of the API
from prefeval_core.workflow.decisions import K_COLUMNS as K_COLUMNS
from prefeval_core.workflow.decisions import M_COLUMNS as M_COLUMNS
from prefeval_core.workflow.decisions import N_COLUMNS as N_COLUMNS
from prefeval_core.workflow.decisions import OUTCOME_NAMES as OUTCOME_NAMES
from prefeval_core.workflow.decisions import Decisions, Model, Sampler, SamplerSettings, decide_frame, pair_counts_frame
from prefeval_core.workflow.live_study import data_choice, start_live_study
from prefeval_core.workflow.metric_check import MetricCheck, MetricFigure, MetricReport, check_json, metric_figure
from prefeval_core.workflow.metric_check import check_metric as run_metric_check
from prefeval_core.workflow.session import DEFAULT_SAMPLE, DataChoice, sample_names
from prefeval_core.workflow.status import STOP_WORDS, StudyStatus, study_status
from prefeval_core.workflow.studies import Store, Study, StudySummary, list_studies, load_study, study_store
from prefeval_core.workflow.study import QuestionKind, replay_setup
from prefeval_core.workflow.views import pairs_frame, theta_history_figure

_FRAME_KINDS: Final[dict[str, TableKind | None]] = {
    "ratings": None,  # long or wide: detected from the columns, as for a file
    "preferences": "preferences",
    "texts": "texts",
    "sources": "sources",
    "references": "references",
}

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _double_precision(function: Callable[_P, _R]) -> Callable[_P, _R]:
    """Run ``function`` with JAX's x64 on (the precision the engine's results are stated for)."""

    @functools.wraps(function)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        import jax

        with jax.enable_x64(True):
            return function(*args, **kwargs)

    return wrapper


# --- data --------------------------------------------------------------------------------


def samples() -> tuple[str, ...]:
    """The names of the bundled samples (``load_sample`` takes one)."""
    return sample_names()


def load_sample(name: str = DEFAULT_SAMPLE) -> Dataset:
    """A bundled sample (see :func:`samples`), as the dashboard opens it."""
    return DataChoice.sample(name).load()


def load(
    *paths: str | Path,
    ratings: pd.DataFrame | str | Path | None = None,
    preferences: pd.DataFrame | str | Path | None = None,
    texts: pd.DataFrame | str | Path | None = None,
    sources: pd.DataFrame | str | Path | None = None,
    references: pd.DataFrame | str | Path | None = None,
    name: str | None = None,
    kinds: Mapping[str, TableKind] | None = None,
    rater_columns: Mapping[str, Sequence[str]] | None = None,
) -> Dataset:
    """Load and check data from files, folders and DataFrames (any mix).

    Args:
        paths: files, or folders laid out like ``ratings.csv``, ``preferences.csv``, ``texts.csv``, ...
        ratings, preferences, texts, sources, references: a DataFrame (columns as in a file of
            that kind, see the README's "Input data") or the path of such a file. Ratings may be
            long (``item_id, system, rater, score``) or wide (one column per rater).
        name: the dataset's label (default: the first folder or file name, or ``dataframes``).
        kinds: per file name, what it holds, overriding detection (a DataFrame's file name is its
            keyword, e.g. ``ratings``).
        rater_columns: per file name, the rater columns of a wide ratings file or frame.

    A DataFrame goes through the same reader and checks as a file: every cell is read as text
    and interpreted by the data layer, and a problem names the frame (``ratings``), its row
    (1-based position, not the index label) and column.

    Raises:
        DataError: with every problem found (file or frame, row, column, what was expected).
    """
    given = {"ratings": ratings, "preferences": preferences, "texts": texts, "sources": sources, "references": references}
    found: list[Source] = list(paths)
    forced: dict[str, TableKind] = {}
    for keyword, value in given.items():
        if value is None:
            continue
        kind = _FRAME_KINDS[keyword]
        if isinstance(value, pd.DataFrame):
            found.append((keyword, _frame_bytes(value, keyword)))
            file_name = keyword
        elif isinstance(value, (str, Path)):
            found.append(value)
            file_name = Path(value).name
        else:
            raise settings_error(f"{keyword}= takes a DataFrame or a file path, got {type(value).__name__}", field=keyword)
        if kind is not None:
            forced[file_name] = kind
    if not found:
        raise settings_error("give data: file or folder paths, or DataFrames (ratings=, preferences=, ...)")
    default_name = None if paths else "dataframes"
    return load_data(found, kinds={**forced, **(kinds or {})}, rater_columns=rater_columns, name=name or default_name)


def _frame_bytes(frame: pd.DataFrame, keyword: str) -> bytes:
    """``frame`` as Parquet bytes for the data layer's reader (column names as text; values of
    mixed-type columns as text, missing values as nulls)."""
    columns = [_arrow_column(frame.iloc[:, position], keyword, str(label)) for position, label in enumerate(frame.columns)]
    table = pa.Table.from_arrays(columns, names=[str(label) for label in frame.columns])  # repeated names stay: the reader names them
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()


def _arrow_column(column: pd.Series, keyword: str, label: str) -> pa.Array:
    try:
        return pa.array(column, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        text = [None if _missing(value) else str(value) for value in column.to_numpy(dtype=object)]
        try:
            return pa.array(text, type=pa.large_string())
        except (pa.ArrowInvalid, pa.ArrowTypeError) as error:  # e.g. a lone surrogate in a string
            raise DataError.single("bad_value", f"the column cannot be read as text ({error})", file=keyword, column=label) from None


def _missing(value: object) -> bool:
    return value is None or value is pd.NA or value is pd.NaT or (isinstance(value, float) and np.isnan(value))


# --- counts and decisions ------------------------------------------------------------------


def pair_counts(data: Dataset, human: str, metric: str | None = None, *, eps_human: float = 0.0, eps_metric: float = 0.0) -> pd.DataFrame:
    """The count triple of every pair ``human`` covers, with every human outcome revealed.

    Returns a counts frame (see the module docstring): ``system_a, system_b`` (canonical order)
    and the count columns. Items the metric rated but the human did not count in ``m``; without
    a metric, ``k_*`` and ``m_*`` are 0. ``eps_human``, ``eps_metric``: tie thresholds of score
    differences (method.md §2).

    Raises:
        UnknownNameError: a rater is not in the data.
        CoverageError: a rater gives no preferences.
    """
    return pair_counts_frame(data, human, metric, eps_human=eps_human, eps_metric=eps_metric)


@_double_precision
def decide(
    counts: pd.DataFrame,
    *,
    model: Model | None = None,
    mu: npt.ArrayLike | None = None,
    sampler: Sampler = "fast",
    gamma: float = DEFAULT_GAMMA,
    seed: int = 0,
    settings: SamplerSettings | None = None,
) -> Decisions:
    """Decide every pair of a counts frame at once (method.md §4; the CLI's ``decide``).

    Args:
        counts: a counts frame (see the module docstring): ``n_a, n_tie, n_b`` required;
            ``k_*`` (all nine) and ``m_*`` (all three) optional, 0 where absent. Other columns
            are labels, carried to the result.
        model: ``human_only``, ``known_mu`` or ``full``; by default ``known_mu`` when ``mu`` is
            given, ``full`` when the frame has metric counts, else ``human_only``.
        mu, sampler, gamma, seed, settings: as :func:`prefeval_core.decision.decide_pairs`.

    Raises:
        DataError: a count column missing or half given, or a count that is not a whole
            number >= 0 (naming row and column).
        SettingsError: an option out of range, or counts that contradict each other.
    """
    return decide_frame(counts, model=model, mu=mu, sampler=sampler, gamma=gamma, seed=seed, settings=settings)


# --- replay --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReplayResult:
    """A replay run to its end (:func:`replay`).

    Attributes:
        data: the dataset's name.
        setup: the study's setup (every setting used).
        run: the final protocol state, its result against the full human evaluation, wall time.
    """

    data: str
    setup: StudySetup
    run: Replay

    def to_json(self) -> dict[str, Any]:
        """Exactly what ``replay --json`` prints for the same data and settings."""
        return replay_json(self.run)

    @property
    def summary(self) -> dict[str, Any]:
        """Error types, cost, rounds, the answer (top-k): the ``summary`` of ``replay --json``."""
        return self.to_json()["summary"]

    def to_frame(self) -> pd.DataFrame:
        """One row per pair of the question: ``system_a, system_b, outcome`` (``>``, ``<``, ``=``
        undecided), ``theta``, ``human_used``, ``human_reference``, ``error_type``."""
        return pd.DataFrame(self.to_json()["pairs"])

    def figure(self) -> go.Figure:
        """θ of every pair across the rounds (the Protocol page's figure)."""
        return theta_history_figure(self.run.state)

    def leaderboard(self) -> pd.DataFrame:
        """One row per system, best first: mean human score (win rate in a comparisons study) on the
        judgments revealed, its 95 % bootstrap interval over items, P(top k) (seeded bootstrap),
        status for the question, judgments spent (:func:`~prefeval_core.workflow.answers.study_leaderboard`)."""
        return leaderboard_frame(study_leaderboard(self.run.state))

    def __repr__(self) -> str:
        s = self.summary
        metrics = f" with {', '.join(self.setup.metrics)}" if self.setup.metrics else " (human only)"
        answer = f" {s['answer_words']}" if "answer_words" in s else ""
        if "reference_answer" in s:  # a tier question: judged by its tier (systems ruled out), not by pair verdicts
            against = (
                f"against the full evaluation's tier {', '.join(s['reference_answer'])}: exact {s['exact_match']}, "
                f"false exclusions {s['false_exclusions']}, extras {s['extras']}"
            )
        else:
            against = f"correct {s['correct']:.2f}, inversions {s['inversion']:.2f}, omissions {s['omission']:.2f} over {s['pairs']} pairs"
        return (
            f"<Replay on {self.data}: {self.setup.human}{metrics}, {self.setup.question.kind}; {against};{answer} "
            f"{s['cost_used']:,} of {s['cost_available']:,} {s['cost_unit']} ({s['cost_fraction']:.0%}), {s['rounds']} rounds, "
            f"{STOP_WORDS[s['stop_reason']]}>"
        )


@_double_precision
def replay(
    data: Dataset,
    human: str,
    metrics: str | Sequence[str] = (),
    *,
    question: QuestionKind = "all-pairs",
    k: int = 1,
    baselines: str | Sequence[str] = (),
    budget: int | None = None,
    seed: int = 0,
    **options: Any,
) -> ReplayResult:
    """Replay the annotation-budget protocol on a finished human evaluation (the CLI's ``replay``).

    Args:
        data: the dataset (:func:`load`, :func:`load_sample`).
        human: the human rater, e.g. ``human:relevance``.
        metrics: the metric rater(s); none: human only; ``ideal``: the simulated ideal metric.
        question: ``all-pairs``, ``top-k`` (with ``k``) or ``baseline`` (with ``baselines``).
        budget: the most judgments to reveal, in the study's cost unit (default: all).
        seed: seeds the reveal order and the sampler.
        options: any other :class:`~prefeval_core.workflow.StudySetup` field, with its default
            there: ``unit``, ``batch``, ``gamma``, ``error_control``, ``futility``,
            ``eps_human``, ``eps_metric``, ``model``, ``sampler``, ``policy``,
            ``human_fraction``, ``max_rounds``, ``ideal_items``, ``statistic``, ``delta``,
            ``ratings_per_request``.

    Raises:
        SettingsError: an unknown option or a value out of range.
        DataError: a rater or baseline the data do not have.
    """
    setup = replay_setup(human, _names(metrics), question=question, k=k, baselines=_names(baselines), budget=budget, seed=seed, **options)
    return ReplayResult(data.name, setup, run_replay(study_table(data, setup), setup))


def _names(value: str | Sequence[str]) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(value)


# --- metric check ----------------------------------------------------------------------------


@dataclass(frozen=True)
class MetricCheckResult:
    """Every diagnostic of one metric against one human rater (:func:`check_metric`).

    Attributes:
        check: what was checked, and how (eps, gamma, seed).
        report: the diagnostics (confusion matrices, Favi-Scores and their posterior, sign
            accuracies, Kendall tau, significance DAGs).
    """

    check: MetricCheck
    report: MetricReport

    def to_json(self) -> dict[str, Any]:
        """Exactly what ``diagnose --json`` prints for the same settings."""
        return check_json(self.report)

    @property
    def summary(self) -> dict[str, Any]:
        """Sign accuracies (sample, system), mean |Favi|, Kendall tau (``None`` unless both raters are scalar)."""
        return self.to_json()["metric"]

    def to_frame(self) -> pd.DataFrame:
        """One row per pair both raters cover: ``system_a, system_b, items, errors`` (items off
        the confusion matrix's diagonal), ``favi`` (positive favours A; NaN without an error),
        its credible interval ``favi_low, favi_high``, and the confusion counts ``k_<metric>_<human>``."""
        report = self.report
        interval = report.favi_posterior.interval
        frame = pd.DataFrame(
            {
                "system_a": [a for a, _ in report.pairs],
                "system_b": [b for _, b in report.pairs],
                "items": report.confusions.items,
                "errors": report.errors,
                "favi": report.favi,
                "favi_low": interval[:, 0],
                "favi_high": interval[:, 1],
            }
        )
        confusion = pd.DataFrame(report.confusions.K.reshape(-1, 9).astype(np.int64), columns=list(K_COLUMNS))
        return pd.concat([frame, confusion], axis=1)

    def figure(self, name: MetricFigure = "sign") -> go.Figure | None:
        """One of the Metric check page's figures: ``sign``, ``kendall`` (``None`` unless both
        raters are scalar), ``favi``, ``dag_human``, ``dag_metric``."""
        return metric_figure(self.report, name)

    def __repr__(self) -> str:
        s = self.summary
        kendall = "" if s["kendall_tau"] is None else f", Kendall tau {s['kendall_tau']:.3f}"
        return (
            f"<Metric check of {self.check.metric} against {self.check.human} on {len(self.report.pairs)} pairs: sign accuracy "
            f"{_shown(s['sample_sign_accuracy'])} (items), {_shown(s['system_sign_accuracy'])} (systems), "
            f"mean |Favi| {_shown(s['mean_abs_favi'])}{kendall}>"
        )


def _shown(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


@_double_precision
def check_metric(
    data: Dataset, human: str, metric: str, *, eps: float = 0.0, gamma: float = DEFAULT_GAMMA, seed: int = 0
) -> MetricCheckResult:
    """Check ``metric`` against ``human`` (the Metric check page and ``diagnose``).

    Args:
        eps: tie threshold of the metric's score differences (the human's ties are kept as rated).
        gamma: significance level of the human reference and the naive sign test (the DAGs).
        seed: seeds the Favi-Score posterior draws.

    Raises:
        UnknownNameError, CoverageError: a rater is not in the data, or the two share no pair.
    """
    check = MetricCheck(human, metric, eps=eps, gamma=gamma, seed=seed)
    return MetricCheckResult(check, run_metric_check(data, check))


# --- studies ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class StudyList:
    """The studies in a store, newest first (:func:`studies`)."""

    summaries: tuple[StudySummary, ...]

    def to_frame(self) -> pd.DataFrame:
        """One row per study: ``id, name, dataset, rounds, cost, judgments_per_item, created_at, updated_at``."""
        columns = ["id", "name", "dataset", "rounds", "cost", "judgments_per_item", "created_at", "updated_at"]
        rows = [
            [s.study.id, s.study.name, s.study.dataset, s.rounds, s.cost, s.study.judgments_per_item, s.study.created_at, s.updated_at]
            for s in self.summaries
        ]
        return pd.DataFrame(rows, columns=columns)

    def __len__(self) -> int:
        return len(self.summaries)

    def __repr__(self) -> str:
        lines = [f"#{s.study.id} {s.study.name} [{s.study.dataset}], {s.rounds} rounds" for s in self.summaries[:5]]
        more = [f"... and {len(self) - 5} more"] if len(self) > 5 else []
        return "\n".join([f"<{len(self)} studies{':' if lines else ''}", *lines, *more]) + ">"


def studies(*, store: Store | str | Path | None = None, data_key: str | None = None) -> StudyList:
    """The studies the dashboard (or ``prefeval studies``) recorded, newest first.

    Args:
        store: a :class:`~prefeval_core.store.Store`, a folder holding a SQLite store, or ``None``
            for the dashboard's store (``$PREFEVAL_DATABASE_URL``, else SQLite in
            ``$PREFEVAL_DATA_DIR``, else ``./prefeval_data``).
        data_key: only the studies of this data (e.g. ``sample:summeval``).
    """
    return StudyList(tuple(list_studies(study_store(store), data_key)))


@dataclass(frozen=True)
class StudyView:
    """A recorded study at its latest state (:func:`resume`): ``study`` holds its record, data
    choice, setup, table and protocol state; continue it in the dashboard (``?study=<id>``) or
    with ``prefeval studies step <id>``."""

    study: Study

    @property
    def status(self) -> StudyStatus:
        """Round, cost, decided pairs, whether it is finished and why, the answer in words."""
        return study_status(self.study.state)

    def to_frame(self) -> pd.DataFrame:
        """The Protocol page's table: one row per pair with the human outcomes used, θ, the
        decision and the posterior mean rates (and the evidence with error control)."""
        return pairs_frame(self.study.state)

    def figure(self) -> go.Figure:
        """θ of every pair across the rounds."""
        return theta_history_figure(self.study.state)

    def leaderboard(self) -> pd.DataFrame:
        """The study's leaderboard so far (as :meth:`ReplayResult.leaderboard`)."""
        return leaderboard_frame(study_leaderboard(self.study.state))

    def __repr__(self) -> str:
        s = self.status
        return (
            f"<Study #{self.study.id} {self.study.record.name} [{self.study.record.dataset}]: round {s.round}, "
            f"{s.cost_used:,} of {s.budget:,} {s.unit}; {s.answer} ({s.stop_words})>"
        )


def start_study(
    data: str | Path | Sequence[str | Path],
    human: str,
    metrics: str | Sequence[str] = (),
    *,
    question: QuestionKind = "all-pairs",
    k: int = 1,
    baselines: str | Sequence[str] = (),
    budget: int | None = None,
    seed: int = 0,
    name: str = "",
    criterion: str = "",
    guidelines: str = "",
    store: Store | str | Path | None = None,
    **options: Any,
) -> int:
    """Start a live study (the CLI's ``studies start``) and return its id: its first request is
    open for the dashboard's annotators, request files and Label Studio (``studies step`` and the
    dashboard's *Decide* take it on).

    Args:
        data: files, a folder, or ``sample:NAME``; their bytes are kept with the study.
        human, metrics, question, k, baselines, budget, seed: as in :func:`replay`.
        name: the study's name (default: the question and raters).
        criterion: what annotators judge (default: from the human rater, ``human:relevance`` ->
            relevance); ``guidelines``: Markdown shown with it.
        store: as in :func:`studies`.
        options: any other :class:`~prefeval_core.workflow.StudySetup` field (as in
            :func:`replay`, and ``judgments_per_item``).

    Raises:
        SettingsError: an unknown option or a value out of range.
        DataError: the data cannot be read, or lack a rater.
    """
    paths = [data] if isinstance(data, str | Path) else list(data)
    setup = replay_setup(
        human, _names(metrics), question=question, k=k, baselines=_names(baselines), budget=budget, seed=seed, live=True, **options
    )
    study = start_live_study(study_store(store), data_choice(paths), setup, name=name, criterion=criterion, guidelines=guidelines)
    return study.id


def resume(study_id: int, *, store: Store | str | Path | None = None) -> StudyView:
    """The study with this id at its latest state, on the data it was made with (``store`` as in :func:`studies`).

    Raises:
        SettingsError: no such study, or its data changed since.
        DataError: its data can no longer be loaded.
    """
    study, _ = load_study(study_store(store), study_id)
    return StudyView(study)


def annotators(study_id: int, *, store: Store | str | Path | None = None, metric: str | None = None) -> AnnotatorReport:
    """How the annotators of a recorded study judge (``store`` as in :func:`studies`): agreement on
    comparisons and on ratings (Krippendorff's alpha, Cohen's kappa for two, each annotator's
    alpha with the others and agreement with ``metric``, by default the study's first metric)
    and each one's position bias (does the left output win more often than chance?);
    ``.to_frame()`` has a row per annotator and kind.

    Raises:
        SettingsError: no such study, or its data changed since.
        UnknownNameError: ``metric`` is not a rater of the study's data.
    """
    opened = study_store(store)
    study, dataset = load_study(opened, study_id)
    return study_annotators(opened, study, dataset, metric)
