"""Error control by a spending schedule over the looks the pool allows (group-sequential test).

The protocol looks at a pair after every round in which it got judgments. At a true tie
(``p> = p<``) each decisive human outcome (``>`` or ``<``; ties carry no information about the
direction) is a fair coin, whatever ``p=``. So, *conditional on how many decisive outcomes the
pair had at each look* (``D_1 <= D_2 <= ...``, which does not depend on their directions), the
number ``S_j`` of ``>`` among them is a random walk with Binomial(``D_j - D_{j-1}``, 1/2) steps,
and its exact null distribution is known. At look j the pair is decided when
``|2 S_j - D_j| >= b_j`` (``>`` if ``2 S_j > D_j``), with ``b_j`` the smallest integer such that
the probability of having crossed by look j stays within the **spending function** at the share
of the pool revealed, ``t_j = revealed_j / pool``:

    P_null(cross at some look <= j | D_1..D_j) <= alpha(t_j),   alpha(t) = gamma ln(1 + (e - 1) t)

(Lan & DeMets 1983, Biometrika 70, the spending form of Pocock's 1977 boundaries; computed
exactly for the binomial walk, the recursion of Armitage, McPherson & Rowe 1969). Since
``alpha(t) <= alpha(1) = gamma``, a pair with ``p> = p<`` ends the run significant with
probability at most γ for *any* number of looks, batch and pool size, any ``p=``, and any rule
that stops looking early (by the question, the budget or futility). What it assumes is what the
protocol does: each pair's pool is fixed when the study starts and its items are revealed in a
seeded order that does not depend on their outcomes. (If looks could go on without end, use
the e-processes of :mod:`prefeval_core.sequential.evidence`, valid under any looking at all.)

**Why this spending function** **(choice)**: Pocock's spends γ evenly over the study, so a clear
difference is decided at an early look — a lead pays per judgment, and most pairs of a study
are clear — while the boundary at the end of the pool stays close to the fixed-sample one (the
full evaluation's reference, method.md §6). O'Brien–Fleming's spends almost nothing early and
costs more judgments; the e-process, valid without a plan, is stricter at every look. The
price of each against the uncorrected rule is measured in ``bench/bench_error_control.py``.

**Futility** (:func:`final_success_probability`): the posterior-predictive probability (under
the human model's ``Dirichlet(n + 1)``) that the pair ends significant at the end of its pool
at the fixed-sample level (``|n> - n<| >= z_{gamma/2} sqrt(n> + n<)``): Spiegelhalter, Freedman &
Blackburn's (1986) "predictive power". Stopping a pair below β can only lose decisions, never add
one; exact (a sum over the Dirichlet-multinomial of the remaining items) for up to
:data:`EXACT_REMAINING` remaining items, a normal approximation (law of total variance over the
posterior) beyond. **This is where a metric carries evidence under error control**
(:func:`metric_success_probability`): the metric's outcomes of the items a pair can still get
are known, so the human outcomes still to come are predicted per metric outcome, from the
pair's revealed (metric, human) outcomes. A metric that separates the human outcomes sharpens
the prediction: a pair whose remaining items the metric calls balanced stops sooner, one whose
remaining items lean its way goes on. The decisions stay the human test's, so the guarantee
holds for any metric, however biased (measured in ``bench/bench_error_control.py``).

Computation: the walk's surviving mass after each look (a vector of length ``D_j + 1``) is kept
in a bounded cache keyed by the pair's looks, so a round extends each pair by one look.
"""

from __future__ import annotations

import functools
import math
import os
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt
from scipy import fft as sp_fft
from scipy.special import gammaln, ndtr, ndtri

from prefeval_core.errors import settings_error
from prefeval_core.sequential.evidence import check_gamma
from prefeval_core.vocabulary.outcomes import BETTER, TIE, WORSE

FloatArray = npt.NDArray[np.float64]
Look = tuple[int, int, int]
"""One look at a pair: (decisive outcomes so far, items revealed so far, items in its pool)."""

METRIC_PRIOR_STRENGTH: Final = 3.0
"""Pseudo-outcomes of the pair's human-only predictive behind each metric pattern's rates (the
mass of the uniform Dirichlet(1, 1, 1) prior), fixed a priori."""
EXACT_REMAINING: Final = 120
"""Up to this many remaining items the predictive probability is an exact sum; beyond, normal."""
_CACHE_SIZE: Final = 200_000
_FFT_BATCH_CELLS: Final = 2**18
"""Grid cells (pairs x L x L) transformed at once by the exact metric futility: bounds its memory (~15 MB)."""


