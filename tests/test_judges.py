"""Judges side by side on SummEval (three LLM judges, three experts kept apart) and on tiny grids."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from prefeval_core.data.dataset import Dataset, load_dataset
from prefeval_core.diagnostics.judges import DEFAULT_BAR, judge_figures, verdict
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


def _crowd_with_a_judge(rng: np.random.Generator) -> bytes:
    """Six systems of quality 0..5 on 40 items, each output rated by 3 of 12 workers (others for
    each output) in a ratings file's annotator column, and a judge that follows the quality."""
    rows = ["item_id,system,rater,annotator,score"]
    for item in range(40):
        for system in range(6):
            rows += [f"i{item},s{system},human,w{w},{system + rng.normal():.3f}" for w in rng.choice(12, size=3, replace=False)]
            rows.append(f"i{item},s{system},judge,,{system + rng.normal():.3f}")
    return ("\n".join(rows) + "\n").encode()


def test_a_crowd_s_single_annotator_is_one_rating_of_each_output() -> None:
    dataset = load_dataset([("crowd.csv", _crowd_with_a_judge(np.random.default_rng(2)))])
    comparison = compare_judges(dataset, "human", ("judge",), k=1)
    # 12 workers who each rated a quarter of the outputs would be no single annotator: three places are
    assert [a.judge for a in comparison.annotators] == ["human:#1", "human:#2", "human:#3"]
    assert all(a.items == 40 * 6 for a in comparison.annotators)
    assert "nested in outputs" in comparison.reference_note()


def test_a_second_human_score_is_no_annotator(shared_data: Path) -> None:
    wmt20 = load_dataset(shared_data / "wmt20_ende_mqm")  # human:wmt_da_raw and _z are DA scores, not the MQM raters
    comparison = compare_judges(wmt20, "human", ("chrF-refA",), k=1)
    assert comparison.annotators == () and comparison.bar == DEFAULT_BAR
