"""The synthetic-study campaign's fast subset: 10 studies nobody has seen (scalar and pairwise, with
and without metrics, two with annotators kept apart: experts and a crowd), each replayed with every
question and error control (140 runs): no error, no traceback, costs within bounds, answers among
the study's systems, the same seed the same result. The full campaign: ``python
bench/reliability/studies.py``."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from prefeval_core.data.dataset import load_dataset
from prefeval_core.workflow.setup import StudySetup
from prefeval_core.workflow.study import study_table
from tests.reliability.synthetic_studies import replay_checks, synthetic_study

FAST_STUDIES = (*range(8), 16, 24)
"""The first eight studies, and the first with experts (16) and with a crowd (24) kept apart."""


@pytest.mark.parametrize("seed", FAST_STUDIES)
def test_a_synthetic_study_replays_with_every_question_and_control(seed: int, tmp_path: Path) -> None:
    study = synthetic_study(seed, tmp_path / f"study{seed}")
    assert replay_checks(study, seed) == []


def test_the_corpus_holds_both_kinds_metrics_and_annotators(tmp_path: Path) -> None:
    studies = [synthetic_study(seed, tmp_path / f"s{seed}") for seed in FAST_STUDIES]
    assert {s.scalar for s in studies} == {True, False}
    assert any(s.metrics for s in studies) and any(not s.metrics for s in studies)
    designs = {study_table(load_dataset(s.folder), StudySetup(human="human")).ratings_per_request for s in studies if s.scalar}
    assert designs == {"all", "one_pooled"}  # the default buys one rating at a time where annotators are kept apart
    raters = [set(pd.read_csv(s.folder / "ratings.csv")["rater"]) for s in studies if s.scalar]
    assert any({"human:e1", "human:e2", "human:e3"} <= r for r in raters)  # experts crossed with the systems
    assert any(len({x for x in r if x.startswith("human:w")}) > 3 for r in raters)  # a crowd nested in the outputs
