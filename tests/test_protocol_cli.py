"""``replay`` and ``reproduce`` commands: JSON shapes on tiny data, one short real-data run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prefeval_core.cli import main

ERROR_TYPES = {"correct_significant", "correct_undecided", "inversion", "omission", "insertion"}


def write_tiny(folder: Path) -> Path:
    """Three systems, 30 items: x beats y and z for the human; y and z tie; the metric agrees except on ties."""
    rows = ["item_id,system,rater,score"]
    for item in range(30):
        human = {"x": 3, "y": 1, "z": 1}
        metric = {"x": 0.9, "y": 0.5 + 0.01 * (item % 3), "z": 0.5 + 0.01 * ((item + 1) % 3)}
        for system in "xyz":
            rows.append(f"i{item},{system},human,{human[system]}")
            rows.append(f"i{item},{system},metric,{metric[system]}")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ratings.csv").write_text("\n".join(rows) + "\n")
    return folder


def run_json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_replay_human_only_json_shape(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_tiny(tmp_path / "tiny")
    argv = ["replay", "--data", str(data), "--human", "human", "--budget", "40", "--batch", "5", "--json"]
    output = run_json(capsys, [*argv, "--error-control", "none", "--cost-unit", "comparisons"])
    pairs = {(p["system_a"], p["system_b"]): p for p in output["pairs"]}
    assert set(pairs) == {("x", "y"), ("x", "z"), ("y", "z")}
    # x > y on all 30 items: 5 outcomes give theta = 1 - 2**-6 > 0.975, decided in round 1
    assert pairs["x", "y"]["outcome"] == ">" and pairs["x", "y"]["human_used"] == 5
    assert pairs["x", "y"]["theta"] == pytest.approx(1 - 2.0**-6)
    assert pairs["y", "z"]["outcome"] == "=" and pairs["y", "z"]["human_reference"] == "="
    assert all(p["error_type"] in ERROR_TYPES for p in output["pairs"])
    summary = output["summary"]
    assert summary["human_used"] <= 40 and summary["human_available"] == 90
    assert summary["annotation_fraction"] == pytest.approx(summary["human_used"] / 90)
    for key in ("correct", "inversion", "omission", "insertion", "annotation_fraction"):
        assert 0.0 <= summary[key] <= 1.0
    assert summary["settings"]["model"] == "human_only" and summary["settings"]["budget"] == 40
    assert {"kld", "rounds", "wall_s"} <= set(summary)
    controlled = run_json(capsys, argv)  # the default: ratings, the whole answer protected, the pool's mean difference
    settings = controlled["summary"]["settings"]
    assert controlled["summary"]["cost_unit"] == "ratings" and (settings["error_control"], settings["statistic"]) == (
        "question",
        "pool_mean",
    )
    per_pair = run_json(capsys, [*argv, "--error-control", "spending"])["summary"]["settings"]  # the per-pair rule's own statistic
    assert (per_pair["error_control"], per_pair["statistic"]) == ("spending", "sign")
    assert {(p["system_a"], p["system_b"]): p["outcome"] for p in controlled["pairs"]}["x", "y"] == ">"


def test_reproduce_json_shape_with_the_ideal_metric(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_tiny(tmp_path / "tiny")
    output = run_json(
        capsys, ["reproduce", "--data", str(data), "--human", "human", "--metrics", "", "--seeds", "2", "--batch", "10", "--json"]
    )
    assert [row["metric"] for row in output["protocol"]] == ["human only", "ideal"]
    assert [row["metric"] for row in output["naive"]] == ["ideal"]
    assert [(run["metric"], run["seed"]) for run in output["runs"]] == [("human only", 0), ("human only", 1), ("ideal", 0), ("ideal", 1)]
    human_only = output["protocol"][0]
    assert human_only["seeds"] == 2 and set(human_only["correct"]) == {"mean", "sd", "min", "max"}
    assert output["settings"]["budget"] == "all"


@pytest.mark.golden
def test_replay_summeval_relevance_human_only(shared_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The paper's human-only row for SummEval relevance (Table 3: Corr. 0.95, Ann. 0.43): exact model, N = 10,
    pair by pair (round 2's per-pair spending); the same protocol counted in ratings touches every one of the
    1,600 ratings (method.md §12)."""
    base = ["replay", "--data", str(shared_data / "summeval"), "--human", "human:relevance", "--seed", "0", "--json"]
    summary = run_json(capsys, [*base, "--cost-unit", "comparisons", "--error-control", "spending"])["summary"]
    assert summary["human_available"] == 120 * 100
    assert summary["inversion"] == 0.0
    assert summary["correct"] > 0.85
    assert 0.35 < summary["annotation_fraction"] < 0.55
    assert summary["cost_unit"] == "comparisons" and summary["cost_fraction"] == summary["annotation_fraction"]
    ratings = run_json(capsys, [*base, "--error-control", "none"])["summary"]
    # 1,200 scores are the mean of three experts the data keep apart (3 ratings each); the other 400
    # are published only as that mean, but the same three experts rated them: 4,800 in all (method.md §13)
    assert (ratings["cost_unit"], ratings["cost_available"]) == ("ratings", 1600 * 3)
    assert ratings["cost_used"] == ratings["cost_available"] and ratings["stop_reason"] == "exhausted"
    top = run_json(capsys, [*base, "--question", "top-k", "--k", "1", "--error-control", "spending"])["summary"]
    assert top["reference_answer"] == ["M0", "M17", "M22", "M23"] and top["false_exclusions"] == 0
    assert top["cost_fraction"] < 0.45


