"""The decision step of a round: counts in; ``theta``, decisions, evidence and futility out.

Three rules (method.md §4, §12), chosen by ``settings.error_control``:

* ``none`` (the paper): the decision engine's ``theta = P(p> > p< | data)`` at level γ at every
  look (:func:`prefeval_core.decision.decide_counts`; exact ``I_{1/2}(n< + 1, n> + 1)`` for the
  human-only model). Each look at a true tie is another chance of a false decision.
* ``spending`` (the default of a study): an exact group-sequential test of the pair's human
  judgments with Pocock-type spending over the share of its pool revealed
  (:mod:`prefeval_core.sequential.spending`): a pair with equal true rates ends the run significant
  with probability at most γ, whatever the batch, the pool and the number of looks. Futility:
  stopped when even a pool's worth of one-sided outcomes could not make it significant at the
  end, and (``settings.futility = β``) when the predictive probability that it ends significant
  is below β. ``theta`` and the posterior means shown are the exact human-only ones (the decision
  never reads them; see :func:`_posterior`).
* ``anytime``: decisions by e-processes (:mod:`prefeval_core.sequential`): a pair whose true
  rates are equal ends the run significant with probability at most γ, whatever the batch, the
  pool and the number of looks (Ville's inequality). The human judgments' e-process decides; with
  a known mixture matrix (the ideal metric) the metric's e-process joins it (γ split between the
  two, :data:`~prefeval_core.sequential.METRIC_SHARE` to the metric). With the full model the
  metric's e-process pays for learning ``mu`` (about ``log M`` nats for the metric's rates and
  ``3 log n`` for the six parameters of P(human | metric)) and measured no better than the human
  one (``docs/results.md``, error control), so the full model decides from the human e-process
  **(choice)**; ``theta`` and the posterior means shown are then the human-only ones. A pair that can
  no longer be decided before its items run out is stopped: exactly (no remaining outcome could
  reach the threshold) always, and with ``settings.futility = β`` also when the predictive
  probability of a decision is below β. Futility never adds a false decision.

The protocol keeps what the guarantee needs: items revealed in a seeded order that does not
depend on their outcomes, decisions kept once made, each pair's metric items fixed.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from prefeval_core.decision import DecisionResult, SamplerSettings, decide_counts, decide_joint
from prefeval_core.pairs.counts import JointCounts, pattern_index
from prefeval_core.protocol.question_control import DecidedRound
from prefeval_core.protocol.questions import next_members, question_pairs
from prefeval_core.protocol.settings import ProtocolSettings
from prefeval_core.protocol.state import ProtocolState, RoundDecisions
from prefeval_core.sequential import anytime_decisions, update_log_numerator
from prefeval_core.sequential.futility import futility
from prefeval_core.sequential.spending import spending_decisions, spending_futility
from prefeval_core.vocabulary.outcomes import UNDECIDED


def round_seed(seed: int, round_number: int) -> int:
    """The sampler seed of a round, derived from the run's seed (independent streams per round)."""
    return int(np.random.SeedSequence([seed, round_number]).generate_state(1)[0])


def decide_pairs_of_round(
    state: ProtocolState, chosen: npt.NDArray[np.int64], number: int, sampler_settings: SamplerSettings | None
) -> RoundDecisions:
    """Decide the pairs ``chosen`` (indices) on the judgments revealed up to round ``number``."""
    settings = state.settings
    D = len(chosen)
    if D == 0:
        empty = np.zeros(0)
        pairs = np.zeros((0, 2))
        return RoundDecisions(empty, np.zeros(0, dtype=np.int8), np.zeros((0, 3)), pairs, pairs, np.zeros(0, dtype=bool))
    counts = state.revealed_counts().subset(chosen)
    posterior = _posterior(state, counts, chosen, number, sampler_settings)
    no_evidence = np.full((D, 2), np.nan)
    if settings.error_control == "none":
        return RoundDecisions(posterior.theta, posterior.decision, posterior.p_mean, no_evidence, np.zeros((D, 2)), np.zeros(D, dtype=bool))
    if settings.error_control == "spending":
        decision, stop = _spending(state, chosen, counts)
        return RoundDecisions(posterior.theta, decision, posterior.p_mean, no_evidence, np.zeros((D, 2)), stop)
    mu = None if settings.mu is None else np.asarray(settings.mu, dtype=np.float64)
    with_metric = settings.model == "known_mu"
    log_numerator = state.status.log_numerator[chosen]
    if with_metric:
        previous = state.revealed_counts(before_round=number).subset(chosen)
        log_numerator = update_log_numerator(previous, counts, log_numerator, mu)
    evidence = anytime_decisions(counts, settings.gamma, log_numerator=log_numerator if with_metric else None, mu=mu)
    undecided = evidence.decision == UNDECIDED
    stop = np.zeros(D, dtype=bool)
    if undecided.any():
        rows = np.flatnonzero(undecided)
        remaining, patterns = _remaining(state, chosen[rows])
        stop[rows] = futility(
            counts.subset(rows),
            remaining,
            settings.gamma,
            rule="exact" if settings.futility is None else "predictive",
            beta=settings.futility,
            log_numerator=log_numerator[rows] if with_metric else None,
            mu=mu,
            remaining_patterns=patterns if with_metric else None,
            seed=round_seed(settings.seed, number),
        ).futile
    return RoundDecisions(posterior.theta, evidence.decision, posterior.p_mean, evidence.log_evidence, log_numerator, stop)


