"""``python -m prefeval_core decide``: one pair from options, many from a JSON-lines batch."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from prefeval_core.cli import main
from prefeval_core.decision import human_only_theta

ROOT = Path(__file__).resolve().parents[1]


def test_decide_one_pair_as_json(capsys) -> None:  # type: ignore[no-untyped-def]
    code = main(["decide", "--n", "40,10,50", "--confusion", "30,5,2;6,3,4;4,2,44", "--m", "30,10,40", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert {"theta", "decision", "p_mean", "theta_mc_se", "sampler", "settings", "method"} <= out.keys()
    assert out["method"] == "enumeration" and out["sampler"] == "fast" and out["theta_mc_se"] == 0.0
    assert out["decision"] in (">", "=", "<") and len(out["p_mean"]) == 3
    assert out["settings"]["gamma"] == 0.05 and out["settings"]["seed"] == 0


def test_decide_human_only_text(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["decide", "--n", "40,10,50", "--human-only"]) == 0
    assert f"{human_only_theta([40, 10, 50]):.4f}" in capsys.readouterr().out


def test_decide_batch(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    batch = tmp_path / "pairs.jsonl"
    lines = [
        {"id": "a", "n": [40, 10, 50], "confusion": [[30, 5, 2], [6, 3, 4], [4, 2, 44]], "m": [0, 0, 0]},
        {"id": "b", "n": [90, 0, 10]},
    ]
    batch.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    assert main(["decide", "--batch", str(batch), "--gamma", "0.1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [p["id"] for p in out["pairs"]] == ["a", "b"]
    assert out["pairs"][0]["theta"] == pytest.approx(human_only_theta([40, 10, 50]))
    assert out["pairs"][1]["decision"] == ">" and out["settings"]["gamma"] == 0.1


@pytest.mark.parametrize(
    "args",
    [["--n", "1,2"], ["--n", "1,2,3", "--confusion", "1,2,3;4,5,6"], ["--n", "1,-2,3"], []],
)
def test_bad_counts_are_one_line_errors(args, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["decide", *args]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error:") and "Traceback" not in err


def test_bad_batch_line_names_the_line(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    batch = tmp_path / "pairs.jsonl"
    batch.write_text('{"n": [1, 2, 3]}\n{"n": [1, 2]}\n')
    assert main(["decide", "--batch", str(batch)]) == 1
    assert "line 2" in capsys.readouterr().err


def test_configure_jax_sets_the_device_count_before_jax_starts() -> None:
    code = (
        "from prefeval_core.runtime import configure_jax; configure_jax(x64=True, host_devices=3); "
        "import jax, jax.numpy as jnp; print(jax.local_device_count(), jnp.zeros(1).dtype)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True, timeout=120).stdout
    assert out.split() == ["3", "float64"]
