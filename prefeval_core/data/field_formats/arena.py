"""Chatbot-Arena battles: a person's vote between two models' answers to one prompt.

**File** (FastChat's ``clean_battle_*.json``, ``lmsys/chatbot_arena_conversations``,
``lmsys/mt_bench_human_judgments``; JSON array, JSONL or CSV): one row per vote with
``model_a, model_b, winner``; ``winner`` is ``model_a``, ``model_b``, ``tie`` or ``tie (bothbad)``
(any case; both a tie: the dataset keeps outcomes ``>``/``=``/``<`` only, and the notes count the
"both bad" ones). Optional: ``judge`` (who voted), ``question_id`` (the conversation or
question), ``turn``, and ``conversation_a``/``conversation_b`` (lists of ``{"role", "content"}``
messages); other columns (``anony``, ``language``, ``tstamp``, ...) are ignored.

**Loaded as** the pairwise human rater :data:`ARENA_RATER`. **Items (choice):** the
``question_id`` (with ``:<turn>`` when the file has a ``turn`` column, since MT-bench judges each
turn of a question separately), so several votes on one question and pair are several
annotators' judgments of one item, combined by majority like any preferences file
(:func:`~prefeval_core.data.formats.parse_preferences`); without ``question_id`` every battle is
its own item ``battle-<row>``. The annotator is the ``judge`` (or the battle's row where there is
none), so votes are never mistaken for duplicates. With conversations, the assistant turns of
each side are that model's output (turns joined by blank lines) and the user turns of
``conversation_a`` the item's source.
"""

from __future__ import annotations

import json
from typing import Any, Final

import numpy as np
import pandas as pd

from prefeval_core.data.formats import ParsedTable, cell_problems, find_columns, missing_column_problems, parse_preferences
from prefeval_core.data.headers import normal_name
from prefeval_core.data.json_rows import line_too_deep
from prefeval_core.data.limits import MAX_JSON_DEPTH
from prefeval_core.data.reading import RawTable
from prefeval_core.errors import Problem

ARENA_RATER: Final = "human:arena"
"""The rater Arena votes are loaded as."""
WINNERS: Final[dict[str, str]] = {"model_a": "a", "model_b": "b", "tie": "tie", "tie(bothbad)": "tie"}
"""Accepted ``winner`` values (lower case, spaces removed) and the preference label each is read as."""

_COLUMNS: Final[dict[str, tuple[str, ...]]] = {
    "model_a": ("model_a",),
    "model_b": ("model_b",),
    "winner": ("winner",),
    "judge": ("judge",),
    "question_id": ("question_id",),
    "turn": ("turn",),
    "conversation_a": ("conversation_a",),
    "conversation_b": ("conversation_b",),
}
_BOTH_BAD: Final = "tie(bothbad)"


def detect(raw: RawTable) -> bool:
    """Whether ``raw`` holds battles: ``model_a, model_b, winner`` and no ``rater`` (a preferences
    file names its rater)."""
    names = {normal_name(c) for c in raw.frame.columns}
    return {"model_a", "model_b", "winner"} <= names and "rater" not in names


def parse_arena(raw: RawTable) -> tuple[ParsedTable, ...]:
    """The votes of ``raw`` (module docstring) as preferences of :data:`ARENA_RATER`, with the
    conversations as texts and sources where the file has them."""
    cols = find_columns(raw, _COLUMNS)
    problems = missing_column_problems(raw, "Chatbot-Arena battles", ["model_a", "model_b", "winner"], _COLUMNS)
    if problems:
        return (ParsedTable(raw.name, "preferences", pd.DataFrame(), tuple(problems), ()),)
    winner = raw.frame[cols["winner"]].str.strip().str.lower().str.replace(r"\s+", "", regex=True)
    known = winner.isin(list(WINNERS)).to_numpy()
    expected = "expected the winner: model_a, model_b, tie or tie (bothbad)"
    problems = cell_problems(raw, np.flatnonzero(~known), cols["winner"], "bad_label", expected)
    items, item_problems = _items(raw, cols)
    problems += item_problems
    if problems:
        return (ParsedTable(raw.name, "preferences", pd.DataFrame(), tuple(problems), ()),)
    battles = _battle_names(len(raw.frame))
    judges = raw.frame[cols["judge"]].str.strip() if "judge" in cols else pd.Series("", index=raw.frame.index)
    votes = pd.DataFrame(
        {
            "item_id": items,
            cols["model_a"]: raw.frame[cols["model_a"]].to_numpy(),
            cols["model_b"]: raw.frame[cols["model_b"]].to_numpy(),
            "rater": ARENA_RATER,
            cols["winner"]: winner.map(WINNERS).to_numpy(),
            "annotator": np.where(judges.to_numpy() == "", battles, judges.to_numpy()),
        }
    )
    table = parse_preferences(RawTable(raw.name, votes, raw.lines))
    tables = [ParsedTable(raw.name, "preferences", table.frame, table.problems, (_note(raw.name, winner, items, "judge" in cols),))]
    if "conversation_a" in cols and "conversation_b" in cols and not table.problems:
        tables += _conversations(raw, cols, items)
    return tuple(tables)


