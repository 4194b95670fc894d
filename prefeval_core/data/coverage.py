"""What each rater covers: its systems, items, and the items it rated each two systems on.

Computed for all raters in one pass over integer codes (the rows are sorted by rater once),
so that a dataset with a thousand raters or a million ratings costs about as much as its rows.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

_DENSE_CELLS = 4_000_000
"""Below this many item x system cells the presence matrix is dense (faster); above, sparse."""


@dataclass(frozen=True)
class RaterCoverage:
    """One scalar rater.

    Attributes:
        systems: the systems it rated, sorted.
        items: how many distinct items it rated.
        ratings: how many ratings (rows) it has.
        shared: ``shared[a, b]`` = items on which it rated both ``systems[a]`` and
            ``systems[b]`` (with ``eps = 0`` each gives an outcome, a tie or not); the
            diagonal holds the items per system.
    """

    systems: tuple[str, ...]
    items: int
    ratings: int
    shared: np.ndarray

    def pairs(self) -> dict[tuple[str, str], int]:
        """Per canonical pair with at least one common item, how many there are."""
        a_idx, b_idx = np.nonzero(np.triu(self.shared, k=1))
        return {(self.systems[a], self.systems[b]): int(self.shared[a, b]) for a, b in zip(a_idx, b_idx, strict=True)}


def _groups(raters: pd.Series) -> Iterator[tuple[str, np.ndarray]]:
    """``(rater, row positions)`` for each rater, sorted by name."""
    codes, names = pd.factorize(raters, sort=True)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(names) + 1))
    for k, name in enumerate(names):
        yield str(name), order[bounds[k] : bounds[k + 1]]


def _shared(items: np.ndarray, systems: np.ndarray, n_items: int, n_systems: int) -> np.ndarray:
    if n_items * n_systems <= _DENSE_CELLS:
        presence = np.zeros((n_items, n_systems), dtype=np.float64)
        presence[items, systems] = 1.0
        return np.rint(presence.T @ presence).astype(np.int64)  # exact: counts are far below 2**53
    import scipy.sparse  # only for studies too large for a dense grid

    matrix = scipy.sparse.csr_matrix((np.ones(len(items), dtype=np.int64), (items, systems)), shape=(n_items, n_systems))
    matrix.data[:] = 1  # a repeated (item, system) counts once
    return np.asarray((matrix.T @ matrix).toarray(), dtype=np.int64)


def scalar_coverage(ratings: pd.DataFrame) -> dict[str, RaterCoverage]:
    """:class:`RaterCoverage` of every rater in ``ratings`` (``item_id, system, rater, ...``)."""
    items, _ = pd.factorize(ratings["item_id"])
    systems, distinct = pd.factorize(ratings["system"], sort=True)
    system_names = [str(s) for s in distinct]
    coverage: dict[str, RaterCoverage] = {}
    for rater, rows in _groups(ratings["rater"]):
        local_systems, system_index = np.unique(systems[rows], return_inverse=True)
        local_items, item_index = np.unique(items[rows], return_inverse=True)
        shared = _shared(item_index, system_index, len(local_items), len(local_systems))
        names = tuple(system_names[s] for s in local_systems)
        coverage[rater] = RaterCoverage(names, len(local_items), len(rows), shared)
    return coverage


def items_by_rater(ratings: pd.DataFrame, preferences: pd.DataFrame) -> dict[str, np.ndarray]:
    """Per rater (scalar or pairwise), the distinct items it rated, as codes that are the same
    for one item across raters (for set operations between raters)."""
    both = pd.concat([ratings[["rater", "item_id"]], preferences[["rater", "item_id"]]], ignore_index=True)
    items, _ = pd.factorize(both["item_id"])
    return {rater: np.unique(items[rows]) for rater, rows in _groups(both["rater"])}