def spent(t: float, gamma: float) -> float:
    """``alpha(t) = gamma ln(1 + (e - 1) t)`` for the share ``t`` of the pool revealed (clipped to [0, 1])."""
    return gamma * math.log1p((math.e - 1.0) * min(max(t, 0.0), 1.0))


@dataclass(frozen=True)
class _Walk:
    """The null walk after some looks: ``alive[s]`` = P(S = s, not crossed), the probability
    spent so far, and the last boundary ``b`` (``|2 S - D| >= b`` decides)."""

    alive: FloatArray
    spent: float
    boundary: int


_WALKS: OrderedDict[tuple[float, tuple[Look, ...]], _Walk] = OrderedDict()


def _walk(looks: tuple[Look, ...], gamma: float) -> _Walk:
    """The null walk after ``looks`` (cached; extended look by look from the longest cached prefix)."""
    start = len(looks)
    while start > 0 and (gamma, looks[:start]) not in _WALKS:
        start -= 1
    walk = _WALKS[(gamma, looks[:start])] if start else _Walk(np.ones(1), 0.0, 1)
    for end in range(start + 1, len(looks) + 1):
        walk = _extend(walk, looks[end - 1], gamma)
        _WALKS[(gamma, looks[:end])] = walk
        if len(_WALKS) > _CACHE_SIZE:
            _WALKS.popitem(last=False)
    return walk


@functools.lru_cache(maxsize=4096)
def _fair_coin_steps(new: int) -> FloatArray:
    """Binomial(new, 1/2) probabilities, each correctly rounded (exact integers divided once; cached:
    a look adds one of few step sizes)."""
    steps = np.array([math.comb(new, k) / 2**new for k in range(new + 1)])
    steps.flags.writeable = False  # shared by every caller of the cache
    return steps


def _extend(walk: _Walk, look: Look, gamma: float) -> _Walk:
    decisive, revealed, pool = look
    new = decisive - (len(walk.alive) - 1)
    if new < 0 or revealed > pool or pool < 1:
        raise settings_error(f"looks must have non-decreasing decisive counts and revealed <= pool, got {look}")
    alive = np.convolve(walk.alive, _fair_coin_steps(new)) if new else walk.alive
    distance = np.abs(2 * np.arange(decisive + 1) - decisive)
    allowed = spent(revealed / pool, gamma) - walk.spent
    mass = np.bincount(distance, weights=alive, minlength=decisive + 1)[::-1].cumsum()  # mass at distance >= D - i
    fits = np.flatnonzero(mass <= allowed * (1.0 + 1e-12))
    boundary = decisive + 1 if fits.size == 0 else decisive - int(fits.max())
    crossed = float(mass[decisive - boundary]) if boundary <= decisive else 0.0
    return _Walk(np.where(distance >= boundary, 0.0, alive), walk.spent + crossed, boundary)


@dataclass(frozen=True)
class SpendingResult:
    """Group-sequential decisions of P pairs: ``decision`` (P,) int8 (0 ``>``, 1 undecided, 2 ``<``),
    ``boundary`` (P,) the ``|n> - n<|`` the last look needed (``D + 1``: none reachable), ``spent``
    (P,) the null probability spent so far (at most γ)."""

    decision: npt.NDArray[np.int8]
    boundary: npt.NDArray[np.int64]
    spent: FloatArray


def spending_decisions(looks: Sequence[tuple[Look, ...]], n_better: npt.ArrayLike, gamma: float) -> SpendingResult:
    """Decide P pairs from their looks (module docstring); ``n_better`` (P,) the ``>`` count at the last look."""
    check_gamma(gamma)
    better = np.asarray(n_better, dtype=np.int64)
    if len(looks) != len(better):
        raise settings_error(f"{len(looks)} look histories for {len(better)} pairs")
    decision = np.full(len(better), TIE, dtype=np.int8)
    boundary = np.zeros(len(better), dtype=np.int64)
    total = np.zeros(len(better))
    for index, history in enumerate(looks):
        if not history:
            continue
        walk = _walk(tuple(history), gamma)
        decisive = history[-1][0]
        if not 0 <= better[index] <= decisive:
            raise settings_error(f"n> = {better[index]} is not between 0 and the {decisive} decisive outcomes")
        difference = 2 * int(better[index]) - decisive
        boundary[index], total[index] = walk.boundary, walk.spent
        if abs(difference) >= walk.boundary:
            decision[index] = BETTER if difference > 0 else WORSE
    return SpendingResult(decision, boundary, total)


