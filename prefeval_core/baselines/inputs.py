"""What every baseline takes from the protocol: a pair table and which rows are revealed."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from prefeval_core.errors import settings_error
from prefeval_core.pairs.counts import PairTable


def revealed_rows(table: PairTable, revealed: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """``revealed`` as a boolean mask over the rows of ``table``, checked as
    :func:`~prefeval_core.pairs.counts.count_triples` checks it (raises :class:`SettingsError`)."""
    mask = np.asarray(revealed, dtype=bool)
    if mask.shape != table.human.shape:
        raise settings_error(f"revealed has shape {mask.shape}, expected {table.human.shape}", field="revealed")
    if np.any(mask & (table.human < 0)):
        raise settings_error("a row without a human outcome cannot be revealed", field="revealed")
    return mask


def rows_by_pair(table: PairTable) -> list[npt.NDArray[np.int64]]:
    """Row indices of each pair, in pair order."""
    order = np.argsort(table.pair_index, kind="stable")
    bounds = np.searchsorted(table.pair_index[order], np.arange(1, table.n_pairs))
    return np.split(order, bounds)


def pair_systems(table: PairTable) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Indices into ``table.systems`` of system A and of system B of each pair, (P,) each."""
    position = {system: index for index, system in enumerate(table.systems)}
    a = np.array([position[pair[0]] for pair in table.pairs], dtype=np.int64)
    b = np.array([position[pair[1]] for pair in table.pairs], dtype=np.int64)
    return a, b
