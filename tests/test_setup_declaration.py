"""One study setup, declared once (workflow/setup.py): the options of ``prefeval replay``, the
Protocol form and the saved document all come from the declaration, with the same names, bounds,
defaults and choices; a question kind or a field format registered in a fixture appears in the
CLI's choices and the forms' without another edit; setups saved before the declaration still load.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import MISSING, fields
from typing import Any, get_args

import pytest

from prefeval_core.cli import build_parser
from prefeval_core.data.field_formats import FIELD_FORMATS, FieldFormat
from prefeval_core.data.formats import TableKind
from prefeval_core.decision import MODELS, SAMPLERS
from prefeval_core.protocol import ERROR_CONTROL_RULES, QUESTION_KINDS, ProtocolSettings, Question, QuestionKind
from prefeval_core.protocol.error_controls import ErrorControlRule
from prefeval_core.protocol.settings import Policy, Statistic
from prefeval_core.vocabulary.controls import ErrorControl
from prefeval_core.vocabulary.fields import Bounds
from prefeval_core.vocabulary.tasks import RatingsPerRequest, Unit
from prefeval_core.workflow import StudySetup
from prefeval_core.workflow.input_kinds import TABLE_WORDS, input_kind_words
from prefeval_core.workflow.setup import Mode, SetupField, setup_fields, setup_from_values, setup_values
from prefeval_core.workflow.setup_schema import QuestionDocument, SetupDocument
from prefeval_core.workflow.studies import study_parts
from tests.page_fixtures import data_dir, page, run_ok  # noqa: F401
from tests.toy_question import toy_question  # noqa: F401

SAVED_BEFORE = [
    # StudySetup.as_dict() as the code before the declaration wrote it (study records, session files)
    '{"human": "human:relevance", "metrics": ["rougeL", "chrF"], "question": {"kind": "top-k", "k": 2, "baselines": []}, '
    '"unit": "ratings", "mode": "live", "budget": 300, "batch": 5, "gamma": 0.1, "error_control": "question", "futility": 0.2, '
    '"eps_human": 0.5, "eps_metric": 0.01, "model": "full", "sampler": "nuts", "policy": "paper", "seed": 7, "human_fraction": 0.5, '
    '"max_rounds": 4, "ideal_items": 0, "judgments_per_item": 2, "statistic": "mean", "delta": 0.3, "ratings_per_request": "one"}',
    '{"human": "human", "metrics": [], "question": {"kind": "all-pairs", "k": 1, "baselines": []}, "unit": null, "mode": "replay", '
    '"budget": null, "batch": 10, "gamma": 0.05, "error_control": "spending", "futility": 0.05, "eps_human": 0.0, "eps_metric": 0.0, '
    '"model": null, "sampler": "fast", "policy": "paper", "seed": 0, "human_fraction": 1.0, "max_rounds": null, "ideal_items": 0, '
    '"judgments_per_item": 1, "statistic": "sign", "delta": null, "ratings_per_request": "all"}',
]


def _replay_actions() -> dict[str, argparse.Action]:
    subparsers = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return {option: action for action in subparsers.choices["replay"]._actions for option in action.option_strings}


def _accepts(parse: Any, value: float) -> bool:
    try:
        parse(repr(value) if isinstance(value, float) else str(value))
    except argparse.ArgumentTypeError:
        return False
    return True


def _check_bounds(parse: Any, field: SetupField) -> None:
    """The option's type accepts the closed bounds and refuses what lies past every bound."""
    bounds, step = field.setting.bounds, 1 if field.kind is int else 1e-6
    if bounds.ge is not None:
        assert _accepts(parse, field.kind(bounds.ge)) and not _accepts(parse, field.kind(bounds.ge - step)), field.name
    if bounds.gt is not None:
        assert not _accepts(parse, field.kind(bounds.gt)) and _accepts(parse, field.kind(bounds.gt + step)), field.name
    if bounds.le is not None:
        assert _accepts(parse, field.kind(bounds.le)) and not _accepts(parse, field.kind(bounds.le + step)), field.name
    if bounds.lt is not None:
        assert not _accepts(parse, field.kind(bounds.lt)), field.name


