"""The study table's two routes give the same table (issue 22 item 6): scalar raters are read from
score grids, anything else from pair-outcome frames; the fingerprint covers every field."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from prefeval_core.data.dataset import Dataset, load_dataset
from prefeval_core.protocol import table as table_module
from prefeval_core.protocol.table import build_study_table

ROOT = Path(__file__).resolve().parents[1]


def _gappy() -> Dataset:
    """5 systems, 30 items: the human misses scores (one system only on two items), the metric misses
    others and rates a system the human never does; ties of averaged scores."""
    rng = np.random.default_rng(7)
    lines = ["item_id,system,rater,score"]
    for item in range(30):
        for system in "abcde":
            if rng.random() > 0.2 and (system != "e" or item < 2):
                lines.append(f"i{item},{system},human,{rng.integers(1, 4) / 3}")
            if rng.random() > 0.3:
                lines.append(f"i{item},{system},m1,{rng.normal():.3f}")
            lines.append(f"i{item},{system},m2,{rng.integers(0, 3)}")
        lines.append(f"i{item},z,m1,0.5")
    return load_dataset([("ratings.csv", "\n".join(lines).encode())])


CASES = [
    ("gappy", "human", ("m1", "m2"), {"eps_human": 0.1, "eps_metric": 0.2}),
    ("gappy", "human", ("m2",), {"unit": "comparisons", "human_fraction": 0.5, "seed": 3}),
    ("gappy", "human", ("ideal", "m1"), {"ideal_items": 4}),
    ("gappy", "human", (), {"unit": "ratings", "human_fraction": 0.3}),
    ("summeval", "human:relevance", ("rougeL", "bleu"), {"eps_metric": 0.01}),
    ("summeval", "human:coherence", ("rougeL",), {"unit": "comparisons", "human_fraction": 0.4}),
]


@pytest.mark.parametrize(("data", "human", "metrics", "options"), CASES)
def test_score_grids_and_outcome_frames_make_the_same_table(
    data: str, human: str, metrics: tuple[str, ...], options: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset = _gappy() if data == "gappy" else load_dataset(ROOT / "sample_data" / "summeval")
    assert table_module._scores_only(dataset, human, [m for m in metrics if m != "ideal"], "human", 0.0, 0.0)
    fast = build_study_table(dataset, human, metrics, **options)
    monkeypatch.setattr(table_module, "_scores_only", lambda *args: False)
    frames = build_study_table(dataset, human, metrics, **options)
    assert fast.fingerprint == frames.fingerprint
    assert (fast.systems, fast.items, fast.pairs) == (frames.systems, frames.items, frames.pairs)
