"""The door's functions behind the dashboard's actions, without the dashboard: a judgment stored
at once and undone, request and Label Studio files imported once, the raters a study opens with,
a session saved and restored into another store, the report without a protocol."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from prefeval_core.vocabulary.tasks import ComparisonTask, RatingTask
from prefeval_core.workflow.datasets import describe_data, file_columns, grouped_warnings
from prefeval_core.workflow.judgments import (
    export_judgments,
    import_judged_requests,
    record_comparison,
    record_rating,
    shown_sides,
    undo_last,
)
from prefeval_core.workflow.labelstudio import import_label_studio_export, label_studio_project
from prefeval_core.workflow.metric_check import MetricCheck, check_metric
from prefeval_core.workflow.raters import metric_candidates, rater_directions, rater_roles, starting_raters
from prefeval_core.workflow.request_files import blind_key, request_files
from prefeval_core.workflow.session import DataChoice, session_from_json, session_snapshot, session_to_json
from prefeval_core.workflow.session_restore import restore_into_store
from prefeval_core.workflow.studies import study_store
from prefeval_core.workflow.study_report import session_report_html
from prefeval_core.workflow.views import decisions_dag
from tests.data_helpers import RATINGS_CSV
from tests.labelstudio_fixtures import Answer, choice, label_studio_export

TEXTS_CSV = "item_id,system,output\ni1,A,a one\ni1,B,b one\ni2,A,a two\ni2,B,b two\n"
DATA = DataChoice("upload", "ratings + texts", (("ratings.csv", RATINGS_CSV.encode()), ("texts.csv", TEXTS_CSV.encode())))
PAIRS = [ComparisonTask("i1", "A", "B"), ComparisonTask("i2", "A", "B")]


def test_a_judgment_is_stored_at_once_and_undone(tmp_path: Path) -> None:
    store = study_store(tmp_path)
    task = PAIRS[0]
    left, right = shown_sides(3, DATA.key, task)
    assert {left, right} == {"A", "B"} and shown_sides(3, DATA.key, task) == (left, right)
    stored = record_comparison(store, DATA.key, task, "left", left, "ann", study_id=None, criterion="relevance")
    assert store.comparisons(DATA.key) == [stored]
    assert stored.outcome == (0 if left == "A" else 2) and stored.criterion == "relevance"  # the left output is better
    rating = record_rating(store, DATA.key, RatingTask("i1", "A"), 4.0, "ann", study_id=None, criterion=None)
    assert store.ratings(DATA.key) == [rating]
    undone = undo_last(store, DATA.key, "ann", "rating", study_id=None)
    assert undone is not None and undone.item_id == "i1" and store.ratings(DATA.key) == []
    assert undo_last(store, DATA.key, "ann", "rating", study_id=None) is None
    rows = list(csv.DictReader(io.StringIO(export_judgments(store, "csv", DATA.key, study_id=None).decode())))
    assert sorted(r["kind"] for r in rows) == ["comparison", "rating"]  # the undone rating is kept, marked


def test_a_judged_request_file_and_a_label_studio_export_are_imported_once(tmp_path: Path) -> None:
    store = study_store(tmp_path)
    dataset = DATA.load()
    files = request_files(PAIRS, dataset, DATA.key, study_id=None, seed=0, secret=blind_key(store, DATA.key, None))
    rows = list(csv.DictReader(io.StringIO(files["csv"].decode())))
    for row in rows:
        row["label"] = "A"
    judged = io.StringIO()
    writer = csv.DictWriter(judged, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    first, again = (
        import_judged_requests(
            store, "judged.csv", judged.getvalue().encode(), DATA.key, systems=dataset.systems, scale=None, annotator="ann", study_id=None
        )
        for _ in range(2)
    )
    assert (first.added, again.added, again.already_there) == (2, 0, 2)

    project = label_studio_project(store, PAIRS, dataset, DATA.key, None, study_id=None, seed=0, criterion="relevance")
    export = label_studio_export(json.loads(project.tasks_json()), lambda task: [Answer(choice("Equal"), user=9)])
    imported, twice = (
        import_label_studio_export(store, "export.json", export, DATA.key, systems=dataset.systems, study_id=None, scale=None)
        for _ in range(2)
    )
    assert (imported.loaded.tasks, imported.stored.added, twice.stored.added, twice.stored.already_there) == (2, 2, 0, 2)
    assert len(store.comparisons(DATA.key)) == 4


def test_the_data_are_described_and_the_raters_chosen() -> None:
    dataset = DATA.load()
    assert file_columns("ratings.csv", RATINGS_CSV.encode(), max_bytes=10_000) == ("item_id", "system", "rater", "score")
    assert describe_data(dataset, "human", "bleu").systems == ("A", "B", "C")
    assert grouped_warnings(dataset) == tuple(grouped_warnings(dataset))
    roles, directions = rater_roles(dataset, {}), rater_directions(dataset, {})
    assert roles == {"bleu": "metric", "human": "human"} and directions == {"bleu": "higher", "human": "higher"}
    assert metric_candidates(dataset, "human", roles, directions) == ["bleu"]
    assert starting_raters(dataset, roles, directions) == ("human", ("bleu",))
    assert starting_raters(dataset, roles, directions, ("human", ("missing",))) == ("human", ("bleu",))
    lower = rater_directions(dataset, {"bleu": "lower"})
    assert starting_raters(dataset, roles, lower) == ("human", ())  # a lower-is-better rater is no metric as it stands


def test_a_saved_session_restores_into_another_store(tmp_path: Path) -> None:
    saved = study_store(tmp_path / "saved")
    record_comparison(saved, DATA.key, PAIRS[0], "equal", "A", "ann", study_id=None, criterion=None)
    check = MetricCheck("human", "bleu", gamma=0.1)
    snap = session_snapshot(saved, DATA, "human", ("bleu",), None, check, None)
    text = session_to_json(snap)
    other = study_store(tmp_path / "other")
    done = restore_into_store(other, session_from_json(text))
    assert (done.added, done.study, done.session.check, done.session.protocol) == (1, None, check, None)
    assert restore_into_store(other, session_from_json(text)).added == 0


def test_the_report_without_a_protocol_and_a_dag_of_decisions() -> None:
    report = check_metric(DATA.load(), MetricCheck("human", "bleu"))
    html = session_report_html("prefeval report", None, None, metric=report)
    assert "Metric check: bleu against human" in html and "<script" not in html  # no figures asked: no plotly.js
    figure, cycles = decisions_dag((("A", "B"), ("B", "C")), (0, 0), None, (0.99, 0.98), "decided")
    assert cycles == () and figure.layout.title.text == "decided"
