"""The ideal metric of Deriu et al. App. E (method.md §10): a simulated, very good metric.

Its outcome on an item is drawn from column ``h`` of the fixed mixture matrix
``IDEAL_MU`` (rows = metric outcome, columns = human outcome, order ``>, =, <``), where ``h``
is the item's true outcome. **(choice)** The true outcome of an item with a human outcome is
that human outcome (itself a draw from the pair's human rates), so the confusion counts ``K``
of the protocol are informative and the full model can be used too; every simulated extra
item (``extra_items`` per pair, standing in for the paper's 11k metric-only items) gets a true
outcome drawn from the pair's empirical human rates ``n_all / sum(n_all)``. The paper runs it
with ``mu`` known (method.md §4, "known mu"): use ``model="known_mu", mu=IDEAL_MU_ROWS``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

from prefeval_core.errors import settings_error

if TYPE_CHECKING:
    from prefeval_core.pairs.counts import PairTable

IDEAL_METRIC_NAME: Final = "ideal"
"""The name under which the simulated metric is offered (CLI ``--metric ideal``)."""

IDEAL_MU_ROWS: Final[tuple[tuple[float, float, float], tuple[float, float, float], tuple[float, float, float]]] = (
    (0.8, 0.25, 0.1),
    (0.1, 0.5, 0.1),
    (0.1, 0.25, 0.8),
)
"""``mu_sim[c, h] = P(metric says c | human says h)`` (Deriu et al. App. E) as nested tuples, the
form :class:`~prefeval_core.protocol.ProtocolSettings` stores; each column sums to 1."""

IDEAL_MU: Final[npt.NDArray[np.float64]] = np.array(IDEAL_MU_ROWS)
"""``IDEAL_MU_ROWS`` as an array."""


def ideal_metric_table(table: PairTable, *, seed: int, extra_items: int = 0, mu: npt.ArrayLike = IDEAL_MU) -> PairTable:
    """``table`` with its metric outcomes replaced by the simulated metric's.

    Args:
        table: human outcomes per pair and item (its metric column is ignored).
        seed: seeds ``np.random.default_rng``; same seed, same metric.
        extra_items: simulated metric-only items per pair, ids ``ideal-000000``, ...; they have
            no human outcome (never revealed; they only add to ``m``).
        mu: mixture matrix (3, 3), columns summing to 1.

    Returns:
        A PairTable with ``metric_rater="ideal"``: every row with a human outcome gets a metric
        outcome, rows without one get none, and the extra rows follow each pair's own rows.
    """
    mu = np.asarray(mu, dtype=np.float64)
    if mu.shape != (3, 3) or not np.allclose(mu.sum(axis=0), 1.0):
        raise settings_error("mu must be 3 x 3 with columns summing to 1")
    if extra_items < 0:
        raise settings_error(f"extra_items must be >= 0, got {extra_items}")
    rng = np.random.default_rng(seed)
    has_human = table.human >= 0
    metric = np.full(table.human.shape, -1, dtype=np.int8)
    metric[has_human] = draw_metric_outcomes(rng, mu, table.human[has_human].astype(np.int64))
    if extra_items == 0:
        return _with_rows(table, table.pair_index, table.item_id, table.human, metric)
    from prefeval_core.pairs.counts import count_triples  # pandas: only where items are simulated, not for the name

    n_all = count_triples(table, has_human).n.astype(np.float64)
    rates = n_all / n_all.sum(axis=1, keepdims=True)
    truth = np.stack([rng.choice(3, size=extra_items, p=rates[p]) for p in range(table.n_pairs)]).reshape(-1)
    extra_pair = np.repeat(np.arange(table.n_pairs, dtype=np.int32), extra_items)
    extra_ids = np.array([f"ideal-{k:06d}" for k in range(extra_items)] * table.n_pairs, dtype=object)
    pair_index = np.concatenate([table.pair_index, extra_pair])
    order = np.argsort(pair_index, kind="stable")
    return _with_rows(
        table,
        pair_index[order],
        np.concatenate([table.item_id, extra_ids])[order],
        np.concatenate([table.human, np.full(len(extra_pair), -1, dtype=np.int8)])[order],
        np.concatenate([metric, draw_metric_outcomes(rng, mu, truth)])[order],
    )


def draw_metric_outcomes(rng: np.random.Generator, mu: npt.NDArray[np.float64], truth: npt.NDArray[np.int64]) -> npt.NDArray[np.int8]:
    """One metric outcome code per true outcome code ``h`` (``>, =, <``: 0, 1, 2), drawn from
    ``mu[:, h]`` (rows = metric, columns = human; inverse CDF)."""
    cumulative = np.cumsum(mu[:, truth], axis=0)  # (3, len(truth))
    u = rng.random(len(truth))
    return np.minimum((u[None, :] > cumulative).sum(axis=0), 2).astype(np.int8)


def _with_rows(
    table: PairTable, pair_index: npt.ArrayLike, item_id: npt.ArrayLike, human: npt.ArrayLike, metric: npt.ArrayLike
) -> PairTable:
    return replace(
        table,
        metric_rater=IDEAL_METRIC_NAME,
        pair_index=np.asarray(pair_index, dtype=np.int32),
        item_id=np.asarray(item_id, dtype=object),
        human=np.asarray(human, dtype=np.int8),
        metric=np.asarray(metric, dtype=np.int8),
    )
