"""What a protocol runs on: the study table (method.md §3, §5, §12).

A study has a human rater and zero or more metrics. Its **unit** (method.md §12) is what a
human judgment is and what people are paid for:

* ``"ratings"`` (a scalar study: Likert, MQM, DA): one judgment is one human score of one
  output ``(system, item)``; once revealed it serves every pair of that system on that item.
* ``"comparisons"`` (a pairwise study, or a scalar study run the paper's way): one judgment is
  one human outcome of one pair on one item; it serves that pair only.

The table holds, for every pair and item that any of the raters covers, one **row** with the
full-data human outcome (replay; -1 where the human gave none) and each metric's outcome
(-1 none). Rows are sorted by pair, then item; pairs are canonical and sorted; items and
systems are sorted. A ratings study also holds the human scores as a grid ``(S, I)``. The
table is static: a protocol's state (:mod:`prefeval_core.protocol.state`) records what has
been revealed on top of it.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from prefeval_core.data.annotators import annotator_comparisons, annotator_scores, comparisons_behind, judgments_behind
from prefeval_core.data.dataset import Dataset
from prefeval_core.errors import CoverageError, settings_error
from prefeval_core.pairs.counts import PairTable
from prefeval_core.pairs.preferences import pair_outcomes, require_rater
from prefeval_core.protocol.annotator_units import annotator_unit_dataset
from prefeval_core.protocol.ideal_metric import IDEAL_METRIC_NAME, ideal_metric_table
from prefeval_core.vocabulary.outcomes import MISSING, codes_from_differences
from prefeval_core.vocabulary.tasks import RatingsPerRequest as RatingsPerRequest
from prefeval_core.vocabulary.tasks import Unit as Unit

Pool = Literal["human", "all"]
"""Which judgments may be requested: those the data holds (replay), or every output the data
covers (live: people judge what was never judged)."""


@dataclass(frozen=True, eq=False)
class RatingGrid:
    """The human scores of a ratings study, one cell per (system, item).

    Attributes:
        scores: (S, I) float64 human scores (higher is better); NaN where the data has none.
        cost: (S, I) int64 judgments behind each score (1 per score; several where the data
            keep annotators apart and they are averaged); 0 where nothing can be asked.
        requestable: (S, I) bool, the cells the protocol may ask for.
        paid: (S, I) int64 judgments the study paid for each output (``None``: ``cost``); with one
            rating per request a cell costs 1 but the study paid every annotator.
        full_scores: (S, I) the full evaluation's scores (the mean of every annotator) where
            ``scores`` hold one annotator's rating (``None``: ``scores``).
    """

    scores: npt.NDArray[np.float64]
    cost: npt.NDArray[np.int64]
    requestable: npt.NDArray[np.bool_]
    paid: npt.NDArray[np.int64] | None = None
    full_scores: npt.NDArray[np.float64] | None = None


@dataclass(frozen=True, eq=False)
class StudyTable:
    """The static data of a study (module docstring). Compared and hashed by identity (two tables
    with the same content have the same :attr:`fingerprint`).

    Attributes:
        human_rater: the human rater's name.
        metric_raters: the metrics, in order (k of them; empty: human only).
        unit: ``"ratings"`` or ``"comparisons"``.
        eps_human: tie threshold turning human score differences into outcomes (method.md §2).
        systems: (S,) sorted system names; items: (I,) sorted item ids.
        pairs: (P,) canonical pairs ``(system_a, system_b)``, sorted.
        pair_systems: (P, 2) int64 indices of each pair's systems in ``systems``.
        row_pair: (R,) int64 pair index of each row; row_item: (R,) int64 item index.
        human: (R,) int8 full-data human outcome of each row (-1: none).
        metrics: (R, k) int8 metric outcome codes (-1: none).
        row_cost: (R,) int64 judgments behind each row's human outcome (comparisons unit).
        requestable: (R,) bool, rows the protocol may ask for (comparisons unit; in a ratings
            study a row is revealed when both of its cells are).
        grid: the ratings grid (ratings unit), else ``None``.
        annotator_units: the items are (item, annotator) units, several of one item dependent
            (``ratings_per_request="one_pooled"``): only the pool statistics are valid on them.
        metric_scores: (k, S, I) the metrics' scores on the grid (ratings unit; NaN where a metric
            has none, is pairwise or simulated): the control variate of ``pool_mean_clt`` uses
            their differences, not only their signs. Not part of the fingerprint (the outcomes
            are, and a state saved before they were kept must still restore).
        row_paid: (R,) int64 comparisons the study paid for each row where a request buys one
            annotator's comparison (``human`` is then that annotator's outcome, at ``row_cost`` 1);
            ``None``: ``row_cost``.
        full_human: (R,) int8 the full evaluation's outcomes (the annotators' majority) where
            ``human`` holds one annotator's (``None``: ``human``).
    """

    human_rater: str
    metric_raters: tuple[str, ...]
    unit: Unit
    eps_human: float
    systems: tuple[str, ...]
    items: tuple[str, ...]
    pairs: tuple[tuple[str, str], ...]
    pair_systems: npt.NDArray[np.int64]
    row_pair: npt.NDArray[np.int64]
    row_item: npt.NDArray[np.int64]
    human: npt.NDArray[np.int8]
    metrics: npt.NDArray[np.int8]
    row_cost: npt.NDArray[np.int64]
    requestable: npt.NDArray[np.bool_]
    grid: RatingGrid | None = None
    annotator_units: bool = False
    metric_scores: npt.NDArray[np.float64] | None = None
    row_paid: npt.NDArray[np.int64] | None = None
    full_human: npt.NDArray[np.int8] | None = None

    @property
    def n_pairs(self) -> int:
        return len(self.pairs)

    @property
    def k(self) -> int:
        """Number of metrics."""
        return len(self.metric_raters)

    @property
    def ratings_per_request(self) -> RatingsPerRequest:
        """What a request buys in this table: ``one_pooled`` (units), ``one`` (one annotator's
        rating of an output or comparison, the study paid more) or ``all``."""
        if self.annotator_units:
            return "one_pooled"
        return "one" if self.row_paid is not None or (self.grid is not None and self.grid.paid is not None) else "all"

    @cached_property
    def pair_starts(self) -> npt.NDArray[np.int64]:
        """(P + 1,) first row of each pair (rows of pair p are ``pair_starts[p]:pair_starts[p+1]``)."""
        return np.searchsorted(self.row_pair, np.arange(self.n_pairs + 1)).astype(np.int64)

    @cached_property
    def row_cells(self) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]]:
        """For each row, the flat grid cells ``system * I + item`` of its two outputs (A's, B's);
        int32, half the memory of millions of rows (a grid within the data limits has far fewer
        than 2**31 cells)."""
        width = len(self.items)
        cells = []
        for side in (0, 1):  # in place: millions of rows in a large study
            cell = self.pair_systems[:, side].astype(np.int32)[self.row_pair]
            cell *= width
            cell += self.row_item
            cells.append(cell)
        return cells[0], cells[1]

    @cached_property
    def fingerprint(self) -> str:
        """A hash of everything in the table (a restored state must match its table)."""
        digest = hashlib.sha256()
        for text in (self.human_rater, *self.metric_raters, self.unit, repr(self.eps_human), *self.systems, *self.items):
            digest.update(text.encode() + b"\0")
        arrays: list[npt.NDArray[np.generic]] = [self.pair_systems, self.row_pair, self.row_item, self.human, self.metrics]
        arrays += [self.row_cost, self.requestable]
        if self.row_paid is not None:
            arrays += [self.row_paid]
        if self.grid is not None:
            arrays += [np.nan_to_num(self.grid.scores, nan=-np.inf), self.grid.cost, self.grid.requestable]
            if self.grid.paid is not None:
                arrays += [self.grid.paid]
        for array in arrays:
            digest.update(np.ascontiguousarray(array).tobytes())
        return digest.hexdigest()[:16]

    def human_available(self) -> npt.NDArray[np.int64]:
        """(P,) requestable rows with a full-data human outcome per pair (pair outcomes the data holds)."""
        rows = (self.human >= 0) & self.row_requestable_for_pairs
        return np.bincount(self.row_pair[rows], minlength=self.n_pairs).astype(np.int64)

    @cached_property
    def row_requestable_for_pairs(self) -> npt.NDArray[np.bool_]:
        """(R,) rows whose human outcome the protocol can obtain: requestable rows (comparisons),
        or rows whose two cells are both requestable (ratings)."""
        if self.grid is None:
            return self.requestable
        a, b = self.row_cells
        flat = self.grid.requestable.ravel()
        return flat[a] & flat[b]

    def cost_available(self, pairs: npt.NDArray[np.bool_] | None = None) -> int:
        """Judgments the protocol could obtain (replay: those the data holds), in the study's
        unit; with ``pairs`` (P,) only those a question about these pairs could use (the
        ratings of their systems, or their comparisons)."""
        if self.grid is not None:
            cells = self.grid.requestable
            if pairs is not None:
                involved = np.zeros(len(self.systems), dtype=bool)
                involved[self.pair_systems[pairs].ravel()] = True
                cells = cells & involved[:, None]
            paid = self.grid.cost if self.grid.paid is None else self.grid.paid
            return int(paid[cells].sum())
        rows = self.requestable if pairs is None else self.requestable & pairs[self.row_pair]
        return int((self.row_cost if self.row_paid is None else self.row_paid)[rows].sum())

    def pair_table(self, metric: int | None = 0) -> PairTable:
        """The rows as a single-metric :class:`~prefeval_core.pairs.counts.PairTable` (``None``: no metric)."""
        return PairTable(
            human_rater=self.human_rater,
            metric_rater=None if metric is None or self.k == 0 else self.metric_raters[metric],
            pairs=self.pairs,
            pair_index=self.row_pair.astype(np.int32),
            item_id=np.asarray(self.items, dtype=object)[self.row_item],
            human=self.human,
            metric=np.full(len(self.human), MISSING, dtype=np.int8) if metric is None or self.k == 0 else self.metrics[:, metric],
        )


def build_study_table(
    dataset: Dataset,
    human: str,
    metrics: Sequence[str] = (),
    *,
    unit: Unit | None = None,
    pool: Pool = "human",
    eps_human: float = 0.0,
    eps_metric: float = 0.0,
    human_fraction: float = 1.0,
    seed: int = 0,
    ideal_items: int = 0,
    ratings_per_request: RatingsPerRequest = "all",
    judgments_per_item: int = 1,
) -> StudyTable:
    """The study table of ``human`` and ``metrics`` on ``dataset``.

    Args:
        unit: ``None`` follows the human rater (scalar -> ratings, pairwise -> comparisons);
            ``"comparisons"`` on a scalar rater runs the paper's pair-by-pair protocol.
        pool: ``"human"`` (replay: only judgments the data holds can be revealed) or ``"all"``
            (live: every output of the data can be asked for).
        human_fraction: share F of the human judgments that may be revealed (replay studies
            of the paper's regime of many metric-only items): the others are withheld and their items stay
            metric-only — whole items in a ratings study (one rating serves every pair),
            rows of each pair in a comparisons study — chosen with ``seed``. The full-data
            human outcomes stay in the table as the reference.
        ideal_items: with the metric ``"ideal"`` (method.md §10), simulated metric-only items per pair.
        ratings_per_request: ratings replays: ``all`` annotators' ratings of an output at once,
            ``one`` or ``one_pooled`` (:data:`RatingsPerRequest`).
        judgments_per_item: live studies (``pool="all"``): the judgments one request buys (different
            annotators of the same output or comparison), hence what a request costs, whatever
            ``ratings_per_request`` says; a replay's request costs the judgments the data holds behind it.

    The pairs are every pair of systems the human rater covers (a pair a metric does not cover
    is decided from human judgments alone) **(choice)**.

    Raises:
        UnknownNameError, CoverageError: unknown raters, a human rater with no pair.
        SettingsError: ``unit="ratings"`` with a pairwise human rater; a bad fraction;
            ``one_pooled`` outside a ratings replay or where no annotators are kept apart.
    """
    for rater in (human, *(m for m in metrics if m != IDEAL_METRIC_NAME or m in dataset.raters)):
        require_rater(dataset, rater)  # before the annotator units keep only the raters named
    if ratings_per_request == "one_pooled":
        if pool != "human" or unit == "comparisons" or dataset.rater_kind(human) == "pairwise":
            raise settings_error("one rating per request from the pooled ratings needs a replay of ratings", field="ratings_per_request")
        dataset = annotator_unit_dataset(dataset, human, metrics)
    if not 0.0 < human_fraction <= 1.0:
        raise settings_error(f"the human fraction must be in (0, 1], got {human_fraction}", field="human_fraction")
    kind = dataset.rater_kind(human)
    unit = unit or ("ratings" if kind == "scalar" else "comparisons")
    if unit == "ratings" and kind == "pairwise":
        raise settings_error(f"'{human}' is a pairwise rater: its judgments are comparisons, not ratings", field="unit")
    items = tuple(sorted({str(i) for i in _study_items(dataset, human, metrics, pool)}))
    simulated = [m == IDEAL_METRIC_NAME and m not in dataset.raters for m in metrics]
    real_metrics = [m for m, sim in zip(metrics, simulated, strict=True) if not sim]
    # scalar raters: straight from the score grids (fast); anything else from the pair-outcome frames
    scored = _rows_from_scores(dataset, human, real_metrics, items, eps_human, eps_metric) if _scores_only(
        dataset, human, real_metrics, pool, eps_human, eps_metric
    ) else None  # fmt: skip
    systems, rows = scored or _rows_from_outcomes(dataset, human, real_metrics, items, pool, eps_human, eps_metric)
    grid = _rating_grid(dataset, human, systems, items, pool, judgments_per_item) if unit == "ratings" else None
    row_a, row_b, row_item, human_codes = rows.a, rows.b, rows.item, rows.human
    if grid is not None:  # a row's human outcome is that of its two scores (replay) or of the scores people give (live)
        # millions of rows in a large study: one index array at a time, results built in place
        scores, cells_requestable = grid.scores.ravel(), grid.requestable.ravel()
        cell = row_a * len(items) + row_item
        difference, capable = scores[cell], cells_requestable[cell]
        cell = row_b * len(items) + row_item
        difference -= scores[cell]
        capable &= cells_requestable[cell]
        del cell
        human_codes = codes_from_differences(difference, eps_human)
        del difference
    else:
        capable = human_codes >= 0 if pool == "human" else np.ones(len(row_a), dtype=bool)
    # the pairs: those the human can judge (a pair no human judgment can reach is not part of the study);
    # a pair's key a * S + b sorts as (a, b) does
    row_key = row_a * len(systems) + row_b
    keys = np.unique(row_key[capable])
    pair_keys = np.stack(np.divmod(keys, len(systems)), axis=1).reshape(-1, 2)
    row_pair = np.searchsorted(keys, row_key).astype(np.int64, copy=False)
    keep = row_pair < len(keys)
    keep[keep] = keys[row_pair[keep]] == row_key[keep]
    del row_key
    order: npt.NDArray[np.int64] | slice = slice(None)  # every row, in order: the columns as they are, no copies
    if not (rows.ordered and keep.all()):
        kept = np.flatnonzero(keep)
        order = kept if rows.ordered else kept[np.lexsort((row_item[kept], row_pair[kept]))]
    sorted_pair = row_pair[order]
    del row_pair
    real_column = np.cumsum([not sim for sim in simulated]) - 1  # column of each real metric in rows.metrics
    columns = [
        np.full(len(row_a), MISSING, dtype=np.int8) if sim else rows.metrics[:, column]
        for sim, column in zip(simulated, real_column, strict=True)
    ]
    metric_codes = np.stack(columns, axis=1) if columns else np.zeros((len(row_a), 0), dtype=np.int8)
    requestable = capable if grid is None else np.zeros(len(row_a), dtype=bool)
    withheld = _withheld(unit, human_fraction, seed, sorted_pair, len(items))
    if grid is not None:
        grid = RatingGrid(grid.scores, grid.cost, grid.requestable & ~withheld[None, :])
        if ratings_per_request == "one" and pool == "human":  # live, a request buys ``judgments_per_item`` from real annotators
            grid = _one_rating_grid(grid, dataset, human, systems, items, seed)
        requestable_rows = requestable[order]
    else:
        requestable_rows = requestable[order] & ~withheld
    row_cost = _row_cost(dataset, human, systems, items, rows, pool, judgments_per_item)[order]
    human_rows, row_paid, full_human = human_codes[order], None, None
    if grid is None and ratings_per_request == "one" and pool == "human":
        one = _one_comparison_rows(dataset, human, systems, items, (row_a[order], row_b[order], row_item[order]), seed)
        if one is not None:
            row_paid, full_human = row_cost, human_rows
            human_rows, row_cost = np.where(one >= 0, one, human_rows).astype(np.int8), np.where(one >= 0, 1, row_cost)
    if len(pair_keys) == 0:
        raise CoverageError.single("single_system", f"the human rater '{human}' gives no pair of systems a judgment")
    table = StudyTable(
        human_rater=human,
        metric_raters=tuple(metrics),
        unit=unit,
        eps_human=eps_human,
        systems=systems,
        items=items,
        pairs=tuple((systems[a], systems[b]) for a, b in pair_keys),
        pair_systems=pair_keys.astype(np.int64),
        row_pair=sorted_pair,
        row_item=row_item[order],
        human=human_rows,
        metrics=metric_codes[order],
        row_cost=row_cost,
        requestable=requestable_rows,
        grid=grid,
        annotator_units=ratings_per_request == "one_pooled",
        metric_scores=np.stack([_score_grid(dataset, m, systems, items) for m in metrics]) if grid is not None and metrics else None,
        row_paid=row_paid,
        full_human=full_human,
    )
    for column, sim in enumerate(simulated):
        if sim:
            table = _with_ideal_metric(table, column, seed, ideal_items)
    return table


@dataclass(frozen=True)
class _Rows:
    """The (pair, item) rows any rater covers, before the table sorts them, as indices.

    Attributes:
        a, b: (R,) int64 indices of the row's two systems in the study's systems.
        item: (R,) int64 index of its item in the study's items.
        human: (R,) int8 the human's outcome (-1: none).
        metrics: (R, k) int8 the real metrics' outcomes (-1: none), in the order asked for.
        ordered: the rows are already sorted by pair (``(a, b)``), then item.
    """

    a: npt.NDArray[np.int64]
    b: npt.NDArray[np.int64]
    item: npt.NDArray[np.int64]
    human: npt.NDArray[np.int8]
    metrics: npt.NDArray[np.int8]
    ordered: bool = False


def _rows_from_outcomes(
    dataset: Dataset, human: str, metrics: Sequence[str], items: tuple[str, ...], pool: Pool, eps_human: float, eps_metric: float
) -> tuple[tuple[str, ...], _Rows]:
    """The study's systems and rows from each rater's pair outcomes (any rater kind, any pool)."""
    human_rows = pair_outcomes(dataset, human, eps=eps_human).frame
    systems = _study_systems(dataset, human_rows, pool)
    rows = _aligned_rows(human_rows, {m: pair_outcomes(dataset, m, eps=eps_metric).frame for m in metrics})
    if pool == "all" and dataset.has_texts:
        rows = _with_output_rows(rows, dataset)
    rows = rows[rows["system_a"].isin(systems) & rows["system_b"].isin(systems)]
    system_index = pd.Index(systems)
    codes = [rows[m].fillna(MISSING).to_numpy().astype(np.int8) for m in metrics]
    return systems, _Rows(
        a=system_index.get_indexer(rows["system_a"]).astype(np.int64),
        b=system_index.get_indexer(rows["system_b"]).astype(np.int64),
        item=pd.Index(items).get_indexer(rows["item_id"]).astype(np.int64),
        human=rows["human"].fillna(MISSING).to_numpy().astype(np.int8),
        metrics=np.stack(codes, axis=1) if codes else np.zeros((len(rows), 0), dtype=np.int8),
    )


def _scores_only(dataset: Dataset, human: str, metrics: Sequence[str], pool: Pool, eps_human: float, eps_metric: float) -> bool:
    """Whether :func:`_rows_from_scores` applies: scalar raters the data holds, string ids, one
    score per (rater, system, item), no outputs to add; anything else (and every error) takes
    :func:`_rows_from_outcomes`."""
    raters = [human, *metrics]
    if (pool == "all" and dataset.has_texts) or min(eps_human, eps_metric) < 0:
        return False
    if any(r not in dataset.raters or dataset.rater_kind(r) != "scalar" for r in raters):
        return False
    ratings = dataset.ratings
    if not (pd.api.types.is_string_dtype(ratings["system"]) and pd.api.types.is_string_dtype(ratings["item_id"])):
        return False
    chosen = ratings[ratings["rater"].isin(raters)]
    return not bool(chosen.duplicated(["rater", "system", "item_id"]).any())


def _rows_from_scores(
    dataset: Dataset, human: str, metrics: Sequence[str], items: tuple[str, ...], eps_human: float, eps_metric: float
) -> tuple[tuple[str, ...], _Rows] | None:
    """:func:`_rows_from_outcomes` for scalar raters, computed on (system, item) score grids
    instead of frames of pair outcomes: the same systems and rows (outcomes by
    :func:`~prefeval_core.vocabulary.outcomes.codes_from_differences` of the same differences, pairs oriented
    by sorted names). ``None`` where a rater gives no pair (the frame route raises the error)."""
    ratings = dataset.ratings
    names = tuple(sorted(str(s) for s in ratings.loc[ratings["rater"] == human, "system"].unique()))
    a_all, b_all = np.triu_indices(len(names), k=1)
    item_index, name_index = pd.Index(items), pd.Index(names)
    codes = []
    for rater, eps in ((human, eps_human), *((m, eps_metric) for m in metrics)):
        rated = ratings[ratings["rater"] == rater]
        s, i = name_index.get_indexer(rated["system"]), item_index.get_indexer(rated["item_id"])
        scores = np.full((len(names), len(items)), np.nan)
        inside = s >= 0
        scores[s[inside], i[inside]] = rated["score"].to_numpy(dtype=np.float64)[inside]
        rater_codes = np.empty((len(a_all), len(items)), dtype=np.int8)  # (pairs, items)
        for a, start in enumerate(np.searchsorted(a_all, np.arange(len(names) - 1))):  # a's pairs are contiguous
            rater_codes[start : start + len(names) - a - 1] = codes_from_differences(scores[a] - scores[a + 1 :], eps)
        if rater == human:
            covered = (rater_codes >= 0).any(axis=1)
            if not covered.any():
                return None
            names_used = np.unique(np.concatenate([a_all[covered], b_all[covered]]))
        elif not (rater_codes >= 0).any():  # no pair among the human's systems: the frame route knows whether that is an error
            return None
        codes.append(rater_codes)
    # the study's systems: those in a pair the human judged; renumber the pairs among them
    keep_pair = np.isin(a_all, names_used) & np.isin(b_all, names_used)
    renumber = np.full(len(names), -1, dtype=np.int64)
    renumber[names_used] = np.arange(len(names_used))
    any_rater = np.logical_or.reduce([c[keep_pair] >= 0 for c in codes])
    pair_pos, item_pos = np.nonzero(any_rater)
    kept = [c[keep_pair][pair_pos, item_pos] for c in codes]
    return tuple(names[i] for i in names_used), _Rows(
        a=renumber[a_all[keep_pair][pair_pos]],
        b=renumber[b_all[keep_pair][pair_pos]],
        item=item_pos.astype(np.int64),
        human=kept[0],
        metrics=np.stack(kept[1:], axis=1) if metrics else np.zeros((len(pair_pos), 0), dtype=np.int8),
        ordered=True,
    )


def _study_systems(dataset: Dataset, human_rows: pd.DataFrame, pool: Pool) -> tuple[str, ...]:
    """Systems the human rater covers (replay), plus systems with outputs (live)."""
    names = set(human_rows["system_a"].unique()) | set(human_rows["system_b"].unique())
    if pool == "all" and dataset.has_texts:
        names |= set(dataset.texts["system"].astype(str).unique())
    return tuple(sorted(str(n) for n in names))


def _study_items(dataset: Dataset, human: str, metrics: Sequence[str], pool: Pool) -> set[object]:
    raters = [human, *[m for m in metrics if m in dataset.raters]]
    items = set(dataset.ratings.loc[dataset.ratings["rater"].isin(raters), "item_id"].unique())
    items |= set(dataset.preferences.loc[dataset.preferences["rater"].isin(raters), "item_id"].unique())
    if pool == "all" and dataset.has_texts:
        items |= set(dataset.texts["item_id"].unique())
    return items


def _aligned_rows(human: pd.DataFrame, metrics: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per (pair, item) any rater covers, a column of outcome codes per rater."""
    frame = human.rename(columns={"outcome": "human"})
    for metric, outcomes in metrics.items():
        frame = frame.merge(outcomes.rename(columns={"outcome": metric}), on=["system_a", "system_b", "item_id"], how="outer")
    return frame.assign(
        item_id=frame["item_id"].astype(str), system_a=frame["system_a"].astype(str), system_b=frame["system_b"].astype(str)
    )


def _with_output_rows(rows: pd.DataFrame, dataset: Dataset) -> pd.DataFrame:
    """Add a row for every pair and item where both systems have an output (live studies ask
    people to judge outputs no rater judged)."""
    texts = dataset.texts.assign(item_id=dataset.texts["item_id"].astype(str), system=dataset.texts["system"].astype(str))
    merged = texts.merge(texts, on="item_id", suffixes=("_a", "_b"))
    merged = merged[merged["system_a"] < merged["system_b"]][["system_a", "system_b", "item_id"]]
    return rows.merge(merged, on=["system_a", "system_b", "item_id"], how="outer")


def _row_cost(
    dataset: Dataset, human: str, systems: tuple[str, ...], items: tuple[str, ...], rows: _Rows, pool: Pool, judgments_per_item: int
) -> npt.NDArray[np.int64]:
    """(rows,) what revealing each row's human outcome costs: live, the judgments a request buys;
    a replay of comparisons, the comparisons the study paid; a replay pair by pair of ratings, 1."""
    if pool == "all":
        return np.full(len(rows.a), judgments_per_item, dtype=np.int64)
    if dataset.rater_kind(human) == "pairwise":
        return _comparison_cost(dataset, human, systems, items, rows)
    return np.ones(len(rows.a), dtype=np.int64)


def _comparison_cost(dataset: Dataset, human: str, systems: tuple[str, ...], items: tuple[str, ...], rows: _Rows) -> npt.NDArray[np.int64]:
    """(rows,) the comparisons the study paid for each row's human outcome
    (:func:`~prefeval_core.data.annotators.comparisons_behind`: its annotators where the data keep
    them apart, else 1; method.md §12)."""
    behind = comparisons_behind(dataset.preferences, human)
    system_index, item_index = pd.Index(systems), pd.Index(items)
    a, b = system_index.get_indexer(behind["system_a"].astype(str)), system_index.get_indexer(behind["system_b"].astype(str))
    i = item_index.get_indexer(behind["item_id"].astype(str))
    keep = (a >= 0) & (b >= 0) & (i >= 0)
    paid = pd.Series(behind["judgments"].to_numpy(dtype=np.int64)[keep], index=(a[keep] * len(systems) + b[keep]) * len(items) + i[keep])
    key = (rows.a * len(systems) + rows.b) * len(items) + rows.item
    return paid.reindex(key).fillna(1).to_numpy(dtype=np.int64)


def _rating_grid(
    dataset: Dataset, human: str, systems: tuple[str, ...], items: tuple[str, ...], pool: Pool, judgments_per_item: int
) -> RatingGrid:
    """The human scores on the (system, item) grid. A replay's cell costs the judgments behind its
    score (:func:`~prefeval_core.data.annotators.judgments_behind`: the annotators where the data
    keep them apart, else 1; method.md §12); a live cell costs what a request buys
    (``judgments_per_item``), whatever the data held."""
    scores = _score_grid(dataset, human, systems, items)
    cost = np.full(scores.shape, judgments_per_item, dtype=np.int64)
    if pool == "human":
        behind = judgments_behind(dataset.ratings, human)
        s = pd.Index(systems).get_indexer(behind["system"].astype(str))
        i = pd.Index(items).get_indexer(behind["item_id"].astype(str))
        keep = (s >= 0) & (i >= 0)
        cost[s[keep], i[keep]] = behind["judgments"].to_numpy(dtype=np.int64)[keep]
    has_score = ~np.isnan(scores)
    requestable = has_score.copy()
    if pool == "all":
        requestable |= _output_cells(dataset, systems, items) if dataset.has_texts else np.ones_like(has_score)
    return RatingGrid(scores=scores, cost=np.where(requestable, cost, 0), requestable=requestable)


def _score_grid(dataset: Dataset, rater: str, systems: tuple[str, ...], items: tuple[str, ...]) -> npt.NDArray[np.float64]:
    """(S, I) ``rater``'s scores on the (system, item) grid; NaN where it has none (or is pairwise)."""
    ratings = dataset.ratings[dataset.ratings["rater"] == rater]
    scores = np.full((len(systems), len(items)), np.nan)
    s = pd.Index(systems).get_indexer(ratings["system"].astype(str))
    i = pd.Index(items).get_indexer(ratings["item_id"].astype(str))
    keep = (s >= 0) & (i >= 0)
    scores[s[keep], i[keep]] = ratings["score"].to_numpy(dtype=np.float64)[keep]
    return scores


def _one_rating_grid(
    grid: RatingGrid, dataset: Dataset, human: str, systems: tuple[str, ...], items: tuple[str, ...], seed: int
) -> RatingGrid:
    """The grid where a request buys one annotator's rating: each item's annotator is drawn with
    ``seed`` (the same annotator for every system on the item, so that annotators' leniency cancels
    in the pair differences), or the next one in a fixed order where that one did not rate the
    output. Outputs published only as a mean keep it, at its full cost."""
    ratings = annotator_scores(dataset.ratings, human)
    if ratings.empty:
        return grid
    s = pd.Index(systems).get_indexer(ratings["system"].astype(str))
    i = pd.Index(items).get_indexer(ratings["item_id"].astype(str))
    keep = (s >= 0) & (i >= 0)
    s, i = s[keep], i[keep]
    first = _rotated_choice(ratings["annotator"], keep, i, s * len(items) + i, len(items), seed)
    scores, cost = grid.scores.copy(), grid.cost.copy()
    scores[s[first], i[first]] = ratings["score"].to_numpy(dtype=np.float64)[keep][first]
    cost[s[first], i[first]] = 1
    return RatingGrid(scores, np.where(grid.requestable, cost, 0), grid.requestable, paid=grid.cost, full_scores=grid.scores)


def _one_comparison_rows(
    dataset: Dataset,
    human: str,
    systems: tuple[str, ...],
    items: tuple[str, ...],
    rows: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]],
    seed: int,
) -> npt.NDArray[np.int8] | None:
    """(R,) for the rows ``(a, b, item)`` of a comparisons replay, the outcome of one annotator
    where the data keep the comparison's annotators apart (:func:`_rotated_choice`: each item's
    annotator drawn with ``seed``), -1 elsewhere; ``None`` where they keep none apart."""
    judged = annotator_comparisons(dataset.preferences, human)
    if judged.empty:
        return None
    system_index = pd.Index(systems)
    a, b = system_index.get_indexer(judged["system_a"].astype(str)), system_index.get_indexer(judged["system_b"].astype(str))
    i = pd.Index(items).get_indexer(judged["item_id"].astype(str))
    keep = (a >= 0) & (b >= 0) & (i >= 0)
    a, b, i = a[keep], b[keep], i[keep]
    key = (a * len(systems) + b) * len(items) + i
    first = _rotated_choice(judged["annotator"], keep, i, key, len(items), seed)
    chosen = pd.Series(judged["outcome"].to_numpy(dtype=np.int8)[keep][first], index=key[first])
    row_a, row_b, row_item = rows
    return chosen.reindex((row_a * len(systems) + row_b) * len(items) + row_item).fillna(MISSING).to_numpy().astype(np.int8)


