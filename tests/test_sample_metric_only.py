"""The bundled sample of the paper's regime: metric scores on items no human rated are
metric-only items of every pair, and the protocol decides with them."""

from __future__ import annotations

import numpy as np

from prefeval_core.workflow import StudySetup, run_replay, study_table
from prefeval_core.workflow.session import DataChoice


def test_metric_only_items_load_count_and_drive_the_protocol() -> None:
    dataset = DataChoice.sample("summeval_partial").load()
    assert any(p.kind == "metric_only_items" for p in dataset.report.warnings)
    setup = StudySetup("human:relevance", metrics=("rougeL",), unit="comparisons", error_control="none", futility=None)
    table = study_table(dataset, setup)
    unrevealable = (table.human < 0) & (table.metrics[:, 0] >= 0)
    assert np.bincount(table.row_pair[unrevealable], minlength=table.n_pairs).min() == 70  # 70 documents metric-only
    replay = run_replay(table, setup)
    counts = replay.state.revealed_counts().triples(0)
    assert counts.m.sum(axis=1).min() >= 70 and replay.result.cost_available == 120 * 30
