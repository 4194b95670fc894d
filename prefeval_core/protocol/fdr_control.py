"""False discovery rate of an all-pairs or baseline answer (method.md §13): error control ``fdr``.

**The guarantee.** At the end of a run, E[false directional decisions / max(decisions, 1)] <= γ,
over all looks and all pairs the question involves (the false discovery rate, Benjamini & Hochberg
1995), whatever the dependence between pairs. A *false directional decision* is "A better" where A
is not better than B (at a true tie, either direction is false). It bounds the *share* of wrong
decisions, not the chance of any (``question``'s family-wise bound), so it decides more pairs for
the same γ when many pairs differ. ``question`` stays the default of the all-pairs question because
an answer's reader usually trusts every decision of it, and one wrong pair in an answer of 120 is
what the FWER rules out; ``fdr`` is the choice of a screening study that reports many decisions.
Top-k answers are not a list of discoveries (a false exclusion is the error), so ``fdr`` is
refused there.

**The rule: e-BH on stopped e-processes.** The family is the 2 one-sided nulls "A is not better"
and "B is not better" of each of the ``P`` asked pairs (``m = 2P``), each with the e-process of the
statistic in force (the mean statistic's betting wealth, or the sign statistic's human-only mixture:
:func:`~prefeval_core.protocol.question_control.pair_evidence`). At every look the e-BH procedure
(Wang & Ramdas 2022, *False discovery rate control with e-values*, JRSS-B) rejects the nulls whose
e-values reach ``m / (γ k*)``, with ``k* = max {k : k-th largest e-value >= m / (γ k)}``; it controls
the FDR at ``γ m0 / m <= γ`` for any e-values, under arbitrary dependence (their Theorem 2). Which
e-values:

* an open pair: the *current* values of its e-processes (not their running maxima: the current
  value at a stopping time is an e-value by optional stopping, the running maximum is not), with
  the smaller side set to 0;
* a decided pair: the value of its deciding side *frozen* at the look that decided it, the other
  side 0; an equivalent pair: 0 on both sides.

Setting an e-value to 0 on any rule keeps it an e-value (it only lowers it), and a decided pair's
e-process stopped at its deciding look is an e-value (a stopping time of the run). So the e-values
of the last look are e-values and the last look's e-BH set controls the FDR (the e-BH argument at
a stopping time: Xu, Wang & Ramdas 2021, *A unified framework for bandit multiple testing*,
NeurIPS). **Decisions are kept across looks, and that is covered:** the last look's e-BH set is
exactly the set of pairs ever decided, because a decided pair's frozen e-value is at least
``m / (γ k)`` with ``k`` the size of the set it entered with, which contains only pairs decided by
then, so the current set is never smaller than ``k`` and its threshold never above the frozen value.
(Keeping every pair that was *ever* in an e-BH set of running values, unfrozen, is not covered by
e-BH: the union over looks may exceed γ.)

**Stopping a pair.** A decided or equivalent pair gets no more judgments (its e-values are frozen or
0). A pair stopped as futile keeps its current e-values: in a comparisons study they no longer move;
in a ratings study they still move with ratings bought for other pairs of its systems. It can still
be decided later, when the threshold ``m / (γ k)`` falls as other pairs are decided. Futility (β,
mean statistic): a pair stops when the predictive probability that its e-process reaches the most
favourable threshold left, ``m / (γ (r + 1))`` with ``r`` pairs decided, before its pool runs out is
below β; stopping removes decisions only. Equivalence (margin δ) keeps ``question``'s Holm family:
a false equivalence claim stays below γ (family-wise).

What it assumes is what ``question`` does: each pair's e-process is a supermartingale under its null
given all judgments revealed before (items drawn independently, revealed in the seeded order).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from prefeval_core.protocol.question_control import (
    BoolArray,
    DecidedRound,
    FloatArray,
    decided_round,
    pair_evidence,
    pair_futility,
    question_equivalence,
)
from prefeval_core.protocol.questions import question_pairs
from prefeval_core.protocol.state import ProtocolState
from prefeval_core.vocabulary.outcomes import BETTER, TIE, WORSE


def decide_fdr_round(state: ProtocolState, number: int | None = None, sampler_settings: object = None) -> DecidedRound:
    """Decide the open round of ``state`` under error control ``fdr`` (module docstring; the
    settings refuse it for top-k); ``number`` and ``sampler_settings`` are the rules' common
    arguments, unused here."""
    table, settings = state.table, state.settings
    asked = question_pairs(settings.question, table.systems, table.pair_systems)
    status = state.status
    chosen = np.flatnonzero(asked & (status.decision == TIE) & ~status.equivalent)
    found = pair_evidence(state)
    log_e = stopped_log_e(found.current, status.log_evidence, status.decision, status.equivalent)
    decisions = ebh_directions(log_e, asked, status.decision, settings.gamma)
    equivalent = question_equivalence(state, found, asked)
    m = 2 * int(asked.sum())
    r = int((decisions[asked] != TIE).sum())
    open_pair = asked & (decisions == TIE) & ~equivalent
    futile = pair_futility(state, found, open_pair, found.current, float(np.log(m / (settings.gamma * (r + 1)))), asked)
    return decided_round(state, found, chosen, found.current, decisions, futile, equivalent, state.members)


def stopped_log_e(current: FloatArray, frozen: FloatArray, decisions: npt.NDArray[np.int8], equivalent: BoolArray) -> FloatArray:
    """(P, 2) the log e-values e-BH uses (module docstring; an e-value 0 is ``-inf``).

    Args:
        current: (P, 2) current log e-values against "A is not better" and "B is not better".
        frozen: (P, 2) each pair's log e-values as recorded by the last round that decided on it
            (for a decided pair, the round that decided it).
        decisions: (P,) decisions so far.
        equivalent: (P,) pairs shown equivalent.
    """
    log_e = np.where(current[:, [0]] >= current[:, [1]], [[0.0, -np.inf]], [[-np.inf, 0.0]]) + current
    better, worse = decisions == BETTER, decisions == WORSE
    log_e[better, 0], log_e[better, 1] = frozen[better, 0], -np.inf
    log_e[worse, 0], log_e[worse, 1] = -np.inf, frozen[worse, 1]
    log_e[equivalent] = -np.inf
    return np.asarray(log_e, dtype=np.float64)


def ebh_rejections(log_e: FloatArray, family: BoolArray, gamma: float) -> BoolArray:
    """The e-BH set (Wang & Ramdas 2022): of the ``m`` nulls in ``family`` (any shape, like
    ``log_e``), those whose e-value is at least ``m / (γ k*)``, ``k*`` the largest ``k`` whose
    k-th largest e-value is at least ``m / (γ k)`` (none when no ``k`` qualifies)."""
    m = int(family.sum())
    if m == 0:
        return np.zeros_like(family, dtype=bool)
    ranked = np.sort(log_e[family])[::-1]
    k = np.arange(1, m + 1)
    passing = np.flatnonzero(ranked >= np.log(m / (gamma * k)))
    if passing.size == 0:
        return np.zeros_like(family, dtype=bool)
    k_star = int(passing[-1]) + 1
    return np.asarray(family & (log_e >= np.log(m / (gamma * k_star))), dtype=bool)


def ebh_directions(log_e: FloatArray, asked: BoolArray, decisions: npt.NDArray[np.int8], gamma: float) -> npt.NDArray[np.int8]:
    """Decisions after e-BH over the one-sided nulls of the asked pairs.

    Args:
        log_e: (P, 2) log e-values for ``>`` and ``<`` (:func:`stopped_log_e`: at most one side
            of a pair finite, a decided pair's frozen).
        asked: (P,) the family's pairs (fixed by the question).
        decisions: (P,) decisions so far (kept; they are in the e-BH set again, module docstring).
    """
    rejected = ebh_rejections(log_e, np.repeat(asked[:, None], 2, axis=1), gamma)
    out = decisions.copy()
    out[rejected[:, 0] & ~rejected[:, 1] & (decisions == TIE)] = BETTER
    out[rejected[:, 1] & ~rejected[:, 0] & (decisions == TIE)] = WORSE
    return out
