"""Issue 19: raters understood on arrival. A raw WMT MQM file gives a human-only study (no
annotator offered as a metric) and its repeated warnings read as one line; a file with
annotators, metrics and LLM judges shows each rater's role, direction, pairing and flags."""

from __future__ import annotations

from pathlib import Path

import pytest

from prefeval_core.data.dataset import load_dataset
from prefeval_core.data.rater_roles import default_raters, group_problems, profile_raters
from tests.page_fixtures import data_dir, page, run_ok
from tests.test_formats_mqm import rebuilt_ted_tsv

__all__ = ["data_dir"]

SCORES = {"s1": 1, "s2": 3, "s3": 5}


def mixed_file() -> bytes:
    """human:relevance (mean) and three annotators on 1-5; an LLM judge with one score off the
    scale; ROUGE-L; TER and length as positive penalties; TER negated as the WMT data store it."""
    lines = ["item_id,system,rater,score"]
    for k in range(8):
        for s, q in SCORES.items():
            mean = q
            lines += [f"i{k},{s},human:relevance,{mean}"]
            lines += [f"i{k},{s},human:relevance:r{r},{min(5, max(1, q + (r - 2) * (k % 2)))}" for r in (1, 2, 3)]
            judge = -0.79 if (k, s) == (0, "s1") else q
            lines += [f"i{k},{s},llm:gpt4:relevance,{judge}", f"i{k},{s},rougeL,{q / 10}", f"i{k},{s},ter,{60 - 10 * q}"]
            lines += [f"i{k},{s},output_length,{40 + k}", f"i{k},{s},neg_ter,{-(60 - 10 * q)}"]
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture(scope="module")
def mqm_tsv(shared_data: Path) -> bytes:
    return rebuilt_ted_tsv(shared_data / "wmt21_ted_ende_mqm")[0].encode()


def test_a_raw_mqm_file_is_human_only_with_its_annotators_known(mqm_tsv: bytes) -> None:
    dataset = load_dataset([("mqm_ted.tsv", mqm_tsv)])
    profiles = {p.name: p for p in profile_raters(dataset)}
    assert profiles["human:mqm"].role == "human" and profiles["human:mqm"].direction == "higher"  # negated penalties
    assert {p.role for n, p in profiles.items() if n != "human:mqm"} == {"annotator"}
    assert default_raters(tuple(profiles.values())) == ("human:mqm", ())
    # each MQM rater rated some documents only: an annotator's coverage is no problem to report
    assert not dataset.report.warnings


def sparse_metric_file() -> bytes:
    """12 systems in a ring, item k rated on systems k and k + 1 only (by the human rater and a metric):
    54 of the 66 pairs share no item, one warning each."""
    rows = "item_id,system,rater,score\n"
    rows += "".join(f"i{k},s{(k + d) % 12},{r},{(k + d) % 5}\n" for k in range(12) for d in (0, 1) for r in ("human", "m"))
    return rows.encode()


def test_repeated_warnings_read_as_one_line() -> None:
    dataset = load_dataset([("sparse.csv", sparse_metric_file())])
    groups = group_problems(dataset.report.warnings)
    assert [(g.kind, g.count) for g in groups] == [("no_common_items", len(dataset.report.warnings))] and groups[0].count > 10
    assert groups[0].line().endswith(f"(and {groups[0].count - 1} more like this)")


def test_each_raters_role_direction_pairing_and_flags() -> None:
    dataset = load_dataset([("mixed.csv", mixed_file())])
    profiles = {p.name: p for p in profile_raters(dataset)}
    shown = {n: (p.role, p.direction, p.criterion, p.paired_human) for n, p in profiles.items()}
    assert shown == {
        "human:relevance": ("human", "higher", "relevance", None),
        "human:relevance:r1": ("annotator", "higher", "relevance", None),
        "human:relevance:r2": ("annotator", "higher", "relevance", None),
        "human:relevance:r3": ("annotator", "higher", "relevance", None),
        "llm:gpt4:relevance": ("judge", "higher", "relevance", "human:relevance"),
        "neg_ter": ("metric", "higher", None, None),
        "output_length": ("metric", "lower", None, None),
        "rougeL": ("metric", "higher", None, None),
        "ter": ("metric", "lower", None, None),
    }
    assert profiles["llm:gpt4:relevance"].flags == ("1 scores outside the human scale 1–5 (e.g. -0.79)",)
    assert "lower is better" in profiles["ter"].flags[0] and not profiles["rougeL"].flags
    assert default_raters(tuple(profiles.values())) == ("human:relevance", ("llm:gpt4:relevance",))


@pytest.mark.page
def test_uploading_a_raw_mqm_file_gives_a_human_only_study_and_one_warning_line(data_dir: Path, mqm_tsv: bytes) -> None:
    at = run_ok(page("data.py"))
    at.radio(key="pe.w.source").set_value("Your files").run()
    at.file_uploader(key="pe.w.upload").set_value([("mqm_ted.tsv", mqm_tsv, "text/tab-separated-values")])
    run_ok(at)
    assert at.session_state["pe.human"] == "human:mqm" and at.session_state["pe.metrics"] == ()
    assert at.multiselect(key="pe.w.metrics").value == [] and at.multiselect(key="pe.w.metrics").options == []
    assert any("studies run human-only" in i.value for i in at.info)
    assert not at.warning  # its annotators' coverage is no problem
    at.file_uploader(key="pe.w.upload").set_value([("sparse.csv", sparse_metric_file(), "text/csv")])
    run_ok(at)
    [warning] = at.warning
    assert warning.value.count("\n- ") == 1 and "more like this" in warning.value


