"""Shared inputs of the diagnostics tests: a hand-counted toy dataset and random confusion matrices."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from prefeval_core.data.dataset import Dataset, load_dataset

# Three systems, four items; Z has no human score on i4. Outcomes worked out by hand in
# TOY_CONFUSIONS below (rows = metric, columns = human, order >, =, <).
TOY_RATINGS = """item_id,system,rater,score
i1,X,human:q,3
i1,Y,human:q,2
i1,Z,human:q,2
i2,X,human:q,1
i2,Y,human:q,2
i2,Z,human:q,3
i3,X,human:q,2
i3,Y,human:q,2
i3,Z,human:q,1
i4,X,human:q,4
i4,Y,human:q,1
i1,X,metric,0.5
i1,Y,metric,0.7
i1,Z,metric,0.1
i2,X,metric,0.2
i2,Y,metric,0.2
i2,Z,metric,0.9
i3,X,metric,0.3
i3,Y,metric,0.1
i3,Z,metric,0.3
i4,X,metric,0.1
i4,Y,metric,0.6
i4,Z,metric,0.5
"""

TOY_CONFUSIONS = {
    # i1 human >, metric <; i2 human <, metric =; i3 human =, metric >; i4 human >, metric <
    ("X", "Y"): [[0, 1, 0], [0, 0, 1], [2, 0, 0]],
    # i1 > / >; i2 < / <; i3 human >, metric =; i4 has no human outcome (Z unscored)
    ("X", "Z"): [[1, 0, 0], [1, 0, 0], [0, 0, 1]],
    # i1 human =, metric >; i2 < / <; i3 human >, metric <; i4 metric only
    ("Y", "Z"): [[0, 1, 0], [0, 0, 0], [1, 0, 1]],
}
TOY_FAVI = {("X", "Y"): -0.5, ("X", "Z"): -1.0, ("Y", "Z"): -0.5}
TOY_HUMAN_ALL = {("X", "Y"): [2, 1, 1], ("X", "Z"): [2, 0, 1], ("Y", "Z"): [1, 1, 1]}
TOY_METRIC_ALL = {("X", "Y"): [1, 1, 2], ("X", "Z"): [1, 1, 2], ("Y", "Z"): [2, 0, 2]}


def toy_dataset() -> Dataset:
    return load_dataset([("ratings.csv", TOY_RATINGS.encode())])


def confusion_strategy(max_count: int = 30) -> st.SearchStrategy[np.ndarray]:
    """Random 3x3 count matrices."""
    return st.lists(st.integers(0, max_count), min_size=9, max_size=9).map(lambda cells: np.array(cells, dtype=np.int64).reshape(3, 3))
