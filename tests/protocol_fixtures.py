"""Tiny hand-made study tables for the protocol tests."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import numpy as np

from prefeval_core.data.dataset import load_dataset
from prefeval_core.protocol import ProtocolState, StudyTable, build_study_table, state_to_dict


def comparison_table(
    pairs: Mapping[tuple[str, str], tuple[Sequence[int], Sequence[int] | None]],
    *,
    metric: str | None = "metric",
    requestable: str = "human",
) -> StudyTable:
    """A comparisons study from ``{(a, b): (human codes, metric codes or None)}``; item ``k`` of
    every pair is ``i{k:03d}``; -1 = no outcome. Pairs must be canonical. ``requestable``:
    ``"human"`` (rows with a human outcome, replay) or ``"all"`` (live)."""
    keys = sorted(pairs)
    systems = tuple(sorted({s for key in keys for s in key}))
    n_items = max(len(h) for h, _ in pairs.values())
    items = tuple(f"i{k:03d}" for k in range(n_items))
    row_pair, row_item, human, metrics = [], [], [], []
    for index, key in enumerate(keys):
        h, m = pairs[key]
        m = [-1] * len(h) if m is None else m
        assert len(h) == len(m)
        row_pair += [index] * len(h)
        row_item += list(range(len(h)))
        human += list(h)
        metrics += list(m)
    human_arr = np.array(human, dtype=np.int8)
    return StudyTable(
        human_rater="human",
        metric_raters=() if metric is None else (metric,),
        unit="comparisons",
        eps_human=0.0,
        systems=systems,
        items=items,
        pairs=tuple(keys),
        pair_systems=np.array([[systems.index(a), systems.index(b)] for a, b in keys], dtype=np.int64).reshape(-1, 2),
        row_pair=np.array(row_pair, dtype=np.int64),
        row_item=np.array(row_item, dtype=np.int64),
        human=human_arr,
        metrics=np.array(metrics, dtype=np.int8).reshape(-1, 1)[:, : 0 if metric is None else 1],
        row_cost=np.ones(len(row_pair), dtype=np.int64),
        requestable=human_arr >= 0 if requestable == "human" else np.ones(len(row_pair), dtype=bool),
    )


def ratings_csv(scores: Mapping[str, Sequence[float | None]], rater: str = "human", extra: str = "") -> bytes:
    """A long ratings CSV of ``{system: [score per item or None]}`` (items ``i000``...), plus ``extra`` rows."""
    rows = ["item_id,system,rater,score"]
    for system, values in scores.items():
        rows += [f"i{k:03d},{system},{rater},{v}" for k, v in enumerate(values) if v is not None]
    return ("\n".join(rows) + "\n" + extra).encode()


def ratings_table(
    scores: Mapping[str, Sequence[float | None]], metric_scores: Mapping[str, Sequence[float | None]] | None = None, **options: object
) -> StudyTable:
    """A ratings study (human ``human``, metric ``metric`` when given) built through the data layer."""
    data = ratings_csv(scores)
    if metric_scores is not None:
        data += ratings_csv(metric_scores, "metric").split(b"\n", 1)[1]
    dataset = load_dataset([("ratings.csv", data)])
    return build_study_table(dataset, "human", () if metric_scores is None else ("metric",), **options)  # type: ignore[arg-type]


def same_state(left: ProtocolState, right: ProtocolState) -> bool:
    """Two states are the same run (same table, settings, reveals, records)."""
    return json.dumps(state_to_dict(left), sort_keys=True) == json.dumps(state_to_dict(right), sort_keys=True)
