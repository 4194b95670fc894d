"""Data page: upload files and see their summary; a bad file names the row; the column mapping."""

from __future__ import annotations

import pytest

from tests.page_fixtures import (
    data_dir,  # noqa: F401 (a fixture)
    metric_values,
    page,
    run_ok,
    shown,
)

pytestmark = [pytest.mark.page, pytest.mark.usefixtures("data_dir")]

LONG = b"item_id,system,rater,score\n" + b"".join(
    f"i{i},{s},{r},{(i * 7 + k * 3 + j) % 5}\n".encode()
    for i in range(6)
    for k, s in enumerate(["sysA", "sysB", "sysC"])
    for j, r in enumerate(["human", "bleu"])
)
WIDE = b"seg_id,model,human_score,bleu,chrf\ns1,X,1,0.1,0.2\ns1,Y,2,0.3,0.1\ns2,X,3,0.2,0.2\ns2,Y,1,0.1,0.4\n"


def upload(at, *files: tuple[str, bytes]):
    at.radio(key="pe.w.source").set_value("Your files").run()
    at.file_uploader(key="pe.w.upload").set_value([(name, data, "text/csv") for name, data in files])
    return at


def test_upload_shows_the_summary() -> None:
    at = upload(run_ok(page("data.py")), ("mine.csv", LONG))
    run_ok(at)
    assert metric_values(at) == {"Systems": "3", "Items": "6", "Raters": "2", "Texts": "no"}
    assert at.session_state["pe.data"].kind == "upload"
    assert (at.selectbox(key="pe.w.human").value, at.multiselect(key="pe.w.metrics").value) == ("human", ["bleu"])
    coverage = at.dataframe[1].value  # raters, then per-pair coverage
    assert list(coverage["human_items"]) == [6, 6, 6]
    assert len(coverage) == 3


def test_a_bad_file_names_the_row() -> None:
    bad = b"item_id,system,rater,score\ni1,A,human,1\ni1,B,human,lots\ni2,A,human,2\n"
    at = upload(run_ok(page("data.py")), ("bad.csv", bad))
    at.run()
    assert not at.exception
    message = shown(at.error[0].value)
    assert "bad.csv" in message and "row 2 (line 3)" in message and "score" in message and "lots" in message
    assert not at.metric  # the page stopped before the summary


def test_removing_every_file_clears_the_upload_and_its_error() -> None:
    bad = b"item_id,system,rater,score\n"  # a header and no rows
    at = upload(run_ok(page("data.py")), ("header_only.csv", bad))
    at.run()
    assert at.error and "header_only.csv" in shown(at.error[0].value)
    at.file_uploader(key="pe.w.upload").set_value([]).run()
    assert not at.exception and not at.error
    assert at.session_state["pe.data"].kind == "sample"
    assert any("No files yet" in shown(c.value) for c in at.caption)


def test_wide_file_with_column_mapping() -> None:
    at = upload(run_ok(page("data.py")), ("wide.csv", WIDE))
    run_ok(at)
    assert metric_values(at)["Raters"] == "3"  # human_score, bleu, chrf
    at.multiselect(key="pe.w.cols0").set_value(["human_score", "bleu"])
    at.selectbox(key="pe.w.kind0").set_value("wide_ratings")
    at.button[0].click()  # the form's "Apply mapping"
    run_ok(at)
    assert metric_values(at)["Raters"] == "2"
    assert at.session_state["pe.data"].rater_columns == (("wide.csv", ("human_score", "bleu")),)


def test_sample_picker_switches_data() -> None:
    at = run_ok(page("data.py"))
    at.selectbox(key="pe.w.sample").set_value("pandalm")
    run_ok(at)
    assert metric_values(at)["Systems"] == "5"
    assert at.selectbox(key="pe.w.human").value == "human"


def test_compute_a_text_metric_and_use_it() -> None:
    at = run_ok(page("data.py"))
    at.multiselect(key="pe.w.tm_metrics").set_value(["chrf"])
    at.radio(key="pe.w.tm_against").set_value("references")
    next(b for b in at.button if b.label == "Compute and add as raters").click()
    run_ok(at)
    assert metric_values(at)["Raters"] == "18"
    assert "chrf-ref" in at.multiselect(key="pe.w.metrics").options
    assert at.multiselect(key="pe.w.metrics").value == ["rougeL"]  # the choices made so far are kept
    assert at.session_state["pe.data"].key == "sample:summeval"  # annotations stay filed under the sample


def test_two_sessions_do_not_share_data() -> None:
    one = upload(run_ok(page("data.py")), ("mine.csv", LONG))
    run_ok(one)
    other = run_ok(page("data.py"))  # a second browser session, same server process
    assert metric_values(other)["Systems"] == "16"
    assert other.session_state["pe.data"].kind == "sample"
    assert metric_values(one)["Systems"] == "3"


def test_a_file_over_the_size_limit_is_refused_with_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("ui.cache.MAX_UPLOAD_MB", 0.0001)  # about 100 bytes
    at = upload(run_ok(page("data.py")), ("big.csv", LONG))
    at.run()
    assert not at.exception
    message = shown(at.error[0].value)
    assert "big.csv" in message and "limit" in message
