"""Simulated runs of one pair under the protocol's reveal-decide loop (method.md §12's check).

A run: a pool of ``pool`` items with a true outcome drawn from ``rates`` (``p>, p=, p<``) each,
optionally a simulated metric (its outcome on every item drawn from the column of ``metric_mu``
of the item's true outcome, method.md §10) and ``metric_only`` further items that only the metric
rated. Round after round ``batch`` more human outcomes are revealed (in item order: the items are
independent draws, so this is a random order), the rule decides, and the run ends at the first
decision, when futility stops it, or when the pool is spent. All runs of a setting advance
together, vectorised: each run is one "pair" of the sequential functions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from prefeval_core.decision import Model, MuRows, decision_from_theta, human_only_theta
from prefeval_core.errors import settings_error
from prefeval_core.pairs.counts import JointCounts
from prefeval_core.sequential.evidence import METRIC_SHARE, anytime_decisions
from prefeval_core.sequential.futility import Futility, futility
from prefeval_core.sequential.human import MIXTURE_CONCENTRATION
from prefeval_core.sequential.metric import initial_log_numerator, update_log_numerator
from prefeval_core.sequential.spending import spending_decisions, spending_futility
from prefeval_core.vocabulary.controls import ErrorControl
from prefeval_core.vocabulary.levels import DEFAULT_GAMMA
from prefeval_core.vocabulary.outcomes import TIE


@dataclass(frozen=True)
class Scenario:
    """One setting of the simulation.

    Attributes:
        pool: items per run with a human outcome that can be revealed.
        batch: ``N``, human outcomes revealed per round.
        rates: true ``(p>, p=, p<)``.
        metric_mu: the simulated metric's mixture matrix (rows = metric, columns = human), or
            ``None`` for no metric.
        metric_only: further items per run with a metric outcome and no human one.
        model: ``human_only``, ``known_mu`` (the e-process is told ``metric_mu``) or ``full``.
    """

    pool: int
    batch: int
    rates: tuple[float, float, float]
    metric_mu: MuRows | None = None
    metric_only: int = 0
    model: Model = "human_only"

    def __post_init__(self) -> None:
        if self.pool < 1 or self.batch < 1 or self.metric_only < 0:
            raise settings_error("pool and batch must be >= 1 and metric_only >= 0")
        if (self.model != "human_only") != (self.metric_mu is not None):
            raise settings_error("a metric model needs metric_mu, and only a metric model uses it")


@dataclass(frozen=True)
class RunsResult:
    """What every simulated run ended with.

    Attributes:
        decision: (runs,) int8: 0 ``>``, 2 ``<``, 1 none by the end.
        cost: (runs,) human outcomes revealed when the run ended.
        futile: (runs,) bool: ended by the futility rule.
    """

    decision: npt.NDArray[np.int8]
    cost: npt.NDArray[np.int64]
    futile: npt.NDArray[np.bool_]

    @property
    def share_significant(self) -> float:
        return float(np.mean(self.decision != TIE))

    @property
    def share_significant_se(self) -> float:
        """Monte-Carlo standard error of :attr:`share_significant`, ``sqrt(s (1 - s) / runs)``."""
        share = self.share_significant
        return float(np.sqrt(share * (1.0 - share) / len(self.decision)))


def simulate_runs(
    scenario: Scenario,
    runs: int,
    *,
    gamma: float = DEFAULT_GAMMA,
    control: ErrorControl = "anytime",
    futility_rule: Futility = "off",
    beta: float | None = None,
    metric_share: float = METRIC_SHARE,
    concentration: float = MIXTURE_CONCENTRATION,
    seed: int = 0,
) -> RunsResult:
    """Simulate ``runs`` independent runs of ``scenario`` (module docstring).

    ``control="none"`` is the paper's per-look rule, human only (the metric models' engine is
    too slow for thousands of runs), and has no futility rule. ``control="spending"`` decides
    from the human outcomes (:mod:`prefeval_core.sequential.spending`), its futility ``exact``
    (unreachable at the end) or ``predictive`` (below ``beta``; with a metric model, the
    remaining human outcomes predicted from the remaining items' metric outcomes).
    """
    if control == "none" and (scenario.model != "human_only" or futility_rule != "off"):
        raise settings_error("the uncorrected rule is simulated human only and without futility")
    rng = np.random.default_rng(seed)
    items = scenario.pool + scenario.metric_only
    truth = _draw(rng, np.asarray(scenario.rates, dtype=np.float64), (runs, items))
    mu = None if scenario.metric_mu is None else np.asarray(scenario.metric_mu, dtype=np.float64)
    if mu is None:
        metric = np.full((runs, items), 3, dtype=np.int64)  # pattern 3: no metric outcome
    else:
        metric = _draw_columns(rng, mu, truth)
    model_mu = mu if scenario.model == "known_mu" else None
    index = np.arange(runs)
    revealed = np.zeros((runs, 4, 3), dtype=np.int64)
    unrevealed = np.zeros((runs, 4), dtype=np.int64)
    np.add.at(unrevealed, (np.repeat(index, items), metric.ravel()), 1)
    in_pool = np.zeros((runs, 4), dtype=np.int64)
    np.add.at(in_pool, (np.repeat(index, scenario.pool), metric[:, : scenario.pool].ravel()), 1)
    log_numerator = initial_log_numerator(runs)
    decision = np.full(runs, TIE, dtype=np.int8)
    cost = np.zeros(runs, dtype=np.int64)
    futile = np.zeros(runs, dtype=bool)
    active = index
    with_metric = scenario.model != "human_only"
    looks: list[list[tuple[int, int, int]]] = [[] for _ in range(runs)]
    for start in range(0, scenario.pool, scenario.batch):
        stop = min(start + scenario.batch, scenario.pool)
        before = JointCounts(("metric",), revealed[active].copy(), unrevealed[active].copy())
        rows = np.repeat(active, stop - start)
        codes, humans = metric[active, start:stop].ravel(), truth[active, start:stop].ravel()
        np.add.at(revealed, (rows, codes, humans), 1)
        np.add.at(unrevealed, (rows, codes), -1)
        np.add.at(in_pool, (rows, codes), -1)
        cost[active] = stop
        after = JointCounts(("metric",), revealed[active], unrevealed[active])
        if control == "none":
            now = decision_from_theta(human_only_theta(after.n), gamma)
        elif control == "spending":
            for run, counts in zip(active, after.n, strict=True):
                looks[run].append((int(counts[0] + counts[2]), stop, scenario.pool))
            now = spending_decisions([tuple(looks[run]) for run in active], after.n[:, 0], gamma).decision
        elif with_metric:
            log_numerator[active] = update_log_numerator(before, after, log_numerator[active], model_mu)
            now = anytime_decisions(
                after, gamma, log_numerator=log_numerator[active], mu=model_mu, metric_share=metric_share, concentration=concentration
            ).decision
        else:
            now = anytime_decisions(after.n, gamma, concentration=concentration).decision
        decision[active] = now
        open_runs = now == TIE
        if control == "spending" and futility_rule != "off" and stop < scenario.pool and open_runs.any():
            stopped = spending_futility(
                after.n[open_runs], np.full(int(open_runs.sum()), scenario.pool - stop), gamma,
                (gamma if beta is None else beta) if futility_rule == "predictive" else None,
                revealed_patterns=revealed[active[open_runs]] if with_metric else None,
                remaining_patterns=in_pool[active[open_runs]] if with_metric else None,
            )  # fmt: skip
            futile[active[open_runs]] = stopped
            open_runs[open_runs] = ~stopped
        elif futility_rule != "off" and stop < scenario.pool and open_runs.any():
            still = active[open_runs]
            verdict = futility(
                after.subset(open_runs) if with_metric else after.n[open_runs],
                np.full(len(still), scenario.pool - stop),
                gamma,
                rule=futility_rule,
                beta=beta,
                log_numerator=log_numerator[still] if with_metric else None,
                mu=model_mu,
                remaining_patterns=in_pool[still] if with_metric else None,
                metric_share=metric_share,
                concentration=concentration,
                seed=int(np.random.SeedSequence([seed, stop]).generate_state(1)[0]),
            )
            futile[still] = verdict.futile
            open_runs[open_runs] = ~verdict.futile
        active = active[open_runs]
        if active.size == 0:
            break
    return RunsResult(decision=decision, cost=cost, futile=futile)


def _draw(rng: np.random.Generator, rates: npt.NDArray[np.float64], shape: tuple[int, int]) -> npt.NDArray[np.int64]:
    """Outcome codes with probabilities ``rates`` (inverse CDF)."""
    return np.minimum((rng.random(shape)[..., None] > np.cumsum(rates)).sum(axis=-1), 2).astype(np.int64)


def _draw_columns(rng: np.random.Generator, mu: npt.NDArray[np.float64], truth: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """A metric outcome per true outcome ``h``, drawn from ``mu[:, h]``."""
    cumulative = np.cumsum(mu, axis=0)[:, truth]  # (3, runs, items)
    return np.minimum((rng.random(truth.shape)[None] > cumulative).sum(axis=0), 2).astype(np.int64)
