"""Label Studio: the labeling configs, the tasks, the import of Label Studio's JSON export, its
refusals, and the round trip export -> annotate -> import -> the protocol decides with it."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from prefeval_core.annotation.blind import BlindKey, shown_side
from prefeval_core.annotation.labelstudio import (
    CHOICE_LABELS,
    comparison_project,
    rating_control,
    rating_project,
    read_label_studio_export,
)
from prefeval_core.annotation.rating_scale import RatingScale, rating_scale
from prefeval_core.errors import DataError, MalformedFileError, MissingColumnError
from prefeval_core.protocol import apply_judgments, decide_round, next_request
from prefeval_core.store import Comparison, Rating, Store, request_id_for
from prefeval_core.vocabulary.tasks import ComparisonTask, RatingTask
from prefeval_core.workflow.feed import stored_judgments
from prefeval_core.workflow.session import DataChoice
from prefeval_core.workflow.setup import StudySetup
from prefeval_core.workflow.studies import begin_study
from tests.labelstudio_fixtures import Answer, choice, label_studio_export
from tests.page_fixtures import data_dir, downloads  # noqa: F401 (fixtures)

FIVE = RatingScale(1.0, 5.0, (1.0, 2.0, 3.0, 4.0, 5.0))
TEXTS = pd.DataFrame({"item_id": ["i1", "i1", "i2"], "system": ["A", "B", "A"], "output": ["a one", "b one", "a two"]})
SOURCES = pd.DataFrame({"item_id": ["i1", "i2"], "source": ["first <source> & more", "second"]})
KEY = BlindKey(b"a study's key of thirty-two bytes")


def test_comparison_config_and_tasks() -> None:
    project = comparison_project(
        [ComparisonTask("i1", "A", "B"), ComparisonTask("i2", "A", "B")], "k", key=KEY, texts=TEXTS, sources=SOURCES, seed=3
    )
    root = ET.fromstring(project.config)
    assert root.tag == "View"
    choices = root.find(".//Choices")
    assert choices is not None and choices.attrib == {
        "name": "preference", "toName": "output_a", "choice": "single-radio", "required": "true", "showInline": "true",
    }  # fmt: skip
    assert [(c.get("value"), c.get("hotkey")) for c in choices] == [("A better", "a"), ("Equal", "e"), ("B better", "b"), ("Both bad", "x")]
    names = {t.get("name"): t.get("value") for t in root.iter("Text")}
    # data keys of prefeval's own: Label Studio's data manager adds a `source` field (the whole task as JSON)
    assert names == {"source": "$prefeval_source", "output_a": "$prefeval_output_a", "output_b": "$prefeval_output_b"}
    assert [h.get("value") for h in root.iter("Header")][-1] == "Which output is better?"
    tasks = json.loads(project.tasks_json())
    assert [set(t) for t in tasks] == [{"data"}, {"data"}]
    first = next(t["data"] for t in tasks if t["data"]["prefeval"]["item_id"] == "i1")
    left = "A" if shown_side(KEY.coin_seed(3), "k", ComparisonTask("i1", "A", "B")) == "first" else "B"
    assert first["prefeval_output_a"] == ("a one" if left == "A" else "b one")
    assert first["prefeval_source"] == "first <source> & more"
    # blind: the data names no system, data key, study or side; the token and digest are keyed
    assert set(first) == {"prefeval_source", "prefeval_output_a", "prefeval_output_b", "prefeval"}
    assert set(first["prefeval"]) == {"kind", "item_id", "request_id", "digest"}
    assert first["prefeval"]["kind"] == "comparison" and first["prefeval"]["request_id"] != request_id_for("k", None, "i1", ("A", "B"))
    second = next(t["data"] for t in tasks if t["data"]["prefeval"]["item_id"] == "i2")
    assert "" in (second["prefeval_output_a"], second["prefeval_output_b"])  # B has no output on i2
    relevance = comparison_project([ComparisonTask("i1", "A", "B")], "k", key=KEY, criterion="relevance")
    assert [h.get("value") for h in ET.fromstring(relevance.config).iter("Header")][-1] == "Which output is better in relevance?"


@pytest.mark.parametrize(
    ("scale", "tag", "attributes", "choices"),
    [
        (FIVE, "Rating", {"maxRating": "5"}, None),
        (RatingScale(0.0, 6.0, tuple(float(v) for v in range(7))), "Choices", {"choice": "single-radio"}, [str(v) for v in range(7)]),
        (RatingScale(-25.0, 0.0, None), "Number", {"min": "-25", "max": "0", "step": "0.1"}, None),
    ],
)
def test_rating_configs_follow_the_scale(scale: RatingScale, tag: str, attributes: dict[str, str], choices: list[str] | None) -> None:
    project = rating_project([RatingTask("i1", "A")], "k", scale, key=KEY, texts=TEXTS)
    root = ET.fromstring(project.config)
    control = root.find(f".//{tag}")
    assert control is not None and control.get("name") == "score" and control.get("toName") == "output"
    assert attributes.items() <= control.attrib.items()
    if choices is not None:
        assert [(c.get("value"), c.get("hotkey")) for c in control] == [(v, v) for v in choices]
    assert json.loads(project.tasks_json())[0]["data"]["prefeval_output"] == "a one"
    relevance = rating_project([RatingTask("i1", "A")], "k", FIVE, key=KEY, criterion="relevance")
    headers = [h.get("value") for h in ET.fromstring(relevance.config).iter("Header")]
    assert headers[-1] == "Rate the relevance of this output from 1 (worst) to 5 (best)"


def comparison_tasks(study_id: int | None = 4) -> list[dict]:
    tasks = [ComparisonTask("i1", "A", "B"), ComparisonTask("i2", "A", "B"), ComparisonTask("i3", "B", "C")]
    return json.loads(comparison_project(tasks, "k", key=KEY, study_id=study_id).tasks_json())


def read(data: bytes, study_id: int | None = 4, **kwargs):
    options = {"key": KEY} | kwargs
    return read_label_studio_export("project-7-at-2025-03-04.json", data, "k", study_id=study_id, systems=("A", "B", "C"), **options)


def test_import_reads_choices_annotators_times_and_skips() -> None:
    def answers(task: dict) -> list[Answer]:
        item = task["data"]["prefeval"]["item_id"]
        if item == "i1":  # user 1 chose A, then changed to Both bad; user 2 cancelled; user 3 (an object) chose B
            kim = {"id": 3, "email": "kim@example.org"}
            return [
                Answer(choice("A better"), user=1, minute=1),
                Answer(choice("Both bad"), user=1, minute=5),
                Answer(None, user=2, cancelled=True),
                Answer(choice("B better"), user=kim, minute=2),
            ]
        if item == "i2":
            return [Answer(None, user=2)]  # submitted with an empty result
        return []  # not annotated yet

    data = label_studio_export(comparison_tasks(), answers)
    with pytest.raises(DataError, match=r"row 1, column 'annotations': task 41: two different answers by labelstudio:1"):
        read(data)  # which of user 1's two answers would count?
    loaded = read(data, latest_wins=True)
    assert (loaded.tasks, loaded.unanswered, loaded.skipped) == (3, 1, 3)
    by_annotator = {j.annotator: j for j in loaded.judgments}
    assert set(by_annotator) == {"labelstudio:1", "kim@example.org"}
    both_bad = by_annotator["labelstudio:1"]
    assert isinstance(both_bad, Comparison) and both_bad.outcome == 1 and both_bad.label == "both_bad"
    assert both_bad.created_at == "2025-03-04T10:05:07.512+00:00" and both_bad.origin == "import" and both_bad.study_id == 4
    kim = by_annotator["kim@example.org"]
    assert isinstance(kim, Comparison)
    right = "B" if kim.left_system == "A" else "A"
    assert kim.outcome == (0 if right == "A" else 2)  # "B better" is the output shown on the right


def test_importing_twice_stores_each_judgment_once(tmp_path: Path) -> None:
    store = Store.at(f"sqlite:///{tmp_path / 'store.sqlite'}")
    data = label_studio_export(comparison_tasks(study_id=None), lambda task: [Answer(choice("Equal"))])
    first = store.add_many(read(data, study_id=None).judgments)
    again = store.add_many(read(data, study_id=None).judgments)
    assert (first.added, first.already_there, again.added, again.already_there) == (3, 0, 0, 3)
    store.dispose()


def test_ratings_on_each_kind_of_scale() -> None:
    def rated(scale: RatingScale, value: dict) -> Rating:
        tasks = json.loads(rating_project([RatingTask("i1", "A")], "k", scale, key=KEY, study_id=4).tasks_json())
        (judgment,) = read(label_studio_export(tasks, lambda t: [Answer(value)]), scale=scale).judgments
        assert isinstance(judgment, Rating)
        return judgment

    assert rated(FIVE, {"rating": 4}).score == 4.0
    assert rated(RatingScale(0.0, 6.0, tuple(float(v) for v in range(7))), choice("0")).score == 0.0
    assert rated(RatingScale(-25.0, 0.0, None), {"number": -5.1}).score == -5.1
    with pytest.raises(DataError, match=r"row 1 \(task 41\)|task 41: expected a score from 1 \(worst\) to 5 \(best\), found 6"):
        rated(FIVE, {"rating": 6})
    with pytest.raises(DataError, match=r"task 41: expected a score from a number from -25 \(worst\) to 0 \(best\), found 3"):
        rated(RatingScale(-25.0, 0.0, None), {"number": 3})
    assert rating_control(FIVE) == "rating" and rating_control(RatingScale(0.0, 1.0, (0.0, 1.0))) == "choices"


EXPORTED = "exported for this study (changed after the export, or exported for other data or another study); export the requests again"
AMONG_SYSTEMS = "among the data's systems (changed after the export, or exported for other data); export the requests again"


def older_tasks(study_id: int | None = 4, seed: int = 0) -> list[dict]:
    """Tasks as prefeval exported them before keyed tokens: data key, study id, an unkeyed
    request id and ``left`` in the ``prefeval`` object, the texts under Label Studio-like keys."""
    tasks = []
    for task in [ComparisonTask("i1", "A", "B"), ComparisonTask("i2", "A", "B"), ComparisonTask("i3", "B", "C")]:
        meta = {
            "kind": "comparison", "dataset": "k", "study_id": study_id, "item_id": task.item_id,
            "request_id": request_id_for("k", study_id, task.item_id, task.systems), "left": shown_side(seed, "k", task),
        }  # fmt: skip
        tasks.append({"data": {"item_id": task.item_id, "source": "", "output_a": "x", "output_b": "y", "prefeval": meta}})
    return tasks


def test_tasks_prefeval_never_exported_or_changed_are_refused() -> None:
    tasks = comparison_tasks()
    foreign = {"data": {"text": "a task made in Label Studio"}}
    other_study = json.loads(comparison_project([ComparisonTask("i1", "A", "B")], "k", key=KEY, study_id=5).tasks_json())[0]
    tampered = json.loads(json.dumps(tasks[1]))
    tampered["data"]["prefeval"]["item_id"] = "i3"
    unknown_system = json.loads(comparison_project([ComparisonTask("i1", "A", "Z")], "k", key=KEY, study_id=4).tasks_json())[0]
    flipped = json.loads(json.dumps(tasks[0]))
    flipped["data"]["prefeval_output_a"], flipped["data"]["prefeval_output_b"] = "b one", "a one"
    old_other_study = older_tasks(study_id=5)[0]
    tasks_in_file = [tasks[0], foreign, other_study, tampered, unknown_system, flipped, old_other_study]
    data = label_studio_export(tasks_in_file, lambda t: [Answer(choice("Equal"))])
    with pytest.raises(DataError) as info:
        read(data)
    messages = [(p.file, p.row, p.message) for p in info.value.problems]
    name = "project-7-at-2025-03-04.json"
    assert messages == [
        (name, 2, "task 42: this task was not exported by prefeval (its data has no 'prefeval' object); export the requests again"),
        (name, 3, f"task 43: its request id is not one of a comparison of item i1 {EXPORTED}"),
        (name, 4, f"task 44: its request id is not one of a comparison of item i3 {EXPORTED}"),
        (name, 5, f"task 45: its request id is not one of a comparison of item i1 {EXPORTED}"),
        (name, 6, "task 46: its texts or its 'prefeval' object were changed after the export (the digest does not match); export again"),
        (name, 7, "task 47: exported for study #5, not for study #4"),
    ]
    with pytest.raises(DataError, match="exported with the study's key, and the import was given none"):
        read(label_studio_export(tasks[:1], lambda t: [Answer(choice("Equal"))]), key=None)
    with pytest.raises(DataError, match=re.escape(f"item i1 {EXPORTED}")):
        read(label_studio_export(tasks[:1], lambda t: [Answer(choice("Equal"))]), key=BlindKey(b"another study's key, 32 bytes!!"))
    only_first = [ComparisonTask("i1", "A", "B")]
    second = next(t for t in tasks if t["data"]["prefeval"]["item_id"] == "i2")
    with pytest.raises(DataError, match=r"item i2 of A, B is not among the requests this import accepts"):
        read(label_studio_export([second], lambda t: [Answer(choice("Equal"))]), known=only_first)


def test_hashing_candidate_system_names_recovers_no_task() -> None:
    tokens = {t["data"]["prefeval"]["request_id"] for t in comparison_tasks()}
    guesses = {
        request_id_for(dataset, study, item, pair)
        for dataset in ("k", "sample:k", "upload:k")
        for study in (None, *range(10))
        for item in ("i1", "i2", "i3")
        for pair in (("A", "B"), ("A", "C"), ("B", "C"))
    }
    assert len(tokens) == 3 and not tokens & guesses


def test_older_exports_are_still_read_and_a_changed_side_is_refused() -> None:
    blind = older_tasks()
    named = json.loads(json.dumps(blind))
    for task, (a, b) in zip(named, [("A", "B"), ("A", "B"), ("B", "C")], strict=True):
        meta = task["data"]["prefeval"]
        left = a if meta.pop("left") == "first" else b
        meta |= {"system_a": a, "system_b": b, "left_system": left}
    answer = lambda task: [Answer(choice("A better"))]  # noqa: E731
    from_blind, from_named = read(label_studio_export(blind, answer)), read(label_studio_export(named, answer))
    assert [(j.item_id, j.system_a, j.system_b, j.left_system, j.outcome) for j in from_blind.judgments] == [
        (j.item_id, j.system_a, j.system_b, j.left_system, j.outcome) for j in from_named.judgments
    ]
    assert len(from_blind.judgments) == 3
    assert all(j.outcome == (0 if j.left_system == j.system_a else 2) for j in from_blind.judgments)  # "A better" is the left one
    blind[0]["data"]["prefeval"]["left"] = "A"
    with pytest.raises(DataError, match=r"task 41: its 'prefeval' object has left = 'A'; expected 'first' or 'second'"):
        read(label_studio_export(blind, answer))


def test_answers_off_the_config_are_refused() -> None:
    tasks = comparison_tasks()[:1]
    with pytest.raises(DataError, match=r"task 41: expected one of the choices A better, Equal, B better, Both bad, found \['Maybe'\]"):
        read(label_studio_export(tasks, lambda t: [Answer(choice("Maybe"))]))
    other_config = label_studio_export(tasks, lambda t: [Answer(choice("Equal"))]).replace(
        b'"from_name": "preference"', b'"from_name": "sentiment"'
    )
    with pytest.raises(DataError, match=r"the annotation has results of sentiment but none of 'preference' \(another labeling config\?\)"):
        read(other_config)


def test_files_that_are_not_a_json_export_are_refused() -> None:
    data = label_studio_export(comparison_tasks(), lambda t: [Answer(choice("Equal"))])
    with pytest.raises(MalformedFileError, match=r"project-7-at-2025-03-04\.json, line \d+: not valid JSON"):
        read(data[:-40])
    json_min = json.dumps([{"id": 41, "item_id": "i1", "preference": "Equal", "annotator": 1}]).encode()
    with pytest.raises(MissingColumnError, match=r"needs the key 'data' in every task \(export the project as JSON, not JSON-MIN or CSV"):
        read(json_min)
    with pytest.raises(MalformedFileError, match=r"expected a JSON array of objects"):
        read(b'{"tasks": []}')


# ---------------------------------------------------------------------------------------------
# Round trip: a live study's request -> Label Studio tasks -> annotated (the export above) ->
# imported into the store -> fed to the protocol, which decides with them.

SYSTEMS = ("good", "middle", "poor")


def study_data(items: int = 40) -> DataChoice:
    texts = "".join(f"i{k:02d},{s},{s} answer {k}\n" for k in range(items) for s in SYSTEMS)
    ratings = "".join(f"i{k:02d},{s},human,{3 + (s == 'good') - (s == 'poor')}\n" for k in range(3) for s in SYSTEMS)
    files = (
        ("texts.csv", ("item_id,system,output\n" + texts).encode()),
        ("ratings.csv", ("item_id,system,rater,score\n" + ratings).encode()),
    )
    return DataChoice("upload", "roundtrip", files)


def system_behind(output: str) -> str:
    """The annotators of these tests judge by the texts ("good answer 7"): the tasks name no system."""
    return output.split()[0]


def prefer_the_better(task: dict) -> list[Answer]:
    meta = task["data"]["prefeval"]
    shown = (system_behind(task["data"]["prefeval_output_a"]), system_behind(task["data"]["prefeval_output_b"]))
    label = CHOICE_LABELS["left"] if min(shown, key=SYSTEMS.index) == shown[0] else CHOICE_LABELS["right"]
    # two annotators judge every item; one of them calls every fifth item a tie
    tie = int(meta["item_id"][1:]) % 5 == 0
    return [Answer(choice(label), user=1), Answer(choice("Equal" if tie else label), user=2, minute=3)]


@pytest.mark.parametrize("unit", ["comparisons", "ratings"])
def test_round_trip_export_annotate_import_decide(tmp_path: Path, unit: str) -> None:
    store = Store.at(f"sqlite:///{tmp_path / 'store.sqlite'}")
    data = study_data()
    dataset = data.load()
    setup = StudySetup(human="human", unit=unit, mode="live", budget=400, batch=15, judgments_per_item=2)  # type: ignore[arg-type]
    study = begin_study(store, data, dataset, setup)
    request = next_request(study.state)
    assert len(request.tasks) > 0
    if unit == "comparisons":
        project = comparison_project(
            request.tasks, data.key, key=KEY, texts=dataset.texts, sources=dataset.sources, study_id=study.id, seed=11
        )  # type: ignore[arg-type]
        answers, scale = prefer_the_better, None
    else:
        scale = rating_scale(dataset, "human")
        assert scale.levels == (2.0, 3.0, 4.0)
        project = rating_project(request.tasks, data.key, scale, key=KEY, texts=dataset.texts, study_id=study.id)  # type: ignore[arg-type]

        def answers(task: dict) -> list[Answer]:
            system = system_behind(task["data"]["prefeval_output"])
            level = {"good": "4", "middle": "3", "poor": "2"}[system]
            return [Answer(choice(level), user=1), Answer(choice(level), user=2, minute=2)]

    exported = label_studio_export(json.loads(project.tasks_json()), answers)
    (tmp_path / "export.json").write_bytes(exported)
    loaded = read_label_studio_export(
        "export.json", exported, data.key, study_id=study.id, systems=dataset.systems, scale=scale, known=request.tasks, key=KEY
    )
    assert len(loaded.judgments) == 2 * len(request.tasks) and loaded.unanswered == 0
    result = store.add_many(loaded.judgments)
    assert result.added == len(loaded.judgments)

    fed = stored_judgments(store, data.key, study.state, study_id=study.id, per_item=2)
    assert len(fed) == len(request.tasks) and all(j.cost == 2 for j in fed)
    state = decide_round(apply_judgments(study.state, fed))
    assert state.cost_used == 2 * len(request.tasks)
    decided = dict(zip(state.table.pairs, state.decisions.tolist(), strict=True))
    # every pair is decided for the better system (canonical order: good < middle < poor, so '>' = 0)
    assert decided == {("good", "middle"): 0, ("good", "poor"): 0, ("middle", "poor"): 0}
    (record,) = state.records
    assert np.all(np.isfinite(record.theta)) and record.cost == 2 * len(request.tasks)
    store.dispose()


def test_the_cli_exports_imports_and_steps_a_study(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from prefeval_core.cli import main
    from prefeval_core.store import open_store

    monkeypatch.setenv("PREFEVAL_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("PREFEVAL_DATABASE_URL", raising=False)
    data = study_data()
    setup = StudySetup(human="human", unit="comparisons", mode="live", budget=200, batch=10)
    study = begin_study(open_store(tmp_path), data, data.load(), setup)
    out = tmp_path / "project"
    assert main(["labelstudio", "export", str(study.id), "--out", str(out), "--seed", "5", "--json"]) == 0
    exported = json.loads(capsys.readouterr().out)
    assert exported["tasks"] == 30 and exported["control"] == "choices" and ET.parse(out / "config.xml").getroot().tag == "View"
    tasks = json.loads((out / "tasks.json").read_bytes())
    (tmp_path / "export.json").write_bytes(label_studio_export(tasks, lambda task: prefer_the_better(task)[:1]))
    assert main(["labelstudio", "import", str(study.id), str(tmp_path / "export.json"), "--json"]) == 0
    imported = json.loads(capsys.readouterr().out)
    assert (imported["judgments"], imported["added"], imported["already_there"]) == (30, 30, 0)
    assert main(["labelstudio", "import", str(study.id), str(tmp_path / "export.json")]) == 0
    assert "0 new, 30 already stored" in capsys.readouterr().out
    assert main(["studies", "step", str(study.id), "--json"]) == 0
    stepped = json.loads(capsys.readouterr().out)
    assert stepped["round"] == 1 and stepped["cost_used"] == 30
    (tmp_path / "broken.json").write_bytes(b"[{]")
    assert main(["labelstudio", "import", str(study.id), str(tmp_path / "broken.json")]) == 1
    assert "broken.json, line 1: not valid JSON" in capsys.readouterr().err


@pytest.mark.page
def test_the_annotate_page_offers_the_project_and_takes_the_export(data_dir: Path, downloads) -> None:  # noqa: F811
    from prefeval_core.store import open_store
    from tests.page_fixtures import page_with_protocol, run_ok, shown, start_protocol

    at = start_protocol(500, batch=2, mode="live", unit="comparisons")
    annotate = page_with_protocol("annotate.py", at)
    annotate.session_state["pe.study"] = study = at.session_state["pe.study"]
    run_ok(annotate)
    tasks = json.loads(downloads(annotate, "Label Studio tasks (JSON)"))
    assert len(tasks) == 240 and all(set(t["data"]["prefeval"]) == {"kind", "item_id", "request_id", "digest"} for t in tasks)
    assert ET.fromstring(downloads(annotate, "Label Studio labeling config (XML)")).find(".//Choices") is not None
    export = label_studio_export(tasks[:5], lambda task: [Answer(choice("A better"), user=9)])
    annotate.file_uploader(key="pe.w.ls_export").set_value(("project-1.json", export, "application/json"))
    run_ok(annotate)
    assert "Imported 5 judgments from the Label Studio export project-1.json (0 were already stored" in shown(annotate.success[0].value)
    stored = open_store(data_dir).comparisons("sample:summeval", study_id=study.id)
    assert len(stored) == 5 and {s.annotator for s in stored} == {"labelstudio:9"} and {s.origin for s in stored} == {"import"}
    metrics = at.session_state["pe.protocol"].table.metric_raters
    assert metrics and annotate.selectbox(key="pe.w.agree_metric").value == metrics[0]  # agreement with the study's metric
    annotate.file_uploader(key="pe.w.ls_export").set_value(("project-1.json", export[:-3], "application/json"))
    annotate.run()
    assert "project-1.json, line" in shown(annotate.error[0].value)
