"""Small builders for hand-made input files used by the tests (data layer, annotators kept apart)."""

from __future__ import annotations

import gzip
import io

import numpy as np
import pandas as pd

RATINGS_CSV = (
    "item_id,system,rater,score\n"
    "i1,A,human,3\n"
    "i1,B,human,1\n"
    "i1,C,human,3\n"
    "i2,A,human,2\n"
    "i2,B,human,5\n"
    "i1,A,bleu,0.5\n"
    "i1,B,bleu,0.2\n"
    "i1,C,bleu,0.5\n"
    "i2,A,bleu,0.1\n"
    "i2,B,bleu,0.1\n"
    "i3,A,bleu,0.9\n"
    "i3,B,bleu,0.3\n"
)


def gz(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def parquet_bytes(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return buffer.getvalue()


def nested_csv(workers: dict[tuple[int, str], dict[str, float]]) -> bytes:
    """``workers[(item, system)]``: each worker's rating of that output; the rater's score their mean."""
    rows = ["item_id,system,rater,score"]
    for (item, system), ratings in workers.items():
        rows += [f"i{item},{system},human:q:{worker},{score!r}" for worker, score in ratings.items()]
        rows.append(f"i{item},{system},human:q,{float(np.mean(list(ratings.values())))!r}")
    return ("\n".join(rows) + "\n").encode()


def crowd_csv(rated: int = 3, items: int = 12, uneven: bool = False) -> bytes:
    """A crowd: every output rated by ``rated`` workers drawn from 9, others for each output (one
    output rated once less with ``uneven``)."""
    rng = np.random.default_rng(7)
    workers = {}
    for item in range(items):
        for system in ("a", "b", "c"):
            chosen = rng.choice(9, size=rated - (uneven and (item, system) == (5, "b")), replace=False)
            workers[(item, system)] = {f"w{w}": float(rng.integers(1, 6)) for w in chosen}
    return nested_csv(workers)


def annotated_comparisons_csv() -> tuple[bytes, dict[tuple[str, str, str], int]]:
    """Four items, each with the pairs (a, b) and (a, c), compared by annotators x, y, z who vote
    ``>``, ``=`` and ``<`` in some order (so a vote names its annotator; the majority, this
    project's rule, is ``=``); (a, c) on i3 is published as the majority only. Returns the file
    and the votes by (item, b, annotator)."""
    symbols = ">=<"
    votes = {}
    lines = ["item_id,system_a,system_b,rater,label"]
    for i in range(4):
        for b, pattern in (("b", (0, 1, 2)), ("c", (2, 1, 0))):
            labels = pattern[i % 3 :] + pattern[: i % 3]
            if (b, i) != ("c", 3):
                for annotator, label in zip("xyz", labels, strict=True):
                    lines.append(f"i{i},a,{b},human:{annotator},{symbols[label]}")
                    votes[(f"i{i}", b, annotator)] = label
            lines.append(f"i{i},a,{b},human,=")
    return ("\n".join(lines) + "\n").encode(), votes
