"""One rating per request from the pooled ratings (method.md §13, ``ratings_per_request="one_pooled"``):
(item, annotator) units whose pool mean is the full evaluation's, cost as the study paid, only the
pool statistics allowed, and the pool test's error rate on units that disagree by annotator."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

from prefeval_core.cli import main
from prefeval_core.data.annotators import annotator_scores
from prefeval_core.data.dataset import load_dataset
from prefeval_core.errors import SettingsError, UnknownNameError
from prefeval_core.protocol import build_study_table
from prefeval_core.protocol.annotator_units import UNIT_MARK, pooling_problem
from prefeval_core.protocol.question_control import full_differences
from prefeval_core.protocol.run import replay_source, run_protocol
from prefeval_core.protocol.settings import ProtocolSettings, Question
from prefeval_core.protocol.state import new_state, state_from_dict, state_to_dict
from prefeval_core.vocabulary.outcomes import UNDECIDED
from prefeval_core.workflow.setup import StudySetup
from prefeval_core.workflow.study import replay_json, request_design_note, run_replay, study_table
from prefeval_core.workflow.views import win_rates_caption
from tests.data_helpers import crowd_csv, nested_csv

ANNOTATORS = ("x", "y", "z")


def _annotated_csv(ratings: dict[str, np.ndarray], mean_only: dict[str, np.ndarray], metric: dict[str, np.ndarray]) -> bytes:
    """``ratings[s]``: (items, annotators) each annotator's rating of system s; ``mean_only[s]``:
    (items,) published means; ``metric[s]``: (items,) a metric's scores."""
    rows = ["item_id,system,rater,score"]
    for system, grid in ratings.items():
        for i, row in enumerate(grid):
            rows += [f"i{i},{system},human:q:{a},{float(r)!r}" for a, r in zip(ANNOTATORS, row, strict=False)]
            rows.append(f"i{i},{system},human:q,{float(row.mean())!r}")
    rows += [f"i{i},{system},human:q,{float(v)!r}" for system, values in mean_only.items() for i, v in enumerate(values)]
    rows += [f"i{i},{system},m,{float(v)!r}" for system, values in metric.items() for i, v in enumerate(values)]
    return ("\n".join(rows) + "\n").encode()


def _small_parts() -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], dict[str, np.ndarray]]:
    rng = np.random.default_rng(0)
    ratings = {s: rng.integers(1, 6, size=(4, 3)).astype(float) for s in ("a", "b")}
    mean_only = {"c": np.array([3.0, 2.0, 4.5, 1.0])}
    metric = {s: rng.random(4).round(3) for s in ("a", "b", "c")}
    return ratings, mean_only, metric


def _small_dataset():  # type: ignore[no-untyped-def]
    ratings, mean_only, metric = _small_parts()
    return load_dataset([("r.csv", _annotated_csv(ratings, mean_only, metric))]), ratings, mean_only


def test_units_keep_the_full_evaluation_and_what_the_study_paid() -> None:
    dataset, ratings, mean_only = _small_dataset()
    full = build_study_table(dataset, "human:q", ["m"])
    units = build_study_table(dataset, "human:q", ["m"], ratings_per_request="one_pooled", seed=1)
    assert units.annotator_units and not full.annotator_units
    assert units.items == tuple(f"i{i}{UNIT_MARK}{a}" for i in range(4) for a in ANNOTATORS)
    assert units.pairs == full.pairs and units.cost_available() == full.cost_available() == 3 * 4 * 3
    assert units.grid is not None and units.grid.cost[units.grid.requestable].tolist() == [1] * 36
    a, c = units.systems.index("a"), units.systems.index("c")
    assert units.grid.scores[a].tolist() == ratings["a"].ravel().tolist()  # annotator x, y, z of item 0, then item 1, ...
    assert units.grid.scores[c].tolist() == np.repeat(mean_only["c"], 3).tolist()  # the mean in each annotator's place
    # the pool's mean difference is the full evaluation's, pair by pair
    assert np.allclose(np.nanmean(full_differences(units), axis=1), np.nanmean(full_differences(full), axis=1), atol=1e-12)
    # a metric's outcome on an item is its outcome on each of the item's units
    assert np.bincount(units.metrics[:, 0] + 1, minlength=4).tolist() == (3 * np.bincount(full.metrics[:, 0] + 1, minlength=4)).tolist()


