"""The study table (method.md §12): unit from the human rater, pairs, costs, withheld judgments, live pools."""

from __future__ import annotations

import numpy as np
import pytest

from prefeval_core.data.dataset import load_dataset
from prefeval_core.errors import SettingsError
from prefeval_core.protocol import build_study_table
from tests.data_helpers import annotated_comparisons_csv
from tests.protocol_fixtures import ratings_csv, ratings_table

GT, EQ, LT = 0, 1, 2


def test_a_scalar_rater_makes_a_ratings_study_whose_rows_come_from_its_scores() -> None:
    table = ratings_table(
        {"a": [3, 1, 2], "b": [1, 1, 3], "c": [2, None, 2]}, {"a": [0.9, 0.1, 0.5], "b": [0.2, 0.2, 0.8], "c": [0.5, 0.4, 0.5]}
    )
    assert table.unit == "ratings" and table.pairs == (("a", "b"), ("a", "c"), ("b", "c"))
    assert table.grid is not None and table.grid.requestable.sum() == 8  # c has no score on item 1
    first = table.row_pair == 0
    assert table.human[first].tolist() == [GT, EQ, LT]  # a vs b on items 0, 1, 2
    assert table.metrics[first, 0].tolist() == [GT, LT, LT]
    ac = table.row_pair == 1
    assert table.human[ac].tolist() == [GT, -1, EQ] and table.metrics[ac, 0].tolist() == [GT, LT, EQ]
    assert table.cost_available() == 8 and table.human_available().tolist() == [3, 2, 2]
    comparisons = ratings_table({"a": [3, 1, 2], "b": [1, 1, 3]}, unit="comparisons")
    assert comparisons.unit == "comparisons" and comparisons.grid is None and comparisons.cost_available() == 3


def test_a_pairwise_rater_cannot_make_ratings() -> None:
    prefs = b"item_id,system_a,system_b,rater,label\ni1,a,b,human,>\ni2,a,b,human,<\n"
    dataset = load_dataset([("p.csv", prefs)])
    assert build_study_table(dataset, "human").unit == "comparisons"
    with pytest.raises(SettingsError, match="pairwise rater"):
        build_study_table(dataset, "human", unit="ratings")


def test_the_human_fraction_withholds_whole_items_of_a_ratings_study() -> None:
    scores = {s: list(np.arange(40) % 5 + k) for k, s in enumerate("abc")}
    table = ratings_table(scores, human_fraction=0.25, seed=3)
    grid = table.grid
    assert grid is not None
    kept_items = grid.requestable.all(axis=0)
    assert kept_items.sum() == 10 and np.array_equal(grid.requestable.any(axis=0), kept_items)  # whole items
    assert (table.human >= 0).sum() == 3 * 40  # the full evaluation stays as the reference
    again = ratings_table(scores, human_fraction=0.25, seed=3)
    assert again.fingerprint == table.fingerprint != ratings_table(scores, human_fraction=0.25, seed=4).fingerprint
    with pytest.raises(SettingsError, match="fraction"):
        ratings_table(scores, human_fraction=0.0)


def test_a_live_study_can_ask_for_outputs_no_one_rated() -> None:
    texts = b"item_id,system,output\n" + b"".join(f"i{i:03d},{s},{s}{i}\n".encode() for i in range(4) for s in "abc")
    dataset = load_dataset([("r.csv", ratings_csv({"a": [1, 2], "b": [2, 1]})), ("t.csv", texts)])
    replay = build_study_table(dataset, "human", pool="human")
    live = build_study_table(dataset, "human", pool="all")
    assert replay.systems == ("a", "b") and live.systems == ("a", "b", "c")
    assert live.grid is not None and live.grid.requestable.all() and live.n_pairs == 3
    assert replay.cost_available() == 4


def test_the_ideal_metric_adds_metric_only_items() -> None:
    table = ratings_table({"a": [3, 1, 2, 2], "b": [1, 1, 3, 2]}, unit="comparisons")
    dataset = load_dataset([("r.csv", ratings_csv({"a": [3, 1, 2, 2], "b": [1, 1, 3, 2]}))])
    ideal = build_study_table(dataset, "human", ("ideal",), unit="comparisons", ideal_items=50, seed=1)
    assert len(ideal.row_pair) == len(table.row_pair) + 50
    assert (ideal.metrics[:, 0] >= 0).sum() == 54 and ideal.requestable.sum() == 4


