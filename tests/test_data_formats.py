"""Interpreting files: long/wide ratings, preferences and their labels, texts; every error message."""

from __future__ import annotations

import numpy as np
import pytest

from prefeval_core.data.annotators import annotator_scores, judgments_behind
from prefeval_core.data.dataset import load_dataset
from prefeval_core.errors import BadValueError, DataError, DuplicateRatingError, MissingColumnError
from tests.data_helpers import RATINGS_CSV


def load(files: dict[str, str], **kwargs):
    return load_dataset([(name, text.encode()) for name, text in files.items()], **kwargs)


def test_long_ratings_load() -> None:
    ds = load({"r.csv": RATINGS_CSV})
    assert ds.systems == ("A", "B", "C")
    assert ds.items == ("i1", "i2", "i3")
    assert ds.raters == ("bleu", "human")
    assert ds.human_raters == ("human",)
    assert ds.metric_raters == ("bleu",)
    assert ds.ratings["score"].dtype == np.float64
    assert len(ds.ratings) == 12


def test_score_that_is_text_names_file_row_line_and_column() -> None:
    bad = RATINGS_CSV.replace("i2,A,human,2", "i2,A,human,two")
    with pytest.raises(BadValueError) as info:
        load({"r.csv": bad})
    (problem,) = info.value.problems
    assert (problem.file, problem.row, problem.line, problem.column) == ("r.csv", 4, 5, "score")
    assert str(problem) == "r.csv, row 4 (line 5), column 'score': expected a number (a score; higher is better), found 'two'"


def test_infinite_score_is_an_error() -> None:
    with pytest.raises(BadValueError, match=r"row 1 .*found 'inf'"):
        load({"r.csv": RATINGS_CSV.replace("i1,A,human,3", "i1,A,human,inf")})


def test_all_bad_rows_are_reported_at_once() -> None:
    bad = RATINGS_CSV.replace("i2,A,human,2", "i2,A,human,x").replace("i3,B,bleu,0.3", "i3,B,bleu,y")
    with pytest.raises(BadValueError) as info:
        load({"r.csv": bad})
    assert [p.row for p in info.value.problems] == [4, 12]


def test_empty_score_is_skipped_with_a_warning() -> None:
    ds = load({"r.csv": RATINGS_CSV.replace("i3,B,bleu,0.3", "i3,B,bleu,")})
    assert len(ds.ratings) == 11
    assert any(w.kind == "missing_score" and w.column == "score" for w in ds.report.warnings)


def test_missing_column_lists_what_was_found() -> None:
    text = RATINGS_CSV.replace("item_id,system,rater,score", "item_id,system,rater,value_x")
    with pytest.raises(MissingColumnError, match=r"r\.csv, column 'score': a ratings file needs the column 'score' \(found: "):
        load({"r.csv": text}, kinds={"r.csv": "ratings"})


def test_empty_system_name() -> None:
    with pytest.raises(BadValueError, match=r"row 2 \(line 3\), column 'system': expected a non-empty name"):
        load({"r.csv": RATINGS_CSV.replace("i1,B,human,1", "i1,,human,1")})


def test_conflicting_duplicates_name_every_row() -> None:
    text = RATINGS_CSV + "i1,B,human,4\n"
    with pytest.raises(DuplicateRatingError) as info:
        load({"r.csv": text})
    assert [p.row for p in info.value.problems] == [2, 13]
    assert "same (item, system, rater) appears more than once with different values" in info.value.problems[0].message


def test_exact_duplicates_are_dropped_with_a_warning() -> None:
    ds = load({"r.csv": RATINGS_CSV + "i1,B,human,1\n"})
    assert len(ds.ratings) == 12
    assert any(w.kind == "duplicate_rows" for w in ds.report.warnings)


