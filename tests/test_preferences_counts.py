"""Pair outcomes (method.md §2) and count triples (§3): hand-computed cases and properties."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefeval_core.data.dataset import load_dataset
from prefeval_core.errors import CoverageError, UnknownNameError
from prefeval_core.pairs.counts import align_outcomes, count_triple, count_triples
from prefeval_core.pairs.preferences import pair_outcomes, unknown_system_problems
from prefeval_core.vocabulary.outcomes import flip_codes
from tests.data_helpers import RATINGS_CSV


@pytest.fixture(scope="module")
def tiny():
    return load_dataset([("r.csv", RATINGS_CSV.encode())])


def outcomes_of(po, a, b) -> dict[str, int]:
    frame = po.of_pair(a, b)
    return dict(zip(frame["item_id"], frame["outcome"].tolist()))


def test_scalar_outcomes_by_hand(tiny) -> None:
    human = pair_outcomes(tiny, "human")
    assert human.pairs == (("A", "B"), ("A", "C"), ("B", "C"))
    assert outcomes_of(human, "A", "B") == {"i1": 0, "i2": 2}  # 3 > 1; 2 < 5
    assert outcomes_of(human, "A", "C") == {"i1": 1}  # 3 = 3; C not rated on i2
    assert outcomes_of(human, "B", "C") == {"i1": 2}
    bleu = pair_outcomes(tiny, "bleu")
    assert outcomes_of(bleu, "A", "B") == {"i1": 0, "i2": 1, "i3": 0}


def test_tie_threshold(tiny) -> None:
    bleu = pair_outcomes(tiny, "bleu", eps=0.35)
    assert outcomes_of(bleu, "A", "B") == {"i1": 1, "i2": 1, "i3": 0}  # 0.3 <= eps, 0.6 > eps


def test_of_pair_in_reverse_order_flips(tiny) -> None:
    human = pair_outcomes(tiny, "human")
    assert outcomes_of(human, "B", "A") == {"i1": 2, "i2": 0}


def test_unknown_rater_suggests_close_names(tiny) -> None:
    with pytest.raises(UnknownNameError, match=r"no rater named 'blue' in the data; did you mean 'bleu'"):
        pair_outcomes(tiny, "blue")


def test_unknown_systems_are_named_with_suggestions(tiny) -> None:
    problems = unknown_system_problems(tiny.systems, ["A", "b", "Z"], file="ann.csv", column="system_a")
    assert [str(p) for p in problems] == [
        "ann.csv, row 2, column 'system_a': unknown system 'b'; known systems: A, B, C",
        "ann.csv, row 3, column 'system_a': unknown system 'Z'; known systems: A, B, C",
    ]


def test_rater_with_one_system_is_a_coverage_error() -> None:
    ds = load_dataset([("r.csv", (RATINGS_CSV + "i1,A,lonely,1\n").encode())])
    with pytest.raises(CoverageError, match=r"r\.csv, column 'system': rater 'lonely' gives no preferences"):
        pair_outcomes(ds, "lonely")


def test_pair_without_common_items_is_a_coverage_error() -> None:
    ds = load_dataset([("r.csv", (RATINGS_CSV + "i1,A,split,1\ni2,B,split,2\ni2,C,split,2\n").encode())])
    split = pair_outcomes(ds, "split")
    with pytest.raises(CoverageError, match=r"rater 'split' has no item on which it rated both A and B"):
        split.of_pair("A", "B")
    table = align_outcomes(split)
    with pytest.raises(CoverageError, match="has no item on which it rated both A and C"):
        table.index_of("C", "A")


def test_counts_by_hand(tiny) -> None:
    table = align_outcomes(pair_outcomes(tiny, "human"), pair_outcomes(tiny, "bleu"))
    # Pair (A, B): human i1 '>', i2 '<'; bleu i1 '>', i2 '=', i3 '>'.
    counts = count_triple(table, "A", "B", {"i1"})
    assert counts.n.tolist() == [1, 0, 0]
    assert counts.K.tolist() == [[1, 0, 0], [0, 0, 0], [0, 0, 0]]
    assert counts.m.tolist() == [1, 1, 0]  # i3 '>' and i2 '=' are unrevealed metric items
    everything = count_triple(table, "A", "B", {"i1", "i2", "i3"})
    assert everything.n.tolist() == [1, 0, 1]
    assert everything.K.tolist() == [[1, 0, 0], [0, 0, 1], [0, 0, 0]]
    assert everything.m.tolist() == [1, 0, 0]  # i3 has no human outcome: it stays in U
    flipped = count_triple(table, "B", "A", {"i1", "i2", "i3"})
    assert flipped.n.tolist() == [1, 0, 1]
    assert flipped.K.tolist() == [[0, 0, 0], [1, 0, 0], [0, 0, 1]]
    assert flipped.m.tolist() == [0, 0, 1]


def test_revealing_a_row_without_human_outcome_is_refused(tiny) -> None:
    table = align_outcomes(pair_outcomes(tiny, "human"), pair_outcomes(tiny, "bleu"))
    with pytest.raises(ValueError, match="cannot be revealed"):
        count_triples(table, np.ones_like(table.human, dtype=bool))


def test_restricting_a_table_to_some_pairs_keeps_their_counts(tiny) -> None:
    table = align_outcomes(pair_outcomes(tiny, "human"), pair_outcomes(tiny, "bleu"))
    keep = np.array([True, False, True])
    small = table.with_pairs(keep)
    assert small.pairs == (("A", "B"), ("B", "C"))
    full, part = count_triples(table, table.human >= 0), count_triples(small, small.human >= 0)
    assert part.n.tolist() == full.n[keep].tolist()
    assert part.K.tolist() == full.K[keep].tolist()
    assert part.m.tolist() == full.m[keep].tolist()
    assert table.with_pairs(np.ones(3, dtype=bool)) is table


def test_human_only_table(tiny) -> None:
    table = align_outcomes(pair_outcomes(tiny, "human"))
    counts = count_triples(table, table.human >= 0)
    assert counts.n.sum() == 4 and counts.K.sum() == 0 and counts.m.sum() == 0
    assert table.human_pool().tolist() == [2, 1, 1]


outcome_lists = st.lists(st.tuples(st.integers(0, 2), st.integers(-1, 2)), min_size=1, max_size=40)


def _table_from(pairs: list[tuple[int, int]], names: list[str] | None = None):
    """A one-pair dataset: human outcome h (always present) and metric outcome c (-1 = none)."""
    rows = []
    for k, (h, c) in enumerate(pairs):
        item = names[k] if names else f"i{k:03d}"
        rows.append(("X", "Y", item, "human", [">", "=", "<"][h]))
        if c >= 0:
            rows.append(("X", "Y", item, "metric", [">", "=", "<"][c]))
    frame = pd.DataFrame(rows, columns=["system_a", "system_b", "item_id", "rater", "label"])
    frame.insert(0, "item", frame.pop("item_id"))
    frame = frame.rename(columns={"item": "item_id"})
    ds = load_dataset([("p.csv", frame.to_csv(index=False).encode())])
    metric = pair_outcomes(ds, "metric") if any(c >= 0 for _, c in pairs) else None
    return align_outcomes(pair_outcomes(ds, "human"), metric)


@settings(max_examples=40, deadline=None)
@given(outcome_lists, st.data())
@pytest.mark.property
def test_counts_over_a_partition_of_items_add_up(pairs, data) -> None:
    table = _table_from(pairs)
    revealed = np.array(data.draw(st.lists(st.booleans(), min_size=len(table.human), max_size=len(table.human))))
    part = count_triples(table, revealed)
    full = count_triples(table, np.ones_like(revealed))
    none = count_triples(table, np.zeros_like(revealed))
    # R and U partition the items: n + K's column sums cover R; K + m cover the metric's items.
    assert part.n.sum() == revealed.sum()
    assert (part.K.sum(axis=2) + part.m).tolist() == (full.K.sum(axis=2) + full.m).tolist() == (none.m).tolist()
    assert full.n.tolist() == (part.n + count_triples(table, ~revealed).n).tolist()


@settings(max_examples=30, deadline=None)
@given(outcome_lists, st.randoms(use_true_random=False))
@pytest.mark.property
def test_relabelling_items_changes_no_count(pairs, rng) -> None:
    names = [f"item-{k}" for k in range(len(pairs))]
    rng.shuffle(names)
    original = count_triples(t := _table_from(pairs), t.human >= 0)
    relabelled = count_triples(r := _table_from(pairs, names), r.human >= 0)
    assert original.n.tolist() == relabelled.n.tolist()
    assert original.K.tolist() == relabelled.K.tolist()
    assert original.m.tolist() == relabelled.m.tolist()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(-5, 5), st.floats(-5, 5)), min_size=1, max_size=30), st.floats(0, 2))
@pytest.mark.property
def test_swapping_systems_flips_every_outcome(scores, eps) -> None:
    rows = [(f"i{k}", s, "m", v) for k, (a, b) in enumerate(scores) for s, v in (("A", a), ("B", b))]
    csv = "item_id,system,rater,score\n" + "".join(f"{i},{s},{r},{v!r}\n" for i, s, r, v in rows)
    swapped = csv.replace(",A,", ",TMP,").replace(",B,", ",A,").replace(",TMP,", ",B,")
    first = pair_outcomes(load_dataset([("r.csv", csv.encode())]), "m", eps).frame
    second = pair_outcomes(load_dataset([("r.csv", swapped.encode())]), "m", eps).frame
    assert second["outcome"].tolist() == flip_codes(first["outcome"].to_numpy()).tolist()
