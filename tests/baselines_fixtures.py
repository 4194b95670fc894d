"""Hand-made pair tables for the baseline tests."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from prefeval_core.pairs.counts import PairTable

GT, EQ, LT = 0, 1, 2


def pair_table(
    pairs: Sequence[tuple[str, str]],
    human: Sequence[Sequence[int]],
    metric: Sequence[Sequence[int]] | None = None,
    items: Sequence[Sequence[str]] | None = None,
) -> PairTable:
    """A table with one block of rows per pair: ``human[p]`` (and ``metric[p]``) are the codes of
    pair ``p``'s rows (-1 = none); items default to ``i0, i1, ...`` in every pair (shared items)."""
    pair_index = np.concatenate([np.full(len(codes), p, dtype=np.int32) for p, codes in enumerate(human)])
    item_id = np.concatenate(
        [np.array(items[p] if items else [f"i{k}" for k in range(len(codes))], dtype=object) for p, codes in enumerate(human)]
    )
    human_codes = np.concatenate([np.asarray(codes, dtype=np.int8) for codes in human])
    metric_codes = (
        np.concatenate([np.asarray(codes, dtype=np.int8) for codes in metric]) if metric else np.full(human_codes.shape, -1, np.int8)
    )
    return PairTable(
        human_rater="human",
        metric_rater="metric" if metric else None,
        pairs=tuple(pairs),
        pair_index=pair_index,
        item_id=item_id,
        human=human_codes,
        metric=metric_codes,
    )


def comparisons(a_wins: int, ties: int, b_wins: int) -> list[int]:
    """Human codes of one pair's rows: ``a_wins`` times ``>``, ``ties`` times ``=``, ``b_wins`` times ``<``."""
    return [GT] * a_wins + [EQ] * ties + [LT] * b_wins
