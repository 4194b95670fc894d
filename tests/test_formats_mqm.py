"""WMT MQM error files: the weights on hand-computed segments, the conventions of the real files,
the texts, malformed files, and the WMT21 TED set rebuilt as an MQM file from its README."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from prefeval_core.data.annotators import judgments_behind
from prefeval_core.data.dataset import load_dataset
from prefeval_core.errors import BadValueError, DataError, MalformedFileError, MissingColumnError

HEADER = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\tcomment\n"


def row(system: str, seg: int, rater: str, category: str, severity: str, target: str = "Ein <v>Satz</v>.") -> str:
    return f"{system}\ttalk.1\t{seg}\t{seg}\t{rater}\tA sentence.\t{target}\t{category}\t{severity}\t\n"


def load(text: str, name: str = "mqm.tsv", **kwargs):
    return load_dataset([(name, text.encode())], **kwargs)


def scores(dataset, rater: str) -> dict[tuple[str, str], float]:
    frame = dataset.ratings[dataset.ratings["rater"] == rater]
    return {(i, s): v for i, s, v in frame[["item_id", "system", "score"]].itertuples(index=False)}


# Segment 1: A has Major + Minor + Minor Fluency/Punctuation from r1 (-6.1) and nothing from r2 (0);
# B is a Non-translation for r1 (-25 whatever else) and a Neutral for r2 (0); C has a Critical.
TSV = HEADER + "".join(
    [
        row("A", 1, "r1", "Accuracy/Mistranslation", "Major"),
        row("A", 1, "r1", "Style/Awkward", "Minor"),
        row("A", 1, "r1", "Fluency/Punctuation", "Minor"),
        row("A", 1, "r2", "No-error", "No-error", "Ein Satz."),
        row("B", 1, "r1", "Non-translation!", "Major", "???"),
        row("B", 1, "r1", "Fluency/Grammar", "Major", "???"),
        row("B", 1, "r2", "Style/Awkward", "Neutral", "???"),
        row("C", 1, "r1", "Accuracy/Omission", "Critical"),
        row("A", 2, "r1", "Fluency/Punctuation", "minor"),
        row("A", 2, "r1", "Fluency / Punctuation", "MINOR"),
        row("A", 2, "r1", "fluency/punctuation/Quotes", "Minor"),
        row("B", 2, "r1", "Fluency/Punctuation", "Major"),
        row("C", 2, "r1", "No-error", "no-error", "Zwei."),
    ]
)


def test_weights_of_each_kind_of_error() -> None:
    ds = load(TSV)
    assert scores(ds, "human:mqm:r1") == {
        ("1", "A"): -6.1,
        ("1", "B"): -25.0,
        ("1", "C"): -5.0,
        ("2", "A"): -0.3,  # three Minor punctuation errors, summed exactly (weights counted in tenths)
        ("2", "B"): -5.0,  # a Major punctuation error has the standard weight
        ("2", "C"): 0.0,
    }
    assert scores(ds, "human:mqm:r2") == {("1", "A"): 0.0, ("1", "B"): 0.0}
    mean = scores(ds, "human:mqm")
    assert mean[("1", "A")] == pytest.approx(-3.05, abs=1e-12)
    assert mean[("1", "B")] == -12.5
    assert mean[("2", "A")] == -0.3
    assert ds.human_raters == ("human:mqm",)
    assert ds.report.ok
    assert any("1 segment(s) marked Non-translation also had other rows" in note for note in ds.notes)


def test_each_mean_says_how_many_ratings_it_combines() -> None:
    counts = judgments_behind(load(TSV).ratings, "human:mqm")
    by_key = {(i, s): n for i, s, n in counts.itertuples(index=False)}
    assert by_key == {("1", "A"): 2, ("1", "B"): 2, ("1", "C"): 1, ("2", "A"): 1, ("2", "B"): 1, ("2", "C"): 1}


def test_texts_and_sources_lose_the_error_marks() -> None:
    ds = load(TSV)
    texts = ds.texts.set_index(["item_id", "system"])["output"]
    assert texts[("1", "A")] == "Ein Satz."
    assert texts[("1", "B")] == "???"
    assert ds.sources.set_index("item_id")["source"].to_dict() == {"1": "A sentence.", "2": "A sentence."}


def test_mqm_viewer_column_names_and_items_without_a_global_id() -> None:
    viewer = "system\tdoc\tdocSegId\tglobalSegId\trater\tsource\ttarget\tcategory\tseverity\tmetadata\n"
    text = viewer + "S1\td\t1\t7\tr\ts\tt\tStyle/Awkward\tMinor\t{}\nS2\td\t1\t7\tr\ts\tt\tno-error\tno-error\t{}\n"
    text += "S1\td\t2\t8\t\ts\tt\t\t\t{}\n"  # a metadata-only row (no rater, category, severity)
    ds = load(text)
    assert scores(ds, "human:mqm") == {("7", "S1"): -1.0, ("7", "S2"): 0.0}
    assert any("1 metadata-only rows skipped" in note for note in ds.notes)
    no_global = "system\tdoc\tdoc_id\trater\ttarget\tcategory\tseverity\n" + "S1\ttalk.2\t3\tr\tt\tStyle/Awkward\tMajor\n"
    no_global += "S2\ttalk.2\t3\tr\tt\tNo-error\tNo-error\n"
    assert scores(load(no_global), "human:mqm") == {("talk.2:3", "S1"): -5.0, ("talk.2:3", "S2"): 0.0}


def test_detected_from_the_columns_or_declared() -> None:
    assert load(TSV.replace("\t", ","), name="errors.csv").ratings["rater"].str.startswith("human:mqm").all()
    bare = "system,seg_id,rater,category,severity\nA,1,r,Style/Awkward,Minor\nB,1,r,No-error,No-error\n"
    with pytest.raises(DataError):  # no source or target: not recognised, and not a ratings file either
        load(bare, name="bare.csv")
    declared = load(bare, name="bare.csv", kinds={"bare.csv": "mqm"})
    assert scores(declared, "human:mqm") == {("1", "A"): -1.0, ("1", "B"): 0.0}
    assert declared.texts.empty


def test_an_unknown_severity_names_file_row_line_and_column() -> None:
    text = TSV.replace("Style/Awkward\tMinor", "Style/Awkward\tSevere")
    with pytest.raises(BadValueError) as info:
        load(text)
    (problem,) = info.value.problems
    assert (problem.file, problem.row, problem.line, problem.column) == ("mqm.tsv", 2, 3, "severity")
    assert "expected an MQM severity: Major, Minor, Neutral, Critical or No-error, found 'Severe'" in problem.message


def test_missing_columns_and_empty_names_are_named() -> None:
    with pytest.raises(MissingColumnError) as info:
        load(HEADER.replace("\tseverity", "\tlevel") + row("A", 1, "r", "x", "Major"))
    assert [p.column for p in info.value.problems] == ["severity"]
    assert "mqm.tsv, column 'severity': a WMT MQM file needs the column 'severity' (found: " in str(info.value)
    with pytest.raises(BadValueError) as empty:
        load(HEADER + row("A", 1, "r1", "Style/Awkward", "Minor") + row(" ", 1, "r1", "Style/Awkward", "Minor"))
    assert [(p.row, p.line, p.column) for p in empty.value.problems] == [(2, 3, "system")]


def test_a_ragged_row_is_refused_with_its_line() -> None:
    with pytest.raises(MalformedFileError, match=r"line 3 \(row 2\) has 8 fields, the header has 10"):
        load(HEADER + row("A", 1, "r1", "Style/Awkward", "Minor") + "A\ttalk.1\t1\t1\tr1\ts\tt\tMinor\n")


def test_quotes_are_characters_as_google_writes_the_files() -> None:
    # News text quotes speech: a target may start with a quote, close it mid-field, or never close it.
    # Read with CSV quoting these lines would run into the next fields (the file was refused).
    opened = '"We are <v>here</v>," he said.'
    text = HEADER + row("A", 1, "r1", "Accuracy/Mistranslation", "Minor", opened) + row("A", 2, "r1", "Style/Awkward", "Minor", '"Hi')
    text += row("B", 1, "r1", "No-error", "No-error", '"We are here," she said.') + row("B", 2, "r1", "No-error", "No-error", 'A "b" c')
    dataset = load(text)
    outputs = {(i, s): o for i, s, o in dataset.texts[["item_id", "system", "output"]].itertuples(index=False)}
    assert outputs == {
        ("1", "A"): '"We are here," he said.', ("2", "A"): '"Hi', ("1", "B"): '"We are here," she said.', ("2", "B"): 'A "b" c'
    }  # fmt: skip
    assert scores(dataset, "human:mqm:r1") == {("1", "A"): -1.0, ("2", "A"): -1.0, ("1", "B"): 0.0, ("2", "B"): 0.0}
    with pytest.raises(MalformedFileError, match=r"line 3 \(row 2\) has 11 fields"):  # a tab in a text is still a new field
        load(HEADER + row("A", 1, "r1", "Style/Awkward", "Minor") + row("A", 2, "r1", "Style/Awkward", "Minor", "a\tb"))


def test_other_tab_separated_files_keep_csv_quoting() -> None:
    ratings = 'item_id\tsystem\trater\tscore\tnote\ni1\tA\thuman\t3\t"two\tfields"\n'
    dataset = load_dataset([("ratings.tsv", ratings.encode())])
    assert len(dataset.ratings) == 1 and dataset.ratings["score"].tolist() == [3.0]


# ---------------------------------------------------------------------------------------------
# The shared WMT21 TED set, rebuilt as Google's MQM file from its README: each per-rater score
# split into error rows (Major 5, Minor 1, Minor Fluency/Punctuation 0.1; No-error for 0), with
# the texts re-marked. Loading it must give back every rater's scores and the published table.

README_TED_ENDE = {  # google/wmt-mqm-human-evaluation README, "TED talks, English to German" (2 decimals)
    "ref-A": 0.91, "Facebook-AI": 1.06, "Online-W": 1.12, "VolcTrans-AT": 1.24, "metricsystem3": 1.44,
    "VolcTrans-GLAT": 1.49, "HuaweiTSC": 1.50, "metricsystem1": 1.63, "metricsystem2": 1.69, "metricsystem5": 1.72,
    "UEdin": 1.77, "metricsystem4": 1.78, "eTranslation": 1.96, "Nemo": 2.14,
}  # fmt: skip


def _error_rows(tenths: int) -> list[tuple[str, str]]:
    if tenths == 0:
        return [("No-error", "No-error")]
    major, rest = divmod(tenths, 50)
    minor, punctuation = divmod(rest, 10)
    return (
        [("Accuracy/Mistranslation", "Major")] * major
        + [("Style/Awkward", "minor")] * minor
        + [("Fluency/Punctuation", "Minor")] * punctuation
    )


def rebuilt_ted_tsv(folder: Path) -> tuple[str, pd.DataFrame]:
    ratings = pd.read_csv(folder / "ratings.csv", dtype={"item_id": str})
    texts = pd.read_csv(folder / "texts.csv", dtype=str, keep_default_na=False).set_index(["item_id", "system"])["output"]
    sources = pd.read_csv(folder / "sources.csv", dtype=str, keep_default_na=False).set_index("item_id")
    raters = ratings[ratings["rater"].str.startswith("human:mqm:")]
    lines = [HEADER]
    for item, system, rater, score in raters[["item_id", "system", "rater", "score"]].itertuples(index=False):
        source = sources.loc[item]
        target = texts.get((item, system), source["reference"])
        tenths = round(-score * 10)
        for category, severity in _error_rows(tenths):
            marked = target if severity == "No-error" else f"<v>{target[:1]}</v>{target[1:]}"
            fields = (
                system,
                source["doc"],
                source["doc_seg"],
                item,
                rater.rsplit(":", 1)[1],
                source["source"],
                marked,
                category,
                severity,
                "",
            )
            lines.append("\t".join(fields) + "\n")
    return "".join(lines), ratings


@pytest.mark.golden
def test_wmt21_ted_rebuilt_as_an_mqm_file_loads_to_the_published_scores(shared_data: Path) -> None:
    text, ratings = rebuilt_ted_tsv(shared_data / "wmt21_ted_ende_mqm")
    ds = load(text, name="mqm_ted_ende.tsv")
    loaded = ds.ratings.set_index(["item_id", "system", "rater"])["score"]
    for rater in ("human:mqm:rater1", "human:mqm:rater2", "human:mqm:rater3", "human:mqm:rater4"):
        expected = ratings[ratings["rater"] == rater].set_index(["item_id", "system", "rater"])["score"]
        assert np.abs(loaded.loc[expected.index].to_numpy() - expected.to_numpy()).max() <= 1e-9
    mean = ds.ratings[ds.ratings["rater"] == "human:mqm"].set_index(["item_id", "system"])["score"]
    google = ratings[ratings["rater"] == "human"].set_index(["item_id", "system"])["score"]  # Google's avg_seg_scores
    assert len(mean) == len(google) == 7_406
    assert np.abs(mean.loc[google.index].to_numpy() - google.to_numpy()).max() <= 1e-9
    system_means = -mean.groupby(level="system").mean()
    assert list(system_means.sort_values().index) == list(README_TED_ENDE)
    assert max(abs(system_means[s] - v) for s, v in README_TED_ENDE.items()) <= 0.0101  # the README's 2 decimals
    shared_texts = pd.read_csv(shared_data / "wmt21_ted_ende_mqm" / "texts.csv", dtype=str, keep_default_na=False)
    merged = shared_texts.merge(ds.texts, on=["item_id", "system"], suffixes=("", "_loaded"))
    assert len(merged) == len(shared_texts) and (merged["output"] == merged["output_loaded"]).all()
    assert len(ds.sources) == 529


def test_a_ratings_file_with_a_category_column_stays_a_ratings_file() -> None:
    text = "item_id,system,rater,score,category,source\ni1,A,human,3,news,s\ni1,B,human,4,news,s\n"
    assert load(text, name="ratings.csv").ratings["score"].tolist() == [3.0, 4.0]
