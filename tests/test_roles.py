"""Issue 19: annotator links (hashed tokens, refused when forged, revoked or for another study),
the criterion that travels with a study and its judgments, archive and rename, the per-annotator
queue, and ``prefeval studies invite/revoke``."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import text

from prefeval_core.cli import main
from prefeval_core.store import Rating, Store, open_store, utc_now
from prefeval_core.vocabulary.tasks import ComparisonTask, RatingTask
from prefeval_core.workflow import StudySetup
from prefeval_core.workflow.judgments import record_comparison, record_rating, undo_last
from prefeval_core.workflow.queue import annotator_queue
from prefeval_core.workflow.roles import AccessError, Annotator, annotator_for_token, invitations, invite_annotator, revoke_annotator
from prefeval_core.workflow.studies import (
    archive_study,
    begin_study,
    default_criterion,
    list_studies,
    rename_study,
    resume_study,
    set_criterion,
    study_details,
)
from tests.test_requests_cli import study_data


def live_study(store: Store, **details: str) -> int:
    data = study_data()
    setup = StudySetup(human="human", unit="ratings", mode="live", budget=200, batch=10)
    return begin_study(store, data, data.load(), setup, **details).id


def test_a_link_names_its_annotator_and_study_and_nothing_else_opens(store_url: str) -> None:
    store = Store.at(store_url)
    first, second = live_study(store), live_study(store)
    alice, bob = invite_annotator(store, first, "alice"), invite_annotator(store, first, " bob ")
    assert len(alice) >= 40 and alice != bob
    assert annotator_for_token(store, alice) == Annotator(first, "alice")
    assert annotator_for_token(store, bob, first) == Annotator(first, "bob")
    with store.db.reading() as conn:  # the store keeps hashes, never a token
        kept = conn.execute(text("SELECT token_hash FROM invitations")).scalars().all()
    assert len(kept) == 2 and alice not in kept and bob not in kept
    refusals = {
        "forged": (alice[:-2] + "xx", None),
        "empty": ("", None),
        "another study's": (alice, second),
    }
    kinds = {}
    for name, (token, study) in refusals.items():
        with pytest.raises(AccessError) as refused:
            annotator_for_token(store, token, study)
        kinds[name] = refused.value.problems[0].kind
    assert kinds == {"forged": "unknown_link", "empty": "unknown_link", "another study's": "other_study"}
    assert revoke_annotator(store, first, "alice") == 1 and revoke_annotator(store, first, "alice") == 0
    with pytest.raises(AccessError, match="withdrawn"):
        annotator_for_token(store, alice)
    assert annotator_for_token(store, bob) == Annotator(first, "bob")  # revoking one link leaves the others
    new_bob = invite_annotator(store, first, "bob")  # a new link for bob: the old one stops working
    with pytest.raises(AccessError, match="withdrawn"):
        annotator_for_token(store, bob)
    assert annotator_for_token(store, new_bob) == Annotator(first, "bob")
    assert [(i.annotator, i.revoked_at is None) for i in invitations(store, first)] == [("alice", False), ("bob", False), ("bob", True)]
    store.dispose()


def test_the_criterion_travels_with_the_study_and_its_judgments(store_url: str) -> None:
    store = Store.at(store_url)
    plain = live_study(store)
    told = live_study(store, criterion="relevance", guidelines="Does the summary keep **only** what matters?")
    data = study_data()
    assert study_details(store, plain).criterion == "overall quality" and study_details(store, plain).kind == "live"
    resumed = resume_study(store, told, data.load())
    assert (resumed.criterion, resumed.guidelines) == ("relevance", "Does the summary keep **only** what matters?")
    set_criterion(store, told, "faithfulness", "")
    assert resume_study(store, told, data.load()).criterion == "faithfulness"
    stored = store.add(Rating(data.key, "i01", "good", 4.0, "alice", utc_now(), study_id=told, criterion="faithfulness"))
    assert store.ratings(data.key, study_id=told) == [stored] and stored.criterion == "faithfulness"
    assert b"faithfulness" in store.export("csv", data.key)
    store.dispose()


def test_default_criterion_is_the_human_raters_criterion() -> None:
    assert default_criterion("human:relevance") == "relevance"
    assert default_criterion("human:mqm:rater1") == "mqm"
    assert default_criterion("fluency") == "fluency"


def test_a_human_rater_naming_no_criterion_asks_for_overall_quality() -> None:
    # "Judge the human" asks nothing: a name that states no criterion gets a neutral one
    for name in ("human", "human::alice", "human:", " human "):
        assert default_criterion(name) == "overall quality", name


def test_a_withdrawn_link_stores_nothing_whenever_its_page_was_drawn(store_url: str) -> None:
    store = Store.at(store_url)
    study, other = live_study(store, criterion="relevance"), live_study(store)
    alice = annotator_for_token(store, invite_annotator(store, study, "alice"))  # the page is drawn with this
    key, task = study_data().key, RatingTask("i01", "good")

    def rate(name: str, study_id: int, score: float = 4.0) -> Rating:
        return record_rating(store, key, task, score, name, study_id=study_id, criterion="relevance", link=alice.token)

    assert rate("alice", study).annotator == "alice"
    refusals = {}
    for case, (name, study_id) in {"another annotator": ("bob", study), "another study": ("alice", other)}.items():
        with pytest.raises(AccessError) as refused:
            rate(name, study_id, 3.0)
        refusals[case] = refused.value.problems[0].kind
    assert refusals == {"another annotator": "other_annotator", "another study": "other_study"}
    revoke_annotator(store, study, "alice")
    with pytest.raises(AccessError, match="This link was withdrawn by the study's lead") as refused:
        rate("alice", study, 2.0)  # a click in the tab left open
    assert refused.value.problems[0].kind == "revoked_link"
    comparison = ComparisonTask("i01", "good", "poor")
    with pytest.raises(AccessError, match="withdrawn"):
        record_comparison(store, key, comparison, "left", "good", "alice", study_id=study, criterion="relevance", link=alice.token)
    with pytest.raises(AccessError, match="withdrawn"):
        undo_last(store, key, "alice", "rating", study_id=study, link=alice.token)
    assert [(r.annotator, r.score, r.undone_at) for r in store.ratings(key, study_id=study, include_undone=True)] == [("alice", 4.0, None)]
    assert store.ratings(key, study_id=other) == [] and store.comparisons(key) == []
    lead = record_rating(store, key, task, 5.0, "lead", study_id=study, criterion="relevance")  # the lead's page has no link
    assert store.ratings(key, study_id=study)[-1] == lead
    store.dispose()


def test_studies_are_renamed_and_archived_never_deleted(store_url: str) -> None:
    store = Store.at(store_url)
    kept, gone = live_study(store), live_study(store)
    rename_study(store, kept, "Relevance, team A")
    archive_study(store, gone)
    assert [(s.study.id, s.study.name) for s in list_studies(store)] == [(kept, "Relevance, team A")]
    assert {s.study.id for s in list_studies(store, archived=True)} == {kept, gone}
    archive_study(store, gone, archived=False)
    assert {s.study.id for s in list_studies(store)} == {kept, gone}
    store.dispose()


def test_each_annotator_gets_an_interleaved_queue_of_their_own() -> None:
    pairs = [("A", "B"), ("A", "C"), ("B", "C")]
    tasks = [ComparisonTask(f"i{k}", a, b) for a, b in pairs for k in range(10)]  # grouped by pair, as a request lists them
    alice = annotator_queue(tasks, "alice", 7)
    assert sorted(alice, key=tasks.index) == tasks  # every task, once
    assert all(alice[k].systems != alice[k + 1].systems for k in range(len(alice) - 1))  # no pair twice in a row
    assert annotator_queue(tasks, "alice", 7) == alice  # the same after a reload
    assert annotator_queue(tasks, "bob", 7) != alice and annotator_queue(tasks, "alice", 8) != alice
    uneven = [RatingTask(f"i{k}", "A") for k in range(6)] + [RatingTask("i0", "B")]
    queue = annotator_queue(uneven, "alice", 0)
    assert Counter(t.system for t in queue[:2]) == {"A": 1, "B": 1} and len(queue) == 7


def test_studies_invite_and_revoke_from_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PREFEVAL_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("PREFEVAL_DATABASE_URL", raising=False)
    study = live_study(open_store(tmp_path))
    assert main(["studies", "invite", str(study), "carol", "--base-url", "https://eval.example.org"]) == 0
    link = capsys.readouterr().out.strip()
    assert link.startswith("https://eval.example.org/?token=")
    assert annotator_for_token(open_store(tmp_path), link.split("token=")[1]) == Annotator(study, "carol")
    assert main(["studies", "revoke", str(study), "carol"]) == 0
    assert "1 link(s) of carol revoked" in capsys.readouterr().out
    with pytest.raises(AccessError):
        annotator_for_token(open_store(tmp_path), link.split("token=")[1])
    assert main(["studies", "--json"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)
    assert (listed["kind"], listed["archived"]) == ("live", False)
    assert main(["studies", "archive", str(study)]) == 0 and main(["studies", "--json"]) == 0
    assert capsys.readouterr().out.strip().endswith("[]")
    assert main(["studies", "list", "--all"]) == 0
    assert "live, archived]" in capsys.readouterr().out  # archived: listed on demand, marked
    capsys.readouterr()
    assert main(["studies", "invite", str(study)]) == 2  # a usage error, as argparse's
    assert "give a name" in capsys.readouterr().err
    assert main(["studies", "invite", "999", "dan"]) == 1
    assert main(["studies", "revoke", "999", "dan"]) == 1  # no such study: said, not "0 links revoked"
    assert "no study with id 999" in capsys.readouterr().err
    assert main(["studies", "revoke", str(study), "carol", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"study": study, "annotator": "carol", "revoked": 0}
    assert main(["studies", "unarchive", str(study), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"study": study, "archived": False}


def test_missing_agreement_says_why() -> None:
    from prefeval_core.annotation.agreement import rating_agreement
    from prefeval_core.workflow.annotators import agreement_rows, why_no_agreement

    one_each = [Rating("d", f"i{k}", "A", 3.0, f"ann{k % 2}", utc_now()) for k in range(4)]
    alone = rating_agreement(one_each)
    assert why_no_agreement(alone) == (
        "no agreement yet: each of the 4 items has one judgment, and agreement needs items judged by two or more annotators "
        "(set judgments per item to 2 or more)"
    )
    assert {row["alpha with the others"] for row in agreement_rows(alone, None)} == {"n/a: no item shared with another annotator"}
    overlap = [Rating("d", f"i{k}", "A", float(k), name, utc_now()) for k in range(4) for name in ("ann0", "ann1")]
    agreed = rating_agreement(overlap)
    assert why_no_agreement(agreed) is None and agreement_rows(agreed, None)[0]["alpha with the others"] == 1.0


def test_the_command_line_names_a_bundled_sample(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["describe", "--data", "sample:wmt21_ted", "--json"]) == 0
    described = capsys.readouterr().out
    assert '"TER"' in described and "sentBLEU" in described
    assert main(["describe", "--data", "sample:nope"]) == 1
    assert "no bundled sample named 'nope'; known: pandalm, summeval" in capsys.readouterr().err


def test_uploaded_data_are_kept_by_digest(store_url: str) -> None:
    from prefeval_core.workflow.studies import recalled_data, remember_data

    store = Store.at(store_url)
    data = study_data()
    digest = remember_data(store, data)
    assert remember_data(store, data) == digest and len(digest) == 32  # kept once
    assert recalled_data(store, digest) == data and recalled_data(store, "f" * 32) is None
    store.dispose()