def spending_futility(
    n: npt.ArrayLike,
    remaining: npt.ArrayLike,
    gamma: float,
    beta: float | None = None,
    *,
    revealed_patterns: npt.ArrayLike | None = None,
    remaining_patterns: npt.ArrayLike | None = None,
) -> npt.NDArray[np.bool_]:
    """(P,) undecided pairs to stop: those that could not end significant at the fixed-sample level
    even if every remaining item went their favoured way (no decision lost), and with ``beta`` those
    whose predictive probability of ending significant is below ``beta``:
    :func:`metric_success_probability` when the metric patterns (``revealed_patterns`` (P, J, 3),
    ``remaining_patterns`` (P, J)) are given, else :func:`final_success_probability`."""
    counts = np.asarray(n, dtype=np.float64).reshape(-1, 3)
    left = np.asarray(remaining, dtype=np.float64)
    better, worse = counts[:, BETTER], counts[:, WORSE]
    reachable = np.abs(better - worse) + left >= ndtri(1.0 - gamma / 2.0) * np.sqrt(better + worse + left)
    stop = ~reachable
    if beta is not None and remaining_patterns is not None and revealed_patterns is not None:
        stop |= metric_success_probability(revealed_patterns, remaining_patterns, gamma) < beta
    elif beta is not None:
        stop |= final_success_probability(counts, left.astype(np.int64), gamma) < beta
    return stop


def final_success_probability(n: npt.ArrayLike, remaining: npt.ArrayLike, gamma: float) -> FloatArray:
    """(P,) predictive probability that each pair ends significant at its pool's end (module docstring).

    Args:
        n: (P, 3) revealed human outcome counts, order ``>, =, <``.
        remaining: (P,) items the pair can still get.
    """
    check_gamma(gamma)
    counts = np.asarray(n, dtype=np.float64).reshape(-1, 3)
    left = np.asarray(remaining, dtype=np.int64)
    z = float(ndtri(1.0 - gamma / 2.0))
    probability = np.zeros(len(left))
    small = np.flatnonzero(left <= EXACT_REMAINING)
    large = np.flatnonzero(left > EXACT_REMAINING)
    for R in np.unique(left[small]):
        group = small[left[small] == R]
        probability[group] = _exact_success(counts[group], int(R), z)
    if large.size:
        probability[large] = _normal_success(counts[large], left[large].astype(np.float64), z)
    return probability


def _exact_success(n: FloatArray, R: int, z: float) -> FloatArray:
    """Sum over the Dirichlet-multinomial of (x ``>``, y ``<``, R - x - y ``=``) future outcomes."""
    return _significant_mass(n, _future_pmf(n + 1.0, R), z)


def _future_pmf(alpha: FloatArray, R: int) -> FloatArray:
    """(P, R + 1, R + 1) Dirichlet-multinomial probabilities of (x ``>``, y ``<``) among R future
    outcomes whose rates have a Dirichlet(``alpha``) (P, 3) posterior (0 where x + y > R)."""
    return _future_pmfs(alpha, np.full(len(alpha), R), R + 1)


def _future_pmfs(alpha: FloatArray, R: npt.NDArray[np.int64], size: int) -> FloatArray:
    """(P, size, size) the pmf of :func:`_future_pmf` of each row, ``R[p]`` future outcomes
    (``size > R.max()``), zero beyond: one grid for rows with different R."""
    a, t, b = alpha[:, BETTER, None], alpha[:, TIE, None], alpha[:, WORSE, None]
    steps = np.arange(size)
    count = R.astype(np.float64)[:, None]
    # log pmf = constant + f_a(x) + f_b(y) + f_t(R - x - y): the log-gamma terms on the values each
    # count takes, then three terms and one exp per cell of the grid
    by_count = gammaln(steps + 1.0)
    constant = gammaln(count + 1.0) + gammaln(a + b + t) - gammaln(a + b + t + count) - gammaln(a) - gammaln(b) - gammaln(t)
    f_a = gammaln(a + steps) - by_count + constant
    f_b = gammaln(b + steps) - by_count
    # f_t as a function of x + y (up to 2 size - 2): -inf where x + y > R, so exp gives 0 there
    rest = R[:, None] - np.arange(2 * size - 1)
    by_sum = np.where(rest >= 0, gammaln(t + np.maximum(rest, 0)) - gammaln(np.maximum(rest, 0) + 1.0), -np.inf)
    log_pmf = f_a[:, :, None] + f_b[:, None, :] + by_sum[:, steps[:, None] + steps[None, :]]
    return np.exp(log_pmf)


