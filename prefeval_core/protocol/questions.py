"""The questions of method.md §12, their registry, and which judgments can still change their answers.

* ``all-pairs`` (the paper): every pair is decided. A pair matters while it is undecided and
  can still get judgments.
* ``top-k``: which systems can be among the best k. A system leaves the answer once at least k
  systems *still in it* are significantly better than it (one simultaneous pass per round over
  the current members; leaving is final). A member is **sure** when fewer than k other members
  are not significantly worse than it: no judgment can push it out. A pair matters while both
  systems are members, more than k members remain, at least one of the two is not sure, and
  the pair is undecided and can still get judgments. The reference answer is the same rule
  applied once to the decisions on all human judgments (the full evaluation's top-k tier).
* ``baseline``: each other system against each named baseline B; only those pairs matter.

**The registry.** :data:`QUESTION_KINDS` maps a kind's name to its :class:`QuestionKindEntry`
(words for the form and the answer, its parameters, the pairs it asks about). :class:`Question`
accepts the registered kinds, and the CLI's ``--question`` choices and the Protocol form's
question picker list them; :data:`QuestionKind` names the built-in ones for the type checker and a
test keeps the two equal. A new kind is an entry (its ``describe`` and ``pairs``, in a module of
its own when it needs more than a line) and one line in :data:`QUESTION_KINDS`.

Decision codes: 0 ``>`` (A better), 1 undecided, 2 ``<``; pairs canonical.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from prefeval_core.errors import UnknownNameError, settings_error
from prefeval_core.vocabulary.fields import INT_LIMIT, Bounds, setting
from prefeval_core.vocabulary.outcomes import BETTER, TIE, WORSE

BoolArray = npt.NDArray[np.bool_]
QuestionKind = Literal["all-pairs", "top-k", "baseline"]
"""What the lead asks (method.md §12): the order of every pair, the best k systems, or each
system against one or more baselines (the built-in entries of :data:`QUESTION_KINDS`)."""


@dataclass(frozen=True)
class Question:
    """The question a run answers (method.md §12).

    Attributes:
        kind: a registered kind (:data:`QUESTION_KINDS`): ``"all-pairs"`` (the paper), ``"top-k"``
            or ``"baseline"``.
        k: for ``top-k``: the size of the tier asked for (k >= 1).
        baselines: for ``baseline``: the baseline systems B (each other system is decided
            against each B; pairs of two non-baselines, or of two baselines, are not asked).
    """

    kind: QuestionKind = setting("all-pairs", label="Question", help="what to answer", choices=lambda: question_words(), option="question")
    k: int = setting(1, label="k (top-k)", help="top-k: the size of the tier asked for", bounds=Bounds(ge=1, lt=INT_LIMIT))
    baselines: tuple[str, ...] = setting((), label="Baseline systems", help="baseline: the baseline system(s)", option="baseline")

    def __post_init__(self) -> None:
        entry = QUESTION_KINDS.get(self.kind)
        if entry is None:
            raise settings_error(f"unknown question {self.kind!r}; expected one of {', '.join(QUESTION_KINDS)}", field="question")
        if self.k < 1:
            raise settings_error(f"top-k needs k >= 1, got {self.k}", field="k")
        if entry.baselines and not self.baselines:
            raise settings_error(f"the {self.kind} question needs at least one baseline system", field="baseline")
        if not entry.baselines and self.baselines:
            raise settings_error("baseline systems are only used by the baseline question", field="baseline")

    def describe(self) -> str:
        """The question in words."""
        return QUESTION_KINDS[self.kind].describe(self)


@dataclass(frozen=True)
class QuestionKindEntry:
    """One kind of question.

    Attributes:
        name: what ``--question`` and saved setups call it.
        label: what it asks, for a list of choices ("The best k systems").
        describe: the question with its parameters, in words.
        pairs: (P,) the pairs the question is about, from the question, the system names and the
            (P, 2) system indices of the pairs.
        k: whether it asks for a tier of ``k`` systems (other kinds keep ``k = 1``).
        baselines: whether it is asked against named baseline systems (which it then needs).
    """

    name: str
    label: str
    describe: Callable[[Question], str]
    pairs: Callable[[Question, Sequence[str], npt.NDArray[np.int64]], BoolArray]
    k: bool = False
    baselines: bool = False


def every_pair(question: Question, systems: Sequence[str], pair_systems: npt.NDArray[np.int64]) -> BoolArray:
    """(P,) all pairs."""
    return np.ones(len(pair_systems), dtype=bool)


def baseline_pairs(question: Question, systems: Sequence[str], pair_systems: npt.NDArray[np.int64]) -> BoolArray:
    """(P,) the pairs with exactly one baseline."""
    is_baseline = np.isin(np.asarray(systems, dtype=object), question.baselines)
    return is_baseline[pair_systems[:, 0]] != is_baseline[pair_systems[:, 1]]


QUESTION_KINDS: dict[str, QuestionKindEntry] = {
    entry.name: entry
    for entry in (
        QuestionKindEntry("all-pairs", "Order of every pair (the paper)", lambda q: "the order of every pair of systems", every_pair),
        QuestionKindEntry("top-k", "The best k systems", lambda q: f"which systems can be among the best {q.k}", every_pair, k=True),
        QuestionKindEntry(
            "baseline",
            "Each system against a baseline",
            lambda q: f"is each system better or worse than {' and '.join(q.baselines)}",
            baseline_pairs,
            baselines=True,
        ),
    )
}
"""Every question kind by name, in the order they are offered. Tests add one with ``monkeypatch.setitem``."""


def question_words() -> dict[str, str]:
    """Every registered kind and its label, in the order offered."""
    return {name: entry.label for name, entry in QUESTION_KINDS.items()}


def check_question(question: Question, systems: Sequence[str]) -> None:
    """Raise :class:`UnknownNameError` for a baseline that is not a system of the study."""
    unknown = [b for b in question.baselines if b not in systems]
    if unknown:
        raise UnknownNameError.single(
            "unknown_name", f"baseline {', '.join(map(repr, unknown))} is not a system of this study; systems: {', '.join(systems)}"
        )


def question_pairs(question: Question, systems: Sequence[str], pair_systems: npt.NDArray[np.int64]) -> BoolArray:
    """(P,) the pairs the question is about (its kind's ``pairs``: all of them, or for ``baseline``
    those with exactly one baseline)."""
    return QUESTION_KINDS[question.kind].pairs(question, systems, pair_systems)


def beaten_by(decisions: npt.NDArray[np.int8], pair_systems: npt.NDArray[np.int64], n_systems: int) -> npt.NDArray[np.bool_]:
    """(S, S) ``beats[t, s]``: t is significantly better than s according to ``decisions`` (P,)."""
    beats = np.zeros((n_systems, n_systems), dtype=bool)
    a, b = pair_systems[:, 0], pair_systems[:, 1]
    better = decisions == BETTER
    worse = decisions == WORSE
    beats[a[better], b[better]] = True
    beats[b[worse], a[worse]] = True
    return beats


def top_k_members(members: BoolArray, decisions: npt.NDArray[np.int8], pair_systems: npt.NDArray[np.int64], k: int) -> BoolArray:
    """(S,) the members after one pass: those of ``members`` that fewer than k members beat."""
    beats = beaten_by(decisions, pair_systems, len(members))
    beaters = (beats & members[:, None]).sum(axis=0)
    return members & (beaters < k)


def sure_members(members: BoolArray, decisions: npt.NDArray[np.int8], pair_systems: npt.NDArray[np.int64], k: int) -> BoolArray:
    """(S,) members that no further judgment can push out: fewer than k other members are not
    significantly worse than them."""
    beats = beaten_by(decisions, pair_systems, len(members))
    not_below = members[None, :] & ~beats & ~np.eye(len(members), dtype=bool)  # [s, t]: t is not significantly worse than s
    return members & (not_below.sum(axis=1) < k)


def open_pairs(
    question: Question,
    in_question: BoolArray,
    members: BoolArray,
    decisions: npt.NDArray[np.int8],
    stopped: BoolArray,
    pair_systems: npt.NDArray[np.int64],
) -> BoolArray:
    """(P,) the pairs whose judgments can still change the answer.

    Args:
        in_question: (P,) :func:`question_pairs`.
        members: (S,) current top-k members (all True for the other questions).
        decisions: (P,) current decision codes.
        stopped: (P,) pairs that cannot or need not get more judgments (no items left, futile).
    """
    candidates = in_question & (decisions == TIE) & ~stopped
    if question.kind != "top-k":
        return candidates
    if members.sum() <= question.k:
        return np.zeros_like(candidates)
    a, b = pair_systems[:, 0], pair_systems[:, 1]
    sure = sure_members(members, decisions, pair_systems, question.k)
    return candidates & members[a] & members[b] & ~(sure[a] & sure[b])


@dataclass(frozen=True)
class TopKAnswer:
    """The answer to a top-k question.

    Attributes:
        k: the tier size asked for.
        members: systems that can still be among the best k (sorted).
        sure: members that are certainly among the best k (sorted).
    """

    k: int
    members: tuple[str, ...]
    sure: tuple[str, ...]


def top_k_answer(
    systems: Sequence[str], members: BoolArray, decisions: npt.NDArray[np.int8], pair_systems: npt.NDArray[np.int64], k: int
) -> TopKAnswer:
    """The :class:`TopKAnswer` of the current members and decisions."""
    sure = sure_members(members, decisions, pair_systems, k)
    names = np.asarray(systems, dtype=object)
    return TopKAnswer(k, tuple(str(s) for s in names[members]), tuple(str(s) for s in names[sure]))


def reference_members(reference: npt.NDArray[np.int8], pair_systems: npt.NDArray[np.int64], n_systems: int, k: int) -> BoolArray:
    """(S,) the full evaluation's top-k tier: one pass of the rule on the reference decisions."""
    return top_k_members(np.ones(n_systems, dtype=bool), reference, pair_systems, k)