def test_annotators_of_one_rater_are_averaged_and_kept() -> None:
    """The mean is the rater's score; each annotator of a human rater stays a rater of its own, so
    the study's cost counts every rating and a replay can buy one at a time (method.md §13)."""
    text = "item_id,system,rater,annotator,score\ni1,A,human,x,1\ni1,A,human,y,4\ni1,B,human,x,2\ni1,B,human,y,2\n"
    text += "i1,A,human:fluency,x,5\ni1,A,human:fluency,y,3\ni1,A,bleu,s1,0.2\ni1,A,bleu,s2,0.4\n"
    ds = load({"r.csv": text})
    scores = ds.ratings.set_index(["rater", "system"])["score"]
    assert scores["human", "A"] == 2.5 and scores["human", "B"] == 2.0 and scores["bleu", "A"] == pytest.approx(0.3)
    assert scores["human::x", "A"] == 1 and scores["human::y", "B"] == 2 and scores["human:fluency:y", "A"] == 3
    assert ds.human_raters == ("human", "human:fluency") and ds.metric_raters == ("bleu",)  # a metric's samples are not annotators
    assert annotator_scores(ds.ratings, "human").sort_values(["system", "annotator"])["annotator"].tolist() == ["x", "y", "x", "y"]
    assert judgments_behind(ds.ratings, "human")["judgments"].tolist() == [2, 2]


def test_human_dimension_mean_is_derived_from_annotator_raters() -> None:
    text = "item_id,system,rater,score\n" + "".join(
        f"i1,{s},human:rel:e{k},{v}\n" for k, vals in enumerate([(1, 3), (2, 4), (3, 2)]) for s, v in zip("AB", vals)
    )
    ds = load({"r.csv": text})
    mean = ds.ratings[ds.ratings["rater"] == "human:rel"].set_index("system")["score"]
    assert mean["A"] == pytest.approx(2.0) and mean["B"] == pytest.approx(3.0)
    assert "human:rel" in ds.human_raters


def test_wide_ratings_with_chosen_rater_columns() -> None:
    text = "item_id,system,BLEU,COMET,human,notes\ni1,A,0.1,0.5,3,x\ni1,B,0.2,0.4,4,y\n"
    ds = load({"w.csv": text}, rater_columns={"w.csv": ["BLEU", "COMET", "human"]})
    assert ds.raters == ("BLEU", "COMET", "human")
    assert ds.ratings.set_index(["rater", "system"])["score"][("COMET", "A")] == 0.5
    assert any("rater columns: BLEU, COMET, human" in n for n in ds.notes)


def test_wide_ratings_bad_cell_names_the_rater_column() -> None:
    text = "item_id,system,BLEU,human\ni1,A,0.1,3\ni1,B,n/a,4\n"
    with pytest.raises(BadValueError, match=r"w\.csv, row 2 \(line 3\), column 'BLEU': expected a number"):
        load({"w.csv": text})


def test_wide_ratings_unknown_rater_column() -> None:
    with pytest.raises(MissingColumnError, match=r"rater column\(s\) \['COMET'\] not in the file"):
        load({"w.csv": "item_id,system,BLEU\ni1,A,1\ni1,B,2\n"}, rater_columns={"w.csv": ["COMET"]})


PREFS = "item_id,system_a,system_b,rater,label\n"


@pytest.mark.parametrize(
    ("labels", "scheme"),
    [
        ((">", "=", "<"), "symbols"),
        (("A", "tie", "B"), "letters"),
        (("a", "TIE", "b"), "letters"),
        (("1", "0", "-1"), "numbers"),
    ],
)
def test_label_schemes_are_understood_and_reported(labels: tuple[str, str, str], scheme: str) -> None:
    text = PREFS + "".join(f"i{k},X,Y,judge,{label}\n" for k, label in enumerate(labels))
    ds = load({"p.csv": text})
    assert ds.preferences.sort_values("item_id")["outcome"].tolist() == [0, 1, 2]
    note = next(n for n in ds.notes if "labels in column 'label'" in n)
    assert scheme in note and f"'{labels[0].lower()}' as >" in note


def test_unknown_label_names_row_and_says_what_is_accepted() -> None:
    with pytest.raises(BadValueError, match=r"p\.csv, row 2 \(line 3\), column 'label': expected a preference label: .* found 'maybe'"):
        load({"p.csv": PREFS + "i1,X,Y,judge,>\ni2,X,Y,judge,maybe\n"})