def _significant_mass(n: FloatArray, pmf: FloatArray, z: float) -> FloatArray:
    """(P,) the mass of ``pmf`` (P, X, X) over the future (x, y) that end significant at the
    fixed-sample level with the revealed counts ``n`` (P, 3)."""
    x, y = np.meshgrid(np.arange(pmf.shape[1]), np.arange(pmf.shape[2]), indexing="ij")
    difference = (n[:, BETTER, None, None] + x) - (n[:, WORSE, None, None] + y)
    decisive = n[:, BETTER, None, None] + n[:, WORSE, None, None] + x + y
    significant = (decisive > 0) & (np.abs(difference) >= z * np.sqrt(decisive))
    return np.asarray(np.clip(np.where(significant, pmf, 0.0).sum(axis=(1, 2)), 0.0, 1.0), dtype=np.float64)


def _normal_success(n: FloatArray, R: FloatArray, z: float) -> FloatArray:
    """Normal approximation of :func:`_exact_success` (one group of future outcomes)."""
    return _normal_success_groups(n, (n + 1.0)[:, None, :], R[:, None], z)


def _normal_success_groups(n: FloatArray, alpha: FloatArray, R: FloatArray, z: float) -> FloatArray:
    """Normal approximation over groups of future outcomes (P, G): group g has ``R[:, g]`` items
    whose rates have a Dirichlet(``alpha[:, g]``) posterior, independent across groups. The future
    difference of ``>`` and ``<`` has mean ``sum R E[d]`` and variance ``sum R E[s - d^2] + R^2
    Var[d]`` (d = p> - p<, s = p> + p<, Dirichlet moments; the law of total variance); the final
    decisive count is taken at its mean."""
    total = alpha.sum(axis=2)
    mean = alpha / total[..., None]
    better, worse = mean[..., BETTER], mean[..., WORSE]
    var_d = (better * (1 - better) + worse * (1 - worse) + 2 * better * worse) / (total + 1.0)
    e_d, e_s = better - worse, better + worse
    e_d2 = var_d + e_d**2
    location = n[:, BETTER] - n[:, WORSE] + (R * e_d).sum(axis=1)
    scale = np.sqrt(np.maximum((R * (e_s - e_d2) + R**2 * var_d).sum(axis=1), 1e-12))
    bound = z * np.sqrt(n[:, BETTER] + n[:, WORSE] + (R * e_s).sum(axis=1))
    return np.asarray(ndtr((location - bound) / scale) + ndtr((-bound - location) / scale), dtype=np.float64)


