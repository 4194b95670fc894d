"""The three questions of method.md §12 and which judgments can still change their answers.

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

Decision codes: 0 ``>`` (A better), 1 undecided, 2 ``<``; pairs canonical.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from prefeval_core.errors import UnknownNameError
from prefeval_core.protocol.settings import Question
from prefeval_core.vocabulary.outcomes import BETTER, TIE, WORSE

BoolArray = npt.NDArray[np.bool_]


def check_question(question: Question, systems: Sequence[str]) -> None:
    """Raise :class:`UnknownNameError` for a baseline that is not a system of the study."""
    unknown = [b for b in question.baselines if b not in systems]
    if unknown:
        raise UnknownNameError.single(
            "unknown_name", f"baseline {', '.join(map(repr, unknown))} is not a system of this study; systems: {', '.join(systems)}"
        )


def question_pairs(question: Question, systems: Sequence[str], pair_systems: npt.NDArray[np.int64]) -> BoolArray:
    """(P,) the pairs the question is about: all of them, or (baseline) those with exactly one baseline."""
    if question.kind != "baseline":
        return np.ones(len(pair_systems), dtype=bool)
    is_baseline = np.isin(np.asarray(systems, dtype=object), question.baselines)
    return is_baseline[pair_systems[:, 0]] != is_baseline[pair_systems[:, 1]]


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
