"""Baselines that users compare prefeval with, as pair deciders over what the protocol has.

Both take a :class:`~prefeval_core.pairs.counts.PairTable` and a boolean ``revealed`` mask over its
rows (as :func:`~prefeval_core.pairs.counts.count_triples` does) and return, per pair, a decision
code (0 ``>``, 1 undecided, 2 ``<``), a point estimate and an interval:

* :func:`ppi_decisions`: PPI++ (``ppi_py``) on the mean human preference with the metric(s) as
  predictor (:mod:`prefeval_core.baselines.ppi`);
* :func:`bradley_terry_decisions`: Bradley–Terry (``evalica``) on the revealed human judgments
  with seeded bootstrap intervals (:mod:`prefeval_core.baselines.bradley_terry`).

For the top-1 question of a ratings study, :func:`successive_elimination` is a sequential anchor
(successive elimination on paired score differences with a union bound over looks and systems,
:mod:`prefeval_core.baselines.elimination`), and :func:`ppi_interval` the PPI++ interval of one
mean (any paired quantity, e.g. score differences).

:func:`compare_methods` runs them beside prefeval's decision engine on the same revealed
judgments and scores each against the full human evaluation (method.md §6).
"""

from prefeval_core.baselines.bradley_terry import RESAMPLES, BradleyTerryDecisions, Resample, bradley_terry_decisions
from prefeval_core.baselines.elimination import Bound, EliminationRun, successive_elimination
from prefeval_core.baselines.evaluation import (
    METHOD_KINDS,
    MethodComparison,
    MethodKind,
    MethodSummary,
    compare_methods,
    human_ratings,
    withhold_human,
)
from prefeval_core.baselines.intervals import IntervalDecisions, decision_from_interval
from prefeval_core.baselines.ppi import PPIDecisions, metric_predictions, ppi_decisions, ppi_interval

__all__ = [
    "METHOD_KINDS",
    "RESAMPLES",
    "Bound",
    "BradleyTerryDecisions",
    "EliminationRun",
    "IntervalDecisions",
    "MethodComparison",
    "MethodKind",
    "MethodSummary",
    "PPIDecisions",
    "Resample",
    "bradley_terry_decisions",
    "compare_methods",
    "decision_from_interval",
    "human_ratings",
    "metric_predictions",
    "ppi_decisions",
    "ppi_interval",
    "successive_elimination",
    "withhold_human",
]