def test_units_need_annotators_a_replay_and_a_pool_statistic() -> None:
    dataset, _, _ = _small_dataset()
    plain = load_dataset([("r.csv", b"item_id,system,rater,score\ni0,a,human:q,3\ni0,b,human:q,2\ni1,a,human:q,1\ni1,b,human:q,4\n")])
    with pytest.raises(SettingsError, match="no annotators of 'human:q' apart"):
        build_study_table(plain, "human:q", ratings_per_request="one_pooled")
    with pytest.raises(SettingsError, match="needs a replay of ratings"):
        build_study_table(dataset, "human:q", ratings_per_request="one_pooled", unit="comparisons")
    table = build_study_table(dataset, "human:q", ratings_per_request="one_pooled")
    settings = ProtocolSettings(
        budget=36, batch=2, question=Question(), unit="ratings", futility=None, model="human_only", error_control="question",
        statistic="mean",
    )  # fmt: skip
    with pytest.raises(SettingsError, match="annotators' ratings of the same outputs"):
        new_state(table, settings)
    # a saved state whose statistic was edited to one that treats the units as independent is refused too
    state = new_state(table, dataclasses.replace(settings, statistic="pool_mean"))
    saved = state_to_dict(state)
    saved["settings"]["statistic"] = "mean"
    with pytest.raises(SettingsError, match="annotators' ratings of the same outputs"):
        state_from_dict(saved, table)


def test_a_crowd_is_split_into_places_so_each_unit_covers_its_item() -> None:
    """Workers nested in outputs: an annotator's unit would hold a few of the item's outputs and a
    pair's pool only the items where one worker rated both systems; the k-th rating of each output
    (a place) keeps every output in every unit, and the full evaluation's mean difference."""
    dataset = load_dataset([("crowd.csv", crowd_csv())])
    assert pooling_problem(dataset, "human:q") is None
    full = build_study_table(dataset, "human:q")
    units = build_study_table(dataset, "human:q", ratings_per_request="one_pooled")
    assert units.items == tuple(f"i{i}{UNIT_MARK}#{k}" for i in sorted(range(12), key=str) for k in (1, 2, 3))
    differences = full_differences(units)
    assert not np.isnan(differences).any()  # every pair has every unit: 36, not the few one worker rated twice
    assert np.allclose(np.nanmean(differences, axis=1), np.nanmean(full_differences(full), axis=1), atol=1e-12)
    assert units.cost_available() == full.cost_available() == 12 * 3 * 3
    assert study_table(dataset, StudySetup(human="human:q")).ratings_per_request == "one_pooled"


def test_a_file_with_an_annotator_column_costs_every_rating_and_buys_one_at_a_time() -> None:
    """The usual long format (``item_id, system, rater, annotator, score``, rater ``human``): the
    study paid each annotator's rating, and a replay buys one at a time as with named sub-raters."""
    named = load_dataset([("crowd.csv", crowd_csv())])
    rows = named.ratings[named.ratings["rater"].str.startswith("human:q:")]
    long = "item_id,system,rater,annotator,score\n" + "".join(
        f"{r.item_id},{r.system},human,{r.rater.split(':')[-1]},{r.score!r}\n" for r in rows.itertuples()
    )
    dataset = load_dataset([("long.csv", long.encode())])
    assert dataset.human_raters == ("human",)
    table = study_table(dataset, StudySetup(human="human"))
    assert table.ratings_per_request == "one_pooled" and table.cost_available() == 12 * 3 * 3
    by_name = study_table(named, StudySetup(human="human:q"))
    assert np.allclose(np.nanmean(full_differences(table), axis=1), np.nanmean(full_differences(by_name), axis=1), atol=1e-12)


def test_experts_crossed_with_the_systems_keep_their_names() -> None:
    dataset, _, _ = _small_dataset()
    units = build_study_table(dataset, "human:q", ratings_per_request="one_pooled")
    assert {item.split(UNIT_MARK)[1] for item in units.items} == set(ANNOTATORS)


def test_outputs_rated_unequally_often_are_not_split_into_units() -> None:
    dataset = load_dataset([("crowd.csv", crowd_csv(uneven=True))])
    problem = pooling_problem(dataset, "human:q")
    assert problem is not None and "rated 2 to 3 times (item 'i5', system 'b': 2)" in problem
    with pytest.raises(SettingsError, match="would weigh them unequally") as refused:
        build_study_table(dataset, "human:q", ratings_per_request="one_pooled")
    assert refused.value.problems[0].column == "ratings_per_request"
    assert study_table(dataset, StudySetup(human="human:q")).ratings_per_request == "all"  # the default buys the mean


