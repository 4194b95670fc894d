"""From a dataset and a study setup to a protocol run, and from a run to its summary.

The one path every shell takes (the CLI's ``replay``/``reproduce``, the Protocol page, the
report): :func:`study_table` builds the table, :func:`start_study` the fresh state,
:func:`run_replay` runs a replay to its end, :func:`summary_json` / :func:`replay_json` turn a
run into the stable JSON shapes the CLI prints.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from prefeval_core.data.annotators import comparisons_behind
from prefeval_core.data.dataset import Dataset
from prefeval_core.decision import SamplerSettings
from prefeval_core.diagnostics.comparison import Comparison
from prefeval_core.errors import settings_error
from prefeval_core.protocol import (
    ProtocolResult,
    ProtocolState,
    Question,
    QuestionKind,
    new_state,
    protocol_result,
    replay_source,
    run_protocol,
)
from prefeval_core.protocol.annotator_units import pooling_problem, unpooled_reason
from prefeval_core.protocol.questions import check_question
from prefeval_core.protocol.run import Progress
from prefeval_core.protocol.stop import cost_to_settle, futile_pairs
from prefeval_core.protocol.table import StudyTable, build_study_table
from prefeval_core.vocabulary.outcomes import SYMBOLS
from prefeval_core.workflow.answers import answer_words, exclusions, leaderboard_json, study_leaderboard
from prefeval_core.workflow.setup import PER_REQUEST_WORDS, StudySetup, protocol_settings
from prefeval_core.workflow.status import judge_role


def replay_setup(
    human: str,
    metrics: Sequence[str] = (),
    *,
    question: QuestionKind = "all-pairs",
    k: int = 1,
    baselines: Sequence[str] = (),
    budget: int | None = None,
    seed: int = 0,
    live: bool = False,
    **options: Any,
) -> StudySetup:
    """The setup of a replay (or, with ``live``, of a live study): ``question`` (with ``k``
    for top-k, ``baselines`` for baseline), ``budget`` in the study's cost unit (``None``: all),
    ``seed``, and any other :class:`~prefeval_core.workflow.setup.StudySetup` field by name in
    ``options`` (``judgments_per_item`` only for a live study).

    Raises:
        SettingsError: an option that is not a setup field of that mode, or a value out of range.
    """
    allowed = {f.name for f in fields(StudySetup)} - {"human", "metrics", "question", "mode", "budget", "seed"}
    if not live:
        allowed -= {"judgments_per_item"}
    unknown = sorted(set(options) - allowed)
    if unknown:
        what = "study" if live else "replay"
        raise settings_error(f"unknown {what} option(s) {', '.join(unknown)}; known: {', '.join(sorted(allowed))}", field=unknown[0])
    return StudySetup(
        human=human,
        metrics=tuple(metrics),
        question=Question(question, k, tuple(baselines)),
        budget=budget,
        seed=seed,
        mode="live" if live else "replay",
        **options,
    )


def study_table(dataset: Dataset, setup: StudySetup) -> StudyTable:
    """The study table of ``setup`` on ``dataset`` (replay: judgments the data holds; live:
    every output the data covers)."""
    return build_study_table(
        dataset,
        setup.human,
        setup.metrics,
        unit=setup.unit,
        pool="human" if setup.mode == "replay" else "all",
        eps_human=setup.eps_human,
        eps_metric=setup.eps_metric,
        human_fraction=setup.human_fraction,
        seed=setup.seed,
        ideal_items=setup.ideal_items,
        ratings_per_request=setup.request_design(lambda: pooling_problem(dataset, setup.human) is None),
        judgments_per_item=setup.judgments_per_item,
    )


def request_design_note(dataset: Dataset, setup: StudySetup) -> str | None:
    """Why a study that names no design buys every judgment of an output or comparison at once (its
    table's ``all``, :func:`study_table`) although the data keep its annotators apart: for ratings
    under a pool statistic (which would buy them one at a time, ``one_pooled``), the outputs were
    rated different numbers of times; for comparisons, their majority is the full evaluation's
    outcome, and one annotator's is another study (``one``, asked for by name). Before it, the
    systems of the data a replay leaves out because its human rater judged none of their outputs.
    ``None`` when there is nothing to say."""
    left_out = _left_out_note(dataset, setup.human) if setup.mode == "replay" else None
    notes = [note for note in (left_out, _design_note(dataset, setup)) if note is not None]
    return "; ".join(notes) if notes else None


def _left_out_note(dataset: Dataset, human: str) -> str | None:
    """``ZZZ: no judgment by human:relevance, so the study leaves it out``, or ``None``."""
    if human not in dataset.raters:
        return None
    ratings, preferences = dataset.ratings, dataset.preferences
    judged = set(ratings.loc[ratings["rater"] == human, "system"].astype(str))
    if not preferences.empty:
        own = preferences[preferences["rater"] == human]
        judged |= set(own["system_a"].astype(str)) | set(own["system_b"].astype(str))
    missing = sorted(set(map(str, dataset.systems)) - judged)
    if not missing:
        return None
    shown = ", ".join(missing[:10]) + (f" and {len(missing) - 10} more" if len(missing) > 10 else "")
    return f"{shown}: no judgment by {human}, so the study leaves {'it' if len(missing) == 1 else 'them'} out"


def _design_note(dataset: Dataset, setup: StudySetup) -> str | None:
    """The design part of :func:`request_design_note`."""
    if setup.ratings_per_request is not None or setup.mode != "replay":
        return None
    if setup.human in dataset.raters and dataset.rater_kind(setup.human) == "pairwise":
        most = int(comparisons_behind(dataset.preferences, setup.human)["judgments"].to_numpy().max(initial=1))
        if most < 2:
            return None
        return (
            f"a request bought {PER_REQUEST_WORDS['all']} (up to {most} comparisons, their majority the full evaluation's outcome); "
            f"buying {PER_REQUEST_WORDS['one']} instead ('A request buys' on the Protocol page, --ratings-per-request one) "
            "pays one comparison per request, and the answer is then about that annotator's outcomes"
        )
    if setup.request_design(lambda: True) != "one_pooled":
        return None
    reason = unpooled_reason(dataset, setup.human)
    return None if reason is None else f"a request bought {PER_REQUEST_WORDS['all']}, not one at a time: {reason}"


def start_study(table: StudyTable, setup: StudySetup) -> ProtocolState:
    """A fresh protocol state for ``setup`` on ``table`` (baselines checked against its systems)."""
    check_question(setup.question, table.systems)
    return new_state(table, protocol_settings(setup, table))


@dataclass(frozen=True)
class Replay:
    """A finished replay: the final ``state``, its ``result`` against the full human evaluation,
    and the wall time in seconds of the protocol loop."""

    state: ProtocolState
    result: ProtocolResult
    wall_s: float


def run_replay(
    table: StudyTable, setup: StudySetup, *, progress: Progress | None = None, sampler_settings: SamplerSettings | None = None
) -> Replay:
    """Run the protocol of ``setup`` to its end on ``table`` with the replay source."""
    start = time.perf_counter()
    state = run_protocol(start_study(table, setup), replay_source(table), progress=progress, sampler_settings=sampler_settings)
    wall = time.perf_counter() - start
    return Replay(state, protocol_result(state), wall)


def comparison_summary(comparison: Comparison) -> dict[str, float | int]:
    """Error-type fractions (``correct`` counts both correct kinds) and the mean KLD."""
    f = comparison.frequencies
    return {
        "correct": f.correct,
        "correct_significant": f.correct_significant,
        "correct_undecided": f.correct_undecided,
        "inversion": f.inversion,
        "omission": f.omission,
        "insertion": f.insertion,
        "kld": comparison.mean_kld,
        "pairs": f.pairs,
    }


def summary_json(result: ProtocolResult, state: ProtocolState, wall_s: float) -> dict[str, Any]:
    """The ``summary`` of ``replay --json`` (keys are stable; new ones are only ever added)::

        {"correct", "correct_significant", "correct_undecided", "inversion", "omission", "insertion",
         "kld", "pairs", "annotation_fraction", "human_used", "human_available", "rounds", "wall_s",
         "settings": {...},
         "cost_unit": "ratings"|"comparisons", "cost_used", "cost_available", "cost_fraction",
         "question": "all-pairs"|"top-k"|"baseline", "answer_words" (the answer in names),
         "stop_reason" (see :mod:`prefeval_core.protocol.stop`), "futile_pairs": [[system_a, system_b], ...],
         "cost_to_settle" (the most that judging the futile pairs to the end of their items could still
         cost, in ``cost_unit``; 0 without such pairs),
         "leaderboard": [{"system", "score", "low", "high", "p_top", "status", "judgments"}, ...] (best first),
         "leaderboard_score": "mean score"|"win rate", "leaderboard_k",
         "ratings_per_request": "all"|"one"|"one_pooled" (what a request bought),
         "equivalent_pairs" (pairs decided equivalent within δ; 0 without a margin), "false_equivalences"
         (of those, the pairs δ or more apart on the full evaluation),
         "judge_role" (how the study's metrics enter the decisions, in words; null without metrics),
         the kind's own keys (its answer against the full evaluation's, ``result.answer.summary()``);
         top-k: "k", "answer": [systems], "sure": [systems], "reference_answer": [systems],
                "exact_match", "false_exclusions", "extras",
                "ruled_out": [{"system", "round", "cost"}, ...] (in the order ruled out; ``cost`` in
                ``cost_unit``, revealed by the end of that round)}

    Fractions are in [0, 1]; ``annotation_fraction`` is the paper's pair-outcome fraction,
    ``cost_fraction`` the share of the study's judgments (ratings or comparisons) used. For the
    baseline question the error types are over the baseline pairs.
    """
    summary: dict[str, Any] = comparison_summary(result.comparison) | {
        "annotation_fraction": result.annotation_fraction,
        "human_used": int(result.human_used.sum()),
        "human_available": int(result.human_available.sum()),
        "rounds": result.rounds,
        "wall_s": wall_s,
        "settings": state.settings.as_dict(),
        "cost_unit": result.unit,
        "cost_used": result.cost_used,
        "cost_available": result.cost_available,
        "cost_fraction": result.cost_fraction,
        "question": result.question.kind,
        "stop_reason": result.stop_reason,
        "answer_words": answer_words(state),
        "futile_pairs": [list(pair) for pair in futile_pairs(state)],
        "cost_to_settle": cost_to_settle(state),
        "ratings_per_request": state.table.ratings_per_request,
        "equivalent_pairs": int(result.equivalent.sum()),
        "false_equivalences": int(result.false_equivalent.sum()),
        "judge_role": judge_role(state.settings),
    }
    summary |= leaderboard_json(study_leaderboard(state))
    if result.answer is not None:
        summary |= result.answer.summary()
    if state.settings.question.entry.tier:
        summary["ruled_out"] = [{"system": e.system, "round": e.round, "cost": e.cost} for e in exclusions(state)]
    return summary


def replay_json(replay: Replay) -> dict[str, Any]:
    """The stable ``replay --json`` shape::

        {"pairs": [{"system_a", "system_b", "outcome": ">"|"<"|"=", "theta" (null if never decided),
                    "human_used", "human_reference": ">"|"<"|"=", "error_type", "equivalent",
                    "false_equivalence", "mean_difference" (null if none revealed),
                    "reference_mean_difference"}, ...],
         "summary": {...}}   (see :func:`summary_json`)

    ``"="`` means no directional decision; ``"equivalent"`` (true / false) whether the pair was
    decided equivalent within the margin δ, ``"false_equivalence"`` whether it was so decided although
    the full evaluation puts it δ or more apart (the paper's error types count only directions, so an
    equivalent pair whose reference has a direction is an omission there); ``"mean_difference"`` the
    mean A − B of the differences revealed (score differences; +1 / 0 / -1 outcomes for the outcome
    statistics and comparisons) and ``"reference_mean_difference"`` the same on the full evaluation
    (the pool's, for the pool statistics); the pairs are those of the question.
    """
    result = replay.result
    pairs = [
        {
            "system_a": a,
            "system_b": b,
            "outcome": SYMBOLS[int(result.outcomes[k])],
            "theta": None if np.isnan(result.theta[k]) else float(result.theta[k]),
            "human_used": int(result.human_used[k]),
            "human_reference": SYMBOLS[int(result.comparison.reference[k])],
            "error_type": str(result.comparison.error_types[k]),
            "equivalent": bool(result.equivalent[k]),
            "false_equivalence": bool(result.false_equivalent[k]),
            "mean_difference": None if np.isnan(result.mean_difference[k]) else float(result.mean_difference[k]),
            "reference_mean_difference": float(result.reference_mean[k]),
        }
        for k, (a, b) in enumerate(result.pairs)
    ]
    return {"pairs": pairs, "summary": summary_json(result, replay.state, replay.wall_s)}