def test_the_cli_options_are_the_declaration() -> None:
    actions = _replay_actions()
    declared = {field.option: field for field in setup_fields().values() if field.option is not None}
    assert set(declared) <= set(actions)
    for option, field in declared.items():
        action = actions[option]
        assert action.help is not None and field.setting.help in action.help, option
        if field.required:
            assert action.required, option
            continue
        default = tuple(action.default) if field.kind is tuple else action.default  # repeatable: a list to extend
        assert default == field.default, option
        if field.setting.choices is not None:
            assert tuple(action.choices or ()) == tuple(field.setting.words()), option
        if field.kind in (int, float):
            _check_bounds(action.type, field)


def test_the_saved_document_is_the_declaration() -> None:
    declared = setup_fields()
    question = {f.name for f in fields(Question)}
    assert set(SetupDocument.model_fields) == {f.name for f in fields(StudySetup)}
    assert set(QuestionDocument.model_fields) == question
    documents = {**SetupDocument.model_fields, **QuestionDocument.model_fields}
    for name, field in declared.items():
        saved = documents[name]
        if field.required:
            assert saved.is_required(), name
            continue
        default = saved.get_default(call_default_factory=True)
        assert default == (list(field.default) if isinstance(field.default, tuple) else field.default), name
        if field.kind in (int, float):
            schema = SetupDocument.model_json_schema()
            properties = schema["$defs"]["QuestionDocument"]["properties"] if name in question else schema["properties"]
            number = next(s for s in properties[name].get("anyOf", [properties[name]]) if s.get("type") in ("integer", "number"))
            bounds = field.setting.bounds
            assert number.get("minimum") == bounds.ge and number.get("exclusiveMinimum") == bounds.gt, name
            assert number.get("maximum") == bounds.le and number.get("exclusiveMaximum") == bounds.lt, name
    setup = StudySetup(human="h")
    assert SetupDocument(human="h").model_dump() == json.loads(json.dumps(setup.as_dict()))


@pytest.mark.page
@pytest.mark.usefixtures("data_dir")
def test_the_protocol_form_is_the_declaration() -> None:
    at = run_ok(page("protocol.py"))
    by_label = {field.setting.label: field for field in setup_fields().values()}
    numbers = {n.label: n for n in at.number_input}
    for label in ("Budget (judgments; 0 = all the data holds)", "Batch N per round", "Seed", "Significance level γ", "Futility level β"):
        field, widget = by_label[label], numbers[label]
        low, high = field.setting.shown or (field.setting.bounds.low, field.setting.bounds.high)
        assert (widget.min, widget.max) == (low, high), label
        assert widget.value == (field.default or 0), label
        assert widget.help == field.setting.help, label
    for field in (by_label["Metric tie threshold"], by_label["Judgments per item (live)"], by_label["Equivalence margin δ (0 = none)"]):
        widget = numbers[field.setting.label]
        assert (widget.min, widget.max, widget.value) == (*(field.setting.shown or ()), field.default or 0)
    k = numbers[by_label["k (top-k)"].setting.label]
    assert k.min == by_label["k (top-k)"].setting.bounds.ge and k.value == by_label["k (top-k)"].default
    boxes = {s.label: s for s in at.selectbox if s.label in by_label}
    for name in ("kind", "unit", "error_control", "sampler", "policy", "statistic", "ratings_per_request"):
        field = setup_fields()[name]
        box = boxes[field.setting.label]
        words = field.setting.words()
        assert box.options[-len(words) :] == list(words.values()), name
        assert box.value == (field.default if field.default is not None else "auto"), name
    (share,) = at.slider
    assert share.label == setup_fields()["human_fraction"].setting.label and share.value == setup_fields()["human_fraction"].default
    assert at.radio[0].label == setup_fields()["mode"].setting.label and at.radio[0].value == setup_fields()["mode"].default


def test_one_set_of_defaults() -> None:
    """The protocol's defaults are the declaration's; error control and futility come only from the setup."""
    protocol = {f.name: f for f in fields(ProtocolSettings)}
    for name in ("error_control", "futility"):
        assert protocol[name].default is MISSING and protocol[name].kw_only
    declared = setup_fields()
    for name, field in protocol.items():
        if (
            name in declared and field.default is not MISSING and name not in ("human", "model", "unit", "question", "statistic")
        ):  # a record, or chosen from the data (the statistic: from the error control)
            assert field.default == declared[name].default, name
    assert setup_from_values(setup_values(StudySetup(human="h"))) == StudySetup(human="h")


