"""``replay --data ... --human R [--metric A,B] [--question top-k --k 1] [--json]``: run the protocol on a finished human evaluation."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from prefeval_core.cli._common import (
    add_data_option,
    fraction,
    int_in,
    load_from_args,
    name_list,
    non_negative_float,
    non_negative_int,
    open_probability,
    positive_float,
    positive_int,
    print_json,
    progress,
    write_study_report,
)
from prefeval_core.cli._terminal import print_safe
from prefeval_core.vocabulary.fields import Bounds
from prefeval_core.workflow.setup import (
    COUNT,
    IDEAL_METRIC_NAME,
    LEVEL,
    PER_REQUEST_WORDS,
    POSITIVE,
    THRESHOLD,
    SetupField,
    setup_fields,
    setup_from_values,
)

if TYPE_CHECKING:
    from prefeval_core.protocol import ProtocolState
    from prefeval_core.workflow.setup import StudySetup

PAPER_DEFAULTS: Final = {"unit": "comparisons", "error_control": "none"}
"""``reproduce``'s defaults: the paper's pair-by-pair protocol without error control."""
PER_RUN: Final = ("metrics", "seed")
"""Settings ``reproduce`` loops over (its own ``--metrics`` and ``--seeds``)."""
NUMBER_TYPES: Final[dict[tuple[type, Bounds], Callable[[str], Any]]] = {
    (int, POSITIVE): positive_int,
    (int, COUNT): non_negative_int,
    (float, LEVEL): open_probability,
    (float, Bounds(gt=0.0, le=1.0)): fraction,
    (float, THRESHOLD): non_negative_float,
    (float, Bounds(gt=0.0)): positive_float,
}
"""The option type of a number setting, by its declared bounds."""


def add_study_options(parser: argparse.ArgumentParser, *, paper_defaults: bool = False, per_run: bool = False) -> None:
    """The options of a study setup, one per declared setting with an option
    (:func:`~prefeval_core.workflow.setup.setup_fields`), and ``--json``; shared by ``replay`` and ``reproduce``.

    ``paper_defaults``: the paper's pair-by-pair protocol without error control (``reproduce``);
    ``per_run``: also ``--metric`` and ``--seed`` (``replay``; ``reproduce`` loops over them).
    """
    add_data_option(parser)
    defaults = PAPER_DEFAULTS if paper_defaults else {}
    for field in setup_fields().values():
        if field.option is not None and (per_run or field.name not in PER_RUN):
            parser.add_argument(field.option, **option_arguments(field, defaults.get(field.name, field.default)))
    parser.add_argument("--json", action="store_true", help="print JSON")


def option_arguments(field: SetupField, default: Any) -> dict[str, Any]:
    """``add_argument``'s keywords for a declared setting: type or choices, default, help."""
    spec = field.setting
    if field.required:
        return {"required": True, "help": spec.help}
    arguments: dict[str, Any] = {"default": default}
    if field.kind is tuple:  # repeatable: --metric a --metric b,c gives a, b, c
        arguments.update(type=name_list, metavar="NAME[,NAME,...]", action="extend", default=list(default))
    elif spec.choices is not None:
        arguments["choices"] = tuple(spec.words())
    elif field.kind in (int, float):
        arguments["type"] = number_type(field, default)
    if "type" in arguments and field.optional and default is not None:
        arguments["help"] = f"{spec.help}, or 'none' ({spec.none}) (default: %(default)s)"
    else:
        shown = spec.none if default is None else "%(default)s" if default != () else "none"
        arguments["help"] = f"{spec.help} (default: {shown})"
    return arguments


def number_type(field: SetupField, default: Any) -> Callable[[str], Any]:
    """The option type of a number setting: its bounds checked; ``none`` accepted for one that may be
    unset but is set by default (``--futility none``)."""
    bounds = field.setting.bounds
    if field.kind is int and bounds.le is not None:
        return int_in(int(bounds.ge or 0), int(bounds.le))
    parse = NUMBER_TYPES[field.kind, bounds]
    if field.optional and default is not None:
        return futility_level if parse is open_probability else parse
    return parse


