"""Bradley–Terry on the revealed human judgments with bootstrap intervals, as Chatbot-Arena-style
leaderboards do (fitted by ``evalica``; Bradley & Terry 1952, Newman 2023's iteration).

* **Comparisons**: each revealed row of the pair table is one comparison of A with B: ``>``
  a win of A, ``<`` a win of B, ``=`` half a win each **(choice**: ``evalica``'s
  ``tie_weight=0.5``, which keeps tie-heavy pairs in the model instead of dropping them). Human
  only: the metric is never used. All systems are fitted together, so a pair is also informed by
  the other pairs (A beat C, C beat B).
* **Estimate** of a pair ``(A, B)``: the log-strength gap ``log s_A - log s_B``, the log-odds that
  A beats B under the model; positive means A better.
* **Interval**: ``n_resamples`` bootstrap refits, seeded (``numpy.random.default_rng(seed)``);
  resampling **items** by default (every revealed comparison of an item carries the item's
  multiplicity as its weight: in a scalar study one item's ratings make all its pairs'
  outcomes, which are not independent), or **comparisons** (Arena's choice). The interval is
  the ``(gamma/2, 1 - gamma/2)`` percentile interval of the gaps, with the inverted-CDF rule
  (an order statistic, no interpolation), so infinite gaps stay exact. ``evalica.bootstrap``
  is not used: it resamples comparisons only and gives intervals on scores, not on gaps.
* **When the maximum-likelihood fit does not exist** (Zermelo 1929, Ford 1957): the strengths
  are finite only when the "beat" graph (edge ``i -> j`` when ``i`` won or tied against ``j``
  with positive weight) is strongly connected. Each strongly connected component is fitted on
  its own; the gap between systems in different components is ``+inf`` when A's component
  reaches B's (A's side beat B's side and never lost to it), ``-inf`` the other way round, and
  NaN when neither reaches the other (no comparison links them). A pair with a NaN gap in any
  resample (or in the point fit) gets no interval and stays undecided.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

import evalica
import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy.sparse import csr_array
from scipy.sparse.csgraph import connected_components, shortest_path

from prefeval_core.baselines.inputs import pair_systems, revealed_rows
from prefeval_core.baselines.intervals import IntervalDecisions, check_gamma, decision_from_interval
from prefeval_core.errors import EngineError, settings_error
from prefeval_core.pairs.counts import PairTable
from prefeval_core.vocabulary.levels import DEFAULT_GAMMA

FloatArray = npt.NDArray[np.float64]
Resample = Literal["items", "comparisons"]
RESAMPLES: Final[tuple[Resample, ...]] = ("items", "comparisons")

EVALICA_WINNER: Final = np.array([evalica.Winner.X, evalica.Winner.Draw, evalica.Winner.Y], dtype=np.uint8)
"""``evalica.Winner`` of a comparison ``(A, B)`` indexed by the human outcome code (0 ``>``, 1 ``=``, 2 ``<``)."""
TOLERANCE: Final = 1e-10
"""``evalica``'s convergence tolerance on the change of the (geometric-mean-normalised) strengths."""
MAX_ITERATIONS: Final = 10_000


@dataclass(frozen=True)
class BradleyTerryDecisions(IntervalDecisions):
    """Bradley–Terry decisions per pair; ``estimate``, ``low`` and ``high`` are log-strength gaps
    ``log s_A - log s_B`` (see the module docstring), possibly infinite.

    Attributes:
        comparisons: (P,) int64 revealed comparisons per pair.
        systems: the systems, in the order of ``log_strength``.
        log_strength: (S,) log-strengths of the fit on all revealed comparisons (geometric mean 1
            within each strongly connected component).
        resample: what the bootstrap resampled: ``"items"`` or ``"comparisons"``.
        n_resamples: bootstrap refits.
        seed: seed of the bootstrap.
    """

    comparisons: npt.NDArray[np.int64]
    systems: tuple[str, ...]
    log_strength: FloatArray
    resample: Resample
    n_resamples: int
    seed: int


@dataclass(frozen=True)
class _Comparisons:
    """The revealed comparisons as system indices: ``a`` beat / tied / lost to ``b`` (``winner``,
    ``evalica`` codes), ``item`` the item code of each comparison."""

    n_systems: int
    a: npt.NDArray[np.int64]
    b: npt.NDArray[np.int64]
    winner: npt.NDArray[np.uint8]
    item: npt.NDArray[np.int64]


