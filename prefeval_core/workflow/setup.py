"""The study setup, declared once: what the CLI's options, the Protocol page's form, the saved
document and the protocol's settings are all read from.

A :class:`StudySetup` says which data to use (human rater, metrics, tie thresholds, human
fraction), which question to answer, in which unit humans are paid, and how the protocol runs
(budget, batch, γ, error control, futility, seed, ...). Each field is declared with its type, its
default and a :class:`~prefeval_core.vocabulary.fields.Setting` (label, help, bounds, choices and
their words, CLI option, what ``None`` means); from that one declaration come the options of
``prefeval replay`` and ``reproduce`` (``cli/replay.py``), the Protocol form
(``ui/protocol_widgets.py``), the schema of a saved setup (:mod:`~prefeval_core.workflow.setup_schema`)
and the checks on construction. :func:`protocol_settings` turns a setup, with the study table
built from it, into the protocol's own settings; the protocol takes its error control and
futility only from there and shares every other default with this declaration.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, fields, replace
from types import NoneType, UnionType
from typing import TYPE_CHECKING, Any, Final, Literal, Union, get_args, get_origin, get_type_hints

from prefeval_core.decision import Model, Sampler
from prefeval_core.errors import settings_error
from prefeval_core.protocol.error_controls import control_words
from prefeval_core.protocol.ideal_metric import IDEAL_METRIC_NAME, IDEAL_MU_ROWS
from prefeval_core.protocol.questions import QUESTION_KINDS, Question, question_pairs
from prefeval_core.protocol.settings import POOL_STATISTICS, Policy, ProtocolSettings, Statistic
from prefeval_core.vocabulary.controls import ErrorControl
from prefeval_core.vocabulary.fields import INT_LIMIT, Bounds, Setting, check_declared, declared, setting
from prefeval_core.vocabulary.levels import DEFAULT_FUTILITY, DEFAULT_GAMMA
from prefeval_core.vocabulary.tasks import RatingsPerRequest, Unit

if TYPE_CHECKING:
    from prefeval_core.protocol.table import StudyTable

Mode = Literal["replay", "live"]
"""``replay``: reveal the judgments a finished human evaluation holds; ``live``: people judge
what the protocol asks for."""
MAX_IDEAL_ITEMS: Final = 100_000
"""Simulated metric-only items per pair at most (the study table holds pairs x items rows)."""
MAX_JUDGMENTS_PER_ITEM: Final = 1_000
LEVEL: Final = Bounds(gt=0.0, lt=1.0)
COUNT: Final = Bounds(ge=0, lt=INT_LIMIT)
POSITIVE: Final = Bounds(ge=1, lt=INT_LIMIT)
THRESHOLD: Final = Bounds(ge=0.0)

MODE_WORDS: Final = {
    "replay": "Replay: reveal the human judgments already in the data",
    "live": "Live: people judge what the protocol asks for",
}
UNIT_WORDS: Final = {"ratings": "ratings of single outputs", "comparisons": "comparisons of two outputs"}
STATISTIC_WORDS: Final = {
    "sign": "sign: better / worse items (the paper)",
    "mean": "mean score difference (ratings)",
    "pool_mean": "mean score difference over the item pool (sampling without replacement)",
    "pool_mean_clt": "mean score difference over the item pool, asymptotic; the metric as control variate",
    "pool_sign": "net win rate over the item pool (sampling without replacement)",
    "pool_sign_clt": "net win rate over the item pool, asymptotic; the metric as control variate",
}
DEFAULT_STATISTICS: Final[Mapping[str, Statistic]] = {"question": "pool_mean", "fdr": "pool_mean"}
"""The statistic of a study that names none, by error control (others: ``sign``, the paper's). Under
the rules that protect the whole answer, ``pool_mean``: the mean score difference over the study's
own items — what the full evaluation would say — tested exactly whatever the scores (in a
comparisons study, +1 / 0 / -1 per comparison: the sign of the pool's net win rate). The per-pair
rules and the paper's rule decide on the sign counts they are stated for."""
PER_REQUEST_WORDS: Final = {
    "all": "all annotators' judgments at once",
    "one": "one annotator's judgment (rotated)",
    "one_pooled": "one annotator's rating, every rating the study paid in the pool",
}
MODEL_WORDS: Final = {"full": "Metric + human (full model)", "human_only": "Human only", "known_mu": "The ideal metric's known mixture"}
SAMPLER_WORDS: Final = {"fast": "fast (exact routes and importance sampling)", "nuts": "nuts (the slow NUTS reference)"}
POLICY_WORDS: Final = {
    "paper": "paper (every pair that matters, in turn)",
    "closest_first": "closest_first (pairs nearest a decision first)",
}


@dataclass(frozen=True)
class StudySetup:
    """Everything a study needs besides the data; each field's meaning is its ``help`` below.

    ``question`` is declared by :class:`~prefeval_core.protocol.questions.Question` (its kind, ``k``
    and baselines). ``model`` ``None`` chooses: human only without metrics, the full model with them,
    ``known_mu`` for the ideal metric (:attr:`decision_model`).
    """

    human: str = setting(label="Human rater", help="human rater, e.g. human:relevance")
    metrics: tuple[str, ...] = setting(
        (), label="Metrics", help="metric rater(s); omit for human only (ideal: the simulated metric of method.md §10)", option="metric"
    )
    question: Question = setting(Question(), label="Question", help="what to answer", option=None)
    unit: Unit | None = setting(
        None,
        label="A paid judgment is",
        help="what one paid judgment is: ratings of outputs (scalar studies) or comparisons of two",
        choices=UNIT_WORDS,
        option="cost-unit",
        none="as the human rater (ratings / comparisons)",
    )
    mode: Mode = setting("replay", label="Mode", help="replay or live", choices=MODE_WORDS, option=None)
    budget: int | None = setting(
        None,
        label="Budget (judgments; 0 = all the data holds)",
        help="judgments that may be revealed in total, in the study's unit: ratings or comparisons",
        bounds=COUNT,
        none="all the data holds",
        shown=(0, 100_000_000),
    )
    batch: int = setting(
        10,
        label="Batch N per round",
        help="N: items per system (ratings) or per pair (comparisons) and round",
        bounds=POSITIVE,
        shown=(1, 10_000),
    )
    gamma: float = setting(DEFAULT_GAMMA, label="Significance level γ", help="significance level", bounds=LEVEL, shown=(0.001, 0.5))
    error_control: ErrorControl = setting(
        "question",
        label="Error control",
        help="question: the whole answer protected (no true top-k member excluded, no false directional decision, with "
        "probability 1 - gamma over all looks and pairs); fdr (all-pairs / baseline): the expected share of false directional "
        "decisions at most gamma (e-BH); spending / anytime (per pair): false decisions at a tied pair stay "
        "below gamma over the whole run (a spending function over the pool / e-processes valid under any looking); none: the "
        "paper's per-look rule",
        choices=control_words,
    )
    futility: float | None = setting(
        DEFAULT_FUTILITY,
        label="Futility level β",
        help="beta of the predictive futility stop with error control: stop asking for a pair whose evidence is unlikely to reach "
        "its threshold before its items run out (with spending and a metric, the metric's outcomes of the items left predict "
        "them; it never decides a pair)",
        bounds=LEVEL,
        none="stop a pair only when no judgment left could decide it: the full evaluation's answer where the pools allow, at more cost",
        shown=(0.001, 0.5),
    )
    eps_human: float = setting(0.0, label="Human tie threshold", help="tie threshold of human score differences", bounds=THRESHOLD)
    eps_metric: float = setting(
        0.0,
        label="Metric tie threshold",
        help="tie threshold of metric score differences: differences up to this are ties",
        bounds=THRESHOLD,
        option="eps",
        shown=(0.0, 1e6),
    )
    model: Model | None = setting(None, label="Decision model", help="the decision model", choices=MODEL_WORDS, option=None)
    sampler: Sampler = setting("fast", label="Sampler", help="decision engine sampler", choices=SAMPLER_WORDS)
    policy: Policy = setting("paper", label="Allocation (comparisons)", help="allocation (comparisons studies)", choices=POLICY_WORDS)
    seed: int = setting(
        0, label="Seed", help="seed of the reveal order, the sampler and the human-fraction draw", bounds=COUNT, shown=(0, 2**31 - 1)
    )
    human_fraction: float = setting(
        1.0,
        label="Share of the human judgments that may be revealed (replay)",
        help="share of human judgments that may be revealed; the rest stay metric-only (the paper's regime of many "
        "metric-only items, on real data)",
        bounds=Bounds(gt=0.0, le=1.0),
        shown=(0.05, 1.0),
    )
    max_rounds: int | None = setting(None, label="Round limit", help="stop after this many rounds", bounds=POSITIVE, none="no limit")
    ideal_items: int = setting(
        0,
        label="Ideal-metric items",
        help="simulated metric-only items per pair (ideal metric)",
        bounds=Bounds(ge=0, le=MAX_IDEAL_ITEMS),
    )
    judgments_per_item: int = setting(
        1,
        label="Judgments per item (live)",
        help="live studies: each requested item goes to this many different annotators",
        bounds=Bounds(ge=1, le=MAX_JUDGMENTS_PER_ITEM),
        option=None,
        shown=(1, 20),
    )
    statistic: Statistic | None = setting(
        None,
        label="Statistic",
        help="a pair's evidence: sign (counts of better / worse items, the paper's), mean (paired score differences, "
        "method.md §13), pool_mean (the same over the study's finite item pool, decisive as it runs out; exact) or "
        "pool_mean_clt (the same estimand with an asymptotic confidence sequence that uses the metric as a control "
        "variate); pool_sign and pool_sign_clt test the pool's net win rate (share of items where A is better minus "
        "where B is) the same two ways; all but sign need error control question or fdr",
        choices=STATISTIC_WORDS,
        none="as the error control: pool_mean under question or fdr, sign under the others",
    )
    delta: float | None = setting(
        None,
        label="Equivalence margin δ (0 = none)",
        help="equivalence margin in the human score's units (for pool_sign and pool_sign_clt a net win rate, at most "
        "1): pairs shown to differ by less are decided equivalent and cost no more judgments",
        bounds=Bounds(gt=0.0),
        none="no equivalence decisions",
        shown=(0.0, 1e6),
    )
    ratings_per_request: RatingsPerRequest | None = setting(
        None,
        label="A request buys",
        help="where the data keep several annotators per output or comparison apart: a request buys all their judgments "
        "(their mean, or majority), one annotator's (rotated over the items by the seed; never a second), or one_pooled "
        "(ratings): one rating, every "
        "(item, annotator) rating in the pool, so that a second or third rating of an output is bought when the seeded "
        "order reaches it and the pool statistics decide what the full evaluation says (replays, pool statistics)",
        choices=PER_REQUEST_WORDS,
        none="as the data allow: one_pooled in a replay of ratings whose annotators the data keep apart, under a pool "
        "statistic (the default's); all otherwise",
    )

    def __post_init__(self) -> None:
        check_declared(self)
        if self.mode == "live" and self.budget is None:
            raise settings_error("a live study needs a budget (the judgments you will pay for)", field="budget")
        if len(set(self.metrics)) != len(self.metrics):
            raise settings_error(f"a metric is named twice in {', '.join(self.metrics)}", field="metric")
        if self.human in self.metrics:
            raise settings_error(f"the human rater {self.human!r} cannot also be a metric", field="metric")
        if self.ratings_per_request == "one_pooled" and self.mode == "live":
            message = "one_pooled replays the ratings the data holds: a live study buys 'one' or 'all'"
            raise settings_error(message, field="ratings_per_request")
        if self.ratings_per_request == "one_pooled" and self.decision_statistic not in POOL_STATISTICS:
            raise settings_error(
                f"one_pooled puts several ratings of one output in the pool: only {' or '.join(POOL_STATISTICS)} are valid on it",
                field="statistic",
            )

    @property
    def decision_model(self) -> Model:
        """The model in use: as set, else chosen from the metrics."""
        if self.model is not None:
            return self.model
        if not self.metrics:
            return "human_only"
        return "known_mu" if self.metrics == (IDEAL_METRIC_NAME,) else "full"

    @property
    def decision_statistic(self) -> Statistic:
        """The statistic in use: as set, else the one the error control's guarantee is stated for
        (:data:`DEFAULT_STATISTICS`)."""
        return self.statistic if self.statistic is not None else DEFAULT_STATISTICS.get(self.error_control, "sign")

    def request_design(self, annotators_apart: Callable[[], bool]) -> RatingsPerRequest:
        """What a request buys: as set, else ``one_pooled`` in a replay of ratings whose data keep
        the annotators apart with every output rated as often (``annotators_apart()``, asked only
        then; :func:`~prefeval_core.protocol.annotator_units.pooling_problem`) under a pool
        statistic — the full evaluation's estimand, one rating at a time (its cost against buying
        every annotator at once: results_question_control.md, "One rating at a time") — and ``all``
        otherwise (a live study, another statistic, one rater per output, outputs rated unequally often)."""
        if self.ratings_per_request is not None:
            return self.ratings_per_request
        pooled = self.mode == "replay" and self.unit != "comparisons" and self.decision_statistic in POOL_STATISTICS
        return "one_pooled" if pooled and annotators_apart() else "all"

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


@dataclass(frozen=True)
class SetupField:
    """One declared setting of a study, as the shells read it (:func:`setup_fields`).

    Attributes:
        name: the field's name in :class:`StudySetup`, or in its question (``kind``, ``k``, ``baselines``).
        setting: its declaration (label, help, bounds, choices, option).
        default: its default; ``MISSING`` (:data:`dataclasses.MISSING`): required.
        kind: ``int``, ``float``, ``str`` or ``tuple`` (names).
        optional: whether it may be ``None`` (unset).
    """

    name: str
    setting: Setting
    default: Any
    kind: type
    optional: bool

    @property
    def required(self) -> bool:
        return self.default is MISSING

    @property
    def option(self) -> str | None:
        """Its command-line option (``--cost-unit``), or ``None``."""
        if self.setting.option is None:
            return None
        return "--" + (self.setting.option or self.name.replace("_", "-"))


def _fields_of(cls: type) -> list[SetupField]:
    hints = get_type_hints(cls)
    found = []
    for name, (field, spec) in declared(cls).items():
        hint = hints[name]
        optional = get_origin(hint) in (Union, UnionType) and NoneType in get_args(hint)
        inner = next(arg for arg in get_args(hint) if arg is not NoneType) if optional else hint
        kind = inner if inner in (int, float, str) else tuple if get_origin(inner) is tuple else str if spec.choices else inner
        found.append(SetupField(name, spec, field.default, kind, optional))
    return found


def setup_fields() -> dict[str, SetupField]:
    """Every declared setting of a study, in declaration order, the question's (``kind``, ``k``,
    ``baselines``) in its place: what the CLI's options and the Protocol form are made from."""
    found: dict[str, SetupField] = {}
    for entry in _fields_of(StudySetup):
        if entry.kind is Question:
            found.update((part.name, part) for part in _fields_of(Question))
        else:
            found[entry.name] = entry
    return found


def setup_from_values(values: Mapping[str, Any]) -> StudySetup:
    """The setup of flat values named as in :func:`setup_fields` (a missing one: its default); a
    question parameter its kind does not use (``k`` but for top-k, baselines but for baseline) is
    dropped, so a form or a command line may always send both."""
    parts = {field.name for field in fields(Question)}
    question = {name: values[name] for name in parts if name in values}
    entry = QUESTION_KINDS.get(question.get("kind", Question.kind))
    if entry is not None and not entry.k:
        question.pop("k", None)
    if entry is not None and not entry.baselines:
        question.pop("baselines", None)
    rest = {name: value for name, value in values.items() if name not in parts}
    return StudySetup(question=Question(**question), **rest)


def setup_values(setup: StudySetup) -> dict[str, Any]:
    """The flat values of ``setup``, named as in :func:`setup_fields` (inverse of :func:`setup_from_values`)."""
    question = {field.name: getattr(setup.question, field.name) for field in fields(Question)}
    return {**{name: getattr(setup, name) for name in declared(StudySetup) if name != "question"}, **question}


FUTILITY_OFF_WORDS = "off: the paper's rule (error control none) has no futility stop"
"""Why a setup's futility level is not used under error control ``none`` (:func:`futility_in_force`)."""


def futility_in_force(error_control: ErrorControl, futility: float | None) -> float | None:
    """The futility level β a run uses: ``futility``, except under the paper's rule (``none``), which
    has none (:data:`FUTILITY_OFF_WORDS`); the form shows this, not the setup's value."""
    return None if error_control == "none" else futility


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
        futility=futility_in_force(setup.error_control, setup.futility),
        max_rounds=setup.max_rounds,
        statistic=setup.decision_statistic,
        delta=setup.delta,
    )
