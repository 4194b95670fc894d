"""The notebook API (issue 12 part 4): DataFrames in and out, the same numbers as the CLI.

Each verb is checked against the CLI command it shares its layer with (``replay``, ``diagnose``,
``decide``, ``studies``), on hand-counted toy data, and on bad input (typed errors naming the
frame, row and column).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import prefeval_core as pe
from prefeval_core import api
from prefeval_core.cli import main
from prefeval_core.data.dataset import load_dataset
from prefeval_core.errors import BadValueError, DataError, MalformedFileError, MissingColumnError, SettingsError, UnknownNameError
from prefeval_core.store import open_store
from prefeval_core.workflow import StudySetup
from prefeval_core.workflow.session import DataChoice
from prefeval_core.workflow.studies import begin_study
from tests.diagnostics_fixtures import TOY_CONFUSIONS, TOY_HUMAN_ALL, TOY_RATINGS

ROOT = Path(__file__).resolve().parents[1]
SUMMEVAL = ROOT / "sample_data" / "summeval"


@pytest.fixture(scope="module")
def summeval() -> pe.Dataset:
    return pe.load_sample("summeval")


@pytest.fixture
def toy(tmp_path: Path) -> pe.Dataset:
    (tmp_path / "ratings.csv").write_text(TOY_RATINGS)
    return pe.load(tmp_path / "ratings.csv")


def cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


# --- the top level -----------------------------------------------------------------------------


def test_verbs_are_at_the_top_level_and_imported_on_first_use() -> None:
    assert set(pe._API) <= set(pe.__all__)
    for name in pe._API:
        assert getattr(pe, name) is getattr(api, name)
        assert name in dir(pe)
    with pytest.raises(AttributeError, match="no_such_verb"):
        pe.no_such_verb  # noqa: B018
    probe = "import sys, prefeval_core; print('jax' in sys.modules, 'prefeval_core.api' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.split() == ["False", "False"]  # `import prefeval_core` stays light


def test_dataset_repr_is_one_line(summeval: pe.Dataset) -> None:
    text = repr(summeval)
    assert "\n" not in text and len(text) < 300
    assert text.startswith("<Dataset summeval: 16 systems, 100 items, 17 raters (human: human:coherence")


# --- load --------------------------------------------------------------------------------------


def test_dataframes_load_as_the_files_do(summeval: pe.Dataset) -> None:
    frames = pe.load(ratings=summeval.ratings, texts=summeval.texts, sources=summeval.sources, references=summeval.references)
    for attribute in ("ratings", "texts", "sources", "references"):
        pd.testing.assert_frame_equal(getattr(frames, attribute), getattr(summeval, attribute), check_dtype=False)
    assert frames.name == "dataframes" and frames.systems == summeval.systems and frames.raters == summeval.raters


def test_paths_and_keyword_paths_load_as_load_dataset() -> None:
    folder = pe.load(SUMMEVAL)
    pd.testing.assert_frame_equal(folder.ratings, load_dataset(SUMMEVAL).ratings)
    by_keyword = pe.load(ratings=SUMMEVAL / "ratings.csv.gz", texts=SUMMEVAL / "texts.csv.gz", name="mine")
    pd.testing.assert_frame_equal(by_keyword.ratings, folder.ratings)
    pd.testing.assert_frame_equal(by_keyword.texts, folder.texts)
    assert by_keyword.name == "mine"


def test_wide_and_pairwise_frames_and_mixed_types() -> None:
    wide = pd.DataFrame({"item_id": [1, 1, 2, 2], "system": ["a", "b", "a", "b"], "human": [3, 1, 2, 2], "bleu": [0.5, 0.25, None, 0.1]})
    data = pe.load(ratings=wide)
    assert set(data.raters) == {"human", "bleu"} and data.items == ("1", "2")
    assert len(data.ratings) == 7  # the missing bleu score is no rating
    prefs = pd.DataFrame({"item_id": ["x", 2], "system_a": ["b", "a"], "system_b": ["a", "b"], "rater": "human", "label": ["A", "tie"]})
    pairwise = pe.load(preferences=prefs)  # item ids of mixed types are read as text
    outcomes = dict(zip(pairwise.preferences["item_id"], pairwise.preferences["outcome"], strict=True))
    assert outcomes == {"x": 2, "2": 1}  # canonical order (a, b): "A" (system_a = b) better is "<"


def test_a_bad_cell_names_the_frame_row_and_column() -> None:
    ratings = pd.DataFrame({"item_id": ["i1", "i1", "i2"], "system": ["a", "b", "a"], "rater": "human", "score": [1.0, "high", 2.0]})
    with pytest.raises(BadValueError) as error:
        pe.load(ratings=ratings)
    (problem,) = error.value.problems
    assert (problem.file, problem.row, problem.line, problem.column) == ("ratings", 2, None, "score")
    assert "high" in problem.message


def test_missing_and_repeated_columns_are_named() -> None:
    with pytest.raises(MissingColumnError) as missing:
        pe.load(texts=pd.DataFrame({"item_id": ["i1"], "system": ["a"]}))
    assert any(p.file == "texts" and p.column == "output" for p in missing.value.problems)
    repeated = pd.DataFrame([["i1", "a", "human", 1, 2]], columns=["item_id", "system", "rater", "score", "score"])
    with pytest.raises(MalformedFileError) as twice:
        pe.load(ratings=repeated)
    assert twice.value.problems[0].column == "score" and twice.value.problems[0].file == "ratings"


def test_load_needs_data_of_a_known_type() -> None:
    with pytest.raises(SettingsError, match="give data"):
        pe.load()
    with pytest.raises(SettingsError, match="ratings= takes a DataFrame or a file path, got int"):
        pe.load(ratings=3)


def test_samples_are_the_bundled_ones() -> None:
    assert {"summeval", "pandalm", "wmt21_ted"} <= set(pe.samples())
    with pytest.raises(DataError, match="no bundled sample named 'nope'"):
        pe.load_sample("nope")


# --- pair counts and decide -------------------------------------------------------------------


def test_pair_counts_are_the_hand_counted_ones(toy: pe.Dataset) -> None:
    frame = pe.pair_counts(toy, "human:q", "metric").set_index(["system_a", "system_b"])
    assert list(frame.columns) == list(api.COUNT_COLUMNS)
    for pair, confusion in TOY_CONFUSIONS.items():
        row = frame.loc[pair]
        assert row[list(api.K_COLUMNS)].tolist() == [v for r in confusion for v in r]  # rows = metric, columns = human
        assert row[list(api.N_COLUMNS)].tolist() == TOY_HUMAN_ALL[pair]
    # i4: Z has no human score, so X-Z and Y-Z have one metric-only item (X 0.1 < Z 0.5; Y 0.6 > Z 0.5)
    assert frame.loc[("X", "Z"), list(api.M_COLUMNS)].tolist() == [0, 0, 1]
    assert frame.loc[("Y", "Z"), list(api.M_COLUMNS)].tolist() == [1, 0, 0]
    assert frame.loc[("X", "Y"), list(api.M_COLUMNS)].tolist() == [0, 0, 0]
    human_only = pe.pair_counts(toy, "human:q")
    assert (human_only[list(api.K_COLUMNS + api.M_COLUMNS)] == 0).all().all()


def test_decide_exact_case_and_labels_carried() -> None:
    counts = pd.DataFrame({"pair": ["p", "q"], "n_a": [3, 0], "n_tie": [0, 0], "n_b": [0, 3]}, index=[10, 20])
    decided = pe.decide(counts, gamma=0.2)
    frame = decided.to_frame()
    # human only: theta = I_1/2(n< + 1, n> + 1) = 1 - 0.5**4 for n = (3, 0, 0)
    assert frame["theta"].tolist() == [1 - 0.5**4, 0.5**4]
    assert frame["decision"].tolist() == [">", "<"] and frame["pair"].tolist() == ["p", "q"] and list(frame.index) == [10, 20]
    assert frame[["p_a", "p_tie", "p_b"]].to_numpy()[0].tolist() == pytest.approx([4 / 6, 1 / 6, 1 / 6])
    assert decided.model == "human_only"
    assert repr(decided) == "<Decisions: 2 pairs, 1 A better, 1 B better, 0 undecided; model human_only, sampler fast, γ = 0.2>"


def test_decide_equals_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    confusion = [[30, 5, 2], [6, 3, 4], [4, 2, 44]]
    cli = cli_json(capsys, "decide", "--n", "40,10,50", "--confusion", "30,5,2;6,3,4;4,2,44", "--m", "30,10,40", "--seed", "3")
    counts = pd.DataFrame([[40, 10, 50, *[v for row in confusion for v in row], 30, 10, 40]], columns=list(api.COUNT_COLUMNS))
    row = pe.decide(counts, seed=3).to_frame().iloc[0]
    assert (row["theta"], row["decision"], row["method"]) == (cli["theta"], cli["decision"], cli["method"])
    assert [row["p_a"], row["p_tie"], row["p_b"]] == cli["p_mean"]


def test_decide_on_a_dataset_matches_the_engine_in_a_fresh_process(toy: pe.Dataset) -> None:
    """x64 is switched on for the call only: a notebook without the CLI's setup gets the same
    thetas bit for bit, and its own JAX precision back afterwards."""
    counts = pd.DataFrame([[20, 5, 15, 10, 2, 3, 2, 1, 1, 8, 2, 11, 300, 80, 260]], columns=list(api.COUNT_COLUMNS))
    here = pe.decide(counts, seed=7).to_frame()
    assert here["method"].iloc[0] == "importance"  # 640 metric-only items: the sampled route, where precision shows
    script = (
        "import sys, json, pandas as pd, prefeval_core as pe, jax\n"
        "counts = pd.read_json(sys.stdin)\n"
        "frame = pe.decide(counts, seed=7).to_frame()\n"
        "print(json.dumps([frame['theta'].iloc[0].hex(), bool(jax.config.jax_enable_x64)]))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("JAX_ENABLE_X64", "XLA_FLAGS")}
    done = subprocess.run([sys.executable, "-c", script], input=counts.to_json(), capture_output=True, text=True, cwd=ROOT, env=env)
    assert done.returncode == 0, done.stderr
    theta_hex, x64_after = json.loads(done.stdout)
    assert float.fromhex(theta_hex) == here["theta"].iloc[0] and x64_after is False


def test_decide_refuses_bad_counts_by_row_and_column() -> None:
    counts = pd.DataFrame({"n_a": [1, -1, 2.5], "n_tie": [0, 0, "x"], "n_b": [1, 1, 1]})
    with pytest.raises(DataError) as error:
        pe.decide(counts)
    assert [(p.file, p.row, p.column) for p in error.value.problems] == [("counts", 2, "n_a"), ("counts", 3, "n_a"), ("counts", 3, "n_tie")]
    with pytest.raises(DataError, match="give all of m_a, m_tie, m_b or none; missing: m_b"):
        pe.decide(pd.DataFrame({"n_a": [1], "n_tie": [0], "n_b": [1], "m_a": [1], "m_tie": [0]}))
    with pytest.raises(DataError, match="a counts frame needs n_a, n_tie, n_b"):
        pe.decide(pd.DataFrame({"m_a": [1], "m_tie": [0], "m_b": [1]}))
    with pytest.raises(SettingsError):
        pe.decide(pd.DataFrame({"n_a": [1], "n_tie": [0], "n_b": [1]}), gamma=1.5)


# --- replay --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "extra_cli", "extra_api"),
    [
        ("all-pairs", ["--budget", "600", "--error-control", "none"], {"budget": 600, "error_control": "none"}),
        ("top-k", ["--k", "2", "--batch", "20"], {"k": 2, "batch": 20}),
        ("baseline", ["--baseline", "M11"], {"baselines": "M11"}),
    ],
)
def test_replay_equals_the_cli(
    summeval: pe.Dataset, question: str, extra_cli: list[str], extra_api: dict, capsys: pytest.CaptureFixture[str]
) -> None:
    cli = cli_json(capsys, "replay", "--data", str(SUMMEVAL), "--human", "human:relevance", "--metric", "rougeL", "--seed", "4",
                   "--question", question, *extra_cli)  # fmt: skip
    run = pe.replay(summeval, "human:relevance", ["rougeL"], question=question, seed=4, **extra_api)  # type: ignore[arg-type]
    output = run.to_json()
    for shape in (output, cli):
        shape["summary"].pop("wall_s")
    assert output == cli
    frame = run.to_frame()
    assert frame.to_dict("records") == cli["pairs"]
    assert {k: v for k, v in run.summary.items() if k != "wall_s"} == cli["summary"] and run.setup.question.kind == question
    text = repr(run)
    verdict = "against the full evaluation's tier " if question == "top-k" else "correct "  # a tier question is judged by its tier
    assert "\n" not in text and text.startswith(f"<Replay on summeval: human:relevance with rougeL, {question}; {verdict}")
    assert f"{cli['summary']['cost_used']:,} of {cli['summary']['cost_available']:,} ratings" in text
    assert len(run.figure().data) > 0


def test_replay_refuses_unknown_options_and_names(summeval: pe.Dataset) -> None:
    with pytest.raises(SettingsError, match="unknown replay option"):
        pe.replay(summeval, "human:relevance", "rougeL", batchsize=3)
    with pytest.raises(SettingsError, match="unknown replay option"):
        pe.replay(summeval, "human:relevance", "rougeL", mode="live")  # a replay replays
    with pytest.raises(SettingsError):
        pe.replay(summeval, "human:relevance", "rougeL", gamma=2.0)
    with pytest.raises(UnknownNameError):
        pe.replay(summeval, "human:relevance", "no-such-metric")


# --- check_metric ----------------------------------------------------------------------------


def test_check_metric_equals_diagnose(toy: pe.Dataset, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cli = cli_json(capsys, "diagnose", "--data", str(tmp_path / "ratings.csv"), "--human", "human:q", "--metric", "metric", "--seed", "2")
    check = pe.check_metric(toy, "human:q", "metric", seed=2)
    assert json.loads(json.dumps(check.to_json())) == cli
    frame = check.to_frame().set_index(["system_a", "system_b"])
    for pair, confusion in TOY_CONFUSIONS.items():
        assert frame.loc[pair, list(api.K_COLUMNS)].tolist() == [v for r in confusion for v in r]
        assert frame.loc[pair, "items"] == sum(map(sum, confusion))
    by_pair = {(p["system_a"], p["system_b"]): p for p in cli["pairs"]}
    for pair, row in frame.iterrows():
        assert [row["favi_low"], row["favi_high"]] == by_pair[pair]["favi_interval"]
        assert (math.isnan(row["favi"]) and by_pair[pair]["favi"] is None) or row["favi"] == by_pair[pair]["favi"]
    assert check.summary == cli["metric"]
    assert repr(check).startswith("<Metric check of metric against human:q on 3 pairs: sign accuracy ")
    assert check.figure("favi") is not None and check.figure("sign") is not None


# --- studies -------------------------------------------------------------------------------------


def test_studies_and_resume_read_what_the_dashboard_records(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    choice = DataChoice.sample("wmt21_ted")
    study = begin_study(open_store(tmp_path), choice, choice.load(), StudySetup("human", unit="comparisons", batch=20), "TED check")
    listed = pe.studies(store=tmp_path)
    assert len(listed) == 1 and listed.to_frame()[["id", "name", "dataset", "rounds"]].to_dict("records") == [
        {"id": study.id, "name": "TED check", "dataset": "sample:wmt21_ted", "rounds": 0}
    ]
    assert repr(listed) == f"<1 studies:\n#{study.id} TED check [sample:wmt21_ted], 0 rounds>"
    assert len(pe.studies(store=tmp_path, data_key="sample:summeval")) == 0

    os.environ["PREFEVAL_DATA_DIR"] = str(tmp_path)
    try:
        assert main(["studies", "step", str(study.id)]) == 0  # the CLI moves it on a round
    finally:
        del os.environ["PREFEVAL_DATA_DIR"]
    capsys.readouterr()
    view = pe.resume(study.id, store=tmp_path)
    assert view.status.round == 1 and view.status.cost_used == 91 * 20
    assert len(view.to_frame()) == 91 and repr(view).startswith(f"<Study #{study.id} TED check [sample:wmt21_ted]: round 1, 1,820 of ")
    with pytest.raises(SettingsError):
        pe.resume(999, store=tmp_path)


def test_annotators_of_a_recorded_study(tmp_path: Path) -> None:
    from prefeval_core.annotation.left_right import left_right, make_comparison

    choice = DataChoice.sample("wmt21_ted")
    store = open_store(tmp_path)
    study = begin_study(store, choice, choice.load(), StudySetup("human", unit="comparisons", batch=20), "team")
    assert pe.annotators(study.id, store=tmp_path).to_frame().empty
    systems = sorted(choice.load().systems)[:3]
    judgments = []
    for k in range(30):
        for a, b in ((systems[0], systems[1]), (systems[1], systems[2])):
            left, _ = left_right(0, choice.key, f"s{k}", a, b)
            judgments.append(make_comparison(choice.key, f"s{k}", a, b, "left" if left == a else "right", "kim", left, study_id=study.id))
            judgments.append(make_comparison(choice.key, f"s{k}", a, b, "left", "lee", left, study_id=study.id))
    store.add_many(judgments)
    report = pe.annotators(study.id, store=tmp_path)
    frame = report.to_frame()
    assert frame["annotator"].tolist() == ["kim", "lee"] and frame["judgments"].tolist() == [60, 60]
    assert frame.set_index("annotator").loc["lee", "left_share"] == 1.0 and frame.set_index("annotator").loc["lee", "position_p"] < 1e-6
    assert repr(report).startswith("<Annotators: alpha on comparisons ") and repr(report).endswith("position bias at p < 0.05: lee>")
    with pytest.raises(SettingsError):
        pe.annotators(999, store=tmp_path)


def test_annotators_agree_with_the_studys_metric(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from prefeval_core.annotation.agreement import comparison_agreement
    from prefeval_core.annotation.left_right import make_comparison
    from prefeval_core.pairs.preferences import pair_outcomes

    choice = DataChoice.sample("summeval")
    dataset = choice.load()
    store = open_store(tmp_path)
    setup = StudySetup("human:relevance", metrics=("rougeL",), unit="comparisons", batch=5)
    study = begin_study(store, choice, dataset, setup, "with rougeL")
    items, pairs = sorted(dataset.ratings["item_id"].unique())[:8], [("M0", "M1"), ("M11", "M22"), ("M17", "M8")]
    rng = np.random.default_rng(0)
    judgments = [
        make_comparison(choice.key, item, a, b, str(rng.choice(["left", "right", "equal"])), who, a, study_id=study.id)
        for item in items for a, b in pairs for who in ("kim", "lee")
    ]  # fmt: skip
    store.add_many(judgments)
    report = pe.annotators(study.id, store=tmp_path)
    expected = comparison_agreement(judgments, pair_outcomes(dataset, "rougeL").frame)
    assert report.metric == "rougeL" and report.comparisons is not None
    assert [a.with_metric for a in report.comparisons.per_annotator] == pytest.approx([a.with_metric for a in expected.per_annotator])
    assert all(a.shared_with_metric == 24 for a in report.comparisons.per_annotator)
    other = pe.annotators(study.id, store=tmp_path, metric="bleu" if "bleu" in dataset.raters else dataset.metric_raters[-1])
    assert other.metric != "rougeL"
    os.environ["PREFEVAL_DATA_DIR"] = str(tmp_path)
    try:
        assert main(["studies", "agreement", str(study.id), "--metric", "no-such-metric"]) == 1
    finally:
        del os.environ["PREFEVAL_DATA_DIR"]
    assert "no-such-metric" in capsys.readouterr().err


def test_counts_frame_columns_name_each_cell_once() -> None:
    assert len(set(api.COUNT_COLUMNS)) == 15
    assert api.K_COLUMNS[1] == "k_a_tie" and api.K_COLUMNS[3] == "k_tie_a"  # row-major: rows = metric
    assert np.array(api.K_COLUMNS).reshape(3, 3)[0, 2] == "k_a_b"
