"""A toy question kind, registered through the registry alone (a module and one registry line), as
docs/architecture.md's "Add a question" describes: each system against the first one, its own
answer in words, statuses and comparison with the full evaluation."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from prefeval_core.protocol import QUESTION_KINDS, Question, QuestionKindEntry
from prefeval_core.protocol.questions import Decided
from prefeval_core.vocabulary.outcomes import TIE


@dataclass(frozen=True)
class ToyComparison:
    agree: int

    def summary(self) -> dict[str, Any]:
        return {"toy_agree": self.agree}

    def words(self) -> str:
        return f"Toy: {self.agree} pairs agree."

    def scored(self, pairs: Sequence[tuple[str, str]]) -> npt.NDArray[np.bool_]:
        return np.ones(len(pairs), dtype=bool)


def _pairs(question: Question, systems: Sequence[str], pair_systems: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
    return np.asarray((pair_systems == 0).any(axis=1))


def _words(d: Decided) -> str:
    return f"Toy answer: {int(np.sum(d.asked & (d.decisions != TIE)))} of {int(d.asked.sum())} pairs decided."


def _compare(d: Decided, reference: npt.NDArray[np.int8]) -> ToyComparison:
    return ToyComparison(int(np.sum(d.asked & (d.decisions == reference))))


def toy_module() -> ModuleType:
    """The kind's module: what a new kind's file would hold."""
    module = ModuleType("questions_toy")
    module.NAME = "toy"  # type: ignore[attr-defined]
    module.LABEL = "A toy question"  # type: ignore[attr-defined]
    module.STATUS_WORDS = "Status: toy."  # type: ignore[attr-defined]
    module.describe = lambda question: "a toy question"  # type: ignore[attr-defined]
    module.pairs = _pairs  # type: ignore[attr-defined]
    module.words = _words  # type: ignore[attr-defined]
    module.status = lambda d: ("toy",) * len(d.systems)  # type: ignore[attr-defined]
    module.compare = _compare  # type: ignore[attr-defined]
    return module


@pytest.fixture
def toy_question(monkeypatch: pytest.MonkeyPatch) -> Iterator[QuestionKindEntry]:
    """The toy kind's registry line, for one test."""
    entry = QuestionKindEntry.from_module(toy_module())
    monkeypatch.setitem(QUESTION_KINDS, entry.name, entry)
    yield entry
