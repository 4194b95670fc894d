"""The questions of method.md §12, their registry, and which judgments can still change their answers.

* ``all-pairs`` (the paper, :mod:`~prefeval_core.protocol.questions_all_pairs`): every pair is decided.
* ``top-k`` (:mod:`~prefeval_core.protocol.questions_top_k`): which systems can be among the best k.
* ``baseline`` (:mod:`~prefeval_core.protocol.questions_baseline`): each other system against each
  named baseline B; only those pairs matter.

A pair matters while it is one the question asks about, undecided, and can still get judgments;
a kind may narrow that further (top-k: only pairs that can still change its tier).

**The registry.** :data:`QUESTION_KINDS` maps a kind's name to its :class:`QuestionKindEntry`:
words for the form and the answer, its parameters, the pairs it asks about, and what its answer is
beyond its pairs (a tier of members and the pairs that can still change it, the answer and each
system's status in words, the answer against the full evaluation's). :class:`Question` accepts the
registered kinds; the CLI's ``--question`` choices, the Protocol form's question picker and the
saved setup and state list them; :data:`QuestionKind` names the built-in ones for the type checker
and a test keeps the two equal. **A new kind is a module** (``NAME``, ``LABEL``, ``describe`` and
whatever differs from the defaults, as :class:`QuestionKindEntry` lists them) **and one line in**
:data:`_MODULES` (docs/architecture.md, "Add a question").

Decision codes: 0 ``>`` (A better), 1 undecided, 2 ``<``; pairs canonical.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Literal, Protocol

import numpy as np
import numpy.typing as npt

from prefeval_core.errors import UnknownNameError, settings_error
from prefeval_core.protocol import questions_all_pairs, questions_baseline, questions_top_k
from prefeval_core.protocol.questions_all_pairs import beaten_by
from prefeval_core.protocol.questions_all_pairs import pairs as every_pair
from prefeval_core.vocabulary.fields import INT_LIMIT, Bounds, setting
from prefeval_core.vocabulary.outcomes import TIE
from prefeval_core.vocabulary.words import natural

BoolArray = npt.NDArray[np.bool_]
QuestionKind = Literal["all-pairs", "top-k", "baseline"]
"""What the lead asks (method.md §12): the order of every pair, the best k systems, or each
system against one or more baselines (the built-in entries of :data:`QUESTION_KINDS`)."""


@dataclass(frozen=True)
class Question:
    """The question a run answers (method.md §12).

    Attributes:
        kind: a registered kind (:data:`QUESTION_KINDS`): ``"all-pairs"`` (the paper), ``"top-k"``
            or ``"baseline"``.
        k: for ``top-k``: the size of the tier asked for (k >= 1).
        baselines: for ``baseline``: the baseline systems B (each other system is decided
            against each B; pairs of two non-baselines, or of two baselines, are not asked).
    """

    kind: QuestionKind = setting("all-pairs", label="Question", help="what to answer", choices=lambda: question_words(), option="question")
    k: int = setting(1, label="k (top-k)", help="top-k: the size of the tier asked for", bounds=Bounds(ge=1, lt=INT_LIMIT))
    baselines: tuple[str, ...] = setting((), label="Baseline systems", help="baseline: the baseline system(s)", option="baseline")

    def __post_init__(self) -> None:
        entry = QUESTION_KINDS.get(self.kind)
        if entry is None:
            raise settings_error(f"unknown question {self.kind!r}; expected one of {', '.join(QUESTION_KINDS)}", field="question")
        if self.k < 1:
            raise settings_error(f"top-k needs k >= 1, got {self.k}", field="k")
        if entry.baselines and not self.baselines:
            raise settings_error(f"the {self.kind} question needs at least one baseline system", field="baseline")
        if not entry.baselines and self.baselines:
            raise settings_error("baseline systems are only used by the baseline question", field="baseline")

    @property
    def entry(self) -> QuestionKindEntry:
        """Its kind's registry entry."""
        return QUESTION_KINDS[self.kind]

    @property
    def tier_size(self) -> int:
        """The k of "among the best k" for leaderboards: ``k`` for a kind that asks for k systems, else 1."""
        return self.k if self.entry.k else 1

    def describe(self) -> str:
        """The question in words."""
        return self.entry.describe(self)


