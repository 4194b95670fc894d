"""The default route keeps its guarantee where the top systems tie exactly in their own pool and the
annotators are kept apart (``tests/reliability/pool_ties.py``): a fast subset of
``bench/reliability/pool_ties.py`` (1,000 runs per cell there)."""

from __future__ import annotations

import numpy as np
import pytest

from prefeval_core.protocol.settings import Question
from tests.reliability.pool_ties import HUMAN, Design, default_route_errors, exact_pool_means, pool_tied_study

RUNS = 40


@pytest.mark.parametrize("design", ["experts", "crowd"])
def test_the_tied_systems_tie_exactly_in_the_pool_but_not_item_by_item(design: Design) -> None:
    dataset = pool_tied_study(5, design=design)
    means = exact_pool_means(dataset)
    assert np.isclose(means["s0"], means["s1"], atol=1e-9) and np.isclose(means["s0"], means["s2"], atol=1e-9)
    assert means["s0"] > means.drop(["s0", "s1", "s2"]).max()
    ratings = dataset.ratings
    published = ratings[ratings["rater"] == HUMAN].pivot(index="item_id", columns="system", values="score")
    assert (published["s0"] != published["s1"]).mean() > 0.5  # a tie of the pool, not of every item


@pytest.mark.parametrize(("design", "question"), [("experts", Question("top-k", k=1)), ("crowd", Question())])
def test_the_default_route_keeps_the_answer_within_gamma_at_an_exact_pool_tie(design: Design, question: Question) -> None:
    found = default_route_errors(RUNS, design=design, question=question, first_seed=10_000)
    assert found.designs == {"one_pooled"}  # the default buys one rating at a time here
    assert found.share <= found.bound
    assert 0.0 < found.cost < 1.0


def test_two_tied_systems_tie_exactly_in_every_annotators_comparisons() -> None:
    dataset = pool_tied_study(5, design="comparisons")
    prefs = dataset.preferences
    for annotator in (f"{HUMAN}:e0", f"{HUMAN}:e1", f"{HUMAN}:e2"):
        mine = prefs[prefs["rater"] == annotator]
        tied = mine[mine["system_a"].isin(["s0", "s1", "s2"]) & mine["system_b"].isin(["s0", "s1", "s2"])]
        assert len(tied) == 3 * 60 and (1 - tied["outcome"].astype(int)).groupby([tied["system_a"], tied["system_b"]]).sum().eq(0).all()
    apart = prefs[(prefs["system_a"] == "s0") & (prefs["system_b"] == "s7")]
    assert apart.groupby("item_id")["outcome"].nunique().gt(1).mean() > 0.3  # elsewhere the annotators disagree


@pytest.mark.parametrize("question", [Question("top-k", k=1), Question()])
def test_one_annotators_comparison_per_request_keeps_the_answer_within_gamma_at_an_exact_tie(question: Question) -> None:
    found = default_route_errors(RUNS, design="comparisons", question=question, first_seed=20_000)
    assert found.designs == {"one"}
    assert found.share <= found.bound
    assert 0.0 < found.cost < 0.5  # one comparison of the three the study paid per request
