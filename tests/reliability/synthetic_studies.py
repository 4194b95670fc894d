"""Seeded synthetic studies nobody has seen, run through ``prefeval replay`` with every question
and error control: the robustness campaign for "studies you do not have".

``synthetic_study(seed, folder)`` writes one study: scalar (2-8 systems, 5-80 items, a Likert,
continuous or MQM-like human scale, 0-2 metrics, about 5% of the ratings missing, names with
spaces and non-ASCII letters; a third of the Likert studies publish the human score as the mean of
three annotators kept apart, experts crossed with the systems or a crowd nested in the outputs, so
that the default buys one rating at a time) or pairwise (2-5 systems, 5-60 items, 0-1
LLM-judge-like metric, about 10% of the comparisons missing); in the odd-numbered studies the two
best systems are tied (the same quality). ``replay_checks(study, seed)`` runs
the replay with each question (all pairs, top-k with a random k, a random baseline) and each error
control (question — the default — and fdr, with a random statistic and at times a margin; none,
spending, anytime), a random batch, with or without the metrics, a budget or a human fraction at
times, and returns what went wrong: a non-zero exit, a traceback, a cost outside its bounds, an
answer naming a system the study lacks, or a second run with the same seed that differs.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import traceback
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd

from prefeval_core.cli import main
from prefeval_core.protocol.settings import BETTING_STATISTICS, OUTCOME_STATISTICS, POOL_STATISTICS
from prefeval_core.workflow.setup import DEFAULT_STATISTICS

QUESTIONS = ("all-pairs", "top-k", "baseline")
CONTROLS = ("question", "fdr", "none", "spending", "anytime")
DRAWN_STATISTICS = (None, *BETTING_STATISTICS)
"""The statistics drawn under question and fdr (``None``: the default's, not named on the command line)."""


@dataclass(frozen=True)
class SyntheticStudy:
    """A study written to ``folder``: its ``systems``, ``metrics`` and whether it is scalar."""

    folder: Path
    systems: tuple[str, ...]
    metrics: tuple[str, ...]
    scalar: bool


def _tied_at_the_top(quality: npt.NDArray[np.float64], tied: bool) -> npt.NDArray[np.float64]:
    """``quality`` with its two best systems made equal (the hard case of every question) where ``tied``."""
    if tied and len(quality) > 1:
        top = np.argsort(quality)[-2:]
        quality[top] = quality[top].max()
    return quality


def _scalar(rng: np.random.Generator, folder: Path, tied: bool) -> SyntheticStudy:
    count, items, metrics = int(rng.integers(2, 9)), int(rng.integers(5, 81)), int(rng.integers(0, 3))
    systems = [f"sys{k}" for k in range(count)] if rng.random() < 0.5 else [f"S-{chr(65 + k)} ü" for k in range(count)]
    quality = _tied_at_the_top(rng.normal(0, 1, count), tied)
    scale = str(rng.choice(["likert", "continuous", "mqm"]))
    rows = []
    for item, (index, name) in itertools.product(range(items), enumerate(systems)):
        latent = quality[index] + rng.normal(0, 1.5)
        if scale == "likert":
            human = float(np.clip(np.round(3 + latent), 1, 5))
        elif scale == "mqm":
            human = -float(rng.poisson(max(0.1, 2 - latent)))
        else:
            human = float(latent)
        if rng.random() < 0.05:
            continue
        rows.append((f"i{item}", name, "human", human))
        # metric m: noisier with m, and favouring the first system (a biased metric)
        rows += [(f"i{item}", name, f"metric{m}", float(latent + rng.normal(0, 1 + m) + 0.5 * (index == 0))) for m in range(metrics)]
    ratings = pd.DataFrame(rows, columns=["item_id", "system", "rater", "score"])
    if scale == "likert":
        ratings = _with_annotators(ratings, np.random.default_rng(rng.integers(2**32)))
    ratings.to_csv(folder / "ratings.csv", index=False)
    return SyntheticStudy(folder, tuple(systems), tuple(f"metric{m}" for m in range(metrics)), True)


def _with_annotators(ratings: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """A third of the time, each human score becomes the mean of three annotators' ratings, kept
    apart as ``human:<annotator>``: the same three experts for every output, or three of a crowd of
    eight workers drawn for each output."""
    design = rng.choice(["none", "none", "experts", "crowd"])
    if design == "none":
        return ratings
    human = ratings[ratings["rater"] == "human"]
    own = np.clip(np.round(human["score"].to_numpy()[:, None] + rng.normal(0, 0.7, (len(human), 3))), 1, 5)
    if design == "experts":
        names = np.tile(["e1", "e2", "e3"], (len(human), 1))
    else:
        names = np.char.add("w", np.array([rng.choice(8, 3, replace=False) for _ in human.index]).astype(str))
    annotators = pd.DataFrame(
        {
            "item_id": np.repeat(human["item_id"].to_numpy(), 3),
            "system": np.repeat(human["system"].to_numpy(), 3),
            "rater": ["human:" + name for name in names.ravel()],
            "score": own.ravel(),
        }
    )
    means = human.assign(score=own.mean(axis=1))
    return pd.concat([ratings[ratings["rater"] != "human"], means, annotators], ignore_index=True)


def _pairwise(rng: np.random.Generator, folder: Path, tied: bool) -> SyntheticStudy:
    count, items, metrics = int(rng.integers(2, 6)), int(rng.integers(5, 61)), int(rng.integers(0, 2))
    systems = [f"m{k}" for k in range(count)]
    quality = dict(zip(systems, _tied_at_the_top(rng.normal(0, 1, count), tied), strict=True))
    rows = []
    for item, (a, b) in itertools.product(range(items), itertools.combinations(systems, 2)):
        if rng.random() < 0.1:
            continue
        difference = quality[a] - quality[b] + rng.normal(0, 1)
        rows.append((f"i{item}", a, b, "human", ">" if difference > 0.3 else "<" if difference < -0.3 else "="))
        for m in range(metrics):
            judged = difference + rng.normal(0, 1)
            rows.append((f"i{item}", a, b, f"judge{m}", ">" if judged > 0.3 else "<" if judged < -0.3 else "="))
    pd.DataFrame(rows, columns=["item_id", "system_a", "system_b", "rater", "label"]).to_csv(folder / "preferences.csv", index=False)
    return SyntheticStudy(folder, tuple(systems), tuple(f"judge{m}" for m in range(metrics)), False)


def synthetic_study(seed: int, folder: Path) -> SyntheticStudy:
    """Study number ``seed`` (module docstring), written to ``folder``; odd numbers have their two
    best systems tied (taken from the seed, so that the other draws stay those of every version)."""
    rng = np.random.default_rng([seed, 2026])
    folder.mkdir(parents=True, exist_ok=True)
    tied = seed % 2 == 1
    return _scalar(rng, folder, tied) if rng.random() < 0.6 else _pairwise(rng, folder, tied)


def _run(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


def replay_arguments(study: SyntheticStudy, seed: int) -> list[list[str]]:
    """The replay command lines for ``study``: each question x error control, options drawn with ``seed``."""
    rng = np.random.default_rng([seed, 7])
    commands = []
    for question, control in itertools.product(QUESTIONS, CONTROLS):
        if control == "fdr" and question == "top-k":  # fdr bounds pairwise decisions only (refused, with a message)
            continue
        args = ["replay", "--data", str(study.folder), "--human", "human", "--json", "--question", question]
        args += ["--error-control", control, "--batch", str(int(rng.integers(1, 15))), "--seed", str(seed)]
        if control in ("question", "fdr"):
            args += _statistic_arguments(study, rng)
        if question == "top-k":
            args += ["--k", str(int(rng.integers(1, len(study.systems))))]  # k < the systems: k = S needs no judgment
        if question == "baseline":
            args += ["--baseline", study.systems[int(rng.integers(len(study.systems)))]]
        if study.metrics and rng.random() < 0.7:
            args += ["--metric", ",".join(study.metrics)]
            if rng.random() < 0.3:
                args += ["--human-fraction", "0.3"]
        if rng.random() < 0.3:
            args += ["--budget", str(int(rng.integers(1, 200)))]
        commands.append(args)
    return commands


def question_errors(study: SyntheticStudy, seed: int, orders: int) -> list[tuple[str, str, bool]]:
    """The campaign's question-control runs of ``study`` on a pool statistic without a human
    fraction (whose reference is then the pool's own full evaluation, which the guarantee is
    about), each with ``orders`` seeds: ``(question, statistic, wrong)`` with ``wrong`` a run that
    excluded a member of the full evaluation's top-k, or decided a direction against it or an
    equivalence it does not hold."""
    found = []
    for args in replay_arguments(study, seed):
        statistic = args[args.index("--statistic") + 1] if "--statistic" in args else DEFAULT_STATISTICS["question"]
        if args[args.index("--error-control") + 1] != "question" or "--human-fraction" in args or statistic not in POOL_STATISTICS:
            continue
        for order in range(orders):
            code, out, err = _run([*args, "--seed", str(1000 * seed + order)])  # the last --seed counts
            if code != 0:
                raise RuntimeError(f"exit {code}: {' '.join(args)}: {err.strip()[-300:]}")
            summary = json.loads(out)["summary"]
            if summary["question"] == "top-k":
                wrong = (summary.get("false_exclusions") or 0) > 0
            else:
                wrong = summary["inversion"] > 0 or summary["false_equivalences"] > 0
            found.append((summary["question"], statistic, wrong))
    return found


def _statistic_arguments(study: SyntheticStudy, rng: np.random.Generator) -> list[str]:
    """A statistic drawn from :data:`DRAWN_STATISTICS` and, at times, an equivalence margin in its units."""
    statistic = DRAWN_STATISTICS[int(rng.integers(len(DRAWN_STATISTICS)))]
    args = [] if statistic is None else ["--statistic", statistic]
    if rng.random() < 0.4:
        outcome_scale = not study.scalar or statistic in OUTCOME_STATISTICS
        args += ["--delta", str(0.2 if outcome_scale else round(float(rng.uniform(0.2, 1.0)), 2))]
    return args


def replay_checks(study: SyntheticStudy, seed: int) -> list[str]:
    """What went wrong replaying ``study`` (module docstring); empty when nothing did."""
    failures = []
    for number, args in enumerate(replay_arguments(study, seed)):
        try:
            code, out, err = _run(args)
            if code != 0:
                failures.append(f"exit {code}: {' '.join(args)}: {err.strip()[-300:]}")
                continue
            summary = json.loads(out)["summary"]
            if not 0 <= summary["cost_used"] <= summary["cost_available"]:
                failures.append(f"cost {summary['cost_used']} of {summary['cost_available']}: {' '.join(args)}")
            unknown = set(summary.get("answer") or ()) - set(study.systems)
            if unknown:
                failures.append(f"answer names {sorted(unknown)}: {' '.join(args)}")
            if number == 0 and not _same(out, _run(args)[1]):
                failures.append(f"the same seed gave another result: {' '.join(args)}")
        except Exception:
            failures.append(f"traceback: {' '.join(args)}: {traceback.format_exc()[-800:]}")
    return failures


def _same(first: str, second: str) -> bool:
    """Two replay JSON outputs equal but for the wall-clock time."""
    one, two = json.loads(first), json.loads(second)
    one["summary"].pop("wall_s"), two["summary"].pop("wall_s")
    return bool(one == two)
