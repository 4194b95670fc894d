"""SEScore2 synthesis without a model: tokenising, edit decomposition, drops, subsets, severity, retrieval."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefeval_core.textmetrics.sescore2.corpus import corpus_sentences, detokenize, split_sentences, tokenize
from prefeval_core.textmetrics.sescore2.perturb import Edit, apply_edits, candidate_edits, decompose, random_drops, random_subsets
from prefeval_core.textmetrics.sescore2.retrieval import Neighbours, nearest_neighbours, pick_neighbours
from prefeval_core.textmetrics.sescore2.severity import FLOOR, MAJOR, MINOR, edit_severity, hypothesis_score, idf_table
from prefeval_core.textmetrics.sescore2.train import derangement


def words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


def test_tokenize_and_sentences() -> None:
    assert tokenize("He paid $2.5 million, didn't he?") == ("He", "paid", "$", "2.5", "million", ",", "didn't", "he", "?")
    assert tokenize("Sterling 's car does n't") == ("Sterling", "'s", "car", "does", "n't")
    assert split_sentences("Judge V. Stiviano ruled. Then it ended! Why?") == ["Judge V. Stiviano ruled.", "Then it ended!", "Why?"]
    assert corpus_sentences(["One two three four five. Too short. One two three four five."]) == ("One two three four five .",)


@pytest.mark.parametrize(
    ("anchor", "neighbour", "expected"),
    [
        ("the cat sat on the mat", "the dog sat on the mat", [Edit(1, 2, ("dog",))]),
        ("the cat sat on the mat", "the cat sat on mat", [Edit(4, 5, ())]),
        ("the cat sat on the mat", "the black cat sat on the mat", [Edit(1, 1, ("black",))]),
        ("the cat sat on the mat", "a cat sat under the big mat", [Edit(0, 1, ("a",)), Edit(3, 4, ("under",)), Edit(5, 5, ("big",))]),
        ("a b c", "x y", [Edit(0, 3, ("x", "y"))]),
        ("a b", "a b", []),
    ],
)
def test_decompose_hand_made_pairs(anchor: str, neighbour: str, expected: list[Edit]) -> None:
    edits = decompose(words(anchor), words(neighbour))
    assert list(edits) == expected
    assert apply_edits(words(anchor), edits) == words(neighbour)


def test_edit_kinds_and_subsets_apply() -> None:
    anchor = words("the cat sat on the mat")
    edits = decompose(anchor, words("a cat sat under the big mat"))
    assert [e.kind for e in edits] == ["replace", "replace", "insert"]
    assert apply_edits(anchor, [edits[0], edits[2]]) == words("a cat sat on the big mat")
    assert apply_edits(anchor, [edits[1]]) == words("the cat sat under the mat")
    # an insertion before a deletion at the same position; overlapping edits are refused
    assert apply_edits(anchor, [Edit(1, 2, ()), Edit(1, 1, ("big",))]) == words("the big sat on the mat")
    with pytest.raises(ValueError):
        apply_edits(anchor, [Edit(1, 3, ()), Edit(2, 3, ("x",))])


@pytest.mark.property
@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from("abcde"), max_size=9), st.lists(st.sampled_from("abcdef"), max_size=9), st.integers(0, 2**16))
def test_decomposition_recovers_neighbour_and_any_subset_applies(anchor: list[str], neighbour: list[str], seed: int) -> None:
    edits = decompose(anchor, neighbour)
    assert apply_edits(anchor, edits) == tuple(neighbour)
    # runs are separated by matched words, so any subset applies; the edit count is at most the edit distance
    for first, second in itertools.pairwise(edits):
        assert second.start > first.end
    rng = np.random.default_rng(seed)
    subset = [e for e in edits if rng.random() < 0.5]
    assert len(apply_edits(anchor, subset)) == len(anchor) + sum(len(e.tokens) - (e.end - e.start) for e in subset)


def test_random_drops_avoid_edited_words_and_punctuation() -> None:
    anchor = words("the cat , sat on the mat .")
    edits = (Edit(1, 2, ("dog",)),)
    drops = random_drops(anchor, edits, 10, np.random.default_rng(0))
    assert sorted(d.start for d in drops) == [0, 3, 4, 5, 6]
    assert all(d.source == "drop" and d.kind == "delete" for d in drops)
    assert random_drops(anchor, edits, 0, np.random.default_rng(0)) == ()


def test_candidate_edits_and_subsets_are_seeded() -> None:
    anchor = words("the old cat sat quietly on the red mat near the door")
    neighbour = words("the young dog sat on a red mat by the front door")
    first = candidate_edits(anchor, neighbour, np.random.default_rng(3))
    assert first == candidate_edits(anchor, neighbour, np.random.default_rng(3))
    assert 1 <= len(first) <= 5
    assert all(max(e.end - e.start, len(e.tokens)) <= 4 for e in first)
    subsets = random_subsets(5, 4, np.random.default_rng(1))
    assert len(subsets) == len(set(subsets)) == 4
    assert all(s and all(0 <= k < 5 for k in s) for s in subsets)
    assert len(random_subsets(2, 10, np.random.default_rng(1))) == 3
    assert random_subsets(0, 3, np.random.default_rng(1)) == []


CORPUS = [
    words("the president met the prime minister in paris on monday ."),
    words("the president visited a factory in ohio ."),
    words("the team won the game on monday ."),
    words("rain fell in paris ."),
]


def test_severity_rules_on_hand_made_cases() -> None:
    idf = idf_table(CORPUS)
    anchor = CORPUS[0]
    # "the" occurs in 3 of 4 sentences but twice here: tf 2 * ln(5/4) = 0.45 -> minor
    assert edit_severity(Edit(0, 1, ()), anchor, idf) == MINOR
    assert edit_severity(Edit(10, 11, ()), anchor, idf) == MINOR  # the full stop weighs 0
    # "prime" occurs once: ln(5/2) = 0.92 -> minor at threshold 1; "minister" likewise
    assert edit_severity(Edit(4, 5, ()), anchor, idf) == MINOR
    assert edit_severity(Edit(4, 6, ()), anchor, idf, threshold=0.5) == MAJOR
    # replacing "paris" (ln(5/3)) by the unseen "london" (ln 5 = 1.61) -> major
    assert edit_severity(Edit(7, 8, ("london",)), anchor, idf) == MAJOR
    # replacing "the" by "a" (a occurs once: ln(5/2) = 0.92) -> minor; inserting "big" (unseen) -> major
    assert edit_severity(Edit(3, 4, ("a",)), anchor, idf) == MINOR
    assert edit_severity(Edit(3, 3, ("big",)), anchor, idf) == MAJOR
    edits = [Edit(0, 1, ()), Edit(7, 8, ("london",))]
    assert hypothesis_score(edits, anchor, idf) == MINOR + MAJOR
    assert hypothesis_score(edits, anchor, idf, severity=False) == 2 * MINOR
    assert hypothesis_score([Edit(k, k, ("zebra",)) for k in range(6)], anchor, idf) == FLOOR


def test_nearest_neighbours_and_picking() -> None:
    embeddings = np.array([[1.0, 0.0], [0.8, 0.6], [0.6, 0.8], [1.0, 0.0], [0.0, 1.0]])
    neighbours = nearest_neighbours(embeddings, k=2, max_similarity=0.99, block=2)
    # row 0: row 3 is a duplicate (cosine 1) and skipped; then 1 (0.8), 2 (0.6)
    assert neighbours.index.tolist() == [[1, 2], [2, 0], [1, 4], [1, 2], [2, 1]]
    assert neighbours.similarity[0] == pytest.approx([0.8, 0.6])
    padded = Neighbours(np.array([[1, -1], [-1, -1]]), np.array([[0.5, np.nan], [np.nan, np.nan]]))
    assert pick_neighbours(padded, np.random.default_rng(0)).tolist() == [1, -1]
    picks = pick_neighbours(neighbours, np.random.default_rng(5))
    assert all(p in row for p, row in zip(picks, neighbours.index.tolist()))


def test_derangement_has_no_fixed_point() -> None:
    for seed in range(20):
        perm = derangement(7, np.random.default_rng(seed))
        assert sorted(perm.tolist()) == list(range(7))
        assert not np.any(perm == np.arange(7))
    assert detokenize(("a", "b")) == "a b"