def _rotated_choice(
    annotators: pd.Series,
    keep: npt.NDArray[np.bool_],
    item: npt.NDArray[np.int64],
    cell: npt.NDArray[np.int64],
    n_items: int,
    seed: int,
) -> npt.NDArray[np.int64]:
    """Per ``cell`` (an output, or a comparison), the position among the kept judgments
    (``annotators[keep]``, their items ``item``) of one judgment: that of the item's annotator drawn
    with ``seed`` among all of them (the same for every output or pair of the item, so that
    annotators' leniency cancels in the pair differences), or of the next one in a fixed order
    (names sorted) where that one did not judge the cell."""
    names = sorted(annotators.unique().tolist())
    chosen = np.random.default_rng([seed, 0x0E]).integers(len(names), size=n_items)
    distance = (pd.Index(names).get_indexer(annotators[keep]) - chosen[item]) % len(names)
    order = np.lexsort((distance, cell))  # per cell, the nearest annotator in rotation first
    return order[np.unique(cell[order], return_index=True)[1]]


def _output_cells(dataset: Dataset, systems: tuple[str, ...], items: tuple[str, ...]) -> npt.NDArray[np.bool_]:
    cells = np.zeros((len(systems), len(items)), dtype=bool)
    s = pd.Index(systems).get_indexer(dataset.texts["system"].astype(str))
    i = pd.Index(items).get_indexer(dataset.texts["item_id"].astype(str))
    keep = (s >= 0) & (i >= 0)
    cells[s[keep], i[keep]] = True
    return cells