def _battle_names(n_rows: int) -> np.ndarray:
    return np.char.add("battle-", np.arange(1, n_rows + 1).astype(str)).astype(object)


def _items(raw: RawTable, cols: dict[str, str]) -> tuple[np.ndarray, list[Problem]]:
    """Each vote's item (module docstring), and an error per row with an empty question id."""
    if "question_id" not in cols:
        return _battle_names(len(raw.frame)), []
    question = raw.frame[cols["question_id"]].str.strip()
    problems = cell_problems(raw, np.flatnonzero((question == "").to_numpy()), cols["question_id"], "empty_name", "expected a question id")
    if "turn" in cols:
        question = question + ":" + raw.frame[cols["turn"]].str.strip()
    return question.to_numpy(dtype=object), problems


def _conversations(raw: RawTable, cols: dict[str, str], items: np.ndarray) -> list[ParsedTable]:
    """Texts (each side's assistant turns) and sources (the user turns) from the conversations
    (empty ones left out); a conversation that is not a list of ``{"role", "content"}`` messages
    is an error naming its row."""
    problems: list[Problem] = []
    outputs: dict[str, list[str]] = {}
    prompts: list[str] = []
    for side in ("a", "b"):
        column = cols[f"conversation_{side}"]
        conversations = [_messages(cell) for cell in raw.frame[column].tolist()]
        bad = np.array([k for k, messages in enumerate(conversations) if messages is None], dtype=np.int64)
        problems += cell_problems(raw, bad, column, "malformed", 'expected a JSON list of {"role", "content"} messages')
        outputs[side] = ["\n\n".join(text for role, text in messages or [] if role == "assistant") for messages in conversations]
        if side == "a":
            prompts = ["\n\n".join(text for role, text in messages or [] if role == "user") for messages in conversations]
    if problems:
        return [ParsedTable(raw.name, "texts", pd.DataFrame(), tuple(problems), ())]
    texts = pd.DataFrame(
        {
            "item_id": np.concatenate([items, items]),
            "system": np.concatenate([raw.frame[cols["model_a"]].str.strip(), raw.frame[cols["model_b"]].str.strip()]),
            "output": outputs["a"] + outputs["b"],
        }
    )
    sources = pd.DataFrame({"item_id": items, "source": prompts})
    texts = texts[texts["output"] != ""].drop_duplicates(["item_id", "system"])
    sources = sources[sources["source"] != ""].drop_duplicates("item_id")
    note = f"{raw.name}: the conversations' answers as outputs"
    return [ParsedTable(raw.name, "texts", texts, (), (note,)), ParsedTable(raw.name, "sources", sources, (), ())]


def _messages(cell: str) -> list[tuple[str, str]] | None:
    """``(role, text)`` of each message of a conversation cell, or ``None`` if it is not one;
    content that is not text (a list of parts) is kept as its JSON; an empty cell has none."""
    if not cell.strip():
        return []
    if line_too_deep(cell, MAX_JSON_DEPTH) is not None:  # refused before the parser recurses
        return None
    try:
        value: Any = json.loads(cell)
    except ValueError:
        return None
    if not isinstance(value, list) or not all(isinstance(m, dict) and "role" in m and "content" in m for m in value):
        return None
    return [
        (str(m["role"]), m["content"] if isinstance(m["content"], str) else json.dumps(m["content"], ensure_ascii=False)) for m in value
    ]


def _note(name: str, winner: pd.Series, items: np.ndarray, judged: bool) -> str:
    both_bad = int((winner == _BOTH_BAD).sum())
    by = "the judge" if judged else "each battle"
    item_count = len(pd.unique(items))
    note = (
        f"{name}: Chatbot-Arena battles, {len(winner):,} votes on {item_count:,} items as the pairwise rater '{ARENA_RATER}' "
        f"(winner model_a as >, model_b as <, tie and tie (bothbad) as =; annotator: {by}; several votes on one item and pair "
        "combined by majority)"
    )
    if both_bad:
        note += f"; {both_bad:,} votes were 'tie (bothbad)'"
    return note


read = parse_arena
"""The registry's reader: :func:`parse_arena`."""
