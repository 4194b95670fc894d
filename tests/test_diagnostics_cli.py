"""``python -m prefeval_core diagnose``: the stable JSON shape, hand-counted numbers, the HTML report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prefeval_core.cli import main
from tests.diagnostics_fixtures import TOY_CONFUSIONS, TOY_FAVI, TOY_RATINGS

PAIR_KEYS = {"system_a", "system_b", "confusion", "favi", "favi_interval", "errors", "items"}
METRIC_KEYS = {"sample_sign_accuracy", "system_sign_accuracy", "mean_abs_favi", "kendall_tau", "kendall_tau_grouped", "segments"}


def run_json(capsys, *args: str) -> dict:
    assert main(["diagnose", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_shape_and_hand_counted_values(tmp_path: Path, capsys) -> None:
    (tmp_path / "ratings.csv").write_text(TOY_RATINGS)
    out = run_json(capsys, "--data", str(tmp_path), "--human", "human:q", "--metric", "metric")
    assert set(out) == {"pairs", "systems", "metric"}
    assert set(out["metric"]) == METRIC_KEYS
    for pair in out["pairs"]:
        assert set(pair) == PAIR_KEYS
        key = (pair["system_a"], pair["system_b"])
        assert pair["confusion"] == TOY_CONFUSIONS[key]
        assert pair["favi"] == pytest.approx(TOY_FAVI[key])
        low, high = pair["favi_interval"]
        assert -2 <= low < high <= 2
    assert [p["errors"] for p in out["pairs"]] == [4, 1, 2]
    assert [p["items"] for p in out["pairs"]] == [4, 3, 3]
    assert out["systems"] == {"X": [-0.5, -1.0], "Y": [0.5, -0.5], "Z": [1.0, 0.5]}
    assert out["metric"]["sample_sign_accuracy"] == pytest.approx(0.3)
    assert out["metric"]["system_sign_accuracy"] == 0.0
    assert out["metric"]["segments"] == 11


def test_identical_metric_gives_null_favi(tmp_path: Path, capsys) -> None:
    body = TOY_RATINGS.split("\n", 1)[1]
    (tmp_path / "ratings.csv").write_text(TOY_RATINGS + body.replace("human:q", "copy").replace(",metric,", ",skip,"))
    out = run_json(capsys, "--data", str(tmp_path), "--human", "human:q", "--metric", "copy")
    assert all(p["favi"] is None and p["errors"] == 0 for p in out["pairs"])
    assert out["metric"]["mean_abs_favi"] is None
    assert out["metric"]["sample_sign_accuracy"] == 1.0 and out["metric"]["system_sign_accuracy"] == 1.0
    assert out["systems"] == {"X": [], "Y": [], "Z": []}


def test_seed_makes_intervals_repeatable(tmp_path: Path, capsys) -> None:
    (tmp_path / "ratings.csv").write_text(TOY_RATINGS)
    args = ("--data", str(tmp_path), "--human", "human:q", "--metric", "metric", "--seed", "5", "--samples", "300")
    assert run_json(capsys, *args) == run_json(capsys, *args)


@pytest.mark.golden
def test_pandalm_json_and_html(shared_data: Path, tmp_path: Path, capsys) -> None:
    html = tmp_path / "pandalm.html"
    out = run_json(capsys, "--data", str(shared_data / "pandalm"), "--human", "human", "--metric", "gpt-3.5-turbo", "--html", str(html))
    assert len(out["pairs"]) == 10
    assert sum(p["items"] for p in out["pairs"]) == 974  # the judge's 974 labelled pairs
    assert out["metric"]["kendall_tau"] is None and out["metric"]["segments"] is None  # pairwise raters
    assert sum(len(v) for v in out["systems"].values()) == 2 * sum(p["favi"] is not None for p in out["pairs"])
    assert html.stat().st_size > 1_000_000 and "Plotly.newPlot" in html.read_text(encoding="utf-8")


def test_text_output_and_errors(tmp_path: Path, capsys) -> None:
    (tmp_path / "ratings.csv").write_text(TOY_RATINGS)
    assert main(["diagnose", "--data", str(tmp_path), "--human", "human:q", "--metric", "metric"]) == 0
    text = capsys.readouterr().out
    assert "sample-level sign accuracy 0.300" in text and "X vs Y" in text and "-0.50" in text
    assert main(["diagnose", "--data", str(tmp_path), "--human", "human:q", "--metric", "nope", "--json"]) == 1
    assert "no rater named 'nope'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:  # a bad option is a usage error from argparse: exit 2, one line
        main(["diagnose", "--data", str(tmp_path), "--human", "human:q", "--metric", "metric", "--eps", "-1"])
    assert exit_.value.code == 2 and "argument --eps" in capsys.readouterr().err
