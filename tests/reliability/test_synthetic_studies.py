"""The synthetic-study campaign's fast subset: 8 studies nobody has seen (scalar and pairwise, with
and without metrics), each replayed with every question and error control (72 runs): no error,
no traceback, costs within bounds, answers among the study's systems, the same seed the same
result. The full campaign: ``python bench/reliability/studies.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.reliability.synthetic_studies import replay_checks, synthetic_study

FAST_STUDIES = 8


@pytest.mark.parametrize("seed", range(FAST_STUDIES))
def test_a_synthetic_study_replays_with_every_question_and_control(seed: int, tmp_path: Path) -> None:
    study = synthetic_study(seed, tmp_path / f"study{seed}")
    assert replay_checks(study, seed) == []


def test_the_corpus_holds_both_kinds_and_metrics(tmp_path: Path) -> None:
    studies = [synthetic_study(seed, tmp_path / f"s{seed}") for seed in range(FAST_STUDIES)]
    assert {s.scalar for s in studies} == {True, False}
    assert any(s.metrics for s in studies) and any(not s.metrics for s in studies)
