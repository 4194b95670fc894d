"""One typed description of a study: what the CLI's options and the Protocol page's form both fill in.

A :class:`StudySetup` says which data to use (human rater, metrics, tie thresholds, human
fraction), which question to answer, in which unit humans are paid, and how the protocol runs
(budget, batch, γ, error control, futility, seed, ...). :func:`protocol_settings` turns it,
with the study table built from it, into the protocol's own settings. Every field has one
meaning everywhere; options are ``Literal`` types.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal

from prefeval_core.decision import Model, Sampler
from prefeval_core.errors import settings_error
from prefeval_core.protocol.ideal_metric import IDEAL_METRIC_NAME, IDEAL_MU_ROWS
from prefeval_core.protocol.questions import question_pairs
from prefeval_core.protocol.settings import ErrorControl, Policy, ProtocolSettings, Question, Statistic
from prefeval_core.protocol.table import RatingsPerRequest, StudyTable, Unit

Mode = Literal["replay", "live"]
"""``replay``: reveal the judgments a finished human evaluation holds; ``live``: people judge
what the protocol asks for."""
MAX_IDEAL_ITEMS: Final = 100_000
"""Simulated metric-only items per pair at most (the study table holds pairs x items rows)."""
MAX_JUDGMENTS_PER_ITEM: Final = 1_000
DEFAULT_FUTILITY = 0.05
"""β of the predictive futility stop by default, the default γ (a pair is stopped when the
probability that more judgments decide it is below β; :mod:`prefeval_core.sequential.futility`)."""


@dataclass(frozen=True)
class StudySetup:
    """Everything a study needs besides the data (see the module docstring).

    Attributes:
        human: the human rater, e.g. ``human:relevance``.
        metrics: metric raters (empty: human only; ``ideal``: the simulated metric of method.md §10).
        question: what to answer (all pairs, top-k, baseline).
        unit: what one paid judgment is; ``None`` follows the human rater (scalar -> ratings,
            pairwise -> comparisons).
        mode: replay or live.
        budget: the most judgments to reveal, in the study's unit; ``None``: all the data holds
            (replay only).
        batch: N per round (items per system, or comparisons per pair).
        gamma: significance level γ.
        error_control: ``spending`` (false decisions at true ties <= γ over the whole run, by a
            spending function over the pool), ``anytime`` (the same by e-processes, valid under any
            looking) or ``none`` (the paper's per-look rule).
        futility: β of the predictive futility stop, or ``None`` (stop a pair only when no judgment
            left could decide it); used with error control only: the paper's rule has no futility stop.
        eps_human, eps_metric: tie thresholds of score differences (method.md §2).
        model: decision model; ``None`` chooses: human only without metrics, the full model with
            them, ``known_mu`` for the ideal metric.
        sampler: ``fast`` or ``nuts`` (the reference).
        policy: allocation policy (comparisons studies).
        seed: seeds the reveal order, the sampler and the human-fraction draw.
        human_fraction: share of the human judgments that may be revealed (the
            paper's regime of many metric-only items on real data); the rest stay metric-only.
        max_rounds: stop after this many rounds (``None``: no limit).
        ideal_items: simulated metric-only items per pair for the ideal metric.
        judgments_per_item: live studies: how many different annotators judge each requested item.
        statistic: a pair's evidence: ``sign`` (the paper's) or ``mean`` (paired score
            differences, method.md §13; error control ``question`` or ``anytime``).
        delta: equivalence margin δ in the human score's units (``mean`` only), or ``None``.
        ratings_per_request: where the data keep several annotators per output apart, whether a
            request buys all their ratings (``all``) or one annotator's (``one``, rotated by the seed).
    """

    human: str
    metrics: tuple[str, ...] = ()
    question: Question = field(default_factory=Question)
    unit: Unit | None = None
    mode: Mode = "replay"
    budget: int | None = None
    batch: int = 10
    gamma: float = 0.05
    error_control: ErrorControl = "spending"
    futility: float | None = DEFAULT_FUTILITY
    eps_human: float = 0.0
    eps_metric: float = 0.0
    model: Model | None = None
    sampler: Sampler = "fast"
    policy: Policy = "paper"
    seed: int = 0
    human_fraction: float = 1.0
    max_rounds: int | None = None
    ideal_items: int = 0
    judgments_per_item: int = 1
    statistic: Statistic = "sign"
    delta: float | None = None
    ratings_per_request: RatingsPerRequest = "all"

    def __post_init__(self) -> None:
        if self.mode not in ("replay", "live"):
            raise settings_error(f"unknown mode {self.mode!r}; expected replay or live", field="mode")
        if self.mode == "live" and self.budget is None:
            raise settings_error("a live study needs a budget (the judgments you will pay for)", field="budget")
        if len(set(self.metrics)) != len(self.metrics):
            raise settings_error(f"a metric is named twice in {', '.join(self.metrics)}", field="metric")
        if self.human in self.metrics:
            raise settings_error(f"the human rater {self.human!r} cannot also be a metric", field="metric")
        if not 0 <= self.ideal_items <= MAX_IDEAL_ITEMS:
            raise settings_error(f"ideal_items must be from 0 to {MAX_IDEAL_ITEMS:,}, got {self.ideal_items}", field="ideal_items")
        if self.judgments_per_item < 1:
            raise settings_error(f"judgments per item must be >= 1, got {self.judgments_per_item}", field="judgments_per_item")

    @property
    def decision_model(self) -> Model:
        """The model in use: as set, else chosen from the metrics."""
        if self.model is not None:
            return self.model
        if not self.metrics:
            return "human_only"
        return "known_mu" if self.metrics == (IDEAL_METRIC_NAME,) else "full"

    def with_(self, **changes: Any) -> StudySetup:
        return replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready values (for study records and session files)."""
        values: dict[str, Any] = {name: getattr(self, name) for name in self.__dataclass_fields__}
        values["metrics"] = list(self.metrics)
        values["question"] = {"kind": self.question.kind, "k": self.question.k, "baselines": list(self.question.baselines)}
        return values

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> StudySetup:
        """Inverse of :meth:`as_dict` (unknown keys are an error)."""
        unknown = set(values) - set(cls.__dataclass_fields__)
        if unknown:
            raise settings_error(f"unknown study settings: {', '.join(sorted(unknown))}")
        raw = dict(values)
        question = raw.pop("question", None) or {}
        raw["metrics"] = tuple(raw.get("metrics", ()))
        return cls(
            question=Question(question.get("kind", "all-pairs"), int(question.get("k", 1)), tuple(question.get("baselines", ()))), **raw
        )


def protocol_settings(setup: StudySetup, table: StudyTable) -> ProtocolSettings:
    """The protocol's settings for ``setup`` on its study table (budget ``None``: everything
    the table can reveal)."""
    model = setup.decision_model
    return ProtocolSettings(
        budget=table.cost_available(question_pairs(setup.question, table.systems, table.pair_systems))
        if setup.budget is None
        else setup.budget,
        batch=setup.batch,
        gamma=setup.gamma,
        model=model,
        mu=IDEAL_MU_ROWS if model == "known_mu" else None,
        sampler=setup.sampler,
        policy=setup.policy,
        seed=setup.seed,
        human=setup.human,
        metrics=setup.metrics,
        eps_human=setup.eps_human,
        eps_metric=setup.eps_metric,
        question=setup.question,
        unit=table.unit,
        error_control=setup.error_control,
        futility=None if setup.error_control == "none" else setup.futility,
        max_rounds=setup.max_rounds,
        statistic=setup.statistic,
        delta=setup.delta,
    )
