"""The schema of a saved study setup (:meth:`~prefeval_core.workflow.setup.StudySetup.as_dict`),
checked before :meth:`~prefeval_core.workflow.setup.StudySetup.from_dict` builds one; the
bounds and option types are those of the protocol state's schema."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from prefeval_core.data.schema import StrictModel
from prefeval_core.decision import Model, Sampler
from prefeval_core.protocol.settings import Policy, Statistic
from prefeval_core.protocol.state_schema import Count, Level, Name, Positive, QuestionDocument, Seed, Threshold
from prefeval_core.protocol.table import RatingsPerRequest, Unit
from prefeval_core.sequential.evidence import ErrorControl
from prefeval_core.workflow.setup import DEFAULT_FUTILITY, MAX_IDEAL_ITEMS, MAX_JUDGMENTS_PER_ITEM, Mode


class SetupDocument(StrictModel):
    """:class:`~prefeval_core.workflow.setup.StudySetup` as saved (field for field)."""

    human: Name
    metrics: list[Name] = Field(default_factory=list)
    question: QuestionDocument = QuestionDocument()
    unit: Unit | None = None
    mode: Mode = "replay"
    budget: Count | None = None
    batch: Positive = 10
    gamma: Level = 0.05
    error_control: ErrorControl = "spending"
    futility: Level | None = DEFAULT_FUTILITY
    eps_human: Threshold = 0.0
    eps_metric: Threshold = 0.0
    model: Model | None = None
    sampler: Sampler = "fast"
    policy: Policy = "paper"
    seed: Seed = 0
    human_fraction: Annotated[float, Field(gt=0.0, le=1.0)] = 1.0
    max_rounds: Positive | None = None
    ideal_items: Annotated[Count, Field(le=MAX_IDEAL_ITEMS)] = 0
    judgments_per_item: Annotated[Positive, Field(le=MAX_JUDGMENTS_PER_ITEM)] = 1
    statistic: Statistic = "sign"
    delta: Annotated[float, Field(gt=0.0)] | None = None
    ratings_per_request: RatingsPerRequest = "all"
