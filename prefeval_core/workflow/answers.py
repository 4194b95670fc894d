"""The answer to a study's question in names, and the leaderboard behind it.

One function per question kind builds the answer in words (:data:`ANSWER_WORDS`, keyed by
:data:`~prefeval_core.protocol.QuestionKind`; a new kind adds one entry). Each reads only the
current decisions (decision codes 0 ``>`` A better, 1 undecided, 2 ``<``; pairs canonical) and
the question; "yet" becomes "with the judgments available" once the run is finished.

* ``all-pairs``: the decided pairs as tiers, best first — a system's tier is the length of the
  longest chain of significant wins above it (systems in a cycle of decisions share a tier);
  systems with no decided pair are named apart, never put in a tier;
* ``baseline``: per baseline, the systems that beat it, that lose to it, and that cannot be
  separated from it;
* ``top-k``: the sure members, then how many places are left and who competes for them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from prefeval_core.diagnostics.leaderboard import Leaderboard, ScoreKind, comparison_points, leaderboard
from prefeval_core.protocol import ProtocolState, QuestionKind, is_finished
from prefeval_core.protocol.questions import beaten_by, question_pairs, top_k_answer
from prefeval_core.protocol.settings import Question
from prefeval_core.vocabulary.outcomes import TIE

_NUMBER_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine", 10: "ten"}
LEADERBOARD_DRAWS = 2000
"""Bootstrap resamples behind the leaderboard's intervals and P(top k)."""


@dataclass(frozen=True)
class Decided:
    """What an answer is read from.

    Attributes:
        systems: (S,) names; pair_systems: (P, 2) indices of each canonical pair's systems.
        decisions: (P,) decision codes; members: (S,) top-k members (all True otherwise).
        question: what is asked; finished: whether the run is over.
        equivalent: (P,) pairs shown equivalent within the margin (``None``: none).
    """

    systems: tuple[str, ...]
    pair_systems: npt.NDArray[np.int64]
    decisions: npt.NDArray[np.int8]
    members: npt.NDArray[np.bool_]
    question: Question
    finished: bool
    equivalent: npt.NDArray[np.bool_] | None = None

    @property
    def when(self) -> str:
        return "with the judgments available" if self.finished else "yet"

    @property
    def asked(self) -> npt.NDArray[np.bool_]:
        return question_pairs(self.question, self.systems, self.pair_systems)

    @property
    def beats(self) -> npt.NDArray[np.bool_]:
        """(S, S) ``beats[t, s]``: t is significantly better than s (pairs of the question only)."""
        decisions = np.where(self.asked, self.decisions, TIE).astype(np.int8)
        return beaten_by(decisions, self.pair_systems, len(self.systems))


def decided(state: ProtocolState) -> Decided:
    """The :class:`Decided` of a run's current state."""
    table = state.table
    return Decided(
        table.systems,
        table.pair_systems,
        state.decisions,
        state.members,
        state.settings.question,
        is_finished(state),
        state.status.equivalent,
    )


def listing(names: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} and {names[-1]}"


def number_word(n: int) -> str:
    return _NUMBER_WORDS.get(n, str(n))