def _withheld(unit: Unit, human_fraction: float, seed: int, row_pair: npt.NDArray[np.int64], n_items: int) -> npt.NDArray[np.bool_]:
    """Which items (ratings: (I,)) or rows (comparisons: (R,)) are withheld for ``human_fraction``."""
    size = n_items if unit == "ratings" else len(row_pair)
    if human_fraction >= 1.0:
        return np.zeros(size, dtype=bool)
    rng = np.random.default_rng([seed, 0x48464])  # its own stream: the reveal order stays that of the seed
    if unit == "ratings":
        keep = rng.permutation(n_items)[: round(human_fraction * n_items)]
        withheld = np.ones(n_items, dtype=bool)
        withheld[keep] = False
        return withheld
    withheld = np.ones(len(row_pair), dtype=bool)
    starts = np.searchsorted(row_pair, np.arange(row_pair.max(initial=-1) + 2))
    for start, stop in itertools.pairwise(starts):
        keep = start + rng.permutation(stop - start)[: round(human_fraction * (stop - start))]
        withheld[keep] = False
    return withheld


def _with_ideal_metric(table: StudyTable, column: int, seed: int, extra_items: int) -> StudyTable:
    """Replace metric ``column`` by the simulated ideal metric (method.md §10), adding its
    metric-only items (new item ids) to every pair."""
    ideal = ideal_metric_table(table.pair_table(None), seed=seed, extra_items=extra_items)
    items = tuple(sorted(set(table.items) | {str(i) for i in ideal.item_id}))
    item_index = pd.Index(items)
    row_item = item_index.get_indexer(ideal.item_id.astype(str)).astype(np.int64)
    old = pd.MultiIndex.from_arrays([table.row_pair, np.asarray(table.items, dtype=object)[table.row_item]])
    new = pd.MultiIndex.from_arrays([ideal.pair_index.astype(np.int64), ideal.item_id.astype(str)])
    position = old.get_indexer(new)  # -1 for the simulated extra rows
    known = position >= 0
    metrics = np.full((len(new), table.k), MISSING, dtype=np.int8)
    metrics[known] = table.metrics[position[known]]
    metrics[:, column] = ideal.metric
    order = np.lexsort((row_item, ideal.pair_index))

    def pick(values: npt.NDArray[Any], fill: object) -> npt.NDArray[Any]:
        out = np.full(len(new), fill, dtype=values.dtype)
        out[known] = values[position[known]]
        return out[order]

    grid, metric_scores = table.grid, table.metric_scores
    columns = item_index.get_indexer(list(table.items))
    if metric_scores is not None:  # the simulated items have no scores
        metric_scores = np.full((table.k, len(table.systems), len(items)), np.nan)
        metric_scores[:, :, columns] = table.metric_scores
    if grid is not None:
        widen = np.full((len(table.systems), len(items)), np.nan)
        cost = np.zeros_like(widen, dtype=np.int64)
        req = np.zeros_like(widen, dtype=bool)
        widen[:, columns], cost[:, columns], req[:, columns] = grid.scores, grid.cost, grid.requestable
        paid = full = None
        if grid.paid is not None and grid.full_scores is not None:
            paid, full = np.zeros_like(cost), np.full_like(widen, np.nan)
            paid[:, columns], full[:, columns] = grid.paid, grid.full_scores
        grid = RatingGrid(widen, cost, req, paid=paid, full_scores=full)
    return StudyTable(
        human_rater=table.human_rater,
        metric_raters=table.metric_raters,
        unit=table.unit,
        eps_human=table.eps_human,
        systems=table.systems,
        items=items,
        pairs=table.pairs,
        pair_systems=table.pair_systems,
        row_pair=ideal.pair_index.astype(np.int64)[order],
        row_item=row_item[order],
        human=pick(table.human, MISSING),
        metrics=metrics[order],
        row_cost=pick(table.row_cost, 1),
        requestable=pick(table.requestable, False),
        grid=grid,
        annotator_units=table.annotator_units,
        metric_scores=metric_scores,
    )
