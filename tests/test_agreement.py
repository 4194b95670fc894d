"""Agreement among annotators: exact small cases, and PandaLM's three human annotators against an
independent computation with the krippendorff package."""

from __future__ import annotations

import math
from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd
import pytest

from prefeval_core.annotation.agreement import cohen_kappa, comparison_agreement, krippendorff_alpha, rating_agreement
from prefeval_core.data.dataset import load_dataset
from prefeval_core.pairs.preferences import pair_outcomes
from prefeval_core.store import Comparison, Rating, Store, utc_now

ANNOTATORS = ("human:annotator1", "human:annotator2", "human:annotator3")
V = {">": 1.0, "=": 0.0, "<": -1.0}


def test_cohen_kappa_on_hand_computed_cases() -> None:
    assert cohen_kappa([0, 0, 1, 1], [0, 1, 1, 1]) == pytest.approx(0.5)  # p_o 3/4, p_e 1/2
    # 50 units: yes/yes 20, yes/no 5, no/yes 10, no/no 15 -> p_o 0.7, p_e 0.5*0.6 + 0.5*0.4 = 0.5
    first = [1] * 25 + [0] * 25
    second = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    assert cohen_kappa(first, second) == pytest.approx(0.4)
    assert cohen_kappa([0, 1], [1, 0]) == pytest.approx(-1.0)
    assert cohen_kappa([2, 1, 0], [2, 1, 0]) == 1.0
    assert math.isnan(cohen_kappa([1, 1], [1, 1])) and math.isnan(cohen_kappa([], []))
    assert cohen_kappa([3.0, 4.5, 4.5], [3.0, 4.5, 3.0]) == cohen_kappa([1, 2, 2], [1, 2, 1])  # categories are just labels


def test_krippendorff_alpha_on_hand_computed_cases() -> None:
    # Interval, 2 coders x 3 units, (1,3), (2,2), (3,1): D_o = 16/6, D_e = 48/30 -> alpha = 1 - (8/3)/(8/5) = -2/3.
    assert krippendorff_alpha(np.array([[1.0, 2, 3], [3, 2, 1]]), "interval") == pytest.approx(-2 / 3)
    assert krippendorff_alpha(np.array([[1.0, 2, 3], [1, 2, 3]]), "interval") == pytest.approx(1.0)
    # Krippendorff's own example (the package's documentation: 0.691358 nominal, 0.810845 interval).
    nan = np.nan
    data = np.array([
        [nan, nan, nan, nan, nan, 3, 4, 1, 2, 1, 1, 3, 3, nan, 3],
        [1, nan, 2, 1, 3, 3, 4, 3, nan, nan, nan, nan, nan, nan, nan],
        [nan, nan, 2, 1, 3, 4, 4, nan, 2, 1, 1, 3, 3, nan, 4],
    ])  # fmt: skip
    assert krippendorff_alpha(data, "interval") == pytest.approx(0.810845, abs=1e-6)
    assert math.isnan(krippendorff_alpha(np.array([[1.0, nan], [nan, 2.0]]), "ordinal"))  # no unit judged twice
    assert math.isnan(krippendorff_alpha(np.array([[1.0, 1.0], [1.0, 1.0]]), "ordinal"))  # one value only


def pandalm_comparisons(shared_data: Path) -> tuple[pd.DataFrame, list[Comparison]]:
    frame = pd.read_csv(shared_data / "pandalm" / "preferences.csv", dtype=str)
    humans = frame[frame["rater"].isin(ANNOTATORS)]
    stamp = utc_now()
    comparisons = [
        Comparison("pandalm", item, a, b, {">": 0, "=": 1, "<": 2}[label], rater, a, stamp, origin="import")
        for item, a, b, rater, label in humans[["item_id", "system_a", "system_b", "rater", "label"]].itertuples(index=False)
    ]
    return frame, comparisons


