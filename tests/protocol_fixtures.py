"""Tiny hand-made pair tables for the protocol tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from prefeval_core.counts import PairTable


def make_table(
    pairs: Mapping[tuple[str, str], tuple[Sequence[int], Sequence[int] | None]],
    human_rater: str = "human",
    metric_rater: str | None = "metric",
) -> PairTable:
    """A PairTable from ``{(a, b): (human codes, metric codes or None)}``; item ``k`` of every
    pair is ``i{k:03d}``; -1 = no outcome. Pairs must be canonical and are sorted."""
    keys = sorted(pairs)
    pair_index, items, human, metric = [], [], [], []
    for index, key in enumerate(keys):
        h, m = pairs[key]
        m = [-1] * len(h) if m is None else m
        assert len(h) == len(m)
        pair_index += [index] * len(h)
        items += [f"i{k:03d}" for k in range(len(h))]
        human += list(h)
        metric += list(m)
    return PairTable(
        human_rater=human_rater,
        metric_rater=metric_rater,
        pairs=tuple(keys),
        pair_index=np.array(pair_index, dtype=np.int32),
        item_id=np.array(items, dtype=object),
        human=np.array(human, dtype=np.int8),
        metric=np.array(metric, dtype=np.int8),
    )
