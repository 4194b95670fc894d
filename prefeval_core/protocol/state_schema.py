"""The schema of a saved protocol state (format 2, :func:`~prefeval_core.protocol.state.state_to_dict`).

:class:`StateDocument` checks what can be checked without the data: types, finite numbers,
bounds (rounds >= 0, θ and posterior means in [0, 1], decision codes 0/1/2, batch >= 1,
0 < γ < 1, seeds in [0, 2^63)) and the option names (the settings' ``Literal`` types; the question
kind and the error control: registered in :data:`~prefeval_core.protocol.questions.QUESTION_KINDS`
and :data:`~prefeval_core.protocol.error_controls.ERROR_CONTROL_RULES` when the state is read).
:func:`check_against_table` checks the rest against the study table the state is restored on:
slot and pair indices within the table, one value per chosen pair, comparison outcomes 0/1/2,
rounds numbered 1..round, withdrawn requests once each and in a completed round (a state saved
before requests could be withdrawn has none), and the judgments used within the budget. Every
refusal is a :class:`~prefeval_core.errors.SettingsError` whose problem names the JSON path of the value.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Annotated, Final, Literal

from pydantic import AfterValidator, Field, StrictBool, StrictFloat, StrictInt, StrictStr
from pydantic_core import PydanticCustomError

from prefeval_core.data.schema import StrictModel
from prefeval_core.decision import Model, Sampler
from prefeval_core.errors import Problem, SettingsError
from prefeval_core.protocol.questions import QUESTION_KINDS
from prefeval_core.protocol.settings import Policy, Statistic, registered_controls
from prefeval_core.protocol.table import StudyTable
from prefeval_core.vocabulary.levels import DEFAULT_GAMMA
from prefeval_core.vocabulary.tasks import Unit

FORMAT_VERSION: Final = 2
"""Version of the JSON layout (1: the earlier per-pair layout)."""

SEED_LIMIT: Final = 2**63
Count = Annotated[StrictInt, Field(ge=0, lt=SEED_LIMIT)]
Positive = Annotated[StrictInt, Field(ge=1, lt=SEED_LIMIT)]
Seed = Annotated[StrictInt, Field(ge=0, lt=SEED_LIMIT)]
Level = Annotated[StrictFloat, Field(gt=0.0, lt=1.0)]
"""A significance or futility level, strictly between 0 and 1 (an integer is not a level)."""
Threshold = Annotated[float, Field(ge=0.0)]
"""A tie threshold: finite and >= 0."""
Probability = Annotated[float, Field(ge=0.0, le=1.0)]
OutcomeCode = Annotated[StrictInt, Field(ge=0, le=2)]
"""0 ``>``, 1 ``=``, 2 ``<`` (also the decision codes, 1 undecided); not a ``Literal``, which would take ``true`` for 1."""
Name = Annotated[StrictStr, Field(min_length=1, max_length=1_000)]


def registered(names: Callable[[], Iterable[str]]) -> AfterValidator:
    """Accept a name of a registry as it is when the document is read (a kind added to the registry
    is saved and restored; ``names``: the registry's names, read on each check)."""

    def check(value: str) -> str:
        known = tuple(names())
        if value not in known:
            raise PydanticCustomError("literal_error", "Input should be {expected}", {"expected": " or ".join(map(repr, known))})
        return value

    return AfterValidator(check)


class QuestionDocument(StrictModel):
    """:class:`~prefeval_core.protocol.settings.Question` as saved."""

    kind: Annotated[StrictStr, registered(lambda: QUESTION_KINDS)] = "all-pairs"
    k: Positive = 1
    baselines: list[Name] = Field(default_factory=list)


class SettingsDocument(StrictModel):
    """:class:`~prefeval_core.protocol.settings.ProtocolSettings` as saved (``metric``: the single-metric key of format 1)."""

    budget: Count
    batch: Positive = 10
    gamma: Level = DEFAULT_GAMMA
    model: Model = "full"
    mu: Annotated[list[Annotated[list[Probability], Field(min_length=3, max_length=3)]], Field(min_length=3, max_length=3)] | None = None
    sampler: Sampler = "fast"
    policy: Policy = "paper"
    seed: Seed = 0
    human: Name | None = None
    metrics: list[Name] = Field(default_factory=list)
    metric: Name | None = None
    eps_human: Threshold = 0.0
    eps_metric: Threshold = 0.0
    question: QuestionDocument = QuestionDocument()
    unit: Unit = "comparisons"
    # a state saved before error control existed ran the paper's rule
    error_control: Annotated[StrictStr, registered(registered_controls)] = "none"
    futility: Level | None = None
    max_rounds: Positive | None = None
    statistic: Statistic = "sign"
    delta: Annotated[float, Field(gt=0.0)] | None = None


OptionalProbability = Probability | None
OptionalFinite = float | None
Reveal = Annotated[tuple[Count, float, Positive, Count], Field(strict=False)]
"""``[slot, value, round, cost]`` (a JSON array: the one place a list stands for a tuple)."""
Withdrawal = Annotated[tuple[Count, Positive], Field(strict=False)]
"""``[slot, round]``: the slot's request withdrawn when round ``round`` was decided."""


class RecordDocument(StrictModel):
    """:class:`~prefeval_core.protocol.state.RoundRecord` as saved (``null`` stands for NaN)."""

    round: Positive
    pairs: list[Count]
    theta: list[OptionalProbability]
    decision: list[OutcomeCode]
    p_mean: list[Annotated[list[OptionalProbability], Field(min_length=3, max_length=3)]]
    log_evidence: list[Annotated[list[OptionalFinite], Field(min_length=2, max_length=2)]]
    log_numerator: list[Annotated[list[OptionalFinite], Field(min_length=2, max_length=2)]]
    futile: list[StrictBool]
    equivalent: list[StrictBool] | None = None
    members: list[StrictBool]
    cost: Count


class StateDocument(StrictModel):
    """A protocol state as :func:`~prefeval_core.protocol.state.state_to_dict` writes it."""

    format: Literal[2]
    table: Annotated[StrictStr, Field(max_length=200)]
    settings: SettingsDocument
    round: Count
    reveals: list[Reveal]
    records: list[RecordDocument]
    withdrawn: list[Withdrawal] = Field(default_factory=list)


def _refused(path: str, message: str) -> SettingsError:
    return SettingsError([Problem("error", "bad_state", message, path=path)])


def check_against_table(state: StateDocument, table: StudyTable) -> None:
    """Raise :class:`SettingsError` (with the JSON path) for a value the table contradicts."""
    slots = table.grid.scores.size if table.grid is not None else len(table.row_pair)
    if state.settings.unit != table.unit:
        raise _refused("settings.unit", f"the settings say unit {state.settings.unit!r}, the study table {table.unit!r}")
    seen: set[int] = set()
    for index, (slot, value, round_number, _) in enumerate(state.reveals):
        if slot >= slots:
            raise _refused(f"reveals[{index}][0]", f"judgment slot {slot} is outside the study table's {slots} slots")
        if slot in seen:
            raise _refused(f"reveals[{index}][0]", f"judgment slot {slot} is revealed twice")
        seen.add(slot)
        if round_number > state.round + 1:
            raise _refused(f"reveals[{index}][2]", f"revealed in round {round_number}, after the open round {state.round + 1}")
        if table.grid is None and value not in (0, 1, 2):
            raise _refused(f"reveals[{index}][1]", f"a comparison's outcome must be 0, 1 or 2, got {value!r}")
    used = sum(cost for *_, cost in state.reveals)
    if used > state.settings.budget:
        raise _refused("settings.budget", f"the budget {state.settings.budget:,} is below the {used:,} judgments already used")
    withdrawn: set[int] = set()
    for index, (slot, round_number) in enumerate(state.withdrawn):
        if slot >= slots or slot in withdrawn:
            raise _refused(f"withdrawn[{index}][0]", f"withdrawn slot {slot} is outside the study table or listed twice")
        if round_number > state.round:
            raise _refused(f"withdrawn[{index}][1]", f"withdrawn in round {round_number}, after the last decided round {state.round}")
        withdrawn.add(slot)
    if len(state.records) != state.round:
        raise _refused("round", f"round {state.round} but {len(state.records)} round records")
    for index, record in enumerate(state.records):
        _check_record(record, index, table)


def _check_record(record: RecordDocument, index: int, table: StudyTable) -> None:
    where = f"records[{index}]"
    if record.round != index + 1:
        raise _refused(f"{where}.round", f"record {index + 1} says round {record.round}")
    for position, pair in enumerate(record.pairs):
        if pair >= table.n_pairs:
            raise _refused(f"{where}.pairs[{position}]", f"pair {pair} is outside the study table's {table.n_pairs} pairs")
    for name in ("theta", "decision", "p_mean", "log_evidence", "log_numerator", "futile"):
        if len(getattr(record, name)) != len(record.pairs):
            raise _refused(f"{where}.{name}", f"{len(getattr(record, name))} values for {len(record.pairs)} pairs")
    if record.equivalent is not None and len(record.equivalent) != len(record.pairs):
        raise _refused(f"{where}.equivalent", f"{len(record.equivalent)} values for {len(record.pairs)} pairs")
    if len(record.members) != len(table.systems):
        raise _refused(f"{where}.members", f"{len(record.members)} values for {len(table.systems)} systems")