def test_a_replay_says_why_it_bought_every_rating_at_once_where_counts_are_unequal(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    uneven, even = tmp_path / "uneven.csv", tmp_path / "even.csv"
    uneven.write_bytes(crowd_csv(uneven=True))
    even.write_bytes(crowd_csv())
    argv = ["replay", "--human", "human:q", "--question", "top-k", "--data"]
    report = tmp_path / "report.html"
    assert main([*argv, str(uneven), "--report", str(report)]) == 0
    said = capsys.readouterr().out
    assert "a request bought all annotators' judgments at once, not one at a time: the outputs of 'human:q' were rated 2 to 3" in said
    settings = report.read_text(encoding="utf-8").split("<h2>Settings</h2>")[1]  # the report a lead sends says it too
    assert "<td>a request bought</td>" in settings and "all annotators' judgments at once, not one at a time: the outputs of" in settings
    assert main([*argv, str(even)]) == 0
    said = capsys.readouterr().out
    assert "not one at a time" not in said and "a request bought one annotator's rating" in said
    assert main([*argv, str(uneven), "--ratings-per-request", "all"]) == 0  # asked for: nothing to explain
    assert "not one at a time" not in capsys.readouterr().out
    dataset = load_dataset([("crowd.csv", crowd_csv(uneven=True))])
    mean_statistic = StudySetup(human="human:q", statistic="mean")  # its default is all whatever the counts
    assert request_design_note(dataset, mean_statistic) is None


def test_a_misspelt_metric_is_named_against_every_rater_of_the_data() -> None:
    # the units keep only the raters a study names: the name is checked before, against the whole data
    dataset, _, _ = _small_dataset()
    with pytest.raises(UnknownNameError, match=r"no rater named 'n' in the data; known raters: human:q, .*, m$"):
        build_study_table(dataset, "human:q", ["n"], ratings_per_request="one_pooled")


def test_an_item_published_only_as_means_gets_as_many_unnamed_units_as_were_paid() -> None:
    extra = b"".join(f"i9,{s},human:q,{v}\n".encode() for s, v in (("a", 2.0), ("b", 4.0), ("c", 3.0)))
    dataset = load_dataset([("r.csv", _annotated_csv(*_small_parts()) + extra)])
    full = build_study_table(dataset, "human:q")
    units = build_study_table(dataset, "human:q", ratings_per_request="one_pooled")
    assert units.items[-3:] == tuple(f"i9{UNIT_MARK}#{p}" for p in (1, 2, 3))  # three experts rated every output
    assert units.cost_available() == full.cost_available() == 3 * 5 * 3
    assert np.allclose(np.nanmean(full_differences(units), axis=1), np.nanmean(full_differences(full), axis=1), atol=1e-12)


def test_a_study_setup_with_units_names_what_it_needs() -> None:
    pooled = StudySetup(human="human:q", ratings_per_request="one_pooled", statistic="pool_mean", error_control="question")
    assert pooled.ratings_per_request == "one_pooled"
    with pytest.raises(SettingsError, match="only pool_mean or pool_mean_clt") as refused:
        pooled.with_(statistic="sign", error_control="spending")
    assert refused.value.problems[0].column == "statistic"
    with pytest.raises(SettingsError, match="a live study buys 'one' or 'all'"):
        pooled.with_(mode="live", budget=100)


def test_a_replay_buys_one_rating_at_a_time_where_the_data_keep_annotators_apart() -> None:
    # The default (no ratings_per_request named): one_pooled in a replay of ratings whose annotators
    # are kept apart, under a pool statistic (the default's); all otherwise; a named design is kept.
    dataset, _, _ = _small_dataset()
    default = StudySetup(human="human:q")
    assert default.ratings_per_request is None and default.decision_statistic == "pool_mean"
    apart, not_apart = (lambda: True), (lambda: False)
    assert default.request_design(apart) == "one_pooled"
    assert default.request_design(not_apart) == "all"
    assert default.with_(statistic="mean").request_design(apart) == "all"  # units need a pool statistic
    assert default.with_(error_control="spending").request_design(apart) == "all"  # the sign statistic
    assert default.with_(unit="comparisons").request_design(apart) == "all"
    assert default.with_(mode="live", budget=100).request_design(apart) == "all"
    assert default.with_(ratings_per_request="all").request_design(apart) == "all"
    assert default.with_(ratings_per_request="one").request_design(not_apart) == "one"
    table = study_table(dataset, default)
    assert table.annotator_units and table.ratings_per_request == "one_pooled"
    assert replay_json(run_replay(table, default))["summary"]["ratings_per_request"] == "one_pooled"  # the replay says so
    assert study_table(dataset, default.with_(ratings_per_request="all")).ratings_per_request == "all"
    plain = load_dataset([("r.csv", b"item_id,system,rater,score\ni0,a,human:q,3\ni0,b,human:q,2\ni1,a,human:q,4\ni1,b,human:q,4\n")])
    assert study_table(plain, default).ratings_per_request == "all"  # nothing to pool: no error, the mean as it is


def test_the_win_rate_caption_says_units_of_one_item_are_dependent() -> None:
    # θ and the plots count each unit as an outcome: on units the caption says they are too narrow
    dataset, _, _ = _small_dataset()
    default = StudySetup(human="human:q")
    pooled = run_replay(study_table(dataset, default), default).state
    whole = run_replay(study_table(dataset, default.with_(ratings_per_request="all")), default).state
    assert "are dependent" in win_rates_caption(pooled) and "are dependent" not in win_rates_caption(whole)


def test_an_id_taken_by_an_item_is_refused() -> None:
    rows = b"item_id,system,rater,score\ni0,a,human:q:x,3\ni0,b,human:q:x,2\ni0,a,human:q,3\ni0,b,human:q,2\n"
    rows += b"i0 @ x,a,m,0.3\ni0 @ x,b,m,0.1\n"  # a metric-only item named like a unit
    with pytest.raises(SettingsError, match="already an item id"):
        build_study_table(load_dataset([("r.csv", rows)]), "human:q", ["m"], ratings_per_request="one_pooled")


def test_the_pool_test_on_units_keeps_its_level_where_annotators_disagree() -> None:
    """Two systems whose full-evaluation mean difference is exactly 0 over 20 items x 3 annotators,
    although annotator x always prefers a and y and z prefer b on most items: the units of an item are
    far from independent. Over 200 seeded orders the pool_mean test decides a direction in at most
    γ + 2 MC s.e. of the runs (its validity rests on the order alone)."""
    rng = np.random.default_rng(4)
    items = 20
    b = rng.integers(2, 5, size=(items, 3)).astype(float)
    shift = np.tile([2.0, -1.0, -1.0], (items, 1))  # x favours a by 2, y and z favour b by 1: mean 0 on every item
    ratings = {"a": b + shift, "b": b}
    dataset = load_dataset([("r.csv", _annotated_csv(ratings, {}, {}))])
    table = build_study_table(dataset, "human:q", ratings_per_request="one_pooled")
    runs, false = 200, 0
    for seed in range(runs):  # the seed draws the order of the 60 units
        settings = ProtocolSettings(
            budget=table.cost_available(), batch=3, seed=seed, question=Question(), unit="ratings", model="human_only",
            error_control="question", statistic="pool_mean", futility=None,
        )  # fmt: skip
        state = run_protocol(new_state(table, settings), replay_source(table))
        false += int(state.status.decision[0] != UNDECIDED)  # the pool's difference is 0: any direction is false
    assert false / runs <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / runs), false


