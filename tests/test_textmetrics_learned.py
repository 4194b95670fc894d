"""Embedding similarity and the SEScore2-style metric with the real offline encoder.

The encoder loads once per module (about 9 s); training runs on a tiny hand-made corpus.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from prefeval_core.cli import main
from prefeval_core.diagnostics.kendall import kendall_tau
from prefeval_core.textmetrics import embedding
from prefeval_core.textmetrics.rate import align_segments, metric_ratings
from prefeval_core.textmetrics.sescore2.score import (
    DEFAULT_MODEL,
    SEScore2Model,
    load_model,
    save_model,
    sentence_level_scores,
    sescore2_scores,
)
from prefeval_core.textmetrics.sescore2.train import TrainingConfig, train_sescore2

if not os.environ.get("CI"):  # CI installs the extra: there a missing torch must fail, not skip
    pytest.importorskip("torch", reason="the learned metrics need the optional extra requirements-learned.txt")

TINY_CORPUS = [
    "The president met the prime minister in Paris on Monday .",
    "The president met the foreign minister in Berlin on Tuesday .",
    "The prime minister visited a car factory in Ohio last week .",
    "The minister visited a steel factory in Texas last month .",
    "Heavy rain fell across the north of the country on Sunday .",
    "Heavy snow fell across the south of the country on Friday .",
    "The home team won the final game of the season on Saturday .",
    "The away team lost the opening game of the season on Sunday .",
    "Scientists found a new species of frog in the rain forest .",
    "Researchers discovered a new species of bird in the mountains .",
]
FAST = TrainingConfig(epochs=8, hidden=16, batch_size=16)

REFERENCE = "The president met the prime minister in Paris on Monday ."
COPY = "The president met the prime minister in Paris on Monday ."
ONE_WORD = "The president met the prime minister in London on Monday ."
UNRELATED = "Bananas are rich in potassium and grow well in warm climates ."


@pytest.fixture(scope="module")
def encoder() -> embedding.SentenceEncoder:
    return embedding.load_encoder()


@pytest.fixture(scope="module")
def tiny_model(encoder) -> SEScore2Model:
    return train_sescore2(TINY_CORPUS, encoder, FAST, seed=0)


def test_encoder_is_deterministic_and_unit_length(encoder) -> None:
    first = encoder.encode([REFERENCE, UNRELATED])
    again = embedding.SentenceEncoder(encoder._model).encode([UNRELATED, REFERENCE])  # fresh cache
    assert first.shape == (2, embedding.EMBEDDING_DIM)
    assert np.linalg.norm(first, axis=1) == pytest.approx([1.0, 1.0], abs=1e-5)
    assert np.allclose(first, again[::-1], atol=1e-5)
    dropped = encoder.encode_with_dropout([REFERENCE], seed=3)
    assert np.array_equal(dropped, encoder.encode_with_dropout([REFERENCE], seed=3))
    assert 0.9 < float(dropped[0] @ first[0]) < 0.99999


def test_training_is_deterministic_for_a_seed(encoder, tiny_model) -> None:
    again = train_sescore2(TINY_CORPUS, encoder, FAST, seed=0)
    other = train_sescore2(TINY_CORPUS, encoder, FAST, seed=1)
    for name in ("w1", "b1", "w2"):
        assert np.array_equal(getattr(tiny_model, name), getattr(again, name))
    assert (tiny_model.b2, tiny_model.low, tiny_model.high) == (again.b2, again.low, again.high)
    assert not np.array_equal(tiny_model.w1, other.w1)
    assert tiny_model.info["sentences"] == 10 and tiny_model.info["perturbed_hypotheses"] > 10
    assert tiny_model.low < tiny_model.high
    with pytest.raises(ValueError):
        train_sescore2(TINY_CORPUS[:2], encoder, FAST)


def test_model_file_round_trip(tiny_model, tmp_path: Path) -> None:
    save_model(tiny_model, tmp_path / "m.npz")
    loaded = load_model(tmp_path / "m.npz")
    assert np.array_equal(loaded.w1, tiny_model.w1) and loaded.info == json.loads(json.dumps(tiny_model.info))
    x = np.eye(embedding.EMBEDDING_DIM, dtype=np.float32)[:3]
    assert loaded.score(x, x[::-1]) == pytest.approx(tiny_model.score(x, x[::-1]), rel=1e-5)


def test_normalisation_maps_anchors_to_zero_and_minus_25(tiny_model) -> None:
    assert tiny_model.normalise(np.array([tiny_model.high, tiny_model.low])) == pytest.approx([0.0, -25.0])


def test_shipped_model_ranks_copy_over_one_word_change_over_unrelated(encoder) -> None:
    model = load_model(DEFAULT_MODEL)
    scores = sescore2_scores(model, encoder, [COPY, ONE_WORD, UNRELATED], [[REFERENCE]] * 3)
    assert scores[0] > scores[1] > scores[2]
    assert -3 < scores[0] and scores[2] < -15  # normalised: copies near 0, unrelated near -25
    # with several references the best one counts: a reference equal to the hypothesis wins
    two = sescore2_scores(model, encoder, [ONE_WORD, ONE_WORD], [[REFERENCE, ONE_WORD], [ONE_WORD]], reduce="max")
    assert two[0] == pytest.approx(two[1], abs=1e-4) and two[0] > scores[1]
    mean = sescore2_scores(model, encoder, [ONE_WORD], [[REFERENCE, ONE_WORD]], reduce="mean")
    assert mean[0] == pytest.approx((two[1] + scores[1]) / 2, abs=1e-4)


def test_embedding_similarity_ranks_copy_over_one_word_change_over_unrelated(encoder, tiny_model) -> None:
    texts = pd.DataFrame({"item_id": ["i"] * 3, "system": ["copy", "one", "unrelated"], "output": [COPY, ONE_WORD, UNRELATED]})
    references = pd.DataFrame({"item_id": ["i"], "ref_index": [0], "reference": [REFERENCE]})
    ratings = metric_ratings(align_segments(texts, references), ["embed", "sescore2"], encoder=encoder, sescore2_model=tiny_model)
    embed = ratings[ratings["rater"] == "embed-ref"]["score"].to_numpy()
    assert embed[0] == pytest.approx(1.0, abs=1e-5)
    assert embed[0] > embed[1] > embed[2]
    learned = ratings[ratings["rater"] == "sescore2-ref"]["score"].to_numpy()
    assert learned[0] > learned[2] and learned[1] > learned[2]  # even the tiny model tells unrelated text apart


def test_commands_train_and_score(encoder, tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(embedding, "load_encoder", lambda: encoder)
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(TINY_CORPUS) + "\n", encoding="utf-8")
    model = tmp_path / "model.npz"
    assert main(["train-sescore2", "--corpus", str(corpus), "--out", str(model), "--seed", "4", "--epochs", "3"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["seed"] == 4 and info["config"]["epochs"] == 3 and model.exists()
    texts = pd.DataFrame({"item_id": ["i", "i"], "system": ["A", "B"], "output": [COPY, UNRELATED]})
    texts.to_csv(tmp_path / "texts.csv", index=False)
    pd.DataFrame({"item_id": ["i"], "reference": [REFERENCE]}).to_csv(tmp_path / "refs.csv", index=False)
    out = tmp_path / "ratings.csv"
    args = ["metrics", "--texts", str(tmp_path / "texts.csv"), "--references", str(tmp_path / "refs.csv")]
    assert main([*args, "--metrics", "embed,sescore2", "--model", str(model), "--out", str(out)]) == 0
    ratings = pd.read_csv(out)
    assert sorted(set(ratings["rater"])) == ["embed-ref", "sescore2-ref"] and len(ratings) == 4


def test_ablation_config_scores_every_edit_minus_one(encoder) -> None:
    model = train_sescore2(TINY_CORPUS, encoder, dataclasses.replace(FAST, severity=False), seed=0)
    assert model.info["config"]["severity"] is False
    assert -5 <= model.info["mean_synthetic_score"] <= -1  # at most five edits of -1 each


@pytest.mark.slow
@pytest.mark.golden
def test_meta_evaluation_on_summeval_subset(encoder, summeval) -> None:
    """Kendall tau-b on the first 10 documents (160 summaries, 11 references each) with the shipped
    model; golden values recorded by ``bench/bench_textmetrics.py`` (full table in docs/results.md (Part 3))."""
    items = summeval.items[:10]
    segments = align_segments(summeval.texts[summeval.texts["item_id"].isin(items)], summeval.references)
    ratings = metric_ratings(segments, ["embed", "sescore2"], encoder=encoder, sescore2_model=load_model(DEFAULT_MODEL))
    frame = pd.concat([summeval.ratings, ratings])
    golden = {
        ("embed-ref", "human:relevance"): 0.250,
        ("sescore2-ref", "human:relevance"): 0.169,
        ("sescore2-ref", "human:coherence"): 0.124,
    }
    for (metric, human), tau in golden.items():
        result = kendall_tau(frame, human=human, metric=metric)
        assert result.segments == 160
        assert result.tau == pytest.approx(tau, abs=0.01)


def test_sentence_level_scores(encoder) -> None:
    model = load_model(DEFAULT_MODEL)
    first, second = REFERENCE, "Heavy rain fell across the north of the country on Sunday ."
    reference = f"{first} {second}"
    hypotheses = [reference, f"{second} {first}", f"{first} {second} {UNRELATED}", first]
    scores = sentence_level_scores(model, encoder, hypotheses, [[reference]] * 4)
    copies = model.score(encoder.encode([first, second]), encoder.encode([first, second]))
    # a copy: every sentence's best match is itself, so P = R = the mean of the two copy scores
    assert scores[0] == pytest.approx(copies.mean(), abs=1e-4)
    assert scores[1] == pytest.approx(scores[0], abs=1e-4)  # sentence order does not matter
    assert scores[0] > scores[2] and scores[0] > scores[3]  # an added unrelated sentence lowers P, a missing one R
    assert sentence_level_scores(model, encoder, [first], [[UNRELATED, first]])[0] == pytest.approx(copies[0], abs=1e-4)