def test_pairs_are_put_in_canonical_order_and_flipped() -> None:
    ds = load({"p.csv": PREFS + "i1,Y,X,judge,>\ni2,Y,X,judge,=\n"})
    assert set(ds.preferences["system_a"]) == {"X"}
    assert ds.preferences.sort_values("item_id")["outcome"].tolist() == [2, 1]


def test_same_system_on_both_sides() -> None:
    with pytest.raises(BadValueError, match=r"column 'system_b': expected two different systems in a pair, found 'X'"):
        load({"p.csv": PREFS + "i1,X,X,judge,>\n"})


def test_conflicting_preference_duplicates() -> None:
    with pytest.raises(DuplicateRatingError, match=r"column 'label'"):
        load({"p.csv": PREFS + "i1,X,Y,judge,>\ni1,Y,X,judge,>\n"})


def test_annotator_majority_for_preferences() -> None:
    text = "item_id,system_a,system_b,rater,annotator,label\ni1,X,Y,human,u,>\ni1,X,Y,human,v,>\ni1,X,Y,human,w,<\ni2,X,Y,human,u,=\n"
    ds = load({"p.csv": text})
    assert ds.preferences[ds.preferences["rater"] == "human"].sort_values("item_id")["outcome"].tolist() == [0, 1]
    assert ds.annotator_raters == ("human::u", "human::v", "human::w")  # i1's three (i2 had one: nothing to count)


def test_texts_sources_and_references() -> None:
    files = {
        "texts.csv": "item_id,prompt_id,system,output\np1,q1,X,hello\np1,q1,Y,hi\n",
        "sources.csv": "prompt_id,instruction,input\nq1,Greet,someone\n",
        "preferences.csv": PREFS + "p1,X,Y,human,>\n",
    }
    ds = load(files)
    assert ds.has_texts
    assert ds.sources.set_index("item_id")["source"]["p1"] == "instruction: Greet\n\ninput: someone"


def test_sources_with_a_reference_column_give_references() -> None:
    files = {"sources.csv": "item_id,source,reference\ni1,Hallo,Hello\n", "r.csv": RATINGS_CSV}
    ds = load(files)
    assert ds.references.to_dict("records") == [{"item_id": "i1", "ref_index": 0, "reference": "Hello"}]


def test_no_ratings_at_all() -> None:
    with pytest.raises(DataError, match="no ratings or preferences were found"):
        load({"texts.csv": "item_id,system,output\ni1,A,x\n"})


def test_metric_items_without_human_are_a_warning() -> None:
    ds = load({"r.csv": RATINGS_CSV})
    (warning,) = [w for w in ds.report.warnings if w.kind == "metric_only_items"]
    assert "metric 'bleu' rated 1 items that no human rater rated" in warning.message


def test_rater_with_one_system_and_pairs_without_common_items_warn() -> None:
    text = RATINGS_CSV + "i1,A,lonely,1\ni1,A,split,1\ni2,B,split,2\n"
    ds = load({"r.csv": text})
    kinds = {(w.kind, w.message.split("'")[1]) for w in ds.report.warnings}
    assert ("single_system", "lonely") in kinds
    assert ("no_common_items", "split") in kinds


# --- hostile files (issue 14) -----------------------------------------------------------------


def test_two_columns_read_as_the_same_one_are_an_error() -> None:
    text = "item_id,system,rater,Score,score\ni1,A,h,1,2\ni1,B,h,2,1\n"
    with pytest.raises(DataError) as info:
        load({"r.csv": text})
    (problem,) = info.value.problems
    assert problem.file == "r.csv" and "the columns 'Score', 'score' are all read as 'score'" in problem.message


def test_two_aliases_of_one_column_warn_which_was_read() -> None:
    header, *rows = RATINGS_CSV.splitlines()
    ds = load({"r.csv": "\n".join([header + ",value", *(row + ",9" for row in rows)]) + "\n"})
    (warning,) = [w for w in ds.report.warnings if w.kind == "ambiguous_column"]
    assert warning.column == "score" and "'score' is read as 'score'" in warning.message
    assert ds.ratings["score"].max() == 5  # not the 9s of 'value'