def metric_success_probability(revealed: npt.ArrayLike, remaining: npt.ArrayLike, gamma: float) -> FloatArray:
    """(P,) predictive probability that each pair ends significant at its pool's end, given the
    metric outcomes of the items it can still get.

    The human outcome of a remaining item with metric pattern c has rates with posterior
    ``Dirichlet(K_c + s m)``: ``K_c`` the revealed human outcomes of the pair's items with that
    pattern, ``m = (n + 1) / (N + 3)`` the pair's human-only predictive mean and
    ``s =`` :data:`METRIC_PRIOR_STRENGTH` (empirical-Bayes shrinkage: a pattern with few revealed
    items predicts like the human-only rule; a metric that separates the human outcomes makes the
    prediction sharper). Patterns are independent given their rates, so the future counts are a
    convolution over patterns: exact for up to :data:`EXACT_REMAINING` remaining items, normal
    beyond. Used only to stop asking (futility), never to decide: error control is untouched.

    Args:
        revealed: (P, J, 3) revealed human outcomes by metric pattern (``JointCounts.revealed``).
        remaining: (P, J) items each pair can still get, by metric pattern.
    """
    check_gamma(gamma)
    K = np.asarray(revealed, dtype=np.float64)
    left = np.asarray(remaining, dtype=np.int64)
    n = K.sum(axis=1)
    prior = METRIC_PRIOR_STRENGTH * (n + 1.0) / (n.sum(axis=1, keepdims=True) + 3.0)
    alpha = K + prior[:, None, :]
    z = float(ndtri(1.0 - gamma / 2.0))
    totals = left.sum(axis=1)
    probability = _normal_success_groups(n, alpha, left.astype(np.float64), z)
    exact = np.flatnonzero(totals <= EXACT_REMAINING)
    exact = exact[np.argsort(totals[exact], kind="stable")]  # batches of similar totals pad little
    batches, start = [], 0
    while start < exact.size:
        size = int(totals[exact[start]]) + 1  # the batch's smallest total: its largest is close
        batches.append(exact[start : start + max(1, _FFT_BATCH_CELLS // size**2)])
        start += batches[-1].size
    # batches are independent and NumPy's and SciPy's array work releases the GIL: one thread per core
    with ThreadPoolExecutor(max_workers=min(len(batches), os.cpu_count() or 1) or 1) as pool:
        for batch, mass in zip(
            batches, pool.map(lambda rows: _convolved_success(n[rows], alpha[rows], left[rows], z), batches), strict=True
        ):
            probability[batch] = mass
    return probability


def _convolved_success(n: FloatArray, alpha: FloatArray, left: npt.NDArray[np.int64], z: float) -> FloatArray:
    """(B,) the mass of the future (x ``>``, y ``<``) of B pairs that ends significant at the
    fixed-sample level with the revealed counts ``n`` (B, 3).

    The future's pmf is the convolution over metric patterns of each pattern's
    Dirichlet-multinomial (``alpha`` (B, J, 3), ``left`` (B, J) items): one product of 2-D
    spectra. Its mass on the significant region is read in the frequency domain (Parseval:
    ``sum pmf * S = sum PMF conj(S) / L^2``, with S the 0/1 significance grid, one per distinct
    revealed ``(n>, n<)``), so the pmf is never transformed back. ``L >`` the largest total, so
    the circular convolution does not wrap."""
    size = sp_fft.next_fast_len(int(left.sum(axis=1).max(initial=0)) + 1, real=True)
    spectrum: npt.NDArray[np.complex128] | None = None
    padded, written = np.zeros((len(left), size, size)), 0
    for group in np.flatnonzero(left.any(axis=0)):  # a pattern no pair has items of is the identity
        padded[:, :written, :written] = 0.0  # (zero-padding by the transform itself is slower)
        written = int(left[:, group].max()) + 1
        padded[:, :written, :written] = _future_pmfs(alpha[:, group], left[:, group], written)
        transformed = sp_fft.rfft2(padded)
        spectrum = transformed if spectrum is None else np.multiply(spectrum, transformed, out=spectrum)
    if spectrum is None:  # nothing left to come: the revealed counts decide
        return _significant_mass(n, np.ones((len(n), 1, 1)), z)
    keys, which = np.unique(n[:, [BETTER, WORSE]], axis=0, return_inverse=True)
    flat = spectrum.reshape(len(spectrum), -1)
    mass = np.empty(len(spectrum))
    for key, (better, worse) in enumerate(keys):  # one matrix-vector product per distinct revealed (n>, n<)
        rows = np.flatnonzero(which.ravel() == key)
        region = np.conj(_significant_spectrum(float(better), float(worse), size, z).ravel())
        mass[rows] = np.einsum("pm,m->p", flat[rows], region).real  # not BLAS: its threads would fight the batches
    return np.asarray(np.clip(mass / size**2, 0.0, 1.0), dtype=np.float64)


@functools.lru_cache(maxsize=4096)
def _significant_spectrum(better: float, worse: float, size: int, z: float) -> npt.NDArray[np.complex128]:
    """The half spectrum of the (L, L) significance grid after ``better``/``worse`` revealed, its
    columns weighted for the mirrored half they stand for (all but column 0 and, for even L, L/2 twice)."""
    weight = np.full(size // 2 + 1, 2.0)
    weight[0] = 1.0
    if size % 2 == 0:
        weight[-1] = 1.0
    spectrum = sp_fft.rfft2(_significant_grid(better, worse, size, z)) * weight
    spectrum.flags.writeable = False
    return spectrum


def _significant_grid(better: float, worse: float, size: int, z: float) -> FloatArray:
    """(L, L) 1 where the future (x ``>``, y ``<``) ends significant after ``better``/``worse`` revealed."""
    x, y = np.meshgrid(np.arange(size), np.arange(size), indexing="ij")
    decisive = better + worse + x + y
    return ((decisive > 0) & (np.abs(better + x - worse - y) >= z * np.sqrt(decisive))).astype(np.float64)
