"""Session save/restore (JSON) and the data choice it carries."""

from __future__ import annotations

import json

import pytest

from prefeval_core.left_right import make_comparison
from prefeval_core.session import DataChoice, SessionFileError, SessionSnapshot, sample_names, session_from_json, session_to_json

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
        protocol={"round": 2, "revealed": [1, 0, 1]},
        annotations=(make_comparison(upload.key, "i1", "A", "B", "left", "ann", left_system="B"),),
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
        ('{"prefeval_session": 2, "data": {"kind": "folder", "name": "x"}}', "incomplete or damaged"),
        ('{"prefeval_session": 2}', "incomplete or damaged"),
        ('{"prefeval_session": 1}', "reads version 2"),
    ],
)
def test_bad_session_files_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(SessionFileError, match=message):
        session_from_json(text, "s.json")