def test_the_literals_and_the_registries_agree() -> None:
    assert tuple(QUESTION_KINDS) == get_args(QuestionKind)
    assert set(ERROR_CONTROL_RULES) == set(get_args(ErrorControl))
    assert set(TABLE_WORDS) == set(get_args(TableKind))
    declared = setup_fields()
    for name, literal in [
        ("mode", Mode),
        ("unit", Unit),
        ("statistic", Statistic),
        ("ratings_per_request", RatingsPerRequest),
        ("policy", Policy),
    ]:
        assert set(declared[name].setting.words()) == set(get_args(literal)), name
    assert tuple(declared["sampler"].setting.words()) == SAMPLERS
    assert tuple(declared["model"].setting.words()) == ("full", "human_only", "known_mu") and set(MODELS) == {
        "full",
        "human_only",
        "known_mu",
    }


@pytest.mark.parametrize("saved", SAVED_BEFORE)
def test_a_setup_saved_before_still_loads(saved: str) -> None:
    value = json.loads(saved)
    document = SetupDocument.model_validate(value)
    setup = StudySetup.from_dict(value)
    assert setup.as_dict() == value == document.model_dump()


def test_a_stored_study_saved_before_still_loads() -> None:
    class Record:
        id = 1
        setup_json = json.dumps({"version": 1, "data": {"kind": "sample", "name": "summeval"}, "setup": json.loads(SAVED_BEFORE[0])})

    _, setup = study_parts(Record())  # type: ignore[arg-type]
    assert setup == StudySetup.from_dict(json.loads(SAVED_BEFORE[0]))


# --- registries ---------------------------------------------------------------------------------


@pytest.mark.usefixtures("toy_question")
def test_a_registered_question_is_offered_by_the_cli_and_the_form() -> None:
    assert "toy" in _replay_actions()["--question"].choices  # type: ignore[operator]
    assert setup_from_values({"human": "h", "kind": "toy", "k": 3}).question.kind == "toy"
    assert SetupDocument.model_validate({"human": "h", "question": {"kind": "toy"}}).question.kind == "toy"  # type: ignore[attr-defined]


@pytest.mark.page
@pytest.mark.usefixtures("data_dir")
@pytest.mark.usefixtures("toy_question")
def test_a_registered_question_is_in_the_form() -> None:
    at = run_ok(page("protocol.py"))
    (box,) = [s for s in at.selectbox if s.label == "Question"]
    assert box.options[-1] == "A toy question"


def test_a_registered_error_control_is_offered_by_the_cli(monkeypatch: pytest.MonkeyPatch) -> None:
    rule = ErrorControlRule(
        "toy", "a toy rule", "a toy rule, in words", per_pair=True, futility=True, decide=ERROR_CONTROL_RULES["none"].decide
    )
    monkeypatch.setitem(ERROR_CONTROL_RULES, "toy", rule)
    assert "toy" in _replay_actions()["--error-control"].choices  # type: ignore[operator]
    assert setup_fields()["error_control"].setting.words()["toy"] == "a toy rule"


def test_a_registered_field_format_is_offered_by_the_cli_and_the_data_form(monkeypatch: pytest.MonkeyPatch) -> None:
    entry = FieldFormat("toy", "Toy scores", "toy_item, toy_system, toy_score", lambda raw: False, lambda raw: ())
    monkeypatch.setitem(FIELD_FORMATS, "toy", entry)
    subparsers = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    kind = next(a for a in subparsers.choices["replay"]._actions if "--kind" in a.option_strings)
    assert "toy" in (kind.help or "") and "Toy scores" in (kind.help or "")
    words = input_kind_words()  # the Data page's kind picker
    assert words["toy"] == "Toy scores (toy_item, toy_system, toy_score)" and list(words)[-1] == "ignored"


def test_bounds_in_words() -> None:
    assert Bounds(gt=0.0, lt=1.0).words() == "in (0, 1)"
    assert Bounds(gt=0.0, le=1.0).words() == "in (0, 1]"
    assert Bounds(ge=0, le=100_000).words() == "from 0 to 100,000"
    with pytest.raises(ValueError, match="gamma must be in"):
        StudySetup(human="h", gamma=1.0)


def test_a_repeated_metric_option_adds_metrics() -> None:
    """``--metric a --metric b,c`` asks for three metrics (it once kept only the last)."""
    subparsers = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    replay = subparsers.choices["replay"]
    args = replay.parse_args(["--data", "sample:summeval", "--human", "h", "--metric", "a", "--metric", "b,c"])
    assert tuple(args.metric) == ("a", "b", "c")
    assert tuple(replay.parse_args(["--data", "sample:summeval", "--human", "h"]).metric) == ()
