"""Push and pull (:mod:`prefeval_core.workflow.labelstudio`) against an in-memory stand-in for a
Label Studio server: what is created, reused, added and stored; an answer edited in Label Studio
replaces the one stored before (one judgment per request and annotator, the earlier kept as
history). The real server: tests/test_labelstudio_server.py."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from prefeval_core.errors import PrefevalError
from prefeval_core.store import Rating, open_store
from prefeval_core.workflow.labelstudio import import_export, pull_answers, push_round
from prefeval_core.workflow.session import DataChoice
from prefeval_core.workflow.setup import StudySetup
from prefeval_core.workflow.studies import begin_study, set_criterion
from tests.labelstudio_fixtures import Answer, choice, label_studio_export

SYSTEMS = ("good", "middle", "poor")


class FakeServer:
    """Projects held in memory; every task it was given is answered with ``answer`` (by user 7, "A better")."""

    def __init__(self) -> None:
        self.projects: dict[int, dict[str, Any]] = {}
        self.answer = Answer(choice("A better"), user=7)

    def find_project(self, title: str) -> tuple[int, str] | None:
        return next(((i, p["config"]) for i, p in self.projects.items() if p["title"] == title), None)

    def create_project(self, title: str, config: str, instructions: str) -> int:
        self.projects[len(self.projects) + 1] = {"title": title, "config": config, "instructions": instructions, "tasks": []}
        return len(self.projects)

    def set_config(self, project: int, config: str) -> None:
        self.projects[project]["config"] = config

    def task_data(self, project: int) -> list[Any]:
        return [task["data"] for task in self.projects[project]["tasks"]]

    def import_tasks(self, project: int, tasks: Sequence[dict[str, Any]]) -> None:
        self.projects[project]["tasks"] += [json.loads(json.dumps(task)) for task in tasks]

    def export_json(self, project: int) -> bytes:
        return label_studio_export(self.projects[project]["tasks"], lambda task: [self.answer])

    def user_emails(self) -> dict[str, str]:
        return {"7": "ann@example.org"}


@pytest.fixture
def study(tmp_path: Path):
    texts = "".join(f"i{k:02d},{s},{s} answer {k}\n" for k in range(12) for s in SYSTEMS)
    ratings = "".join(f"i{k:02d},{s},human,{3 + (s == 'good') - (s == 'poor')}\n" for k in range(3) for s in SYSTEMS)
    files = (
        ("texts.csv", ("item_id,system,output\n" + texts).encode()),
        ("ratings.csv", ("item_id,system,rater,score\n" + ratings).encode()),
    )
    data = DataChoice("upload", "push", files)
    store = open_store(tmp_path)
    setup = StudySetup(human="human", unit="comparisons", mode="live", budget=200, batch=2)
    yield store, begin_study(store, data, data.load(), setup, criterion="relevance").id
    store.dispose()


def test_push_creates_the_project_once_and_adds_each_task_once(study) -> None:
    store, study_id = study
    server = FakeServer()
    first = push_round(server, study_id, store=store)
    assert (first.created, first.added, first.already_had) == (True, 6, 0)
    (project,) = server.projects.values()
    assert project["title"].startswith(f"prefeval study {study_id} (") and "Which output is better in relevance?" in project["config"]
    again = push_round(server, study_id, store=store, seed=3)  # another left/right order: still the same requests
    assert (again.created, again.project, again.added, again.already_had) == (False, first.project, 0, 6)
    set_criterion(store, study_id, "fluency", "")
    push_round(server, study_id, store=store)
    assert "Which output is better in fluency?" in project["config"] and len(project["tasks"]) == 6


def test_pull_stores_each_answer_once_named_by_email(study) -> None:
    store, study_id = study
    server = FakeServer()
    with pytest.raises(PrefevalError, match="push the study's requests first"):
        pull_answers(server, study_id, store=store)
    push_round(server, study_id, store=store)
    pulled = pull_answers(server, study_id, store=store)
    assert (pulled.tasks, pulled.judgments, pulled.added, pulled.already_there) == (6, 6, 6, 0)
    assert pull_answers(server, study_id, store=store).already_there == 6
    stored = store.comparisons(study_id=study_id)
    assert len(stored) == 6 and {j.annotator for j in stored} == {"ann@example.org"}
    assert all(j.outcome == (0 if j.left_system == j.system_a else 2) for j in stored)  # "A better": the one shown as A won


def test_an_answer_edited_in_label_studio_replaces_the_one_stored_before(study) -> None:
    store, study_id = study
    server = FakeServer()
    push_round(server, study_id, store=store)
    first = pull_answers(server, study_id, store=store)
    server.answer = Answer(choice("B better"), user=7, edited=20)  # the annotator changed every answer
    edited = pull_answers(server, study_id, store=store)
    assert (first.added, edited.added, edited.replaced, edited.already_there) == (6, 6, 6, 0)
    counting = store.comparisons(study_id=study_id)
    assert len(counting) == 6 and all(j.outcome == (2 if j.left_system == j.system_a else 0) for j in counting)
    history = [j for j in store.comparisons(study_id=study_id, include_undone=True) if j.undone_at is not None]
    assert len(history) == 6 and {j.request_id for j in history} == {j.request_id for j in counting}  # the earlier kept, undone
    complete = store.complete_comparisons(store.study(study_id).dataset, study_id=study_id)
    assert len(complete) == 6 and set(complete["judgments"]) == {1}  # one judgment per request: nothing averaged
    again = pull_answers(server, study_id, store=store)
    assert (again.added, again.replaced, again.already_there) == (0, 0, 6)  # pulling again changes nothing

    (project,) = server.projects.values()  # another project's copy of the tasks, answered before the edit
    older = label_studio_export(project["tasks"], lambda task: [Answer(choice("A better"), user=7, minute=5)])
    read = import_export(study_id, "other-project.json", older, users=server.user_emails(), store=store)
    assert (read.added, read.replaced, read.already_there) == (0, 0, 6)  # older than what counts: not stored
    assert store.comparisons(study_id=study_id) == counting


def test_one_rating_per_request_and_annotator_the_latest_wins(tmp_path: Path) -> None:
    store = open_store(tmp_path)

    def rating(score: int, minute: int, annotator: str = "ann") -> Rating:
        return Rating("d", "i1", "s1", score, annotator, f"2025-03-04T10:{minute:02d}:00.000+00:00", origin="import")

    both = store.add_many([rating(3, 1), rating(5, 2), rating(4, 1, "bea")], supersede=True)  # two copies of one task
    assert (both.added, both.already_there, both.replaced) == (2, 1, 0)
    assert store.complete_ratings("d", per_item=1)[["score", "judgments"]].values.tolist() == [[4.5, 2]]
    later = store.add_many([rating(2, 3)], supersede=True)
    assert (later.added, later.replaced) == (1, 1)
    assert sorted((r.annotator, r.score) for r in store.ratings("d")) == [("ann", 2.0), ("bea", 4.0)]
    assert len(store.ratings("d", include_undone=True)) == 3
    store.dispose()