def theta_from_model(settings: ProtocolSettings) -> bool:
    """Whether a round's θ comes from the decision model (metrics included), or is only shown and so is
    the exact human-only one (:func:`_posterior`)."""
    return settings.error_control == "none" or settings.model == "known_mu" or settings.policy == "closest_first"


def _posterior(
    state: ProtocolState, counts: JointCounts, chosen: npt.NDArray[np.int64], number: int, sampler_settings: SamplerSettings | None
) -> DecisionResult:
    """The ``theta = P(p> > p< | data)`` and posterior means ``(p>, p=, p<)`` of the round's pairs.

    * ``none``: they decide (the paper's rule), so they come from the decision model: one
      metric's count triples, or all metrics in one posterior (Dawid–Skene, docs/model.md).
    * ``spending``, and ``anytime`` without a known mixture matrix: the decisions come from the
      human judgments alone and the posterior is only shown, so it is the exact human-only one
      (``theta = I_{1/2}(n< + 1, n> + 1)`` and the Dirichlet(1, 1, 1) posterior means of the
      human outcomes; closed form, no sampling; it also feeds the result's KLD) -- a round of
      thousands of pairs does not run the sampler for numbers the decision never reads.
    * ``anytime`` with a known mixture matrix (``known_mu``), or the ``closest_first`` policy
      (which allocates by ``theta``): the decision model, as under ``none``.

    Each pair's draws depend on its index in the study, never on the other pairs decided with it."""
    settings = state.settings
    options = {
        "model": settings.model if theta_from_model(settings) else "human_only",
        "sampler": settings.sampler,
        "gamma": settings.gamma,
        "seed": round_seed(settings.seed, number),
        "settings": sampler_settings,
        "pair_ids": chosen,
    }
    if counts.k > 1 and options["model"] == "full":
        return decide_joint(counts, **options)  # type: ignore[arg-type]
    mu = None if settings.mu is None else np.asarray(settings.mu, dtype=np.float64)
    return decide_counts(counts.triples(0), mu=mu, **options)


def _spending(
    state: ProtocolState, chosen: npt.NDArray[np.int64], counts: JointCounts
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.bool_]]:
    """Group-sequential decisions of the chosen pairs (human judgments only), and which undecided
    ones are futile; with a metric in the model, futility predicts the remaining human outcomes
    from the remaining items' metric outcomes (stopping never adds a decision, so the metric may
    inform it without touching error control)."""
    n = counts.n
    table, gamma = state.table, state.settings.gamma
    rounds, outcome = state.row_reveals
    pool = table.row_requestable_for_pairs
    looks = []
    for pair in chosen:
        rows = slice(table.pair_starts[pair], table.pair_starts[pair + 1])
        seen, decisive = rounds[rows], (outcome[rows] == 0) | (outcome[rows] == 2)
        size = int(pool[rows].sum())
        looks.append(
            tuple(
                (int(np.sum(decisive & (seen > 0) & (seen <= r))), int(np.sum((seen > 0) & (seen <= r))), size)
                for r in np.unique(seen[seen > 0])
            )
        )
    decision = spending_decisions(looks, n[:, 0], gamma).decision
    stop = np.zeros(len(chosen), dtype=bool)
    open_rows = np.flatnonzero(decision == UNDECIDED)
    if open_rows.size:
        remaining, patterns = _remaining(state, chosen[open_rows])
        with_metric = state.table.k > 0 and state.settings.model != "human_only"
        stop[open_rows] = spending_futility(
            n[open_rows], remaining, gamma, state.settings.futility,
            revealed_patterns=counts.revealed[open_rows] if with_metric else None,
            remaining_patterns=patterns if with_metric else None,
        )  # fmt: skip
    return decision, stop


def _remaining(state: ProtocolState, pairs: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Rows each pair can still get (P,), and their metric patterns (P, 4^k) for the table's k metrics."""
    table = state.table
    rounds, _ = state.row_reveals
    left = table.row_requestable_for_pairs & (rounds == 0)
    J = 4 ** max(table.k, 1)
    position = np.full(table.n_pairs, -1, dtype=np.int64)
    position[pairs] = np.arange(len(pairs))
    rows = left & (position[table.row_pair] >= 0)
    codes = table.metrics[rows] if table.k else np.full((int(rows.sum()), 1), -1, dtype=np.int8)
    flat = position[table.row_pair[rows]] * J + pattern_index(codes)
    patterns = np.bincount(flat, minlength=len(pairs) * J).reshape(len(pairs), J).astype(np.int64)
    return patterns.sum(axis=1), patterns


def decide_pairs_round(state: ProtocolState, number: int, sampler_settings: SamplerSettings | None) -> DecidedRound:
    """Round ``number`` under a per-pair rule (``none``, ``spending``, ``anytime``): decide every
    undecided pair of the question that got new judgments in it, and (top-k) update the members."""
    table, settings = state.table, state.settings
    rounds, _ = state.row_reveals
    fresh = np.zeros(table.n_pairs, dtype=bool)
    fresh[table.row_pair[rounds == number]] = True
    asked = question_pairs(settings.question, table.systems, table.pair_systems)  # baseline: other pairs are never decided
    chosen = np.flatnonzero(fresh & asked & (state.decisions == UNDECIDED))
    decided = decide_pairs_of_round(state, chosen, number, sampler_settings)
    decisions = state.decisions.copy()
    decisions[chosen] = decided.decision
    return DecidedRound(chosen, decided, next_members(settings.question, state.members, decisions, table.pair_systems))