def test_the_pool_test_on_places_keeps_its_level_in_acrowd_csv() -> None:
    """The same for places: a crowd whose workers differ for each output, two systems with an
    exactly tied full evaluation (mean 0 on every item) although the first place of system a is
    always its most lenient worker (+2) and the others -1: over 200 seeded orders of the 60 places,
    pool_mean decides a direction in at most γ + 2 MC s.e. of the runs."""
    rng = np.random.default_rng(6)
    workers: dict[tuple[int, str], dict[str, float]] = {}
    for item in range(20):
        base = float(rng.integers(2, 4))
        workers[(item, "a")] = {"w0": base + 2, "w5": base - 1, "w9": base - 1}  # w0 sorts first: place #1
        workers[(item, "b")] = {f"w{w}": base for w in (1, 2, 3)}
    dataset = load_dataset([("crowd.csv", nested_csv(workers))])
    table = build_study_table(dataset, "human:q", ratings_per_request="one_pooled")
    assert table.items[:3] == ("i0 @ #1", "i0 @ #2", "i0 @ #3")
    runs, false = 200, 0
    for seed in range(runs):
        settings = ProtocolSettings(
            budget=table.cost_available(), batch=3, seed=seed, question=Question(), unit="ratings", model="human_only",
            error_control="question", statistic="pool_mean", futility=None,
        )  # fmt: skip
        state = run_protocol(new_state(table, settings), replay_source(table))
        false += int(state.status.decision[0] != UNDECIDED)
    assert false / runs <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / runs), false


def test_summeval_units_cost_what_the_study_paid_and_mean_what_it_found(summeval) -> None:  # type: ignore[no-untyped-def]
    dataset = summeval
    full = build_study_table(dataset, "human:relevance")
    units = build_study_table(dataset, "human:relevance", ratings_per_request="one_pooled")
    assert len(units.items) == 300 and units.cost_available() == full.cost_available() == 4800
    # the published means have 3 decimals: the units' mean differs from them by rounding only
    assert np.allclose(np.nanmean(full_differences(units), axis=1), np.nanmean(full_differences(full), axis=1), atol=1e-6)


def test_wmt20_has_no_annotators_to_pool(shared_data: Path) -> None:
    """WMT20's DA columns beside the MQM score equal it on one output by chance: not annotators."""
    dataset = load_dataset(shared_data / "wmt20_ende_mqm")
    assert annotator_scores(dataset.ratings, "human").empty
    with pytest.raises(SettingsError, match="no annotators of 'human' apart"):
        build_study_table(dataset, "human", ratings_per_request="one_pooled")