@dataclass(frozen=True)
class Decided:
    """What an answer is read from.

    Attributes:
        systems: (S,) names; pair_systems: (P, 2) indices of each canonical pair's systems.
        decisions: (P,) decision codes; members: (S,) the tier's members (all True for a kind
            without a tier).
        question: what is asked; finished: whether the run is over.
        equivalent: (P,) pairs shown equivalent within the margin (``None``: none).
    """

    systems: tuple[str, ...]
    pair_systems: npt.NDArray[np.int64]
    decisions: npt.NDArray[np.int8]
    members: BoolArray
    question: Question
    finished: bool
    equivalent: BoolArray | None = None

    @property
    def when(self) -> str:
        """How an answer's open part is qualified: "yet", or once finished "with the judgments available"."""
        return "with the judgments available" if self.finished else "yet"

    @property
    def asked(self) -> BoolArray:
        """(P,) the pairs of the question (:func:`question_pairs`)."""
        return question_pairs(self.question, self.systems, self.pair_systems)

    @property
    def beats(self) -> BoolArray:
        """(S, S) ``beats[t, s]``: t is significantly better than s (pairs of the question only)."""
        decisions = np.where(self.asked, self.decisions, TIE).astype(np.int8)
        return beaten_by(decisions, self.pair_systems, len(self.systems))

    @property
    def equal(self) -> BoolArray:
        """(S, S) symmetric: the two systems' pair (of the question) was shown equivalent within the margin."""
        equal = np.zeros((len(self.systems), len(self.systems)), dtype=bool)
        if self.equivalent is not None:
            a, b = self.pair_systems[self.equivalent & self.asked].T
            equal[a, b] = equal[b, a] = True
        return equal

    def equal_groups(self, among: Sequence[str] | None = None) -> tuple[tuple[str, ...], ...]:
        """The systems (of ``among``; ``None``: all) practically equal within the margin: the maximal
        groups in which every pair was shown equivalent (cliques of :attr:`equal`; equivalence is not
        transitive, so groups may overlap), largest first; none without a margin."""
        import networkx as nx  # on use: most answers never need it

        equal = self.equal
        if among is not None:
            keep = np.isin(np.asarray(self.systems, dtype=object), list(among))
            equal = equal & keep[:, None] & keep[None, :]
        graph = nx.Graph()
        graph.add_edges_from((int(a), int(b)) for a, b in zip(*np.nonzero(np.triu(equal)), strict=True))
        groups = [tuple(sorted((self.systems[s] for s in clique), key=natural)) for clique in nx.find_cliques(graph)]
        return tuple(sorted(groups, key=lambda g: (-len(g), [natural(name) for name in g])))


class AnswerComparison(Protocol):
    """A kind's answer against the full evaluation's (beyond its pairs' error types)."""

    def summary(self) -> dict[str, Any]:
        """Its keys of the ``replay --json`` summary."""
        ...

    def words(self) -> str:
        """The comparison in a sentence."""
        ...

    def scored(self, pairs: Sequence[tuple[str, str]]) -> BoolArray:
        """(P,) which of the question's ``pairs`` may count as errors (those that can change the answer)."""
        ...


PairsRule = Callable[[Question, Sequence[str], npt.NDArray[np.int64]], BoolArray]
MembersRule = Callable[[Question, BoolArray, npt.NDArray[np.int8], npt.NDArray[np.int64]], BoolArray]
OpenRule = Callable[[Question, BoolArray, BoolArray, npt.NDArray[np.int8], npt.NDArray[np.int64]], BoolArray]