def test_pandalm_agreement_matches_an_independent_computation(shared_data: Path, tmp_path: Path) -> None:
    frame, comparisons = pandalm_comparisons(shared_data)
    store = Store.at(f"sqlite:///{tmp_path / 'annotations.sqlite'}")
    assert store.add_many(comparisons).added == 2997
    metric = pair_outcomes(load_dataset(shared_data / "pandalm"), "gpt-3.5-turbo").frame
    result = comparison_agreement(store.comparisons("pandalm"), metric)
    store.dispose()

    # Independent: the raw labels as values v, annotators x items (each PandaLM item is one pair, canonical already).
    assert (frame["system_a"] < frame["system_b"]).all()
    values = frame.assign(v=frame["label"].map(V))
    matrix = values[values["rater"].isin(ANNOTATORS)].pivot(index="rater", columns="item_id", values="v").loc[list(ANNOTATORS)]
    gpt = values[values["rater"] == "gpt-3.5-turbo"].set_index("item_id")["v"].reindex(matrix.columns)  # NaN where the judge has none
    expected_alpha = krippendorff.alpha(reliability_data=matrix.to_numpy(), level_of_measurement="ordinal")
    assert result.annotators == ANNOTATORS and (result.units, result.shared_units) == (999, 999)
    assert abs(result.alpha - expected_alpha) < 1e-9
    assert result.level == "ordinal" and result.cohen_kappa is None
    assert 0.7 < result.alpha < 0.95  # the README's "IAA about 0.85": a sanity bound, not the test
    for mine in result.per_annotator:
        others = np.sign(matrix.drop(index=mine.annotator).sum(axis=0))
        with_others = krippendorff.alpha(reliability_data=np.vstack([matrix.loc[mine.annotator], others]), level_of_measurement="ordinal")
        with_metric = krippendorff.alpha(reliability_data=np.vstack([matrix.loc[mine.annotator], gpt]), level_of_measurement="ordinal")
        assert abs(mine.with_others - with_others) < 1e-9
        assert abs(mine.with_metric - with_metric) < 1e-9
        assert (mine.judgments, mine.shared_with_others, mine.shared_with_metric) == (999, 999, 974)

    # Two annotators: Cohen's kappa against an independent count.
    two = comparison_agreement([c for c in comparisons if c.annotator != ANNOTATORS[2]])
    x, y = matrix.loc[ANNOTATORS[0]].to_numpy(), matrix.loc[ANNOTATORS[1]].to_numpy()
    p_o = np.mean(x == y)
    p_e = sum(np.mean(x == c) * np.mean(y == c) for c in (-1.0, 0.0, 1.0))
    assert two.cohen_kappa is not None and abs(two.cohen_kappa - (p_o - p_e) / (1 - p_e)) < 1e-9


def test_rating_agreement_is_interval_and_uses_tau_with_the_metric() -> None:
    stamp = utc_now()
    scores = {"ann": [1, 2, 3, 4], "bob": [2, 2, 3, 5], "eve": [1, 3, 3, 4]}
    ratings = [Rating("d", f"i{k}", "S", s, who, stamp) for who, row in scores.items() for k, s in enumerate(row)]
    ratings.append(Rating("d", "i9", "S", 5, "ann", stamp))  # a unit judged once: no part of alpha
    metric = pd.DataFrame({"item_id": ["i0", "i1", "i2", "i3"], "system": "S", "score": [0.1, 0.2, 0.15, 0.9]})
    result = rating_agreement(ratings, metric)
    matrix = np.array([scores["ann"] + [5], scores["bob"] + [np.nan], scores["eve"] + [np.nan]], dtype=float)
    assert result.level == "interval" and result.metric_measure == "kendall_tau_b"
    assert (result.units, result.shared_units) == (5, 4)
    assert result.alpha == pytest.approx(krippendorff.alpha(reliability_data=matrix, level_of_measurement="interval"), abs=1e-12)
    ann = result.per_annotator[0]
    others_mean = np.array([1.5, 2.5, 3.0, 4.5])
    assert ann.with_others == pytest.approx(
        krippendorff.alpha(reliability_data=np.vstack([[1, 2, 3, 4], others_mean]), level_of_measurement="interval"), abs=1e-12
    )
    # ann's scores 1,2,3,4 against 0.1,0.2,0.15,0.9: 5 concordant, 1 discordant pair of 6 -> tau-b 4/6.
    assert ann.with_metric == pytest.approx(4 / 6) and ann.shared_with_metric == 4


def test_a_single_annotator_has_no_agreement() -> None:
    result = comparison_agreement([Comparison("d", "i1", "A", "B", 0, "ann", "A", utc_now())])
    assert math.isnan(result.alpha) and result.shared_units == 0
    assert math.isnan(result.per_annotator[0].with_others) and result.per_annotator[0].shared_with_others == 0