@pytest.mark.page
def test_the_data_page_shows_roles_and_takes_a_changed_role(data_dir: Path) -> None:
    at = run_ok(page("data.py"))
    at.radio(key="pe.w.source").set_value("Your files").run()
    at.file_uploader(key="pe.w.upload").set_value([("mixed.csv", mixed_file(), "text/csv")])
    run_ok(at)
    assert (at.session_state["pe.human"], at.session_state["pe.metrics"]) == ("human:relevance", ("llm:gpt4:relevance",))
    options = at.multiselect(key="pe.w.metrics").options
    assert set(options) == {"llm:gpt4:relevance", "neg_ter", "rougeL"}  # no annotator, no lower-is-better rater as it stands
    at.button(key="pe_negate").click()  # ter and output_length: their higher-is-better copies
    run_ok(at)
    assert {"neg_ter", "neg_output_length"} <= set(at.multiselect(key="pe.w.metrics").options)
    copy = at.session_state["pe.data"].load().ratings.set_index(["item_id", "system", "rater"])["score"]
    assert copy[("i0", "s1", "neg_ter")] == -copy[("i0", "s1", "ter")] == -50
    at.session_state["pe.rater_roles"] = {"rougeL": "annotator"}  # as the role column's edit sets it
    at.session_state["pe.rater_directions"] = {"neg_ter": "lower"}  # as the direction column's edit sets it
    run_ok(at)
    assert not {"rougeL", "neg_ter"} & set(at.multiselect(key="pe.w.metrics").options)


def test_every_files_errors_are_reported_together() -> None:
    from prefeval_core.errors import DataError

    bad_scores = b"item_id,system,rater,score\ni1,A,human,x\ni2,A,human,y\n"
    bad_metric = b"item_id,system,rater,score\ni1,A,bleu,1\ni2,A,bleu,oops\n"
    with pytest.raises(DataError) as refused:
        load_dataset([("a.csv", bad_scores), ("b.csv", bad_metric), ("c.csv", b"item_id,system,output\n"), ("d.csv", b"")])
    assert [(p.file, p.row) for p in refused.value.problems] == [("c.csv", None), ("d.csv", None), ("a.csv", 1), ("a.csv", 2), ("b.csv", 2)]


@pytest.mark.page
def test_a_reload_keeps_the_sessions_uploaded_data(data_dir: Path) -> None:
    at = run_ok(page("data.py"))
    at.radio(key="pe.w.source").set_value("Your files").run()
    at.file_uploader(key="pe.w.upload").set_value([("mixed.csv", mixed_file(), "text/csv")])
    run_ok(at)
    uploaded = at.session_state["pe.data"]
    digest = at.query_params["data"]
    digest = digest[0] if isinstance(digest, list) else digest
    reloaded = page("data.py")  # a new session with the same address
    reloaded.query_params["data"] = digest
    run_ok(reloaded)
    assert reloaded.session_state["pe.data"] == uploaded and reloaded.session_state["pe.human"] == "human:relevance"
    stranger = page("data.py")
    stranger.query_params["data"] = "0" * 32  # a digest the store never kept: the sample, and the address cleaned
    run_ok(stranger)
    assert stranger.session_state["pe.data"].kind == "sample" and "data" not in stranger.query_params


def test_annotators_who_disagree_are_flagged() -> None:
    lines = ["item_id,system,rater,score"]
    for k in range(6):
        for s, q in SCORES.items():
            lines += [f"i{k},{s},human:fluency,3", f"i{k},{s},human:fluency:a,{q}", f"i{k},{s},human:fluency:b,{6 - q}"]
            lines += [f"i{k},{s},human:coherence:a,{q}", f"i{k},{s},human:coherence:b,{q}"]
    profiles = {p.name: p for p in profile_raters(load_dataset([("d.csv", ("\n".join(lines) + "\n").encode())]))}
    assert profiles["human:fluency:a"].flags == ("the annotators of fluency agree little (mean correlation below 0.3)",)
    assert profiles["human:coherence:a"].flags == ()


def test_without_a_paired_judge_the_default_metric_is_the_one_closest_to_the_humans() -> None:
    lines = ["item_id,system,rater,score"]
    for k in range(6):
        for s, q in SCORES.items():
            lines += [f"i{k},{s},human,{q}", f"i{k},{s},a_noise,{(k * 7 + q * 3) % 5}", f"i{k},{s},b_close,{q / 5 + k / 100}"]
    dataset = load_dataset([("d.csv", ("\n".join(lines) + "\n").encode())])
    profiles = profile_raters(dataset)
    assert default_raters(profiles, dataset.ratings) == ("human", ("b_close",))
    assert default_raters(profiles) == ("human", ("a_noise",))  # without the scores: the first, as the data list them


@pytest.mark.page
def test_uploading_a_crowd_with_an_annotator_column_offers_its_human_rater_only(data_dir: Path) -> None:
    rows = "item_id,system,rater,annotator,score\n" + "".join(
        f"i{i},s{s},human,w{(3 * i + s + k) % 7},{(i + s * k) % 5 + 1}\n" for i in range(12) for s in range(3) for k in range(3)
    )
    rows += "".join(f"i{i},s{s},bleu,,0.{i + s}\n" for i in range(12) for s in range(3))
    at = run_ok(page("data.py"))
    at.radio(key="pe.w.source").set_value("Your files").run()
    at.file_uploader(key="pe.w.upload").set_value([("crowd.csv", rows.encode(), "text/csv")])
    run_ok(at)
    assert at.session_state["pe.human"] == "human" and at.multiselect(key="pe.w.metrics").options == ["bleu"]
    assert not at.warning  # the workers' partial coverage is no problem to report
