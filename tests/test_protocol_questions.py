"""The questions of method.md §12: top-k membership and sure members, open pairs, the answer in words."""

from __future__ import annotations

import numpy as np
import pytest

from prefeval_core.errors import SettingsError, UnknownNameError
from prefeval_core.protocol import Question
from prefeval_core.protocol.questions import check_question, open_pairs, question_pairs
from prefeval_core.protocol.questions_top_k import reference_members, sure_members, top_k_answer, top_k_members

GT, EQ, LT = 0, 1, 2
SYSTEMS = ("a", "b", "c", "d")
PAIRS = np.array([[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]], dtype=np.int64)  # ab ac ad bc bd cd


def decisions(**chosen: int) -> np.ndarray:
    """Decision codes by pair name (``ab=GT``); the others undecided."""
    names = ["ab", "ac", "ad", "bc", "bd", "cd"]
    codes = np.full(6, EQ, dtype=np.int8)
    for name, code in chosen.items():
        codes[names.index(name)] = code
    return codes


def test_a_system_leaves_once_k_members_beat_it() -> None:
    all_in = np.ones(4, dtype=bool)
    # a beats c and d; b beats d; c beats d
    d = decisions(ac=GT, ad=GT, bd=GT, cd=GT)
    assert top_k_members(all_in, d, PAIRS, k=1).tolist() == [True, True, False, False]
    assert top_k_members(all_in, d, PAIRS, k=2).tolist() == [True, True, True, False]
    assert top_k_members(all_in, d, PAIRS, k=3).tolist() == [True, True, True, False]  # d: three beaters
    assert top_k_members(all_in, d, PAIRS, k=4).tolist() == [True, True, True, True]
    # beaters must still be members: d is beaten only by c, which has already left
    members = np.array([True, True, False, True])
    assert top_k_members(members, decisions(cd=GT), PAIRS, k=1).tolist() == [True, True, False, True]


def test_sure_members_cannot_be_pushed_out() -> None:
    all_in = np.ones(4, dtype=bool)
    d = decisions(ab=GT, ac=GT, ad=GT)  # a beats everyone: certainly the best
    assert sure_members(all_in, d, PAIRS, k=1).tolist() == [True, False, False, False]
    # for k = 3, b is sure once it beats one of the others: only two can still be above it
    assert sure_members(all_in, decisions(bd=GT), PAIRS, k=3).tolist() == [False, True, False, False]


def test_open_pairs_per_question() -> None:
    stopped = np.zeros(6, dtype=bool)
    all_in = np.ones(4, dtype=bool)
    d = decisions(ab=GT, ac=GT, ad=GT)
    everything = Question()
    assert open_pairs(everything, question_pairs(everything, SYSTEMS, PAIRS), all_in, d, stopped, PAIRS).tolist() == [
        False, False, False, True, True, True
    ]  # fmt: skip
    top1 = Question("top-k", 1)
    members = top_k_members(all_in, d, PAIRS, k=1)
    assert not open_pairs(top1, np.ones(6, bool), members, d, stopped, PAIRS).any()  # a alone is left: answered
    top3 = Question("top-k", 3)
    members3 = top_k_members(all_in, d, PAIRS, k=3)
    # a is sure; the pairs among b, c, d still matter, those with a do not
    assert open_pairs(top3, np.ones(6, bool), members3, d, stopped, PAIRS).tolist() == [False, False, False, True, True, True]
    baseline = Question("baseline", baselines=("c",))
    asked = question_pairs(baseline, SYSTEMS, PAIRS)
    assert asked.tolist() == [False, True, False, True, False, True]
    stopped[3] = True  # b vs c has no items left
    assert open_pairs(baseline, asked, all_in, d, stopped, PAIRS).tolist() == [False, False, False, False, False, True]


def test_the_reference_tier_is_one_pass_on_all_decisions() -> None:
    reference = decisions(ac=GT, ad=GT, bc=GT, bd=GT)  # a and b tie above c and d
    assert reference_members(reference, PAIRS, 4, k=1).tolist() == [True, True, False, False]


def test_top_k_answer_names_members_and_sure_ones() -> None:
    answer = top_k_answer(SYSTEMS, np.array([True, True, False, False]), decisions(ab=GT, ac=GT, bc=GT), PAIRS, k=1)
    assert (answer.members, answer.sure) == (("a", "b"), ("a",))


def test_questions_are_checked() -> None:
    with pytest.raises(SettingsError, match="k >= 1"):
        Question("top-k", 0)
    with pytest.raises(SettingsError, match="at least one baseline"):
        Question("baseline")
    with pytest.raises(SettingsError, match="unknown question"):
        Question("best")  # type: ignore[arg-type]
    with pytest.raises(UnknownNameError, match="'z' is not a system"):
        check_question(Question("baseline", baselines=("z",)), SYSTEMS)