def futility_level(text: str) -> float | None:
    """A level in (0, 1), or ``none``."""
    return None if text.strip().lower() == "none" else open_probability(text)


def dest(field: SetupField) -> str:
    """Where argparse keeps an option's value (``--cost-unit`` -> ``cost_unit``)."""
    assert field.option is not None
    return field.option.removeprefix("--").replace("-", "_")


def setup_from_args(args: argparse.Namespace, metrics: tuple[str, ...], seed: int) -> StudySetup:
    """The study setup the options describe (``metrics`` and ``seed`` given separately: ``reproduce`` loops over them)."""
    values = {
        name: getattr(args, dest(field)) for name, field in setup_fields().items() if field.option is not None and name not in PER_RUN
    }
    return setup_from_values({**values, "metrics": metrics, "seed": seed})


def unused_options(args: argparse.Namespace, setup: StudySetup) -> list[str]:
    """The options given that ``setup`` does not use, in words (a form may send every field; a
    person who typed one should hear that it changed nothing)."""
    kind = setup.question.kind
    unused = []
    if getattr(args, "baseline", None) and kind != "baseline":
        unused.append(f"--baseline is ignored: only the baseline question uses it (the question is {kind})")
    if getattr(args, "k", 1) != 1 and kind != "top-k":
        unused.append(f"--k is ignored: only the top-k question uses it (the question is {kind})")
    if getattr(args, "ideal_items", 0) and IDEAL_METRIC_NAME not in setup.metrics:
        unused.append("--ideal-items is ignored: only the simulated ideal metric (--metric ideal) uses it")
    return unused


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "replay",
        help="run the annotation-budget protocol on a finished human evaluation",
        description="Replay the annotation-budget protocol (Deriu et al. 2023, Alg. 2, with the question and cost unit of "
        "method.md §12): reveal the human judgments in a seeded random order, only those that can still change the answer, "
        "decide with the metrics' help, and compare the result with the full human evaluation. --metric ideal simulates the "
        "paper's ideal metric; without --metric the protocol is human only.",
    )
    add_study_options(parser, per_run=True)
    parser.add_argument(
        "--report",
        metavar="FILE",
        help="also write the study report to FILE (HTML, as the dashboard's Report page: the answer, the leaderboard, "
        "the settings, the decisions and what the judge saved)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from prefeval_core.workflow.status import study_status
    from prefeval_core.workflow.study import replay_json, request_design_note, run_replay, study_table

    dataset = load_from_args(args.data, args)
    setup = setup_from_args(args, tuple(args.metric), args.seed)
    for option in unused_options(args, setup):
        progress(f"warning: {option}")
    table = study_table(dataset, setup)

    def report(state: ProtocolState) -> None:
        status = study_status(state)  # the question's pairs only
        equivalent = "" if status.equivalent_words is None else f", {status.equivalent_words}"
        # a tier question is answered by the systems it rules out (under question-level control often
        # without deciding a pair); the other questions by their pairs
        answered = status.ruled_out_words or f"{status.undecided} of {status.pairs} pairs undecided"
        progress(f"round {state.round}: {state.cost_used} {table.unit} used, {answered}{equivalent}")

    replay = run_replay(table, setup, progress=report)
    design_note = request_design_note(dataset, setup)
    if args.report is not None:
        write_study_report(args.report, f"prefeval replay: {setup.human} on {', '.join(args.data)}", replay.state, setup, design_note)
        progress(f"report written to {args.report}")
    output = replay_json(replay)
    if args.json:
        print_json(output)
        return 0
    print_replay(output, design_note)
    return 0


def print_replay(output: dict[str, Any], design_note: str | None) -> None:
    """The run in lines: a tier question (top-k) by system (the answer rules systems out; under
    question-level control often without deciding a pair), the other questions by pair; then the
    answer, the comparison with the full evaluation, why a request bought what it did where the
    defaults could not buy one rating at a time (``design_note``), how the judge entered the decisions,
    and the cost."""
    from prefeval_core.workflow.status import judge_sentence

    summary = output["summary"]
    tier = "reference_answer" in summary
    if tier:
        width = max((len(row["system"]) for row in summary["leaderboard"]), default=0)
        unit = summary["cost_unit"]
        ruled_out = {e["system"]: f"  ruled out after round {e['round']} ({e['cost']} {unit})" for e in summary.get("ruled_out", [])}

        def shown(value: float | None, digits: int) -> str:  # null: no judgment, or too few for an interval or P(top k)
            return "-" if value is None else f"{value:.{digits}f}"

        for row in summary["leaderboard"]:
            interval = "[-]" if row["low"] is None else f"[{row['low']:.3f}, {row['high']:.3f}]"
            print_safe(
                f"{row['system']:<{width}}  {row['status']:<4}  {summary['leaderboard_score']} {shown(row['score'], 3)} "
                f"{interval}  P(top {summary['leaderboard_k']}) {shown(row['p_top'], 2)}  judgments {row['judgments']}"
                + ruled_out.get(row["system"], "")
            )
    else:
        for pair in output["pairs"]:
            theta = "    -" if pair["theta"] is None else f"{pair['theta']:.3f}"
            outcome = "≈" if pair["equivalent"] and pair["outcome"] == "=" else pair["outcome"]
            within = ""
            if pair["equivalent"]:
                within = "  FALSE equivalence (δ or more apart on all data)" if pair["false_equivalence"] else "  equivalent within δ"
            print_safe(
                f"{pair['system_a']} {outcome} {pair['system_b']}  theta {theta}  human used {pair['human_used']:>4}  "
                f"reference {pair['human_reference']}  {pair['error_type']}{within}"
            )
    print_safe(summary["answer_words"])
    if tier:
        print_safe(
            f"reference tier: {', '.join(summary['reference_answer'])}; exact match {summary['exact_match']}, "
            f"false exclusions {summary['false_exclusions']}, extras {summary['extras']}"
        )
    equivalent = (
        f"equivalent {summary['equivalent_pairs']} (false {summary['false_equivalences']})  "
        if summary["settings"]["delta"] is not None
        else ""
    )
    pairs = (
        f"correct {summary['correct']:.2f}  inversion {summary['inversion']:.2f}  omission {summary['omission']:.2f}  "
        f"insertion {summary['insertion']:.2f}  {equivalent}KLD {summary['kld']:.3f}  "
    )
    if summary["cost_to_settle"]:
        open_pairs = len(summary["futile_pairs"])
        before = "" if summary["stop_reason"] == "futile" else f" before the run stopped ({summary['stop_reason']})"
        print_safe(
            f"the futility stop left {open_pairs} pair{'s' if open_pairs != 1 else ''} open{before}: judging them to the end of their "
            f"items would cost at most {summary['cost_to_settle']} more {summary['cost_unit']} (--futility none)"
        )
    if summary["ratings_per_request"] != "all":
        print_safe(f"a request bought {PER_REQUEST_WORDS[summary['ratings_per_request']]}")
    if design_note is not None:
        print_safe(design_note)
    if summary["judge_role"] is not None:
        print_safe(judge_sentence(summary["settings"]["metrics"], summary["judge_role"]))
    print_safe(
        ("" if tier else pairs) + f"pair outcomes {summary['annotation_fraction']:.2f}  "
        f"cost {summary['cost_used']} of {summary['cost_available']} {summary['cost_unit']} ({summary['cost_fraction']:.2f})  "
        f"rounds {summary['rounds']} ({summary['stop_reason']})  {summary['wall_s']:.2f} s"
    )
