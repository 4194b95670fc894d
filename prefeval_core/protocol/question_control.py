"""The whole answer protected (method.md §13): error control ``question``.

Per-pair control (§12) bounds each pair's false decisions; an answer involves many pairs, so with
several truly tied top systems the chance that one of them is excluded grows with their number.
Under ``question`` the bound is stated for the answer, over all looks and all pairs involved:

* ``top-k`` (a kind whose answer is a tier of systems, ``entry.tier``): P(the run ever excludes a
  true member) <= γ. The null "X is a top-k member" has an e-process ``E_X``: for k = 1 in a ratings
  study, the average of a bet on X losing to the *current leader* (the other system with the best
  mean so far among those rated on the item, chosen before the item is seen), which is a
  supermartingale under the null whichever leader is picked, and of the mean of X's pair
  e-processes against every other system; otherwise the sum of X's pair e-values ``E_{Y > X}``
  without its k - 1 largest, over S - 1, bounded by the sum over the at least S - k systems not
  better than X. Systems leave by **closed testing** with averaged e-values: X is excluded when every
  set T of systems containing X has ``mean_{T} E >= 1/γ`` (Marcus, Peritz & Gabriel 1976; Vovk &
  Wang 2021, *E-values: calibration, combination and applications*, Ann. Statist., for the average
  as the intersection test). At any look a false exclusion needs the set of true members to pass
  its test, which Ville's inequality bounds by γ over all looks.
* ``all-pairs``, ``baseline`` (a kind answered by its pairs' decisions): P(any false directional
  decision) <= γ, by Holm's step-down over the 2 one-sided nulls of every pair the question
  involves, with anytime-valid p-values ``1 / max E`` (Holm 1979; the step-down stays valid at any
  look because each p-value is valid uniformly over time and rejections are kept).
* Equivalence (margin δ): the two one-sided nulls ``Δ >= δ`` and ``Δ <= -δ`` of each pair (a pair
  is equivalent when both are rejected: TOST). For ``all-pairs`` and ``baseline`` directions and
  equivalences are decided together by the partitioning principle (:func:`partition_answer`: five
  disjoint pieces of Δ per pair, one of them true, each tested at ``P / γ``), so P(any false
  decision of either kind) <= γ; for top-k they form
  their own Holm family at γ beside the members' closed test (the guarantee on exclusions is
  untouched; equivalences among members are reported at their own γ).

The evidence is the betting e-processes of the run's statistic (:mod:`prefeval_core.sequential.betting`;
the pool statistics' :mod:`~prefeval_core.sequential.pool_betting` and :mod:`~prefeval_core.sequential.pool_clt`,
on score differences or, for ``pool_sign`` / ``pool_sign_clt``, on outcome values) or, for ``sign``, the
human-only mixture e-process of the outcome counts.

**Stopping the question.** A pair (or, for top-k, the answer) stops costing judgments when the
predictive probability that its evidence reaches the threshold before its pool runs out is below
β (``settings.futility``; a normal predictive on the mean increment and the growth rate
``μ² / 2v`` of a well-tuned bet), or once it is equivalent. Stopping removes decisions only, so the
guarantee is untouched.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.special import logsumexp, ndtr

from prefeval_core.protocol.questions import question_pairs
from prefeval_core.protocol.settings import CLT_STATISTICS, OUTCOME_STATISTICS, POOL_STATISTICS, Statistic
from prefeval_core.protocol.state import ProtocolState, RoundDecisions
from prefeval_core.protocol.table import StudyTable
from prefeval_core.sequential.betting import Hypothesis, MeanEvidence, PairSequences, joined, mean_evidence
from prefeval_core.sequential.human import human_log_e
from prefeval_core.sequential.pool_betting import pool_evidence
from prefeval_core.sequential.pool_clt import clt_pool_evidence, pooled_coefficient
from prefeval_core.vocabulary.outcomes import BETTER, TIE, VALUES, WORSE, codes_from_differences

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
PAIRS_PER_BLOCK = 512
"""Pairs whose e-processes are computed at once: every test is per pair, and a block's (pairs, items)
temporaries stay within a few MB (all 4,950 pairs of 100 systems at once, on 500 items, held ~300 MB)."""


@dataclass(frozen=True)
class DecidedRound:
    """What a round decided (under any error control): the pairs it is about, their decisions,
    and the top-k members after it."""

    pairs: npt.NDArray[np.int64]
    decisions: RoundDecisions
    members: BoolArray


def decide_question_round(state: ProtocolState, number: int | None = None, sampler_settings: object = None) -> DecidedRound:
    """Decide the open round of ``state`` under error control ``question`` (module docstring);
    ``number`` and ``sampler_settings`` are the rules' common arguments, unused here (the round
    decided is always the open one, and no sampler runs)."""
    table, settings = state.table, state.settings
    asked = question_pairs(settings.question, table.systems, table.pair_systems)
    status = state.status
    chosen = np.flatnonzero(asked & (status.decision == TIE) & ~status.equivalent)
    found = pair_evidence(state)
    evidence = found.evidence
    leader = leader_log_e(state, evidence.nulls) if _leads(state) and evidence is not None else None
    decisions = state.decisions.copy()
    members = state.members.copy()
    if settings.question.entry.tier:
        against = _against(state, found.current)
        member = member_log_e(against, settings.question.k) if leader is None else _top_member_log_e(against, leader)
        members &= ~closed_exclusions(member, settings.gamma)
        equivalent = question_equivalence(state, found, asked)
    elif settings.delta is None:
        decisions, equivalent = holm_directions(found.direction, asked, decisions, settings.gamma), status.equivalent
    else:
        decisions, equivalent = partition_answer(found, asked, decisions, status.equivalent, settings.gamma)
    futile = _futile(state, found, leader, decisions, equivalent, members, asked)
    return decided_round(state, found, chosen, found.direction, decisions, futile, equivalent, members)


@dataclass(frozen=True)
class PairEvidence:
    """Every pair's evidence under a question-level rule: the mean statistic's betting e-processes,
    or for ``sign`` the human-only mixture e-process of the outcome counts.

    Attributes:
        sequences, evidence: the mean statistic's revealed differences and e-processes (``None``
            with ``sign``).
        direction: (P, 2) log e-values against "A is not better" (column 0) and "B is not better",
            as their running maxima (anytime-valid p-values ``1 / max E``); with ``sign`` the current
            values.
        current: (P, 2) the same processes' current log e-values (an e-value at any stopping time).
        equivalence: (P, 2) log e-values against ``Δ >= δ`` and ``Δ <= -δ``; NaN without a margin.
        point: (P,) log e-values against ``Δ = 0`` exactly (running maxima); NaN without a margin.
    """

    sequences: PairSequences | None
    evidence: MeanEvidence | None
    direction: FloatArray
    current: FloatArray
    equivalence: FloatArray
    point: FloatArray


def pair_evidence(state: ProtocolState) -> PairEvidence:
    """The :class:`PairEvidence` of every pair of ``state`` on its revealed judgments."""
    if state.settings.statistic == "sign":
        log_e = human_log_e(state.human_outcome_counts())
        return PairEvidence(None, None, log_e, log_e, np.full_like(log_e, np.nan), np.full(len(log_e), np.nan))
    sequences = pair_sequences(state)
    statistic, delta = state.settings.statistic, state.settings.delta
    in_pool = _in_pool(state, sequences) if statistic in POOL_STATISTICS else None
    uses_metric = statistic in CLT_STATISTICS and state.settings.model != "human_only" and state.table.k > 0
    metric = metric_sequences(state, sequences.d.shape[1]) if uses_metric else None
    # every pair's control variate is shrunk toward the one all pairs show, whatever block it is in
    prior = None if metric is None or in_pool is None else pooled_coefficient(sequences, in_pool, metric)
    # the e-processes stop at the last position revealed: a round costs what the study has seen, not its size
    width = sequences.revealed_width

    def block(rows: npt.NDArray[np.int64]) -> MeanEvidence:
        part = sequences.subset(rows)
        if statistic in CLT_STATISTICS:
            assert in_pool is not None
            return clt_pool_evidence(part, in_pool[rows], delta, None if metric is None else metric[:, rows], prior, width)
        if in_pool is not None:
            return pool_evidence(part.prefix(width), in_pool[rows, :width], delta)
        return mean_evidence(part.prefix(width), delta)

    P = len(sequences.pool)
    evidence = joined([block(np.arange(start, min(start + PAIRS_PER_BLOCK, P))) for start in range(0, max(P, 1), PAIRS_PER_BLOCK)])
    sequences = sequences.prefix(width)
    return PairEvidence(sequences, evidence, evidence.direction, evidence.current, evidence.equivalence, evidence.point)


def question_equivalence(state: ProtocolState, found: PairEvidence, asked: BoolArray) -> BoolArray:
    """(P,) equivalent pairs after the round (Holm over the asked pairs' equivalence nulls, kept once
    shown): the equivalence family of a question whose own decisions are not Holm's (top-k members,
    FDR directions), with its own γ."""
    equivalent = state.status.equivalent.copy()
    if state.settings.delta is None:
        return equivalent
    return holm_equivalence(found.equivalence, asked, equivalent, state.settings.gamma)


def decided_round(
    state: ProtocolState,
    found: PairEvidence,
    rows: npt.NDArray[np.int64],
    log_evidence: FloatArray,
    decisions: npt.NDArray[np.int8],
    futile: BoolArray,
    equivalent: BoolArray,
    members: BoolArray,
) -> DecidedRound:
    """The :class:`DecidedRound` of the pairs ``rows``, recording ``log_evidence`` (P, 2) for them
    (the posterior means of the outcome rates shown beside them are the exact human-only ones,
    ``Dirichlet(n + 1)`` of the revealed human outcomes, as under the per-pair rules)."""
    from prefeval_core.decision import dirichlet_mean

    record = RoundDecisions(
        theta=_theta(found.sequences, state, rows),
        decision=decisions[rows],
        p_mean=dirichlet_mean(state.human_outcome_counts()[rows]),
        log_evidence=log_evidence[rows],
        log_numerator=np.zeros((len(rows), 2)),
        futile=futile[rows],
        equivalent=equivalent[rows],
    )
    return DecidedRound(pairs=rows, decisions=record, members=members)


def pair_sequences(state: ProtocolState) -> PairSequences:
    """Every pair's revealed differences along the study's item order (ratings: the shared seeded
    item order; comparisons: each pair's own seeded row order, a comparison counting +1 / 0 / -1)."""
    from prefeval_core.protocol.steps import item_order, row_order  # the steps call this module

    if state.table.grid is not None:
        return _rating_sequences(state, item_order(state))
    return _comparison_sequences(state, row_order(state))


def revealed_means(state: ProtocolState) -> FloatArray:
    """(P,) each pair's mean of its revealed differences (:func:`pair_sequences`: score differences,
    or +1 / 0 / -1 outcomes for the outcome statistics and comparisons); NaN where none is revealed."""
    d = pair_sequences(state).d
    n = (~np.isnan(d)).sum(axis=1)
    return np.where(n > 0, np.nansum(d, axis=1) / np.maximum(n, 1), np.nan)


def _rating_sequences(state: ProtocolState, order: npt.NDArray[np.int64]) -> PairSequences:
    table = state.table
    grid = table.grid
    assert grid is not None
    S, width = grid.scores.shape
    revealed = (state.reveals.round.reshape(S, width) > 0)[:, order]
    values = state.reveals.value.reshape(S, width)[:, order]
    a, b = table.pair_systems[:, 0], table.pair_systems[:, 1]
    requestable = grid.requestable[:, order]
    outcomes = state.settings.statistic in OUTCOME_STATISTICS
    d = np.where(revealed[a] & revealed[b], values[a] - values[b], np.nan)
    return PairSequences(
        d=outcome_values(d, table.eps_human) if outcomes else d,
        pool=(requestable[a] & requestable[b]).sum(axis=1).astype(np.int64),
        bound=np.full(table.n_pairs, 1.0 if outcomes else _score_range(state)),
    )


def outcome_values(differences: FloatArray, eps: float) -> FloatArray:
    """Score differences as outcome values, +1 / 0 / -1 (tie threshold ``eps``, method.md §2); NaN kept."""
    return np.where(np.isnan(differences), np.nan, VALUES[np.maximum(codes_from_differences(differences, eps), 0)])


def metric_sequences(state: ProtocolState, width: int) -> FloatArray:
    """(K, P, T) every metric's pair difference at each position of the pairs' item order
    (:func:`pair_sequences`; :func:`metric_differences`): known before any human judgment."""
    from prefeval_core.protocol.steps import item_order, row_order

    table = state.table
    values = metric_differences(table)
    if table.grid is not None:
        position = np.empty(len(table.items), dtype=np.int64)
        position[item_order(state)] = np.arange(len(table.items))
        rows, columns = np.arange(len(table.row_pair)), position[table.row_item]
    else:
        rank = row_order(state)
        rows = np.flatnonzero((rank >= 0) & (rank < width))
        columns = rank[rows]
    f = np.zeros((table.k, table.n_pairs, width))
    f[:, table.row_pair[rows], columns] = values[:, rows]
    return f


def metric_differences(table: StudyTable) -> FloatArray:
    """(K, R) each metric's difference A − B on each row: a scalar metric's score difference in
    units of its root mean square over the pair's rows (so that its scale, whatever the metric,
    is that of an outcome), else its outcome (+1 / 0 / -1); 0 where it has none. The scores keep
    what the outcomes' signs drop (method.md §13: the metric difference ``f_i``)."""
    values = np.where(table.metrics >= 0, VALUES[np.maximum(table.metrics, 0)], 0).T.astype(np.float64)
    if table.metric_scores is None:
        return values
    a, b = table.row_cells
    for k, scores in enumerate(table.metric_scores):
        flat = scores.ravel()
        difference = flat[a] - flat[b]
        known = np.isfinite(difference)
        if not known.any():  # a pairwise or simulated metric: its outcomes
            continue
        difference[~known] = 0.0
        mean_square = np.bincount(table.row_pair, difference**2, minlength=table.n_pairs) / np.maximum(
            np.bincount(table.row_pair, known, minlength=table.n_pairs), 1
        )
        scale = np.sqrt(mean_square)[table.row_pair]
        values[k] = np.divide(difference, scale, out=np.zeros_like(difference), where=scale > 0)
    return values


def _in_pool(state: ProtocolState, sequences: PairSequences) -> BoolArray:
    """(P, T) the positions of the item order whose item each pair can ever get."""
    from prefeval_core.protocol.steps import item_order

    table = state.table
    if table.grid is None:  # each pair's own order: its pool comes first
        return np.arange(sequences.d.shape[1])[None, :] < sequences.pool[:, None]
    requestable = table.grid.requestable[:, item_order(state)]
    return np.asarray(requestable[table.pair_systems[:, 0]] & requestable[table.pair_systems[:, 1]])


def _score_range(state: ProtocolState) -> float:
    """The human scale's range B >= |d|: the study's scale where the data show it (at least 1)."""
    grid = state.table.grid
    assert grid is not None
    scores = grid.scores[np.isfinite(grid.scores)]
    return float(max(np.ptp(scores), 1.0)) if scores.size else 1.0


def _comparison_sequences(state: ProtocolState, rank: npt.NDArray[np.int64]) -> PairSequences:
    table = state.table
    rounds, outcome = state.row_reveals
    P = table.n_pairs
    d = np.full((P, int(rank.max(initial=-1)) + 1), np.nan)
    placed = table.row_requestable_for_pairs & (rank >= 0)
    seen = placed & (rounds > 0)
    d[table.row_pair[seen], rank[seen]] = VALUES[outcome[seen]]
    return PairSequences(d=d, pool=np.bincount(table.row_pair[placed], minlength=P).astype(np.int64), bound=np.full(P, 1.0))


def pool_differences(table: StudyTable, statistic: Statistic) -> FloatArray:
    """(P, T) the differences a pool statistic's estimand averages, on all the pool's items: the
    score differences of the ratings a run can buy (:func:`full_differences` with ``assigned``), or
    for the outcome statistics their outcome values."""
    d = full_differences(table, assigned=True)
    return outcome_values(d, table.eps_human) if statistic in OUTCOME_STATISTICS and table.grid is not None else d


def full_differences(table: StudyTable, *, assigned: bool = False) -> FloatArray:
    """(P, T) every pair's paired differences on all the data the table holds (the reference of
    the mean statistic): score differences on the items both systems have (ratings), or +1 / 0 /
    -1 per comparison; NaN elsewhere. With one judgment per request the scores and outcomes are
    the full evaluation's (every annotator's mean, their majority), or with ``assigned`` the ones
    a run can buy (the pool the ``pool_mean`` statistic is about)."""
    if table.grid is not None:
        scores = table.grid.scores if table.grid.full_scores is None or assigned else table.grid.full_scores
        a, b = table.pair_systems[:, 0], table.pair_systems[:, 1]
        return np.asarray(scores[a] - scores[b], dtype=np.float64)
    counts = np.bincount(table.row_pair, minlength=table.n_pairs)
    d = np.full((table.n_pairs, int(counts.max(initial=0))), np.nan)
    column = np.arange(len(table.row_pair)) - table.pair_starts[table.row_pair]
    human = table.human if table.full_human is None or assigned else table.full_human
    known = human >= 0
    d[table.row_pair[known], column[known]] = VALUES[human[known]]
    return d


def holm_directions(direction: FloatArray, asked: BoolArray, decisions: npt.NDArray[np.int8], gamma: float) -> npt.NDArray[np.int8]:
    """Decisions after Holm's step-down over the asked pairs' two one-sided direction nulls (a
    question without a margin): P(any false directional decision) <= γ for the whole answer.

    Args:
        direction: (P, 2) log e-values (running maxima) for ``>`` and ``<``.
        asked: (P,) the family's pairs (fixed by the question).
        decisions: (P,) decisions so far (kept).
    """
    rejected = np.stack([decisions == BETTER, decisions == WORSE], axis=1)
    rejected = _holm(direction, np.repeat(asked[:, None], 2, axis=1), rejected, gamma)
    return _with_directions(decisions, rejected[:, 0], rejected[:, 1])


def partition_answer(
    found: PairEvidence, asked: BoolArray, decisions: npt.NDArray[np.int8], equivalent: BoolArray, gamma: float
) -> tuple[npt.NDArray[np.int8], BoolArray]:
    """Decisions and equivalent pairs of a question with a margin δ, by the **partitioning
    principle** (Finner & Strassburger 2002, *The partitioning principle: a powerful tool in
    multiple decision theory*, Ann. Statist. 30): a pair's Δ lies in exactly one of five disjoint
    pieces, each with an e-process valid on the whole piece —

    ``Δ <= -δ`` (against it: the null ``Δ <= -δ``), ``-δ < Δ < 0`` (``Δ <= 0``), ``Δ = 0`` (the
    average of the two direction processes, ``found.point``), ``0 < Δ < δ`` (``Δ >= 0``),
    ``Δ >= δ`` (``Δ >= δ``).

    A piece is rejected once its e-process reaches ``P / γ`` (P asked pairs); "A better" needs the
    three pieces with ``Δ <= 0`` rejected, "B better" the three with ``Δ >= 0``, "equivalent" the two
    outer ones. A false conclusion rejects the pair's true piece; exactly one piece per pair is
    true, so by Ville's inequality and the union bound P(any false directional or equivalence
    decision, at any look) <= P · γ / P = γ. Against one Holm family of the four one-sided nulls,
    of which two may hold per pair (threshold ``2P / γ``), equivalence needs half the evidence;
    a direction needs about the same (``E_> + E_< >= 2P / γ`` through ``Δ = 0``).

    Args:
        found: the pairs' evidence (``direction``, ``point``, ``equivalence``: running maxima).
        asked: (P,) the question's pairs.
        decisions, equivalent: (P,) decisions and equivalent pairs so far (kept).
    """
    threshold = float(np.log(max(int(asked.sum()), 1) / gamma))

    def rejected(log_e: FloatArray) -> BoolArray:
        return asked & (np.nan_to_num(log_e, nan=0.0) >= threshold)

    below, above, point = rejected(found.equivalence[:, 1]), rejected(found.equivalence[:, 0]), rejected(found.point)
    better = rejected(found.direction[:, 0]) & point & below
    worse = rejected(found.direction[:, 1]) & point & above
    return _with_directions(decisions, better, worse), equivalent | (below & above)


def _with_directions(decisions: npt.NDArray[np.int8], better: BoolArray, worse: BoolArray) -> npt.NDArray[np.int8]:
    """``decisions`` with the undecided pairs shown better (and not worse) or worse (and not better) decided."""
    out = decisions.copy()
    out[better & ~worse & (decisions == TIE)] = BETTER
    out[worse & ~better & (decisions == TIE)] = WORSE
    return out


def holm_equivalence(log_e: FloatArray, asked: BoolArray, equivalent: BoolArray, gamma: float) -> BoolArray:
    """(P,) equivalent pairs: both one-sided nulls ``Δ >= δ`` and ``Δ <= -δ`` rejected by Holm's
    step-down over the asked pairs' 2 nulls each (kept once shown); at most one of a pair's two
    holds (δ > 0), so γ is divided by at most the asked pairs."""
    family = np.repeat(asked[:, None], 2, axis=1)
    rejected = _holm(np.nan_to_num(log_e, nan=0.0), family, np.repeat(equivalent[:, None], 2, axis=1), gamma, most_true=int(asked.sum()))
    return equivalent | (rejected[:, 0] & rejected[:, 1])


def _holm(log_e: FloatArray, family: BoolArray, rejected: BoolArray, gamma: float, most_true: int | None = None) -> BoolArray:
    """Holm's step-down on anytime-valid p-values ``exp(-log_e)`` over the ``family`` nulls;
    ``rejected`` (same shape) are kept. A null is rejected once ``log_e >= log(min(m - r, t) / γ)``
    with m nulls in the family, r of them rejected and ``t = most_true`` the most of the family's
    nulls that can hold at once (``None``: m) — Shaffer's logically constrained step-down (Shaffer
    1986, *Modified sequentially rejective multiple test procedures*, JASA 81, his first method):
    when the first true null is rejected, the r before it are false, so at most ``min(m - r, t)``
    nulls are true and Bonferroni over them bounds the chance by γ, at every look (each p-value is
    valid uniformly over time and rejections are kept)."""
    rejected = rejected & family
    m = int(family.sum())
    limit = m if most_true is None else most_true
    while True:
        r = int(rejected.sum())
        if r >= m:
            return rejected
        new = family & ~rejected & (log_e >= np.log(max(min(m - r, limit), 1) / gamma))
        if not new.any():
            return rejected
        rejected = rejected | new


def closed_exclusions(log_e: FloatArray, gamma: float) -> BoolArray:
    """(S,) systems excluded by closed testing of the member nulls with averaged e-values: X is
    excluded when, for every set T containing X, ``mean_T E >= 1/γ``."""
    return np.array([_smallest_mean(log_e, x)[0] >= 1.0 / gamma for x in range(len(log_e))], dtype=bool)


def _smallest_mean(log_e: FloatArray, x: int) -> tuple[float, int]:
    """The smallest mean e-value over the sets containing ``x``, and that set's size: ``x`` with
    the others in increasing order of E, as long as they lower the mean."""
    e = np.exp(np.minimum(log_e, 700.0))
    others = np.sort(np.delete(e, x))
    means = (e[x] + np.concatenate([[0.0], np.cumsum(others)])) / np.arange(1, len(e) + 1)
    smallest = int(np.argmin(means))
    return float(means[smallest]), smallest + 1


def _leads(state: ProtocolState) -> bool:
    """Whether the members are tested against the leader: a tier of one in a ratings study (the shared item order)."""
    question = state.settings.question
    return question.entry.tier and question.k == 1 and state.table.grid is not None


def _against(state: ProtocolState, current: FloatArray) -> FloatArray:
    """(S, S) ``[x, y]``: the current log e-value that y is better than x (-inf on the diagonal)."""
    table = state.table
    S = len(table.systems)
    against = np.full((S, S), -np.inf)
    a, b = table.pair_systems[:, 0], table.pair_systems[:, 1]
    against[b, a] = current[:, 0]
    against[a, b] = current[:, 1]
    return against


def member_log_e(against: FloatArray, k: int) -> FloatArray:
    """(S,) log e-values against "X is a top-k member" from ``against`` (S, S), ``[x, y]`` the log
    e-value that y is better than x: the sum of X's ``E_{Y>X}`` without its k - 1 largest, over
    S - 1. Under the null at most k - 1 systems are better than X, so the sum over the others — at
    least this large — is a supermartingale starting at most 1."""
    S = len(against)
    if S <= k:
        return np.zeros(S)
    kept = -np.sort(-against, axis=1)[:, k - 1 :]
    return np.asarray(logsumexp(kept, axis=1) - np.log(S - 1), dtype=np.float64)


def _top_member_log_e(against: FloatArray, leader: LeaderProcess) -> FloatArray:
    """(S,) log e-values against "X is the top-1 member" (ratings): half the wealth follows the
    leader (no price for the number of systems, but it bets against one opponent per item, chosen on
    noisy running means), half is :func:`member_log_e`, spread evenly over X's pair e-processes (it
    pays ``log(S - 1)`` but keeps the evidence against each opponent, however the lead switches).
    Both halves are supermartingales on one filtration under the null, so their average is too
    (measured on SummEval relevance: 0.64 -> 0.57 of the ratings, 10 seeds)."""
    return np.asarray(np.logaddexp(leader.log_e, member_log_e(against, 1)) - np.log(2.0), dtype=np.float64)


@dataclass(frozen=True)
class LeaderProcess:
    """Top-1 member e-processes of a ratings study: per system X, the bets on X losing to the
    leader (each increment is that of the pair (leader, X), with its pair's rule of when a bet is
    allowed). ``log_e`` (S,) current log wealth; ``z`` and ``observed`` (S, T) the scaled increments."""

    log_e: FloatArray
    z: FloatArray
    observed: BoolArray


def leader_log_e(state: ProtocolState, nulls: tuple[Hypothesis, Hypothesis]) -> LeaderProcess:
    """The leader-switching e-process of every system (module docstring, top-k with k = 1)."""
    from prefeval_core.protocol.steps import item_order

    table = state.table
    grid = table.grid
    assert grid is not None
    S, items = grid.scores.shape
    width = nulls[0].z.shape[1]  # the pairs' processes cover the positions up to the last revealed
    order = item_order(state)[:width]
    revealed = (state.reveals.round.reshape(S, items) > 0)[:, order]
    values = np.where(revealed, state.reveals.value.reshape(S, items)[:, order], 0.0)
    count: npt.NDArray[np.int64] = np.cumsum(revealed, axis=1) - revealed
    running = np.where(count > 0, (np.cumsum(values, axis=1) - values) / np.maximum(count, 1), -np.inf)
    eligible = np.where(revealed, running, -np.inf)  # only systems rated on the item can lead on it
    ranked = np.argsort(-eligible, axis=0, kind="stable")
    first, second = ranked[0], ranked[1] if S > 1 else ranked[0]
    pair_index = np.full((S, S), -1, dtype=np.int64)
    a, b = table.pair_systems[:, 0], table.pair_systems[:, 1]
    pair_index[a, b] = np.arange(table.n_pairs)
    pair_index[b, a] = np.arange(table.n_pairs)
    a_better, b_better = nulls
    z = np.zeros((S, width))
    observed = np.zeros((S, width), dtype=bool)
    allowed = np.zeros((S, width), dtype=bool)
    refuted = np.zeros((S, width), dtype=bool)
    columns = np.arange(width)
    for x in range(S):
        leader = np.where(first == x, second, first)
        has_leader = (leader != x) & np.isfinite(eligible[leader, columns]) & revealed[x]
        p = pair_index[x, leader]
        valid = has_leader & (p >= 0)
        p = np.where(valid, p, 0)
        leader_is_a = a[p] == leader
        z_x = np.where(leader_is_a, a_better.z[p, columns], b_better.z[p, columns])
        seen = valid & a_better.observed[p, columns]
        z[x] = np.where(seen, z_x, 0.0)
        observed[x] = seen
        allowed[x] = seen & np.where(leader_is_a, a_better.allowed[p, columns], b_better.allowed[p, columns])
        if a_better.refuted is not None and b_better.refuted is not None:
            refuted[x] = seen & np.where(leader_is_a, a_better.refuted[p, columns], b_better.refuted[p, columns])
    horizon = None if a_better.horizon is None else np.full(S, float(a_better.horizon.max(initial=1.0)))
    wealth = a_better.path(z, observed, allowed, refuted, horizon)
    return LeaderProcess(log_e=wealth[:, -1] if width else np.zeros(S), z=z, observed=observed)


def _predictive(z: FloatArray, observed: BoolArray, log_now: FloatArray, left: npt.NDArray[np.int64], target: FloatArray) -> FloatArray:
    """(N,) predictive probability that a betting process with scaled increments ``z`` reaches
    ``target`` log wealth within ``left`` more items: ``P(log_now + left μ² / 2v >= target)``
    with ``μ ~ N(mean z, v / n)`` and ``v`` the increments' variance."""
    n = observed.sum(axis=1)
    mean = np.where(n > 0, z.sum(axis=1) / np.maximum(n, 1), 0.0)
    square = np.where(n > 0, (z * z).sum(axis=1) / np.maximum(n, 1), 0.0)
    variance = np.maximum(square - mean * mean, 1e-4)
    gap = np.maximum(target - log_now, 0.0)
    needed = np.sqrt(2.0 * variance * gap / np.maximum(left, 1))
    p = 1.0 - ndtr((needed - mean) / np.sqrt(variance / np.maximum(n, 1)))
    p = np.where(left > 0, p, 0.0)
    p = np.where(gap <= 0, 1.0, p)
    return np.asarray(np.where(n >= 2, p, 1.0), dtype=np.float64)


def _futile(
    state: ProtocolState,
    found: PairEvidence,
    leader: LeaderProcess | None,
    decisions: npt.NDArray[np.int8],
    equivalent: BoolArray,
    members: BoolArray,
    asked: BoolArray,
) -> BoolArray:
    """(P,) pairs that stop costing judgments (:func:`pair_futility`); for top-k, every pair at
    once when the predictive probability of any further exclusion is below β."""
    settings = state.settings
    if not settings.question.entry.tier:
        # the direction's threshold: Holm's after r decisions; with a margin, the partition's 2P / γ
        m = 2 * int(asked.sum())
        r = int((decisions[asked] != TIE).sum()) if settings.delta is None else 0
        open_pair = asked & (decisions == TIE) & ~equivalent
        return pair_futility(state, found, open_pair, found.direction, float(np.log(max(m - r, 1) / settings.gamma)), asked)
    futile = state.status.futile | (state.rows_left() == 0)
    if settings.futility is None or found.sequences is None:
        return futile
    left = found.sequences.pool - found.sequences.n
    return futile | (_answer_settled(state, leader, members, left, settings.futility) & asked)


def pair_futility(
    state: ProtocolState, found: PairEvidence, open_pair: BoolArray, log_now: FloatArray, target: float, asked: BoolArray
) -> BoolArray:
    """(P,) pairs that stop costing judgments: no items left, or (with β and the mean statistic)
    among ``open_pair``, a predictive probability below β that the pair is still decided before its
    pool runs out: that either direction e-process, now at ``log_now`` (P, 2), reaches the log
    e-value ``target``, or, with a margin, that both equivalence e-processes reach ``P / γ`` (the
    smaller of their chances; P the ``asked`` pairs: the partition's threshold, and the first of
    Holm's over the equivalence nulls)."""
    futile = state.status.futile | (state.rows_left() == 0)
    beta = state.settings.futility
    if beta is None or found.sequences is None or found.evidence is None:
        return futile
    left = found.sequences.pool - found.sequences.n
    goal = np.full(len(left), target)
    chances = [_predictive(null.z, null.observed, log_now[:, column], left, goal) for column, null in enumerate(found.evidence.nulls)]
    chance = np.maximum(*chances)
    margins = found.evidence.margins
    if margins is not None:
        shown = np.nan_to_num(found.equivalence, nan=0.0)
        equivalence_goal = np.full(len(left), np.log(max(int(asked.sum()), 1) / state.settings.gamma))
        equivalence = [_predictive(null.z, null.observed, shown[:, column], left, equivalence_goal) for column, null in enumerate(margins)]
        chance = np.maximum(chance, np.minimum(*equivalence))
    return futile | (open_pair & (chance < beta))


def _answer_settled(
    state: ProtocolState, process: LeaderProcess | None, members: BoolArray, left: npt.NDArray[np.int64], beta: float
) -> bool:
    """Whether a top-k answer can no longer change with predictive probability >= β: summed over
    the members, the chance that one more is excluded before the pool runs out."""
    table = state.table
    if members.sum() <= state.settings.question.k:
        return True
    if process is None:
        return False
    system_left = np.full(len(table.systems), int(left.max(initial=0)))
    a, b = table.pair_systems[:, 0], table.pair_systems[:, 1]
    np.minimum.at(system_left, a, left)
    np.minimum.at(system_left, b, left)
    alive = np.flatnonzero(members)
    log_e = process.log_e.copy()
    log_e[~members] = 700.0  # excluded systems are out of every set that still matters
    target = np.array([np.log(_smallest_mean(log_e, int(x))[1] / state.settings.gamma) for x in alive])
    chance = _predictive(process.z[alive], process.observed[alive], process.log_e[alive], system_left[alive], target)
    return bool(chance.sum() < beta)


def _theta(sequences: PairSequences | None, state: ProtocolState, rows: npt.NDArray[np.int64]) -> FloatArray:
    """θ shown for the pairs (not used to decide): with a score statistic the normal approximation
    ``Φ(mean / s.e.)`` of P(Δ > 0) (for the pool statistics, of the pool's Δ: the s.e. with the
    finite-population correction, 0 once the pool is revealed); with ``sign`` the exact human-only
    posterior."""
    if sequences is None:
        from prefeval_core.decision import human_only_theta

        return np.asarray(human_only_theta(state.human_outcome_counts()[rows]), dtype=np.float64)
    pool = sequences.pool if state.settings.statistic in POOL_STATISTICS else None
    blocks = [rows[start : start + PAIRS_PER_BLOCK] for start in range(0, max(len(rows), 1), PAIRS_PER_BLOCK)]
    return np.concatenate([normal_theta(sequences.d[block], None if pool is None else pool[block]) for block in blocks])


def normal_theta(d: FloatArray, pool: npt.NDArray[np.int64] | None = None) -> FloatArray:
    """(rows,) ``Φ(mean / s.e.)`` of each row's revealed differences ``d`` (NaN: not revealed; NaN
    with none); with ``pool`` (rows,) the pool sizes, the s.e. of the pool's mean: times
    ``sqrt(1 - n / pool)``."""
    n = (~np.isnan(d)).sum(axis=1)
    mean = np.where(n > 0, np.nansum(d, axis=1) / np.maximum(n, 1), 0.0)
    spread = np.sqrt(np.where(n > 1, np.nansum((d - mean[:, None]) ** 2, axis=1) / np.maximum(n - 1, 1), 1.0))
    left = 1.0 if pool is None else np.sqrt(np.clip(1.0 - n / np.maximum(pool, 1), 0.0, 1.0))
    se = np.maximum(spread * left, 1e-9) / np.sqrt(np.maximum(n, 1))
    return np.asarray(np.where(n > 0, ndtr(mean / se), np.nan), dtype=np.float64)