def test_a_rating_costs_the_annotators_the_data_keep_apart() -> None:
    def score(i: int, k: int, j: int) -> int:
        return (i + k + j) % 5 + 1

    rows = "item_id,system,rater,score\n" + "".join(
        f"i{i},{s},human:q:{a},{score(i, k, j)}\n" for i in range(3) for k, s in enumerate("ab") for j, a in enumerate(("x", "y"))
    )
    rows += "".join(f"i{i},{s},human:q,{(score(i, k, 0) + score(i, k, 1)) / 2}\n" for i in range(3) for k, s in enumerate("ab"))
    rows += "i0,c,human:q,3\ni1,c,human:q,2\ni2,c,human:q,4\n"  # published as the mean only: rated by the two as well
    rows += "i0,a,human:q:da_z,0.1\ni1,a,human:q:da_z,0.3\n"  # another normalisation, not an annotator
    dataset = load_dataset([("r.csv", rows.encode())])
    table = build_study_table(dataset, "human:q")
    grid = table.grid
    assert grid is not None
    assert grid.cost[table.systems.index("a")].tolist() == [2, 2, 2] and grid.cost[table.systems.index("c")].tolist() == [2, 2, 2]
    assert table.cost_available() == 3 * 3 * 2
    one = build_study_table(dataset, "human:q", ratings_per_request="one", seed=3)
    assert one.grid is not None and one.grid.cost[table.systems.index("a")].tolist() == [1, 1, 1]
    assert one.grid.cost[table.systems.index("c")].tolist() == [2, 2, 2]  # only the mean is published: it costs what it cost
    assert one.cost_available() == table.cost_available()  # the study paid the same
    a = table.systems.index("a")
    picked = one.grid.scores[a]
    assert all(picked[i] in (score(i, 0, 0), score(i, 0, 1)) for i in range(3))
    # live: a request buys what the study asks per item, whatever the data held behind a score
    live = build_study_table(dataset, "human:q", pool="all")
    assert live.grid is not None and set(live.grid.cost[live.grid.requestable].tolist()) == {1}
    triple = build_study_table(dataset, "human:q", pool="all", judgments_per_item=3)
    assert triple.grid is not None and triple.cost_available() == 3 * live.cost_available()
    one = build_study_table(dataset, "human:q", pool="all", judgments_per_item=2, ratings_per_request="one")
    assert one.grid is not None and set(one.grid.cost[one.grid.requestable].tolist()) == {2}  # not the data's annotators


def test_a_comparisons_replay_can_buy_one_annotators_comparison() -> None:
    data, votes = annotated_comparisons_csv()
    dataset = load_dataset([("p.csv", data)])
    full = build_study_table(dataset, "human")
    assert full.unit == "comparisons" and full.ratings_per_request == "all" and set(full.human.tolist()) == {EQ}
    assert full.cost_available() == 7 * 3 + 1  # what the study paid: three annotators, one for the majority alone
    drawn = set()
    for seed in range(6):
        one = build_study_table(dataset, "human", ratings_per_request="one", seed=seed)
        assert one.ratings_per_request == "one" and one.fingerprint != full.fingerprint
        assert one.cost_available() == full.cost_available()  # the study paid the same
        assert one.full_human is not None and one.full_human.tolist() == full.human.tolist()
        assert one.row_cost.tolist() == [1] * 8
        annotators: dict[str, set[str]] = {}
        for row, item in enumerate(one.row_item):
            key = (one.items[item], one.pairs[one.row_pair[row]][1])
            if key == ("i3", "c"):  # published as the majority alone: that outcome, at what it cost
                assert one.human[row] == EQ
                continue
            (annotator,) = [a for a in "xyz" if votes[(*key, a)] == one.human[row]]
            annotators.setdefault(key[0], set()).add(annotator)
        assert all(len(names) == 1 for names in annotators.values())  # one annotator per item, for both its pairs
        drawn.add(tuple(sorted((item, *names) for item, names in annotators.items())))
    assert len(drawn) > 1  # the seed rotates them