@dataclass(frozen=True)
class QuestionKindEntry:
    """One kind of question. Everything after ``pairs`` defaults to a question answered by its
    pairs' decisions alone, said as ``all-pairs`` says it.

    Attributes:
        name: what ``--question`` and saved setups call it.
        label: what it asks, for a list of choices ("The best k systems").
        describe: the question with its parameters, in words.
        pairs: (P,) the pairs the question is about, from the question, the system names and the
            (P, 2) system indices of the pairs (default: every pair).
        k: whether it asks for a tier of ``k`` systems (other kinds keep ``k = 1``).
        baselines: whether it is asked against named baseline systems (which it then needs).
        members: for an answer that is a tier of systems: (S,) the members after a round's
            decisions, from the question, the current members, the (P,) decisions and the pairs'
            systems (leaving is final); ``None``: the answer is its pairs' decisions.
        open_pairs: (P,) which of the undecided, asked pairs that can still get judgments
            (second argument) can still change the answer, from the question, that mask, the
            members, the decisions and the pairs' systems; ``None``: all of them.
        words: the answer in names.
        status: (S,) each system's status for the question, one word each (the leaderboard's column).
        status_words: what those words mean, in a sentence.
        compare: the answer against the full evaluation's, from the run and the (P,) reference
            decisions; ``None``: only the pairs' error types are compared.
    """

    name: str
    label: str
    describe: Callable[[Question], str]
    pairs: PairsRule = every_pair
    k: bool = False
    baselines: bool = False
    members: MembersRule | None = None
    open_pairs: OpenRule | None = None
    words: Callable[[Decided], str] = questions_all_pairs.words
    status: Callable[[Decided], tuple[str, ...]] = questions_all_pairs.status
    status_words: str = questions_all_pairs.STATUS_WORDS
    compare: Callable[[Decided, npt.NDArray[np.int8]], AnswerComparison] | None = None

    @property
    def tier(self) -> bool:
        """Whether its answer is a tier of systems (``members``) rather than its pairs' decisions."""
        return self.members is not None

    @classmethod
    def from_module(cls, module: ModuleType) -> QuestionKindEntry:
        """The entry of a kind's module: ``NAME``, ``LABEL``, ``describe``, and where it differs
        from the defaults ``pairs``, ``K``, ``BASELINES``, ``members``, ``open_pairs``, ``words``,
        ``status``, ``STATUS_WORDS``, ``compare``."""
        given = {name: getattr(module, attribute) for name, attribute in _MODULE_ATTRIBUTES.items() if hasattr(module, attribute)}
        return cls(module.NAME, module.LABEL, module.describe, **given)


_MODULE_ATTRIBUTES = {
    "pairs": "pairs",
    "k": "K",
    "baselines": "BASELINES",
    "members": "members",
    "open_pairs": "open_pairs",
    "words": "words",
    "status": "status",
    "status_words": "STATUS_WORDS",
    "compare": "compare",
}
"""Each optional field of :class:`QuestionKindEntry` and what a kind's module calls it."""


_MODULES: tuple[ModuleType, ...] = (questions_all_pairs, questions_top_k, questions_baseline)
"""The kinds' modules, in the order they are offered."""

QUESTION_KINDS: dict[str, QuestionKindEntry] = {entry.name: entry for entry in map(QuestionKindEntry.from_module, _MODULES)}
"""Every question kind by name, in the order they are offered. Tests add one with ``monkeypatch.setitem``."""


def question_words() -> dict[str, str]:
    """Every registered kind and its label, in the order offered."""
    return {name: entry.label for name, entry in QUESTION_KINDS.items()}


def check_question(question: Question, systems: Sequence[str]) -> None:
    """Raise :class:`UnknownNameError` for a baseline that is not a system of the study, and
    :class:`SettingsError` for a top-k tier that holds every system (nothing to answer)."""
    if question.kind == "top-k" and question.k >= len(systems):
        raise settings_error(
            f"top-k with k = {question.k} asks for the best {question.k} of {len(systems)} systems, which needs no judgment: "
            f"k must be smaller than the number of systems ({len(systems)})",
            field="k",
        )
    unknown = [b for b in question.baselines if b not in systems]
    if unknown:
        raise UnknownNameError.single(
            "unknown_name", f"baseline {', '.join(map(repr, unknown))} is not a system of this study; systems: {', '.join(systems)}"
        )


def question_pairs(question: Question, systems: Sequence[str], pair_systems: npt.NDArray[np.int64]) -> BoolArray:
    """(P,) the pairs the question is about (its kind's ``pairs``: all of them, or for ``baseline``
    those with exactly one baseline)."""
    return question.entry.pairs(question, systems, pair_systems)


def next_members(question: Question, members: BoolArray, decisions: npt.NDArray[np.int8], pair_systems: npt.NDArray[np.int64]) -> BoolArray:
    """(S,) the tier's members after a round's ``decisions`` (P,); unchanged for a kind without a tier."""
    rule = question.entry.members
    return members if rule is None else rule(question, members, decisions, pair_systems)


def open_pairs(
    question: Question,
    in_question: BoolArray,
    members: BoolArray,
    decisions: npt.NDArray[np.int8],
    stopped: BoolArray,
    pair_systems: npt.NDArray[np.int64],
) -> BoolArray:
    """(P,) the pairs whose judgments can still change the answer.

    Args:
        in_question: (P,) :func:`question_pairs`.
        members: (S,) the tier's current members (all True for a kind without a tier).
        decisions: (P,) current decision codes.
        stopped: (P,) pairs that cannot or need not get more judgments (no items left, futile).
    """
    candidates = in_question & (decisions == TIE) & ~stopped
    narrow = question.entry.open_pairs
    return candidates if narrow is None else narrow(question, candidates, members, decisions, pair_systems)
