"""The shared datasets load and describe as their READMEs say; golden counts of SummEval pairs.

The golden file ``tests/golden/summeval_relevance_rougeL_pairs.json`` was computed once with
plain ``csv`` code, independent of prefeval (see the commit that added it).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from prefeval_core.data.dataset import load_dataset
from prefeval_core.pairs.counts import align_outcomes, count_triple, count_triples
from prefeval_core.pairs.preferences import pair_outcomes
from prefeval_core.pairs.summary import summarise_dataset

GOLDEN = Path(__file__).parent / "golden" / "summeval_relevance_rougeL_pairs.json"

pytestmark = pytest.mark.golden


@pytest.mark.parametrize(
    ("folder", "systems", "items", "rows", "raters"),
    [
        ("summeval", 16, 100, 76_799 + 8_800, 61 + 8),
        ("pandalm", 5, 999, 5_969, 6),
        ("wmt20_ende_mqm", 10, 1_418, 179_108, 15),
        # 35,443 rows and 8 raters as published, plus the derived mean `human:mqm` of its annotators.
        ("wmt21_ted_ende_mqm", 14, 529, 35_443 + 7_406, 8 + 1),
    ],
)
def test_shared_datasets_load_with_the_readme_counts(shared_data: Path, folder, systems, items, rows, raters) -> None:
    ds = load_dataset(shared_data / folder)
    assert len(ds.systems) == systems
    assert len(ds.items) == items
    assert len(ds.ratings) + len(ds.preferences) == rows
    assert len(ds.raters) == raters
    assert ds.report.ok


def test_pandalm_label_counts(shared_data: Path) -> None:
    ds = load_dataset(shared_data / "pandalm")
    for rater, expected in {"human": [422, 105, 472], "gpt-3.5-turbo": [460, 38, 476], "pandalm-7b": [433, 107, 459]}.items():
        # README counts are in the file's own (a, b) orientation; canonical order may flip some.
        outcomes = pair_outcomes(ds, rater).frame
        assert len(outcomes) == sum(expected)
        assert np.bincount(outcomes["outcome"], minlength=3)[1] == expected[1]
    assert ds.has_texts and len(ds.sources) == 999


def test_summeval_golden_pairs(summeval) -> None:
    golden = json.loads(GOLDEN.read_text())
    table = align_outcomes(pair_outcomes(summeval, "human:relevance"), pair_outcomes(summeval, "rougeL"))
    for expected in golden.values():
        counts = count_triple(table, expected["system_a"], expected["system_b"], set(summeval.items))
        assert counts.n.tolist() == expected["n_all_revealed"]
        assert counts.K.tolist() == expected["K_all_revealed"]
        none = count_triple(table, expected["system_a"], expected["system_b"], set())
        assert none.m.tolist() == expected["metric_counts_all_items"]


def test_summeval_coverage(summeval) -> None:
    summary = summarise_dataset(summeval, "human:relevance", "gpt-4-0314-rts:relevance")
    assert summary.pairs is not None and len(summary.pairs) == 120
    judged = [p for p in summary.pairs if p["metric_items"]]
    assert len(judged) == 66  # the LLM judges rated the 12 abstractive systems only
    assert all(p["human_items"] == 100 and p["joint_items"] == 100 for p in judged)
    table = align_outcomes(pair_outcomes(summeval, "human:relevance"))
    assert count_triples(table, table.human >= 0).n.sum() == 120 * 100


def test_wmt20_human_reference_systems_are_not_scored_against_themselves(shared_data: Path) -> None:
    ds = load_dataset(shared_data / "wmt20_ende_mqm")
    table = align_outcomes(pair_outcomes(ds, "human"), pair_outcomes(ds, "chrF-refA"))
    index = table.index_of("Human-A", "Human-B")
    assert table.human_pool()[index] == 1418
    assert table.metric_items()[index] == 0
