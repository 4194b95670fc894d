"""The default route where the top systems tie *exactly in the study's own pool*, with annotators
kept apart: the least favourable case of the pool tests, through the whole pipeline.

The pool statistics test the mean difference over the study's finite pool (method.md §13), and a
study that keeps its annotators apart is bought one rating at a time (``one_pooled``: units by
annotator where experts rated every output of an item, by place where a crowd's workers are nested
in the outputs). Their guarantee is about that pool, so the hardest study for it is one whose top
systems have *exactly* the same pool mean — the null at its boundary — rather than the same
population mean (whose pools differ by chance, so one of them is the pool's best and the others may
rightly be excluded).

:func:`pool_tied_study` builds such a study: system ``s0``'s ratings, and for each other tied system
the same ratings on a seeded permutation of the items (each item's three ratings move together), so
the tied systems' pool means are equal for every annotator split while their item-level differences
are not 0; the other systems are 0.4, 0.4, 0.8, 0.8, ... lower. Ratings are 1-5 integers, three per
output (an item effect shared by all systems, rating noise N(0, 0.8²)), published as the mean beside
the named annotators. :func:`default_route_errors` replays many such studies with the defaults of a
:class:`~prefeval_core.workflow.setup.StudySetup` (question-level control, the ``pool_mean``
statistic, ``one_pooled`` where the annotators are kept apart) and counts the runs that broke the
guarantee: top-k excluding a tied top system, all-pairs deciding a direction between two of them.

The ``comparisons`` design is the same question for a comparisons study whose three annotators are
kept apart, bought one annotator's comparison at a time (``--ratings-per-request one``): every pair
is compared on every item; on a pair of two tied systems the annotators agree, with as many ``>`` as
``<``, so the pair ties exactly in whichever annotator's outcomes a run buys; on the other pairs
each annotator votes on their own (``=`` one time in five, otherwise the better system with a
probability that grows with the gap), and the rater's outcome is their majority.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from prefeval_core.protocol.settings import ErrorControl, Question, Statistic
from prefeval_core.vocabulary.outcomes import BETTER, WORSE
from prefeval_core.workflow.datasets import Dataset, load_data
from prefeval_core.workflow.setup import StudySetup
from prefeval_core.workflow.study import Replay, run_replay, study_table

HUMAN = "human:q"
RATINGS_PER_OUTPUT = 3
CROWD_WORKERS = 12
GAP = 0.4
Design = Literal["experts", "crowd", "comparisons"]


def pool_tied_study(seed: int, *, systems: int = 8, tied: int = 3, items: int = 60, design: Design = "experts") -> Dataset:
    """A study whose ``tied`` first systems (``s0`` ...) have exactly equal pool means (module
    docstring): ``experts`` ``e0``-``e2`` rate every output of an item, or a ``crowd`` of
    :data:`CROWD_WORKERS` workers, three drawn for each output; or ``comparisons`` of every pair on
    every item by ``e0``-``e2`` (module docstring)."""
    rng = np.random.default_rng(seed)
    if design == "comparisons":
        return _pool_tied_comparisons(rng, systems, tied, items)
    item_effect = rng.normal(0.0, 0.5, items)
    first = _ratings(rng, 4.0, item_effect)
    rows = []
    for system in range(systems):
        if system == 0:
            scores = first
        elif system < tied:
            scores = first[rng.permutation(items)]
        else:
            scores = _ratings(rng, 4.0 - GAP * (1 + (system - tied) // 2), item_effect)
        for item in range(items):
            workers = range(RATINGS_PER_OUTPUT) if design == "experts" else rng.choice(CROWD_WORKERS, RATINGS_PER_OUTPUT, replace=False)
            prefix = "e" if design == "experts" else "w"
            for worker, score in zip(workers, scores[item], strict=True):
                rows.append((f"i{item:03d}", f"s{system}", f"{HUMAN}:{prefix}{worker}", float(score)))
            rows.append((f"i{item:03d}", f"s{system}", HUMAN, float(scores[item].mean())))
    frame = pd.DataFrame(rows, columns=["item_id", "system", "rater", "score"])
    return load_data([("ratings.csv", frame.to_csv(index=False).encode())])


def _pool_tied_comparisons(rng: np.random.Generator, systems: int, tied: int, items: int) -> Dataset:
    """The ``comparisons`` design (module docstring): labels ``>`` ``=`` ``<`` of annotators
    ``e0``-``e2`` on every pair and item, and their majority as the rater's."""
    strength = [0.0 if s < tied else -GAP * (1 + (s - tied) // 2) for s in range(systems)]
    rows = []
    for a, b in itertools.combinations(range(systems), 2):
        if b < tied:  # two tied systems: the annotators agree, as many > as <
            wins = int(0.4 * items)
            agreed = rng.permutation([0] * wins + [2] * wins + [1] * (items - 2 * wins))
            votes = np.repeat(agreed[:, None], RATINGS_PER_OUTPUT, axis=1)
        else:
            better = 1.0 / (1.0 + np.exp(-3.0 * (strength[a] - strength[b])))
            draw = rng.random((items, RATINGS_PER_OUTPUT))
            votes = np.where(draw < 0.2, 1, np.where(rng.random((items, RATINGS_PER_OUTPUT)) < better, 0, 2))
        majority = 1 - np.sign((1 - votes).sum(axis=1))  # this project's rule: the sign of the sum of v
        for item in range(items):
            key = (f"i{item:03d}", f"s{a}", f"s{b}")
            rows += [(*key, f"{HUMAN}:e{worker}", ">=<"[votes[item, worker]]) for worker in range(RATINGS_PER_OUTPUT)]
            rows.append((*key, HUMAN, ">=<"[majority[item]]))
    frame = pd.DataFrame(rows, columns=["item_id", "system_a", "system_b", "rater", "label"])
    return load_data([("preferences.csv", frame.to_csv(index=False).encode())])


def _ratings(rng: np.random.Generator, mean: float, item_effect: np.ndarray) -> np.ndarray:
    """(items, 3) integer ratings 1-5 around ``mean`` plus the item effect."""
    noisy = mean + item_effect[:, None] + rng.normal(0.0, 0.8, (len(item_effect), RATINGS_PER_OUTPUT))
    return np.clip(np.round(noisy), 1.0, 5.0)


@dataclass(frozen=True)
class RouteErrors:
    """Runs of one setting: how many broke the guarantee, the mean cost fraction, the designs the
    defaults chose (one expected: ``one_pooled``)."""

    runs: int
    errors: int
    cost: float
    designs: frozenset[str]

    @property
    def share(self) -> float:
        return self.errors / self.runs

    @property
    def bound(self) -> float:
        """γ = 0.05 plus two Monte-Carlo standard errors at γ: what an error share may reach by chance."""
        return 0.05 + 2.0 * float(np.sqrt(0.05 * 0.95 / self.runs))


def default_route_errors(
    runs: int,
    *,
    design: Design = "experts",
    question: Question | None = None,
    batch: int = 10,
    statistic: Statistic | None = None,
    error_control: ErrorControl = "question",
    first_seed: int = 0,
    tied: int = 3,
) -> RouteErrors:
    """Replay ``runs`` studies of :func:`pool_tied_study` (seeds ``first_seed`` ...; each run's
    protocol seeded alike) with the defaults (``statistic``, ``batch`` and ``error_control`` aside:
    another control shows what the simulation detects) and count the runs that broke the guarantee
    (module docstring)."""
    asked = question or Question("top-k", k=1)
    tied_names = {f"s{s}" for s in range(tied)}
    errors, costs, designs = 0, [], set()
    for seed in range(first_seed, first_seed + runs):
        dataset = pool_tied_study(seed, tied=tied, design=design)
        setup = StudySetup(
            human=HUMAN, question=asked, seed=seed, batch=batch, statistic=statistic, error_control=error_control,
            ratings_per_request="one" if design == "comparisons" else None,
        )  # fmt: skip
        table = study_table(dataset, setup)
        designs.add(table.ratings_per_request)
        replay = run_replay(table, setup)
        errors += int(_broke(replay, tied_names, asked))
        costs.append(replay.result.cost_fraction)
    return RouteErrors(runs, errors, float(np.mean(costs)), frozenset(designs))


def _broke(replay: Replay, tied: set[str], question: Question) -> bool:
    state, result = replay.state, replay.result
    if question.kind == "top-k":
        assert result.answer is not None
        return not tied <= set(result.answer.summary()["answer"])
    names = state.table.systems
    return any(
        names[a] in tied and names[b] in tied and int(decision) in (BETTER, WORSE)
        for (a, b), decision in zip(state.table.pair_systems, state.decisions, strict=True)
    )


def exact_pool_means(dataset: Dataset) -> pd.Series:
    """Each system's full-evaluation mean (the mean over its outputs of the published mean)."""
    ratings = dataset.ratings
    return ratings.loc[ratings["rater"] == HUMAN].groupby("system")["score"].mean()
