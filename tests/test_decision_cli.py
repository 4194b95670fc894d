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
    code = main(["decide", "--n", "40,10,50", "--confusion", "30,5,2;6,3,4;4,2,44", "--m", "20,10,25", "--json"])
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
    [["--n", "1,2"], ["--n", "1,2,3", "--confusion", "1,2,3;4,5,6"], ["--n=1,-2,3"], ["--n", "1,nan,3"], ["--n", "1.5,0,0"]],
)
def test_bad_counts_are_one_line_usage_errors(args, capsys) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit) as exit_:
        main(["decide", *args])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.startswith("prefeval decide: error: argument --") and err.count("\n") == 1


def test_no_counts_is_a_one_line_error(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["decide"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error:") and "Traceback" not in err


def test_bad_batch_line_names_the_line_before_anything_is_decided(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    batch = tmp_path / "pairs.jsonl"
    batch.write_text('{"n": [1, 2, 3]}\n{"n": [1, 2]}\n')
    assert main(["decide", "--batch", str(batch)]) == 1
    captured = capsys.readouterr()
    assert "line 2" in captured.err and captured.out == ""
    batch.write_text('{"n": [1, 2, 3]}\n\n{"n": [1, 0, 3], "K": [[2, 0, 0], [0, 0, 0], [0, 0, 0]]}\n')
    assert main(["decide", "--batch", str(batch)]) == 1
    err = capsys.readouterr().err
    assert "line 3" in err and "more than the 1 human outcomes '>'" in err


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ('{"n": [40, 10, 50], "confusoin": [[30, 5, 2], [6, 3, 4], [4, 2, 44]]}', "unknown key(s) 'confusoin'; expected n, confusion"),
        ('{"n": [true, false, true]}', "key 'n': expected three counts (>, =, <), found [true, false, true]"),
        ('{"n": ["1", "2", "3"]}', "key 'n': expected three counts"),
        ('{"n": [1e20, 0, 0]}', "key 'n': a count of 9,223,372,036,854,775,808 or more"),
        ('{"n": [1, 2, 3], "m": [1, 2, 3, 4]}', "key 'm': expected three counts (>, =, <), found [1, 2, 3, 4]"),
        ('{"n": [1, 2, 3], "confusion": [[1, 0], [0, 1]]}', "key 'confusion': expected a 3x3 matrix of counts"),
        (
            '{"n": [1, 2, 3], "K": [[0, 0, 0], [0, 0, 0], [0, 0, 0]], "confusion": [[0, 0, 0], [0, 0, 0], [0, 0, 0]]}',
            "give the confusion matrix once",
        ),
        ('[{"n": [1, 2, 3]}]', "expected an object of counts (n, confusion, m, mu, id), found a JSON list"),
        ("{}", "key 'n' is missing"),
        ("not json", "not JSON (Expecting value at character 1)"),
    ],
)
def test_a_batch_line_is_checked_key_by_key(tmp_path, capsys, line: str, said: str) -> None:  # type: ignore[no-untyped-def]
    """Nothing in a line is ignored or coerced: a misspelled key would decide the pair without its
    metric counts, and true or "1" would be taken as counts."""
    batch = tmp_path / "pairs.jsonl"
    batch.write_text(line + "\n")
    assert main(["decide", "--batch", str(batch)]) == 1
    err = capsys.readouterr().err
    assert f"pairs.jsonl, line 1: {said}" in err and err.count("\n") == 1


def test_counts_that_contradict_each_other_are_refused(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["decide", "--n", "4,1,5", "--confusion", "30,5,2;6,3,4;4,2,44"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "confusion column of human outcome '>' holds 40 items" in err


@pytest.mark.parametrize(
    "option",
    [
        ["--seed", "1180591620717411303424"],
        ["--seed", "-1"],
        ["--seed", "1.5"],
        ["--gamma", "1.5"],
        ["--gamma", "0"],
        ["--gamma", "nan"],
        ["--chunk", "0"],
    ],
)
def test_bad_option_values_are_one_line_usage_errors(option, capsys) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit) as exit_info:
        main(["decide", "--n", "1,2,3", *option])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"argument {option[0]}" in err and "Traceback" not in err


def test_batch_is_streamed_and_independent_of_the_chunk_size(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    batch = tmp_path / "pairs.jsonl"
    lines = [{"id": i, "n": [5 + i, 2, 6], "K": [[5, 0, 1], [0, 2, 0], [0, 0, 5]], "m": [300 + 40 * i, 50, 280]} for i in range(7)]
    batch.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    assert main(["decide", "--batch", str(batch), "--json", "--chunk", "3", "--seed", "9"]) == 0
    captured = capsys.readouterr()
    chunked = json.loads(captured.out)
    assert "decided 3 of 7 pairs" in captured.err and "decided 7 of 7 pairs" in captured.err
    assert main(["decide", "--batch", str(batch), "--json", "--seed", "9"]) == 0
    whole = json.loads(capsys.readouterr().out)
    assert [p["theta"] for p in chunked["pairs"]] == [p["theta"] for p in whole["pairs"]]
    assert {p["method"] for p in whole["pairs"]} == {"importance"} and whole["settings"]["seed"] == 9


def test_configure_jax_sets_the_device_count_before_jax_starts() -> None:
    code = (
        "from prefeval_core.runtime import configure_jax; configure_jax(x64=True, host_devices=3); "
        "import jax, jax.numpy as jnp; print(jax.local_device_count(), jnp.zeros(1).dtype)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True, timeout=120).stdout
    assert out.split() == ["3", "float64"]