def natural(name: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that puts M2 before M10."""
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", name) if part)


def tiers(d: Decided) -> tuple[tuple[tuple[str, ...], ...], tuple[str, ...]]:
    """The decided systems in tiers, best first (module docstring), and the systems with no decided pair."""
    import networkx as nx  # on use: the CLI's other answers never need it

    beats = d.beats
    placed = beats.any(axis=0) | beats.any(axis=1)
    graph = nx.DiGraph()
    graph.add_nodes_from(int(s) for s in np.flatnonzero(placed))
    graph.add_edges_from((int(t), int(s)) for t, s in zip(*np.nonzero(beats), strict=True))
    condensed = nx.condensation(graph)
    level: dict[int, int] = {}
    for node in nx.topological_sort(condensed):
        level[node] = max((level[p] + 1 for p in condensed.predecessors(node)), default=0)
    layers: dict[int, list[str]] = {}
    for node, depth in level.items():
        layers.setdefault(depth, []).extend(d.systems[s] for s in condensed.nodes[node]["members"])
    ordered = tuple(tuple(sorted(layers[depth], key=natural)) for depth in sorted(layers))
    return ordered, tuple(d.systems[s] for s in np.flatnonzero(~placed))


def all_pairs_words(d: Decided) -> str:
    """E.g. "M17 > {M0, M22, M23} > M8; M3 cannot be placed yet; 12 pairs cannot be separated yet"."""
    ranked, unplaced = tiers(d)
    equivalent = d.asked & (d.decisions == TIE) & (False if d.equivalent is None else d.equivalent)
    open_pairs = int(np.sum(d.asked & (d.decisions == TIE) & ~equivalent))
    if not ranked:
        return f"No pair has a significant winner {d.when}."
    parts = [" > ".join(t[0] if len(t) == 1 else "{" + ", ".join(t) + "}" for t in ranked)]
    if unplaced:
        parts.append(f"{listing(unplaced)} cannot be placed {d.when} (no pair decided)")
    if equivalent.any():
        parts.append(f"{int(equivalent.sum())} {'pair is' if equivalent.sum() == 1 else 'pairs are'} equivalent within the margin")
    if open_pairs:
        parts.append(f"{open_pairs} {'pair' if open_pairs == 1 else 'pairs'} cannot be separated {d.when}")
    else:
        parts.append("every pair is decided")
    return "; ".join(parts) + "."


def baseline_words(d: Decided) -> str:
    """E.g. "M2 and M5 beat M8; M1 and M4 lose to M8; M3 cannot be separated from M8 yet." per baseline."""
    beats = d.beats
    names = np.asarray(d.systems, dtype=object)
    others = ~np.isin(names, d.question.baselines)
    sentences = []
    for baseline in d.question.baselines:
        b = d.systems.index(baseline)
        above = tuple(names[others & beats[:, b]])
        below = tuple(names[others & beats[b, :]])
        open_ = tuple(names[others & ~beats[:, b] & ~beats[b, :]])
        parts = [
            f"{listing(above)} {'beats' if len(above) == 1 else 'beat'} {baseline}" if above else f"no system beats {baseline}",
            f"{listing(below)} {'loses' if len(below) == 1 else 'lose'} to {baseline}" if below else f"none loses to {baseline}",
        ]
        if open_:
            parts.append(f"{listing(open_)} cannot be separated from {baseline} {d.when}")
        sentences.append("; ".join(parts) + ".")
    return " ".join(sentences)


def top_k_words(d: Decided) -> str:
    """E.g. "M17 and M22 are among the best three; the last place goes to one of M0 and M5, which
    cannot be separated yet." (no pronoun that could point at the wrong system)."""
    k = d.question.k
    answer = top_k_answer(d.systems, d.members, d.decisions, d.pair_systems, k)
    best = "the best system" if k == 1 else f"the best {number_word(k)}"
    if len(answer.members) <= k:
        return f"{listing(answer.members)} {'is' if len(answer.members) == 1 else 'are'} {best}."
    contenders = tuple(s for s in answer.members if s not in answer.sure)
    if not answer.sure:
        head = "The best system is one of" if k == 1 else f"The best {number_word(k)} are among"
        return f"{head} {listing(answer.members)}, which cannot be separated {d.when}."
    left = k - len(answer.sure)
    sure = f"{listing(answer.sure)} {'is' if len(answer.sure) == 1 else 'are'} among {best}"
    places = "the last place goes to one of" if left == 1 else f"the last {number_word(left)} places go to {number_word(left)} of"
    return f"{sure}; {places} {listing(contenders)}, which cannot be separated {d.when}."


ANSWER_WORDS: dict[QuestionKind, Callable[[Decided], str]] = {
    "all-pairs": all_pairs_words,
    "baseline": baseline_words,
    "top-k": top_k_words,
}
"""The answer in names, one function per question kind."""


def answer_words(state: ProtocolState) -> str:
    """The run's answer in names (:data:`ANSWER_WORDS`)."""
    d = decided(state)
    return ANSWER_WORDS[d.question.kind](d)


def system_status(d: Decided) -> tuple[str, ...]:
    """(S,) each system's status for the question.

    ``top-k``: ``sure`` (certainly among the best k), ``in`` (still in the answer, not sure),
    ``out`` (left the answer). ``baseline``: ``baseline``; ``better`` / ``worse`` (significantly,
    than every baseline / than some baseline); ``undecided``. ``all-pairs``: ``settled`` (all
    its pairs decided) or ``undecided``.
    """
    beats = d.beats
    if d.question.kind == "top-k":
        sure = top_k_answer(d.systems, d.members, d.decisions, d.pair_systems, d.question.k).sure
        return tuple("sure" if s in sure else "in" if d.members[i] else "out" for i, s in enumerate(d.systems))
    if d.question.kind == "baseline":
        base = [d.systems.index(b) for b in d.question.baselines]
        words = []
        for i, s in enumerate(d.systems):
            if s in d.question.baselines:
                words.append("baseline")
            elif beats[base, i].any():
                words.append("worse")
            elif beats[i, base].all():
                words.append("better")
            else:
                words.append("undecided")
        return tuple(words)
    open_pairs = d.asked & (d.decisions == TIE)
    unsettled = np.zeros(len(d.systems), dtype=bool)
    unsettled[d.pair_systems[open_pairs].ravel()] = True
    return tuple("undecided" if u else "settled" for u in unsettled)


STATUS_WORDS: dict[QuestionKind, str] = {
    "top-k": "Status: sure = certainly among the best k; in = still in the answer; out = left it.",
    "baseline": "Status: better / worse = significantly better than every baseline / worse than one; undecided otherwise.",
    "all-pairs": "Status: settled = every pair of the system decided; undecided otherwise.",
}
"""What the leaderboard's status column means, per question kind (:func:`system_status`)."""


def study_leaderboard(state: ProtocolState, *, draws: int = LEADERBOARD_DRAWS) -> Leaderboard:
    """The leaderboard of the human judgments revealed so far (:mod:`prefeval_core.diagnostics.leaderboard`):
    mean human score per system (ratings) or win rate (comparisons), with each system's status for
    the question; P(top k) with the question's k (1 for the other questions); seeded by the run's seed."""
    table, reveals = state.table, state.reveals
    n_systems, n_items = len(table.systems), len(table.items)
    revealed = reveals.round > 0
    kind: ScoreKind
    if table.grid is not None:
        shape = (n_systems, n_items)
        points = np.where(revealed, np.nan_to_num(reveals.value), 0.0).reshape(shape)
        weights = revealed.astype(np.float64).reshape(shape)
        spent = np.where(revealed, reveals.cost, 0).reshape(shape).sum(axis=1)
        kind = "mean score"
    else:
        rows = np.flatnonzero(revealed)
        outcome = np.nan_to_num(reveals.value[rows], nan=-1).astype(np.int8)
        pairs = table.pair_systems[table.row_pair[rows]]
        points, weights = comparison_points(n_systems, n_items, pairs, table.row_item[rows], outcome)
        spent = np.bincount(pairs.ravel(), weights=np.repeat(reveals.cost[rows], 2), minlength=n_systems).astype(np.int64)
        kind = "win rate"
    question = state.settings.question
    k = question.k if question.kind == "top-k" else 1
    return leaderboard(
        table.systems,
        points,
        weights,
        spent,
        kind=kind,
        k=k,
        status=system_status(decided(state)),
        draws=draws,
        seed=state.settings.seed,
    )


def leaderboard_frame(board: Leaderboard) -> pd.DataFrame:
    """One row per system, best first: score, interval, P(top k), status, judgments spent."""
    score = "mean human score" if board.kind == "mean score" else "win rate"
    return pd.DataFrame(
        {
            "system": board.systems,
            score: board.score,
            "95% low": board.low,
            "95% high": board.high,
            f"P(top {board.k})": board.p_top,
            "status": board.status,
            "judgments": board.spent,
        }
    )


def leaderboard_json(board: Leaderboard) -> dict[str, Any]:
    """The leaderboard's keys of the ``replay --json`` summary (NaN as null)."""

    def number(value: float) -> float | None:
        return None if np.isnan(value) else float(value)

    rows = [
        {
            "system": system,
            "score": number(board.score[i]),
            "low": number(board.low[i]),
            "high": number(board.high[i]),
            "p_top": float(board.p_top[i]),
            "status": board.status[i],
            "judgments": int(board.spent[i]),
        }
        for i, system in enumerate(board.systems)
    ]
    return {"leaderboard": rows, "leaderboard_score": board.kind, "leaderboard_k": board.k}
