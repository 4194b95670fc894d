"""Session save/restore (JSON) and the data choice it carries; the schema every file is checked against."""

from __future__ import annotations

import json
from dataclasses import fields

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefeval_core.annotation.left_right import make_comparison
from prefeval_core.protocol import ProtocolSettings, state_from_json, state_to_dict, state_to_json
from prefeval_core.protocol.state_schema import SettingsDocument
from prefeval_core.store import Rating
from prefeval_core.store.records import judgment_fields
from prefeval_core.workflow import StudySetup
from prefeval_core.workflow.metric_check import MetricCheck
from prefeval_core.workflow.session import DataChoice, SessionFileError, SessionSnapshot, sample_names, session_from_json, session_to_json
from prefeval_core.workflow.session_schema import CheckDocument, ComparisonDocument, DataDocument, RatingDocument
from prefeval_core.workflow.setup_schema import SetupDocument
from tests.protocol_fixtures import same_state
from tests.reliability.session_checks import restore_in_core
from tests.reliability.session_corpus import base_sessions

WIDE = b"item_id,system,human,bleu\ni1,A,1,0.5\ni1,B,2,0.1\ni2,A,3,0.3\ni2,B,1,0.2\n"


def test_round_trip_keeps_everything() -> None:
    upload = DataChoice(
        "upload",
        "mine",
        files=(("wide.csv", WIDE),),
        kinds=(("wide.csv", "wide_ratings"),),
        rater_columns=(("wide.csv", ("human", "bleu")),),
    )
    snapshot = SessionSnapshot(
        data=upload,
        human="human",
        metrics=("bleu",),
        setup={"human": "human", "metrics": ["bleu"], "budget": 40, "batch": 5, "gamma": 0.05, "seed": 3},
        check={"human": "human", "metric": "bleu", "eps": 0.0, "gamma": 0.05, "seed": 0},
        annotations=(
            make_comparison(upload.key, "i1", "A", "B", "left", "ann", left_system="B"),
            Rating(upload.key, "i2", "A", 3.5, "ann", "2026-11-23T10:00:00.000+00:00"),
        ),
    )
    text = session_to_json(snapshot)
    assert json.loads(text)["prefeval_session"] == 2
    assert session_from_json(text) == snapshot
    assert session_from_json(text.encode()).data.load().systems == ("A", "B")


def test_data_choice_keys() -> None:
    assert DataChoice.sample("summeval").key == "sample:summeval"
    one = DataChoice("upload", "x", files=(("a.csv", b"1"), ("b.csv", b"2")))
    same = DataChoice("upload", "y", files=(("b.csv", b"2"), ("a.csv", b"1")))
    other = DataChoice("upload", "x", files=(("a.csv", b"1"), ("b.csv", b"3")))
    assert one.key == same.key != other.key
    assert one.key.startswith("upload:")


def test_samples_load() -> None:
    assert {"summeval", "pandalm", "wmt21_ted"} <= set(sample_names())
    assert len(DataChoice.sample().load().systems) == 16
    with pytest.raises(SessionFileError, match="no bundled sample named 'nope'"):
        DataChoice.sample("nope").load()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "not a JSON file"),
        ('{"a": 1}', "not a prefeval session"),
        ('{"prefeval_session": 9}', "version 9"),
        ('{"prefeval_session": 2, "data": {"kind": "folder", "name": "x"}}', "at data.kind: Input should be 'sample' or 'upload'"),
        ('{"prefeval_session": 2}', "at data: Field required"),
        ('{"prefeval_session": 2, "prefeval_session": 2}', "appears twice"),
        ('{"prefeval_session": 2, "data": {"kind": "sample", "name": "x"}, "human": NaN}', "NaN is not a number"),
        ('{"prefeval_session": 1}', "reads version 2"),
    ],
)
def test_bad_session_files_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(SessionFileError, match=message):
        session_from_json(text, "s.json")


@pytest.mark.parametrize("base", base_sessions(), ids=lambda b: b.name)
def test_every_sample_and_unit_round_trips_with_its_protocol_and_both_judgment_kinds(base) -> None:
    """Each bundled sample with a two-round protocol (ratings and comparisons studies), and an upload."""
    text = json.dumps(base.document)
    snapshot = session_from_json(text)
    assert {a.kind for a in snapshot.annotations} == {"comparison", "rating"}
    assert json.loads(session_to_json(snapshot)) == base.document  # the writer's output is what the reader takes
    restored = restore_in_core(text.encode())
    if base.protocol:
        assert restored.protocol is not None and restored.protocol.round == 2 and restored.protocol.table.unit == base.unit
        assert state_to_dict(restored.protocol) == base.document["protocol"]
        assert same_state(state_from_json(state_to_json(restored.protocol), restored.protocol.table), restored.protocol)
    assert restored.setup == StudySetup.from_dict(base.document["setup"])


