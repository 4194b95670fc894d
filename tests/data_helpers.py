"""Small builders for hand-made input files used by the data-layer tests."""

from __future__ import annotations

import gzip
import io

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