def bradley_terry_decisions(
    table: PairTable,
    revealed: npt.ArrayLike,
    *,
    gamma: float = DEFAULT_GAMMA,
    seed: int = 0,
    n_resamples: int = 1000,
    resample: Resample = "items",
) -> BradleyTerryDecisions:
    """Bradley–Terry decision for every pair of ``table`` from its revealed human outcomes.

    Args:
        table: aligned outcomes, one row per (pair, item); only human outcomes are used.
        revealed: (R,) bool per row: the human outcome is revealed.
        gamma: level: ``1 - gamma`` percentile intervals.
        seed: seed of the bootstrap; same inputs and seed give the same result.
        n_resamples: bootstrap refits (at least 1).
        resample: ``"items"`` (default) or ``"comparisons"``.

    Raises:
        SettingsError: bad ``gamma``, ``n_resamples``, ``resample`` or ``revealed``.
        EngineError: ``evalica`` did not converge.
    """
    gamma = check_gamma(gamma)
    if n_resamples < 1:
        raise settings_error(f"n_resamples must be at least 1, got {n_resamples}", field="n_resamples")
    if resample not in RESAMPLES:
        raise settings_error(f"resample must be one of {', '.join(RESAMPLES)}, got {resample!r}", field="resample")
    is_revealed = revealed_rows(table, revealed)
    comparisons = _comparisons(table, is_revealed)
    pair_a, pair_b = pair_systems(table)
    log_strength, estimate = _fit(comparisons, np.ones(comparisons.a.size), pair_a, pair_b)
    rng = np.random.default_rng(seed)
    gaps = np.empty((n_resamples, table.n_pairs))
    for draw in range(n_resamples):
        gaps[draw] = _fit(comparisons, _resample_weights(comparisons, resample, rng), pair_a, pair_b)[1]
    low, high = np.quantile(gaps, [gamma / 2.0, 1.0 - gamma / 2.0], axis=0, method="inverted_cdf")
    unidentified = np.isnan(gaps).any(axis=0) | np.isnan(estimate)
    low[unidentified] = np.nan
    high[unidentified] = np.nan
    return BradleyTerryDecisions(
        decision=decision_from_interval(low, high),
        estimate=estimate,
        low=low,
        high=high,
        gamma=gamma,
        comparisons=np.bincount(table.pair_index[is_revealed], minlength=table.n_pairs).astype(np.int64),
        systems=table.systems,
        log_strength=log_strength,
        resample=resample,
        n_resamples=n_resamples,
        seed=seed,
    )


def _comparisons(table: PairTable, revealed: npt.NDArray[np.bool_]) -> _Comparisons:
    """The revealed rows of ``table`` as comparisons."""
    pair_a, pair_b = pair_systems(table)
    pairs = table.pair_index[revealed]
    _, item = np.unique(table.item_id[revealed].astype(str), return_inverse=True)
    return _Comparisons(
        n_systems=len(table.systems),
        a=pair_a[pairs],
        b=pair_b[pairs],
        winner=EVALICA_WINNER[table.human[revealed]],
        item=item.astype(np.int64),
    )


def _resample_weights(comparisons: _Comparisons, resample: Resample, rng: np.random.Generator) -> FloatArray:
    """Multiplicity of each comparison in one bootstrap resample of items or of comparisons."""
    if resample == "items":
        n_items = int(comparisons.item.max()) + 1 if comparisons.item.size else 0
        drawn = rng.multinomial(n_items, np.full(n_items, 1.0 / n_items)) if n_items else np.zeros(0, dtype=np.int64)
        return drawn[comparisons.item].astype(np.float64)
    size = comparisons.a.size
    return rng.multinomial(size, np.full(size, 1.0 / size)).astype(np.float64) if size else np.zeros(0)


def _beat_matrix(comparisons: _Comparisons, weights: FloatArray) -> FloatArray:
    """(S, S) weighted wins of system ``i`` over ``j``; a tie is half a win for each side."""
    S = comparisons.n_systems
    beat = np.zeros((S, S))
    a_share = np.array([0.5, 1.0, 0.0])[comparisons.winner]  # indexed by evalica's Draw, X, Y
    np.add.at(beat, (comparisons.a, comparisons.b), weights * a_share)
    np.add.at(beat, (comparisons.b, comparisons.a), weights * (1.0 - a_share))
    return beat


def _fit(
    comparisons: _Comparisons, weights: FloatArray, pair_a: npt.NDArray[np.int64], pair_b: npt.NDArray[np.int64]
) -> tuple[FloatArray, FloatArray]:
    """Log-strengths (S,) and gaps ``log s_A - log s_B`` (P,) of one weighted fit.

    ``evalica`` fits each strongly connected component of the beat graph on its own (a system
    alone in its component keeps log-strength 0); across components the gap is ``+inf`` /
    ``-inf`` by which side reaches the other in the beat graph, NaN when neither does.
    """
    beat = csr_array(_beat_matrix(comparisons, weights) > 0)
    n_components, labels = connected_components(beat, directed=True, connection="strong")
    log_strength = np.zeros(comparisons.n_systems)
    used = weights > 0
    for component in range(n_components):
        members = np.flatnonzero(labels == component)
        if members.size >= 2:
            inside = used & np.isin(comparisons.a, members) & np.isin(comparisons.b, members)
            log_strength[members] = _evalica_log_strengths(comparisons, inside, weights, members)
    gap = log_strength[pair_a] - log_strength[pair_b]
    across = labels[pair_a] != labels[pair_b]
    if across.any():
        reaches = np.isfinite(shortest_path(beat, directed=True, unweighted=True))
        a_side, b_side = reaches[pair_a, pair_b], reaches[pair_b, pair_a]
        gap[across] = np.where(a_side[across], np.inf, np.where(b_side[across], -np.inf, np.nan))
    return log_strength, gap


def _evalica_log_strengths(
    comparisons: _Comparisons, inside: npt.NDArray[np.bool_], weights: FloatArray, members: npt.NDArray[np.int64]
) -> FloatArray:
    fit = evalica.bradley_terry(
        comparisons.a[inside].tolist(),
        comparisons.b[inside].tolist(),
        comparisons.winner[inside].tolist(),
        index=pd.Index(members),
        weights=weights[inside].tolist(),
        tolerance=TOLERANCE,
        limit=MAX_ITERATIONS,
    )
    if fit.iterations >= MAX_ITERATIONS:
        raise EngineError.single("no_convergence", f"evalica's Bradley–Terry fit did not converge in {MAX_ITERATIONS} iterations")
    return np.log(fit.scores.reindex(members).to_numpy(dtype=np.float64))
