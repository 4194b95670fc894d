"""Settings of one protocol run (method.md §5, §12; Deriu et al. Alg. 2): stored in the state."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

import numpy as np

from prefeval_core.decision import MODELS, SAMPLERS, Model, MuRows, Sampler
from prefeval_core.errors import settings_error
from prefeval_core.protocol.questions import Question
from prefeval_core.vocabulary.controls import ErrorControl
from prefeval_core.vocabulary.levels import DEFAULT_GAMMA
from prefeval_core.vocabulary.tasks import Unit

Statistic = Literal["sign", "mean", "pool_mean", "pool_mean_clt", "pool_sign", "pool_sign_clt"]
"""What a pair's evidence is (method.md §13): ``sign`` counts the items where A's human judgment
is better, ties dropped (the paper's statistic, method.md §3-§5); ``mean`` is the mean paired score
difference over items (scalar studies; in a comparisons study +1 / 0 / -1 per comparison), tested
as if items were drawn from a population; ``pool_mean`` is the same difference over the study's
finite item pool, tested for sampling without replacement in the seeded item order
(:mod:`prefeval_core.sequential.pool_betting`): exact for any scores, and decisive as the pool
runs out, where its reference is the pool's own mean difference; ``pool_mean_clt`` tests the same
estimand with an asymptotic confidence sequence whose width follows the differences' spread, and
takes the run's metrics inside as control variates (:mod:`prefeval_core.sequential.pool_clt`).
``pool_sign`` and ``pool_sign_clt`` are the same two tests of the pool's mean *outcome* (+1 / 0 / -1
per item with the tie threshold ``eps_human``: the net win rate, the share of items where A is better
minus the share where B is): the paper's estimand on the study's own items, protected at the
question level, where a metric that predicts the outcomes (method.md §10's ideal metric) explains
more of the spread than of the score differences'."""
STATISTICS: tuple[Statistic, ...] = get_args(Statistic)
BETTING_STATISTICS: tuple[Statistic, ...] = tuple(s for s in STATISTICS if s != "sign")
"""The statistics decided by betting e-processes (error control ``question`` or ``fdr``; an
equivalence margin in the score's units, or for :data:`OUTCOME_STATISTICS` the net win rate's)."""
POOL_STATISTICS: tuple[Statistic, ...] = ("pool_mean", "pool_mean_clt", "pool_sign", "pool_sign_clt")
"""The statistics whose estimand is the study's own item pool (reference: the pool's mean difference)."""
OUTCOME_STATISTICS: tuple[Statistic, ...] = ("pool_sign", "pool_sign_clt")
"""The pool statistics whose per-item difference is the human outcome (+1 / 0 / -1), not the score
difference (an equivalence margin is in units of the net win rate, in (0, 1])."""
CLT_STATISTICS: tuple[Statistic, ...] = ("pool_mean_clt", "pool_sign_clt")
"""The asymptotic pool statistics: the metric enters as a control variate."""
Policy = Literal["paper", "closest_first"]
"""Allocation within a round (:mod:`prefeval_core.protocol.policies`)."""


@dataclass(frozen=True)
class ProtocolSettings:
    """What a protocol run needs besides the study table; stored in the state, serialised with it.

    Defaults: a study's settings come from its declared
    :class:`~prefeval_core.workflow.setup.StudySetup` (:func:`~prefeval_core.workflow.setup.protocol_settings`).
    ``error_control`` and ``futility`` have no default here (the protocol takes them only from the
    setup, or from whoever builds the settings by hand); every other default equals the setup's.

    Attributes:
        budget: the most judgments that may be revealed, in the study's unit (ratings or
            comparisons, each annotator's judgment one); never exceeded.
        batch: ``N``: per round, the next N items of every system that still matters
            (ratings) or N comparisons of every pair that still matters (comparisons).
        gamma: significance level γ of every decision.
        model: decision model (method.md §4): ``human_only``, ``known_mu`` or ``full``.
        mu: the fixed mixture matrix for ``known_mu`` (rows = metric, columns = human).
        sampler: ``fast`` (exact routes and importance sampling) or ``nuts`` (reference).
        policy: allocation policy name.
        seed: seeds the reveal order (replay) and every round's sampler.
        human, metrics: rater names, for the record (no metric: human only).
        eps_human, eps_metric: tie thresholds used to make outcomes (method.md §2).
        question: what the run answers.
        unit: what one judgment is (method.md §12), as the study table says.
        error_control: a registered rule (:data:`~prefeval_core.protocol.error_controls.ERROR_CONTROL_RULES`):
            ``none`` (the paper's per-look rule), ``spending`` or ``anytime`` (per pair),
            ``question`` (the whole answer) or ``fdr`` (the false discovery rate of a pairwise answer).
        futility: with error control (``spending`` or ``anytime``), β of the predictive futility stop (stop
            asking for a pair when the probability that it can still be decided before its items
            run out is below β); ``None``: stop only when no remaining judgment could decide it.
            Futility never adds a false decision.
        max_rounds: stop after this many rounds (``None``: no limit).
        statistic: ``sign`` (the paper's; the per-pair rules decide on the outcome counts) or one of
            :data:`BETTING_STATISTICS` (method.md §13; decided by betting e-processes, error control
            ``question`` or ``fdr``): see :data:`Statistic`.
        delta: equivalence margin δ > 0 in the human score's units (a score statistic; for
            ``pool_sign`` / ``pool_sign_clt`` in the net win rate's, at most 1): a pair whose
            mean difference is shown to lie in (-δ, δ) is decided *equivalent* and costs no more
            ratings; ``None``: no equivalence decisions.
    """

    budget: int
    batch: int = 10
    gamma: float = DEFAULT_GAMMA
    model: Model = "full"
    mu: MuRows | None = None
    sampler: Sampler = "fast"
    policy: Policy = "paper"
    seed: int = 0
    human: str | None = None
    metrics: tuple[str, ...] = ()
    eps_human: float = 0.0
    eps_metric: float = 0.0
    question: Question = field(default_factory=Question)
    unit: Unit = "comparisons"
    error_control: ErrorControl = field(kw_only=True)
    futility: float | None = field(kw_only=True)
    max_rounds: int | None = None
    statistic: Statistic = "sign"
    delta: float | None = None

    def __post_init__(self) -> None:
        if self.budget < 0:
            raise settings_error(f"the budget must be >= 0, got {self.budget}", field="budget")
        if self.batch < 1:
            raise settings_error(f"the batch size must be >= 1, got {self.batch}", field="batch")
        if not (isinstance(self.gamma, float | int) and 0.0 < self.gamma < 1.0):
            raise settings_error(f"gamma must be in (0, 1), got {self.gamma}", field="gamma")
        for name in ("eps_human", "eps_metric"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise settings_error(f"{name} must be a finite number >= 0, got {value}", field=name)
        if not 0 <= self.seed < 2**63:
            raise settings_error(f"the seed must be in [0, 2^63), got {self.seed}", field="seed")
        _check_choice("model", self.model, MODELS)
        _check_choice("sampler", self.sampler, SAMPLERS)
        _check_choice("policy", self.policy, get_args(Policy))
        _check_choice("unit", self.unit, get_args(Unit))
        _check_choice("error_control", self.error_control, registered_controls())
        if self.model != "human_only" and not self.metrics:
            raise settings_error(f"model {self.model!r} needs a metric; without one use human_only", field="model")
        if (self.model == "known_mu") != (self.mu is not None):
            raise settings_error("a fixed mu is needed for model 'known_mu' and only for it", field="mu")
        if self.mu is not None:
            mu = np.asarray(self.mu, dtype=np.float64)
            if mu.shape != (3, 3) or np.any(mu < 0) or not np.allclose(mu.sum(axis=0), 1.0):
                raise settings_error("mu must be 3 x 3, non-negative, with columns summing to 1", field="mu")
        if self.futility is not None and not 0.0 < self.futility < 1.0:
            raise settings_error(f"the futility level must be in (0, 1), got {self.futility}", field="futility")
        if self.futility is not None and self.error_control == "none":
            raise settings_error("the futility stop belongs to error control; the paper's rule has none", field="futility")
        if self.model == "known_mu" and len(self.metrics) > 1:
            raise settings_error("a known mixture matrix describes one metric", field="mu")
        if self.max_rounds is not None and self.max_rounds < 1:
            raise settings_error(f"max_rounds must be >= 1, got {self.max_rounds}", field="max_rounds")
        _check_choice("statistic", self.statistic, STATISTICS)
        if self.statistic in BETTING_STATISTICS and self.error_control not in ("question", "fdr"):
            message = f"the {self.statistic} statistic is decided by betting over the question's pairs: use error control question or fdr"
            raise settings_error(message, field="statistic")
        if self.error_control == "fdr" and self.question.entry.tier:
            message = "error control 'fdr' bounds the false discovery rate of pairwise decisions: use it with all-pairs or baseline"
            raise settings_error(message + " questions (for top-k, 'question' protects the answer's members)", field="error_control")
        if self.delta is not None and not (self.statistic in BETTING_STATISTICS and math.isfinite(self.delta) and self.delta > 0):
            betting = ", ".join(BETTING_STATISTICS)
            message = f"an equivalence margin must be a finite number > 0 with a statistic decided by betting ({betting}), got {self.delta}"
            in_use = (
                "" if self.statistic in BETTING_STATISTICS else f" with the {self.statistic} statistic (error control {self.error_control})"
            )
            raise settings_error(message + in_use, field="delta")
        if self.delta is not None and self.statistic in OUTCOME_STATISTICS and self.delta > 1:
            message = f"the {self.statistic} statistic's margin is a net win rate, at most 1, got {self.delta}"
            raise settings_error(message, field="delta")
        if self.policy == "closest_first" and self.unit == "ratings":
            raise settings_error("the closest_first policy allocates comparisons per pair; a ratings study uses 'paper'", field="policy")

    @property
    def metric(self) -> str | None:
        """The first metric, or ``None`` (human only)."""
        return self.metrics[0] if self.metrics else None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready values (the question as a nested dict, tuples as lists)."""
        values: dict[str, Any] = {name: getattr(self, name) for name in self.__dataclass_fields__}
        values["question"] = {"kind": self.question.kind, "k": self.question.k, "baselines": list(self.question.baselines)}
        values["metrics"] = list(self.metrics)
        values["metric"] = self.metric  # the single-metric key of state format 1, kept for the JSON's readers
        values["mu"] = None if self.mu is None else [list(row) for row in self.mu]
        return values

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> ProtocolSettings:
        """Inverse of :meth:`as_dict`."""
        raw = {name: values[name] for name in cls.__dataclass_fields__ if name in values}
        question = raw.get("question") or {}
        raw["question"] = Question(question.get("kind", "all-pairs"), int(question.get("k", 1)), tuple(question.get("baselines", ())))
        raw["metrics"] = tuple(raw.get("metrics", ()))
        if raw.get("mu") is not None:
            raw["mu"] = tuple(tuple(float(v) for v in row) for row in raw["mu"])
        return cls(**raw)


def registered_controls() -> tuple[str, ...]:
    """The names of the registered error-control rules."""
    from prefeval_core.protocol.error_controls import ERROR_CONTROL_RULES  # on use: the rules decide states holding these settings

    return tuple(ERROR_CONTROL_RULES)


def _check_choice(name: str, value: object, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise settings_error(f"unknown {name} {value!r}; expected one of {', '.join(allowed)}", field=name)