def test_replay_in_lines_a_tier_question_by_system_the_others_by_pair(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_tiny(tmp_path / "tiny")
    base = ["replay", "--data", str(data), "--human", "human", "--batch", "5"]
    assert main([*base, "--question", "top-k", "--k", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    systems = [line.split()[0] for line in lines[:3]]
    assert sorted(systems) == ["x", "y", "z"] and [line.split()[1] for line in lines[:3]] == ["sure", "out", "out"]
    assert [" ruled out after round " in line for line in lines[:3]] == [False, True, True]  # when, and at what cost
    assert not any("omission" in line or "reference >" in line for line in lines)  # no pair verdicts: the answer rules systems out
    assert lines[-2].startswith("reference tier: ") and lines[-1].startswith("pair outcomes ")
    assert main(base) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("x ") and " theta " in lines[0] and lines[-1].startswith("correct ")


def test_replay_writes_the_study_report_and_names_a_file_it_cannot_write(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_tiny(tmp_path / "tiny")
    base = ["replay", "--data", str(data), "--human", "human", "--batch", "5", "--question", "top-k", "--json"]
    report = tmp_path / "report.html"
    assert main([*base, "--report", str(report)]) == 0
    captured = capsys.readouterr()
    html = report.read_text(encoding="utf-8")
    assert json.loads(captured.out)["summary"]["answer_words"] in html  # the answer in names, as the run printed it
    assert "<h2>Leaderboard</h2>" in html and f"report written to {report}" in captured.err
    missing = tmp_path / "no such folder" / "report.html"
    assert main([*base, "--report", str(missing)]) == 1
    error = capsys.readouterr().err
    assert str(missing) in error and "cannot write the file" in error and "Traceback" not in error


def test_replay_says_how_the_judge_entered_the_decisions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_tiny(tmp_path / "tiny")
    base = ["replay", "--data", str(data), "--human", "human", "--batch", "5", "--question", "top-k"]
    for options, why in (
        ([], "the judge does not enter"),  # the default: the exact pool test of the human differences
        (["--statistic", "pool_mean_clt"], "control variate"),
        (["--error-control", "none", "--statistic", "sign"], "enter the posterior that decides each pair"),
    ):
        assert main([*base, "--metric", "metric", *options]) == 0
        said = [line for line in capsys.readouterr().out.splitlines() if line.startswith("the judge (metric): ")]
        assert len(said) == 1 and why in said[0], (options, said)
        assert run_json(capsys, [*base, "--metric", "metric", *options, "--json"])["summary"]["judge_role"] in said[0]
    assert main(base) == 0
    assert "the judge" not in capsys.readouterr().out  # human only: nothing to say
    assert run_json(capsys, [*base, "--json"])["summary"]["judge_role"] is None


def test_replay_of_pandalm_buys_one_annotators_comparison_when_asked(shared_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["replay", "--data", str(shared_data / "pandalm"), "--human", "human", "--question", "top-k", "--json"]
    every = run_json(capsys, base)["summary"]
    one = run_json(capsys, [*base, "--ratings-per-request", "one"])["summary"]
    assert every["ratings_per_request"] == "all" and one["ratings_per_request"] == "one"
    assert every["cost_available"] == one["cost_available"] == 3 * 999  # three annotators compared each pair of outputs
    assert every["cost_used"] == 3 * every["human_used"]  # every annotator of a revealed comparison at once
    assert one["cost_used"] == one["human_used"] < every["cost_used"]  # one annotator's comparison per request
    assert main([*base[:-1], "--ratings-per-request", "one"]) == 0
    assert "a request bought one annotator's judgment (rotated)" in capsys.readouterr().out
    assert main(base[:-1]) == 0  # the default buys every annotator's comparison, and says what else it could buy
    assert "a request bought all annotators' judgments at once (up to 3 comparisons" in capsys.readouterr().out


def test_a_run_stopped_by_its_round_limit_says_the_futility_stop_was_not_why(capsys: pytest.CaptureFixture[str]) -> None:
    sample = str(Path(__file__).resolve().parents[1] / "sample_data" / "summeval")
    assert main(["replay", "--data", sample, "--human", "human:relevance", "--max-rounds", "2"]) == 0
    out = capsys.readouterr().out
    assert "pairs open before the run stopped (max_rounds): judging them" in out
    assert main(["replay", "--data", sample, "--human", "human:relevance"]) == 0
    out = capsys.readouterr().out
    assert "(futile)" in out
    assert "the futility stop left " in out and "before the run stopped" not in out