@pytest.mark.parametrize("value", ["x", "-1", "1.5", "1e300", "7" * 5_000])
def test_reference_index_must_be_a_whole_number(value: str) -> None:
    files = {"references.csv": f"item_id,ref_index,reference\ni1,0,a\ni1,{value},b\n", "r.csv": RATINGS_CSV}
    with pytest.raises(BadValueError, match=r"references\.csv, row 2 \(line 3\), column 'ref_index': expected a whole number"):
        load(files)


def test_wide_file_with_many_raters_names_the_bad_column() -> None:
    raters = [f"m{k}" for k in range(900)]
    rows = [f"i{i},S{s}," + ",".join("0.5" for _ in raters) for i in range(3) for s in range(2)]
    rows[4] = rows[4].rsplit(",", 1)[0] + ",oops"
    text = "item_id,system," + ",".join(raters) + "\n" + "\n".join(rows) + "\n"
    with pytest.raises(BadValueError) as info:
        load({"w.csv": text})
    (problem,) = info.value.problems
    assert (problem.row, problem.line, problem.column) == (5, 6, "m899")
    ds = load({"w.csv": text.replace("oops", "0.25")})
    assert len(ds.ratings) == 900 * 6 and ds.ratings.set_index(["item_id", "system", "rater"])["score"][("i2", "S0", "m899")] == 0.25


def test_too_many_systems_is_an_error_naming_the_file() -> None:
    rows = "".join(f"i{k % 3},S{k},human,{k % 5}\n" for k in range(1_001))
    with pytest.raises(DataError, match=r"many\.csv, column 'system': the data names 1,001 systems; the limit is 1,000"):
        load({"many.csv": "item_id,system,rater,score\n" + rows})


def test_dataset_wide_errors_name_the_files() -> None:
    with pytest.raises(DataError) as info:
        load({"a.csv": "x,y\n1,2\n", "b.csv": "u\n3\n"})
    assert info.value.problems[0].file == "a.csv, b.csv"


def test_scores_at_the_numeric_edges() -> None:
    text = "item_id,system,rater,score\ni1,A,h,1e15\ni1,B,h,-1e15\ni2,A,h,-0\ni2,B,h,4.9e-324\ni3,A,h,+7\ni3,B,h,.5\n"
    ds = load({"r.csv": text})
    assert ds.ratings["score"].tolist() == [1e15, -1e15, 0.0, 5e-324, 7.0, 0.5]
    for bad in ("1e309", "-inf", "NaN5", "1_000", "３", "7" * 5_000):
        with pytest.raises(BadValueError, match="expected a number"):
            load({"r.csv": text.replace("+7", bad)})
    for huge in ("1e308", "-1.0000001e15"):  # representable, but its square overflows or its sums lose precision
        with pytest.raises(BadValueError, match="expected a score of at most 1e\\+15 in size"):
            load({"r.csv": text.replace("+7", huge)})


def test_sub_raters_that_are_not_annotators_are_dropped_one_at_a_time() -> None:
    """Three annotators whose mean is the score, beside a second score of the same outputs on
    another scale (WMT's DA beside MQM): the search leaves the stranger out, and keeps the
    annotators on every output; a lone sub-rater that matches on fewer than half is no annotator."""
    rows = ["item_id,system,rater,score"]
    rng = np.random.default_rng(3)
    for item in range(6):
        for system in "AB":
            scores = rng.integers(1, 6, size=3)
            rows += [f"i{item},{system},human:q:{a},{v}" for a, v in zip("xyz", scores, strict=True)]
            rows += [f"i{item},{system},human:q,{float(scores.mean())!r}", f"i{item},{system},human:q:da,{rng.integers(0, 100)}"]
    ds = load({"r.csv": "\n".join(rows) + "\n"})
    kept = annotator_scores(ds.ratings, "human:q")
    assert sorted(kept["annotator"].unique()) == ["x", "y", "z"] and len(kept) == 6 * 2 * 3
    lone = "item_id,system,rater,score\ni1,A,human,2\ni1,B,human,3\ni1,A,human:da,2\ni1,B,human:da,70\ni2,A,human,1\ni2,A,human:da,50\n"
    assert annotator_scores(load({"r.csv": lone}).ratings, "human").empty  # its mean is the score on 1 of 3 outputs