def test_a_stored_protocol_state_gets_the_same_checks() -> None:
    """The store and the CLI's studies commands restore states through state_from_json: same schema."""
    base = next(b for b in base_sessions() if b.protocol)
    state = restore_in_core(json.dumps(base.document).encode()).protocol
    assert state is not None
    damaged = state_to_json(state).replace('"round":2', '"round":-3', 1)
    with pytest.raises(ValueError, match="greater than or equal to 0") as error:
        state_from_json(damaged, state.table)
    assert [p.path for p in error.value.problems] == ["round"]  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="not a number JSON allows"):
        state_from_json(state_to_json(state).replace("0.05", "NaN", 1), state.table)


@pytest.mark.parametrize(
    ("document", "dataclass", "extra"),
    [
        (SetupDocument, StudySetup, set()),
        (SettingsDocument, ProtocolSettings, {"metric"}),
        (CheckDocument, MetricCheck, set()),
        (DataDocument, DataChoice, set()),
    ],
)
def test_each_schema_has_the_fields_of_what_it_describes(document, dataclass, extra) -> None:
    assert set(document.model_fields) == {f.name for f in fields(dataclass)} | extra


def test_judgment_schemas_have_the_fields_of_the_judgments() -> None:
    assert set(ComparisonDocument.model_fields) == {*judgment_fields("comparison"), "kind"}
    assert set(RatingDocument.model_fields) == {*judgment_fields("rating"), "kind"}


def test_bounds_are_checked_before_json_can_blow_up() -> None:
    for raw, message in [("[" * 100_000 + "]" * 100_000, "nested too deeply"), ("9" * 5000, "5,000 digits"), ("1e999", "too large")]:
        with pytest.raises(SessionFileError, match=message) as error:
            session_from_json('{"prefeval_session": 2, "metrics": ' + raw + "}", "s.json")
        assert error.value.problems[0].file == "s.json"


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**30), 10**30) | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
_PLACES = (
    "data",
    "human",
    "metrics",
    "setup",
    "check",
    "annotations",
    "protocol",
    "saved_at",
    "data.name",
    "data.files",
    "setup.batch",
    "setup.question",
    "check.gamma",
    "protocol.settings",
    "protocol.records",
    "protocol.reveals",
    "protocol.round",
)


@pytest.mark.property
@settings(max_examples=300, deadline=None)
@given(value=_JSON, place=st.sampled_from(_PLACES), base=st.sampled_from(range(2)))
def test_any_json_value_anywhere_is_restored_or_refused_naming_the_file(value: object, place: str, base: int) -> None:
    """Whatever JSON stands at a place of a valid session: a SessionFileError naming the file, or
    a restore (never another exception), and NaN or infinity are never accepted."""
    document = json.loads(json.dumps([b for b in base_sessions() if b.name in ("pandalm/comparisons", "wmt21_ted/ratings")][base].document))
    *parents, last = place.split(".")
    node = document
    for key in parents:
        node = node[key]
    node[last] = value
    try:
        restore_in_core(json.dumps(document, allow_nan=True).encode(), "s.json")
    except SessionFileError as error:
        assert all(p.file == "s.json" for p in error.problems)
    else:
        assert "NaN" not in json.dumps(value, allow_nan=True) and "Infinity" not in json.dumps(value, allow_nan=True)


def _refused_at(document: dict, path: str) -> str:
    with pytest.raises(SessionFileError) as error:
        restore_in_core(json.dumps(document).encode())
    assert [p.path for p in error.value.problems] == [path]
    return error.value.problems[0].message


def test_bent_identities_settings_and_records_are_refused_never_dropped() -> None:
    """A session file edited by hand: one judgment under another's identity (the store would
    keep 5 of 6), a copy under a new identity or request id (stored twice), a rater the data do
    not have or a setting the setup does not make in the protocol state, a pair listed twice."""
    base = next(b for b in base_sessions() if b.protocol and b.unit == "comparisons").document
    first = base["annotations"][0]

    def edited(change) -> dict:  # type: ignore[no-untyped-def]
        document = json.loads(json.dumps(base))
        change(document)
        return document

    message = _refused_at(edited(lambda d: d["annotations"][1].update(identity=first["identity"])), "annotations[1].identity")
    assert "changed after saving" in message
    assert _refused_at(edited(lambda d: d["annotations"].append(dict(first))), f"annotations[{len(base['annotations'])}].identity")
    copy = dict(first, identity="e" * 32)
    _refused_at(edited(lambda d: d["annotations"].append(copy)), f"annotations[{len(base['annotations'])}].identity")
    _refused_at(edited(lambda d: d["annotations"][0].update(request_id="0" * 32)), "annotations[0].request_id")
    _refused_at(edited(lambda d: d["protocol"]["settings"].update(human="human:nonexistent")), "protocol.settings.human")
    message = _refused_at(
        edited(lambda d: d["protocol"]["settings"].update(seed=base["protocol"]["settings"]["seed"] + 1)), "protocol.settings.seed"
    )
    assert "does not match the study setup" in message
    pairs = base["protocol"]["records"][0]["pairs"]
    message = _refused_at(edited(lambda d: d["protocol"]["records"][0].update(pairs=[pairs[0], *pairs[:-1]])), "protocol.records[0].pairs")
    assert f"the pair {pairs[0]} is listed twice" in message
    assert restore_in_core(json.dumps(base).encode()).protocol is not None  # the file as saved restores
