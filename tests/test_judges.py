"""Judges side by side on SummEval (three LLM judges, three experts kept apart) and on tiny grids."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from prefeval_core.data.dataset import Dataset
from prefeval_core.diagnostics.judges import judge_figures, verdict
from prefeval_core.workflow.judges import compare_judges, judges_frame

JUDGES = ("gpt-4-0314-rts:relevance", "gpt-3.5-turbo-0301-rts:relevance", "llama-2-70b-chat-hf-rts:relevance")


def test_a_perfect_judge_and_a_reversed_one() -> None:
    reference = np.array([[3.0, 2.0, 5.0], [2.0, 2.0, 4.0], [1.0, 1.0, 1.0]])
    same = judge_figures("same", "abc", reference, reference * 10, k=1)
    assert (same.sample_accuracy, same.system_accuracy, same.kendall_tau, same.inversions, same.moved) == (1.0, 1.0, 1.0, 0, ())
    assert np.isnan(same.boundary_favi)  # no error at the boundary: Favi-Score undefined
    flipped = judge_figures("flipped", "abc", reference, -reference, k=1)
    assert flipped.system_accuracy == 0.0 and flipped.inversions == 3 and flipped.moved == ("a", "c")
    assert flipped.boundary_favi == pytest.approx(2.0)  # every error is the worst kind
    assert verdict(same, 0.9) == "use it" and verdict(flipped, 0.9) == "don't"


def test_judges_on_summeval_against_a_pandas_recount(summeval: Dataset) -> None:
    comparison = compare_judges(summeval, "human:relevance", JUDGES, k=3)
    ratings = summeval.ratings
    means = ratings[ratings["rater"].isin(("human:relevance", *JUDGES))].pivot_table(index="system", columns="rater", values="score")
    means = means.dropna()  # the systems every judge scored
    assert set(comparison.systems) == set(means.index) and len(comparison.systems) == 12
    human_top = set(means["human:relevance"].nlargest(3).index)
    for figures, word in zip(comparison.judges, comparison.verdicts, strict=True):
        human, judge = means["human:relevance"], means[figures.judge]
        agree = [np.sign(human[a] - human[b]) == np.sign(judge[a] - judge[b]) for a, b in itertools.combinations(means.index, 2)]
        assert figures.system_accuracy == pytest.approx(np.mean(agree))
        assert figures.pairs == 66 and figures.items == 1200
        assert set(figures.moved) == human_top ^ set(means[figures.judge].nlargest(3).index)
        assert word == verdict(figures, comparison.bar)
    # the experts are kept apart in SummEval: each is a reference against the other two
    assert [a.judge for a in comparison.annotators] == [f"human:relevance:expert{i}" for i in (1, 2, 3)]
    assert comparison.bar == pytest.approx(np.median([a.system_accuracy for a in comparison.annotators]))
    frame = judges_frame(comparison)
    assert list(frame["verdict"][:3]) == list(comparison.verdicts) and set(frame["verdict"][3:]) == {"reference"}
    assert "median annotator" in comparison.reference_note() and str(round(comparison.bar * 100)) in comparison.rule


def test_the_leave_one_out_reference_is_the_other_experts_mean(summeval: Dataset) -> None:
    comparison = compare_judges(summeval, "human:relevance", JUDGES[:1], k=1)
    ratings = summeval.ratings
    wide = ratings[ratings["rater"].str.startswith("human:relevance:")].pivot_table(index="system", columns="rater", values="score")
    wide = wide.loc[list(comparison.systems)]
    others = wide[["human:relevance:expert2", "human:relevance:expert3"]].mean(axis=1)
    expected = pd.Series(
        [np.sign(others[a] - others[b]) == np.sign(wide.loc[a, "human:relevance:expert1"] - wide.loc[b, "human:relevance:expert1"])
         for a, b in itertools.combinations(wide.index, 2)]
    ).mean()  # fmt: skip
    assert comparison.annotators[0].system_accuracy == pytest.approx(expected)


def test_two_judges_chosen_for_the_study_are_both_compared_by_default() -> None:
    import prefeval_core.api as pe
    from prefeval_core.workflow.judges import default_judges

    data = pe.load_sample("summeval")
    study = ("gpt-4-0314-rts:relevance", "gpt-3.5-turbo-0301-rts:relevance")
    assert default_judges(data, "human:relevance", "rougeL", study) == ("rougeL", *study)
    assert default_judges(data, "human:relevance", "rougeL") == ("rougeL", "gpt-3.5-turbo-0301-rts:relevance", "gpt-4-0314-rts:relevance")
