"""prefeval's decision engine and the baselines side by side, at equal cost.

:func:`compare_methods` takes one revealed set of human judgments and runs every method on it:

* ``prefeval human only``: :func:`~prefeval_core.decision.decide_counts` with ``model="human_only"``
  (exact ``Dirichlet(n + 1)``);
* ``prefeval full (<metric>)``: the same with ``model="full"``, one per metric;
* ``prefeval full (all k metrics)``: with several metrics, all of them in one posterior
  (Dawid–Skene, :func:`~prefeval_core.decision.decide_joint`);
* ``PPI++ (<metric>)``, one per metric, and ``PPI++ (mean(<metrics>))`` when there are several
  (:mod:`prefeval_core.baselines.ppi`);
* ``CLT (human only)``: the classical normal interval on the revealed human outcomes
  (``ppi_py.classical_mean_ci``; PPI++ without a predictor), which separates what PPI++ gains from
  the metric from what it gains by being a normal approximation;
* ``Bradley–Terry`` on the human judgments (:mod:`prefeval_core.baselines.bradley_terry`).

Each is scored against the full human evaluation (method.md §6: the exact human-only decision on
*all* human outcomes of the pair, withheld ones included) by error type. The cost is the same
for every method by construction: the revealed pair outcomes, and the human ratings behind them
(distinct (item, system) of the revealed rows: the cost unit of a scalar study, method.md §12).

:func:`withhold_human` makes the revealed set of the "human fraction" experiment.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Final, Literal

import numpy as np
import numpy.typing as npt

from prefeval_core.baselines.bradley_terry import Resample, bradley_terry_decisions
from prefeval_core.baselines.inputs import pair_systems, revealed_rows
from prefeval_core.baselines.intervals import check_gamma
from prefeval_core.baselines.ppi import ppi_decisions
from prefeval_core.decision import SamplerSettings, decide_counts, decide_joint
from prefeval_core.diagnostics.comparison import (
    ERROR_TYPES,
    ErrorFrequencies,
    ErrorType,
    error_frequencies,
    error_types,
    human_reference_outcomes,
)
from prefeval_core.errors import settings_error
from prefeval_core.pairs.counts import PairTable, count_triples, joint_counts
from prefeval_core.vocabulary.levels import DEFAULT_GAMMA
from prefeval_core.vocabulary.outcomes import TIE

MethodKind = Literal["prefeval_human_only", "prefeval_full", "ppi++", "clt", "bradley_terry"]
METHOD_KINDS: Final[tuple[MethodKind, ...]] = ("prefeval_human_only", "prefeval_full", "ppi++", "clt", "bradley_terry")


@dataclass(frozen=True)
class MethodSummary:
    """One method's decisions on the revealed judgments, against the full human evaluation.

    Attributes:
        name: label, e.g. ``"PPI++ (rougeL)"``.
        kind: which method (``METHOD_KINDS``).
        metric: the metric(s) it used (``"mean(a, b)"`` for an averaged predictor), ``None``
            for human-only methods.
        decision: (P,) int8 codes, 0 ``>``, 1 undecided, 2 ``<``.
        error_types: (P,) error type of each pair (``ERROR_TYPES``).
        frequencies: shares of pairs per error type.
        counts: number of pairs per error type (keys ``ERROR_TYPES``).
    """

    name: str
    kind: MethodKind
    metric: str | None
    decision: npt.NDArray[np.int8]
    error_types: npt.NDArray[np.str_]
    frequencies: ErrorFrequencies
    counts: dict[ErrorType, int]

    @property
    def correct(self) -> int:
        """Pairs correct of either kind (significant and same direction, or both undecided)."""
        return self.counts["correct_significant"] + self.counts["correct_undecided"]

    @property
    def decided(self) -> int:
        """Pairs decided ``>`` or ``<``."""
        return int(np.sum(self.decision != TIE))


@dataclass(frozen=True)
class MethodComparison:
    """Every method on one revealed set (see the module docstring).

    Attributes:
        pairs: the pairs, in table order.
        reference: (P,) int8 human reference outcome per pair (all human outcomes).
        pair_outcomes_used, pair_outcomes_available: revealed human pair outcomes; all of them.
        ratings_used, ratings_available: distinct (item, system) behind the revealed rows; behind
            all rows with a human outcome (the cost of a scalar study).
        gamma, seed: the level and seed every method used.
        methods: one summary per method, in the order listed in the module docstring.
    """

    pairs: tuple[tuple[str, str], ...]
    reference: npt.NDArray[np.int8]
    pair_outcomes_used: int
    pair_outcomes_available: int
    ratings_used: int
    ratings_available: int
    gamma: float
    seed: int
    methods: tuple[MethodSummary, ...]

    def method(self, name: str) -> MethodSummary:
        """The summary called ``name``."""
        for summary in self.methods:
            if summary.name == name:
                return summary
        raise KeyError(f"no method named {name!r}; methods: {', '.join(m.name for m in self.methods)}")


def compare_methods(
    table: PairTable,
    revealed: npt.ArrayLike,
    gamma: float = DEFAULT_GAMMA,
    seed: int = 0,
    *,
    metric_codes: npt.ArrayLike | None = None,
    metric_names: tuple[str, ...] | None = None,
    n_resamples: int = 1000,
    resample: Resample = "items",
    sampler_settings: SamplerSettings | None = None,
) -> MethodComparison:
    """Run prefeval (human only, full) and the baselines on one revealed set and score them.

    Args:
        table: aligned outcomes, one row per (pair, item).
        revealed: (R,) bool per row: the human outcome is revealed.
        gamma: level of every method's decision.
        seed: seed of every random step (decision engine, bootstrap).
        metric_codes: (R,) or (R, k) metric codes per row (-1 = none); default ``table.metric``.
            Without any metric only the human-only methods run.
        metric_names: the k metric names; default ``(table.metric_rater,)``.
        n_resamples, resample: Bradley–Terry's bootstrap.
        sampler_settings: the decision engine's sizes.

    Raises:
        SettingsError: bad level, mask or metric arrays.
    """
    gamma = check_gamma(gamma)
    is_revealed = revealed_rows(table, revealed)
    codes, names = _metrics(table, metric_codes, metric_names)
    reference = human_reference_outcomes(count_triples(table, table.human >= 0).n, gamma)
    counts = count_triples(table, is_revealed)

    def summary(name: str, kind: MethodKind, metric: str | None, decision: npt.NDArray[np.int8]) -> MethodSummary:
        return _summary(name, kind, metric, decision, reference)

    engine = {"gamma": gamma, "seed": seed, "settings": sampler_settings}
    methods = [summary("prefeval human only", "prefeval_human_only", None, decide_counts(counts, model="human_only", **engine).decision)]
    for j, name in enumerate(names):
        one = replace(table, metric=codes[:, j].astype(np.int8), metric_rater=name)
        methods.append(
            summary(f"prefeval full ({name})", "prefeval_full", name, decide_counts(count_triples(one, is_revealed), **engine).decision)
        )
    if len(names) > 1:
        joint = joint_counts(names, table.pair_index, np.where(is_revealed, table.human, -1), codes, is_revealed, table.n_pairs)
        label = f"all {len(names)} metrics"
        decided = decide_joint(joint, gamma=gamma, seed=seed, settings=sampler_settings).decision
        methods.append(summary(f"prefeval full ({label})", "prefeval_full", label, decided))
    predictors = [((name,), codes[:, [j]]) for j, name in enumerate(names)] + ([(names, codes)] if len(names) > 1 else [])
    for predictor_names, predictor_codes in predictors:
        ppi = ppi_decisions(table, is_revealed, metric_codes=predictor_codes, metric_names=predictor_names, gamma=gamma)
        methods.append(summary(f"PPI++ ({ppi.predictor})", "ppi++", ppi.predictor, ppi.decision))
    no_predictor = np.full(table.human.shape, -1, dtype=np.int8)  # a constant predictor: lambda = 0, the classical interval
    clt = ppi_decisions(table, is_revealed, metric_codes=no_predictor, metric_names=("none",), gamma=gamma)
    methods.append(summary("CLT (human only)", "clt", None, clt.decision))
    bt = bradley_terry_decisions(table, is_revealed, gamma=gamma, seed=seed, n_resamples=n_resamples, resample=resample)
    methods.append(summary("Bradley–Terry", "bradley_terry", None, bt.decision))
    used, available = human_ratings(table, is_revealed), human_ratings(table, table.human >= 0)
    return MethodComparison(
        pairs=table.pairs,
        reference=reference,
        pair_outcomes_used=int(is_revealed.sum()),
        pair_outcomes_available=int(np.sum(table.human >= 0)),
        ratings_used=used,
        ratings_available=available,
        gamma=gamma,
        seed=seed,
        methods=tuple(methods),
    )


def _metrics(
    table: PairTable, metric_codes: npt.ArrayLike | None, metric_names: tuple[str, ...] | None
) -> tuple[npt.NDArray[np.int8], tuple[str, ...]]:
    """(R, k) metric codes and their k names; k = 0 when the table has no metric and none is given."""
    if metric_codes is None:
        if table.metric_rater is None:
            return np.zeros((table.human.shape[0], 0), dtype=np.int8), ()
        metric_codes = table.metric
    codes = np.asarray(metric_codes, dtype=np.int8)
    codes = codes.reshape(codes.shape[0], -1)
    if codes.shape[0] != table.human.shape[0]:
        raise settings_error(f"metric_codes has {codes.shape[0]} rows, the table {table.human.shape[0]}", field="metric_codes")
    names = metric_names or (
        (table.metric_rater or "metric",) if codes.shape[1] == 1 else tuple(f"metric {j + 1}" for j in range(codes.shape[1]))
    )
    if len(names) != codes.shape[1]:
        raise settings_error(f"{len(names)} metric names for {codes.shape[1]} metrics", field="metric_names")
    return codes, tuple(names)


def _summary(
    name: str, kind: MethodKind, metric: str | None, decision: npt.NDArray[np.int8], reference: npt.NDArray[np.int8]
) -> MethodSummary:
    types = error_types(decision, reference)
    return MethodSummary(
        name=name,
        kind=kind,
        metric=metric,
        decision=np.asarray(decision, dtype=np.int8),
        error_types=types,
        frequencies=error_frequencies(types),
        counts={t: int(np.sum(types == t)) for t in ERROR_TYPES},
    )


def human_ratings(table: PairTable, rows: npt.NDArray[np.bool_]) -> int:
    """Distinct (item, system) human ratings behind the pair outcomes of ``rows`` (a scalar
    study's cost unit: one rating of an output serves every pair of that system on that item)."""
    pair_a, pair_b = pair_systems(table)
    S = len(table.systems)
    _, item = np.unique(table.item_id[rows].astype(str), return_inverse=True)
    keys = np.concatenate([item * S + pair_a[table.pair_index[rows]], item * S + pair_b[table.pair_index[rows]]])
    return int(np.unique(keys).size)


def withhold_human(table: PairTable, fraction: float, seed: int) -> npt.NDArray[np.bool_]:
    """The revealed set of the "human fraction" experiment: human outcomes are kept on a share
    ``fraction`` of each pair's human-rated items and withheld on the rest (which stay
    metric-only).

    The kept items follow one seeded random order of all items, shared by every pair
    **(choice)**: each pair keeps the first ``floor(fraction * pool + 1/2)`` of its human-rated
    items in that order. Where pairs share items (a scalar study rates every system on the same
    items), the kept items are the same for every pair, as when a study rates all systems on a
    subset of the items; the ratings used are then ``fraction`` of all ratings.

    Returns:
        (R,) bool mask over the rows of ``table`` (only rows with a human outcome are ``True``).

    Raises:
        SettingsError: ``fraction`` outside (0, 1].
    """
    if not 0.0 < fraction <= 1.0:
        raise settings_error(f"the human fraction must be in (0, 1], got {fraction}", field="fraction")
    items, item = np.unique(table.item_id.astype(str), return_inverse=True)
    position = np.random.default_rng(seed).permutation(items.size)[item]
    has_human = table.human >= 0
    order = np.lexsort((position, ~has_human, table.pair_index))  # by pair, human-rated first, item order
    pool = table.human_pool()
    start = np.searchsorted(table.pair_index[order], np.arange(table.n_pairs))
    rank = np.arange(order.size) - np.repeat(start, np.bincount(table.pair_index, minlength=table.n_pairs))
    keep = np.floor(fraction * pool + 0.5).astype(np.int64)
    revealed = np.zeros(table.human.shape, dtype=bool)
    revealed[order] = rank < keep[table.pair_index[order]]
    return revealed & has_human
