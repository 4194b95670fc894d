"""Chatbot-Arena battles: winners, ties, items and judges, conversations, the three file types,
malformed files, and a replay of the protocol on battles."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from prefeval_core.data.annotators import comparisons_behind
from prefeval_core.data.dataset import load_dataset
from prefeval_core.errors import BadValueError, DataError, MalformedFileError, MissingColumnError
from prefeval_core.workflow.setup import StudySetup
from prefeval_core.workflow.study import run_replay, study_table


def load(name: str, data: str | bytes, **kwargs):
    return load_dataset([(name, data if isinstance(data, bytes) else data.encode())], **kwargs)


def outcomes(dataset) -> dict[tuple[str, str, str], int]:
    """The outcome of each comparison by the raters the study names (not the single annotators kept beside them)."""
    frame = dataset.preferences[~dataset.preferences["rater"].isin(dataset.annotator_raters)]
    return {(i, a, b): int(o) for i, a, b, o in frame[["item_id", "system_a", "system_b", "outcome"]].itertuples(index=False)}


# FastChat's clean_battle JSON ("simple" mode: no question id, no conversations).
def battle(model_a: str, model_b: str, winner: str, judge: str, turn: int = 1) -> dict[str, object]:
    return {
        "model_a": model_a,
        "model_b": model_b,
        "winner": winner,
        "judge": judge,
        "turn": turn,
        "anony": True,
        "language": "English",
        "tstamp": 1.0,
    }


BATTLES = [
    battle("vicuna-13b", "gpt-4", "model_b", "arena_user_1"),
    battle("gpt-4", "koala-13b", "model_a", "arena_user_2"),
    battle("koala-13b", "vicuna-13b", "tie", "arena_user_1", turn=2),
    battle("vicuna-13b", "koala-13b", "tie (bothbad)", "arena_user_3"),
    battle("gpt-4", "vicuna-13b", "Model_A", "arena_user_2"),
]
EXPECTED = {  # canonical pairs (sorted), 0 '>' A better, 1 '=', 2 '<' B better; one item per battle
    ("battle-1", "gpt-4", "vicuna-13b"): 0,
    ("battle-2", "gpt-4", "koala-13b"): 0,
    ("battle-3", "koala-13b", "vicuna-13b"): 1,
    ("battle-4", "koala-13b", "vicuna-13b"): 1,
    ("battle-5", "gpt-4", "vicuna-13b"): 0,
}


def test_clean_battle_json_is_a_pairwise_human_rater() -> None:
    ds = load("clean_battle_20230522.json", json.dumps(BATTLES, indent=2))
    assert outcomes(ds) == EXPECTED
    assert ds.raters == ("human:arena",) and ds.human_raters == ("human:arena",)
    assert ds.rater_kind("human:arena") == "pairwise"
    assert any("5 votes on 5 items" in note and "1 votes were 'tie (bothbad)'" in note for note in ds.notes)
    assert ds.report.ok


def test_jsonl_and_csv_read_the_same() -> None:
    jsonl = "".join(json.dumps(b) + "\n" for b in BATTLES)
    csv = pd.DataFrame(BATTLES).to_csv(index=False)
    assert outcomes(load("battles.jsonl", jsonl)) == EXPECTED
    assert outcomes(load("battles.csv", csv)) == EXPECTED


def conversation(prompt: str, answer: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": prompt}, {"role": "assistant", "content": answer}]


def test_votes_on_one_question_are_judges_of_one_item() -> None:
    # MT-bench human judgments: several judges per question, pair and turn; majority per item.
    votes = [
        {"question_id": 81, "model_a": "alpaca", "model_b": "gpt-4", "winner": "model_b", "judge": "expert_1", "turn": 1},
        {"question_id": 81, "model_a": "gpt-4", "model_b": "alpaca", "winner": "model_a", "judge": "expert_2", "turn": 1},
        {"question_id": 81, "model_a": "alpaca", "model_b": "gpt-4", "winner": "model_a", "judge": "author_0", "turn": 1},
        {"question_id": 81, "model_a": "alpaca", "model_b": "gpt-4", "winner": "model_a", "judge": "expert_1", "turn": 2},
        {"question_id": 82, "model_a": "alpaca", "model_b": "gpt-4", "winner": "tie", "judge": "expert_1", "turn": 1},
        {"question_id": 82, "model_a": "alpaca", "model_b": "gpt-4", "winner": "model_a", "judge": "expert_2", "turn": 1},
        {"question_id": 82, "model_a": "alpaca", "model_b": "gpt-4", "winner": "model_b", "judge": "expert_3", "turn": 1},
    ]
    ds = load("mt_bench_human_judgments.jsonl", "".join(json.dumps(v) + "\n" for v in votes))
    # 81:1 gpt-4 wins 2 to 1; 81:2 alpaca wins; 82:1 one vote each way and a tie: '='.
    assert outcomes(ds) == {("81:1", "alpaca", "gpt-4"): 2, ("81:2", "alpaca", "gpt-4"): 0, ("82:1", "alpaca", "gpt-4"): 1}
    [human] = ds.human_raters  # the judges of a comparison several judged are kept: each is a comparison paid
    assert len(ds.annotator_raters) == 4 and comparisons_behind(ds.preferences, human)["judgments"].tolist() == [3, 1, 3]


def test_conversations_give_outputs_and_sources() -> None:
    battles = [
        {"question_id": "c1", "model_a": "m1", "model_b": "m2", "winner": "model_a", "judge": "u",
         "conversation_a": conversation("Name a prime.", "7"), "conversation_b": conversation("Name a prime.", "8")},
        {"question_id": "c2", "model_a": "m2", "model_b": "m1", "winner": "model_a", "judge": "u",
         "conversation_a": conversation("Hi", "Hello") + conversation("And?", "Bye"), "conversation_b": []},
    ]  # fmt: skip
    ds = load("clean_battle_conv.json", json.dumps(battles))
    texts = ds.texts.set_index(["item_id", "system"])["output"].to_dict()
    assert texts == {("c1", "m1"): "7", ("c1", "m2"): "8", ("c2", "m2"): "Hello\n\nBye"}  # an empty conversation gives no text
    assert ds.sources.set_index("item_id")["source"].to_dict() == {"c1": "Name a prime.", "c2": "Hi\n\nAnd?"}
    assert outcomes(ds) == {("c1", "m1", "m2"): 0, ("c2", "m1", "m2"): 2}


def test_an_unknown_winner_names_file_row_line_and_column() -> None:
    jsonl = "".join(json.dumps(b) + "\n" for b in BATTLES).replace('"tie"', '"draw"')
    with pytest.raises(BadValueError) as info:
        load("battles.jsonl", jsonl)
    (problem,) = info.value.problems
    assert (problem.file, problem.row, problem.line, problem.column) == ("battles.jsonl", 3, 3, "winner")
    assert problem.message == "expected the winner: model_a, model_b, tie or tie (bothbad), found 'draw'"
    with pytest.raises(BadValueError, match=r"battles\.json, row 2, column 'winner': .* found ''"):
        load("battles.json", json.dumps([BATTLES[0], {**BATTLES[1], "winner": ""}]))


def test_malformed_battle_files_are_refused_with_their_place() -> None:
    with pytest.raises(MalformedFileError, match=r"battles\.jsonl, line 2: not a JSON object"):
        load("battles.jsonl", json.dumps(BATTLES[0]) + '\n{"model_a": "x",\n')
    with pytest.raises(MalformedFileError, match=r"battles\.json, line 1: not valid JSON"):
        load("battles.json", json.dumps(BATTLES)[:-5])
    with pytest.raises(MissingColumnError, match=r"b\.csv, column 'winner': a Chatbot-Arena battles file needs the column 'winner'"):
        load("b.csv", "model_a,model_b,vote\nx,y,model_a\n", kinds={"b.csv": "arena"})
    with pytest.raises(BadValueError, match=r"b\.csv, row 2 \(line 3\), column 'model_b': expected two different systems"):
        load("b.csv", "model_a,model_b,winner\nx,y,model_a\nx,x,tie\n")
    with pytest.raises(BadValueError, match=r"b\.csv, row 1 \(line 2\), column 'question_id': expected a question id"):
        load("b.csv", "question_id,model_a,model_b,winner\n ,x,y,tie\n")
    broken = [{**BATTLES[0], "question_id": "q", "conversation_a": "[{'role': 'user'}]", "conversation_b": []}]
    with pytest.raises(DataError, match=r"row 1, column 'conversation_a': expected a JSON list of \{\"role\", \"content\"\} messages"):
        load("conv.json", json.dumps(broken))


def test_a_preferences_file_that_names_its_rater_stays_a_preferences_file() -> None:
    text = "item_id,model_a,model_b,rater,winner\ni1,x,y,human,A\ni2,x,y,human,tie\n"
    assert outcomes(load("prefs.csv", text)) == {("i1", "x", "y"): 0, ("i2", "x", "y"): 1}


def test_the_protocol_replays_arena_votes() -> None:
    # 3 models, 40 votes per pair: strong > medium (30-5-5), medium > weak (28-6-6), strong > weak (36-2-2).
    votes = []
    counts = {("strong", "medium"): (30, 5, 5), ("medium", "weak"): (28, 6, 6), ("strong", "weak"): (36, 2, 2)}
    for (a, b), (wins, ties, losses) in counts.items():
        for k, winner in enumerate(["model_a"] * wins + ["tie"] * ties + ["model_b"] * losses):
            votes.append({"question_id": f"{a}-{b}-{k}", "model_a": a, "model_b": b, "winner": winner})
    ds = load("battles.json", json.dumps(votes))
    setup = StudySetup(human="human:arena", batch=10, error_control="none")
    table = study_table(ds, setup)
    assert table.unit == "comparisons" and len(table.pairs) == 3
    replay = run_replay(table, setup)
    decided = {pair: int(code) for pair, code in zip(table.pairs, replay.state.decisions, strict=True)}
    assert decided == {("medium", "strong"): 2, ("medium", "weak"): 0, ("strong", "weak"): 0}
