"""The ``top-k`` question (method.md §12): which systems can be among the best k.

A system leaves the answer once at least k systems *still in it* are significantly better than it
(one simultaneous pass per round over the current members; leaving is final). A member is
**sure** when fewer than k other members are not significantly worse than it: no judgment can
push it out. A pair matters while both systems are members, more than k members remain, at least
one of the two is not sure, and the pair is undecided and can still get judgments. The reference
answer is the same rule applied once to the decisions on all human judgments (the full
evaluation's top-k tier). Every pair is asked (the registry's default).

Decision codes: 0 ``>`` (A better), 1 undecided, 2 ``<``; pairs canonical.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from prefeval_core.protocol.questions_all_pairs import beaten_by
from prefeval_core.vocabulary.words import listing, number_word

if TYPE_CHECKING:
    from prefeval_core.protocol.questions import Decided, Question

BoolArray = npt.NDArray[np.bool_]

NAME = "top-k"
LABEL = "The best k systems"
K = True
STATUS_WORDS = "Status: sure = certainly among the best k; in = still in the answer; out = left it."


def describe(question: Question) -> str:
    return f"which systems can be among the best {question.k}"


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


def members(question: Question, current: BoolArray, decisions: npt.NDArray[np.int8], pair_systems: npt.NDArray[np.int64]) -> BoolArray:
    """(S,) the members after a round's decisions (:func:`top_k_members`)."""
    return top_k_members(current, decisions, pair_systems, question.k)


def open_pairs(
    question: Question,
    candidates: BoolArray,
    members: BoolArray,
    decisions: npt.NDArray[np.int8],
    pair_systems: npt.NDArray[np.int64],
) -> BoolArray:
    """(P,) the undecided ``candidates`` that can still change the tier (module docstring)."""
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


@dataclass(frozen=True)
class TopKComparison:
    """A top-k answer against the full evaluation's tier: ``exact_match`` (same set),
    ``false_exclusions`` (reference members not in the answer), ``extras`` (answer members
    not in the reference)."""

    answer: TopKAnswer
    reference: TopKAnswer
    exact_match: bool
    false_exclusions: int
    extras: int

    def summary(self) -> dict[str, Any]:
        """The top-k keys of the ``replay --json`` summary."""
        return {
            "k": self.answer.k,
            "answer": list(self.answer.members),
            "sure": list(self.answer.sure),
            "reference_answer": list(self.reference.members),
            "exact_match": self.exact_match,
            "false_exclusions": self.false_exclusions,
            "extras": self.extras,
        }

    def words(self) -> str:
        """E.g. "The full evaluation's top-2 tier: M1, M4 (1 left out, 0 extra)."."""
        outcome = " (exact match)." if self.exact_match else f" ({self.false_exclusions} left out, {self.extras} extra)."
        return f"The full evaluation's top-{self.answer.k} tier: {', '.join(self.reference.members)}" + outcome

    def scored(self, pairs: Sequence[tuple[str, str]]) -> BoolArray:
        """(P,) the pairs with a system in the answer or in the full evaluation's tier (the others cannot change it)."""
        named = set(self.answer.members) | set(self.reference.members)
        return np.array([a in named or b in named for a, b in pairs], dtype=bool)


def compare(d: Decided, reference: npt.NDArray[np.int8]) -> TopKComparison:
    """The run's tier against the full evaluation's (``reference``: (P,) its decisions)."""
    k = d.question.k
    answer = top_k_answer(d.systems, d.members, d.decisions, d.pair_systems, k)
    tier = reference_members(reference, d.pair_systems, len(d.systems), k)
    full = top_k_answer(d.systems, tier, reference, d.pair_systems, k)
    got, want = set(answer.members), set(full.members)
    return TopKComparison(answer, full, got == want, len(want - got), len(got - want))


def words(d: Decided) -> str:
    """E.g. "M17 and M22 are among the best three; the last place goes to one of M0 and M5, which
    cannot be separated yet." (no pronoun that could point at the wrong system); with a margin, the
    contenders shown practically equal are named (:func:`_equal_words`)."""
    k = d.question.k
    answer = top_k_answer(d.systems, d.members, d.decisions, d.pair_systems, k)
    best = "the best system" if k == 1 else f"the best {number_word(k)}"
    if len(answer.members) <= k:
        return f"{listing(answer.members)} {'is' if len(answer.members) == 1 else 'are'} {best}."
    contenders = tuple(s for s in answer.members if s not in answer.sure)
    if not answer.sure:
        head = "The best system is one of" if k == 1 else f"The best {number_word(k)} are among"
        return f"{head} {listing(answer.members)}{_equal_words(d, answer.members)}."
    left = k - len(answer.sure)
    sure = f"{listing(answer.sure)} {'is' if len(answer.sure) == 1 else 'are'} among {best}"
    places = "the last place goes to one of" if left == 1 else f"the last {number_word(left)} places go to {number_word(left)} of"
    return f"{sure}; {places} {listing(contenders)}{_equal_words(d, contenders)}."


def _equal_words(d: Decided, contenders: Sequence[str]) -> str:
    """How the contenders still in play stand: ", practically equal within the margin" when every pair
    of them was shown equivalent, else ", which cannot be separated yet" and the groups that were."""
    groups = d.equal_groups(contenders)
    if groups and len(groups[0]) == len(contenders):
        return ", practically equal within the margin"
    named = "; of them " + ", ".join("{" + ", ".join(g) + "}" for g in groups) + " are practically equal within the margin"
    return f", which cannot be separated {d.when}" + (named if groups else "")


def status(d: Decided) -> tuple[str, ...]:
    """(S,) ``sure`` (certainly among the best k), ``in`` (still in the answer, not sure), ``out`` (left it)."""
    sure = top_k_answer(d.systems, d.members, d.decisions, d.pair_systems, d.question.k).sure
    return tuple("sure" if s in sure else "in" if d.members[i] else "out" for i, s in enumerate(d.systems))
