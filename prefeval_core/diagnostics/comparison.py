"""Comparing an evaluation's pair outcomes with the full human evaluation (method.md §6).

* Human reference outcome of a pair **(choice)**: the decision function on *all* human
  outcomes, human only: ``theta = P(p> > p<)`` under ``Dirichlet(n + 1)``, which has the
  closed form ``I_{1/2}(n< + 1, n> + 1)``; ``>`` if ``theta > 1 - gamma/2``, ``<`` if
  ``theta < gamma/2``, else undecided (code 1).
* Naive metric outcome **(choice)**: two-sided exact sign test on ``(m>, m<)`` over all
  metric items of the pair, ties discarded (Coakley & Heise 1996), significant at ``gamma``;
  the direction is that of the larger count.
* Error types of an outcome X against the reference H (Deriu et al. Sec. 6): correct
  (both significant, same direction; green), correct (both undecided; olive), inversion
  (both significant, opposite; red), omission (H significant, X not; blue), insertion
  (H not, X significant; yellow).
* KLD of a pair: ``KL(p_X || p_hum) = sum_k p_X[k] log(p_X[k] / p_hum[k])`` with ``p_hum`` the
  posterior mean of ``Dirichlet(n + 1)`` on all human outcomes.

Outcome codes: 0 ``>`` (A better), 1 undecided / no significant difference, 2 ``<``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

import numpy as np
import numpy.typing as npt

from prefeval_core.decision.exact import decision_from_theta, dirichlet_mean, human_only_theta
from prefeval_core.errors import settings_error
from prefeval_core.vocabulary.levels import DEFAULT_GAMMA
from prefeval_core.vocabulary.outcomes import BETTER, TIE, WORSE

ErrorType = Literal["correct_significant", "correct_undecided", "inversion", "omission", "insertion"]
ERROR_TYPES: Final[tuple[ErrorType, ...]] = ("correct_significant", "correct_undecided", "inversion", "omission", "insertion")
ERROR_LABELS: Final[dict[ErrorType, str]] = {
    "correct_significant": "Correct (significant)",
    "correct_undecided": "Correct (not significant)",
    "inversion": "Inversion",
    "omission": "Omission",
    "insertion": "Insertion",
}
OPEN: Final = "open"
"""The verdict of a pair that an evaluation still going on has not decided (neither a direction nor an
equivalence): no error yet — it can still be decided — so it is counted apart from the error types
and never drawn as a decision (:attr:`~prefeval_core.protocol.result.ProtocolResult.verdicts`)."""
OPEN_LABEL: Final = "Open (not decided yet)"
"""How every view names :data:`OPEN` pairs."""
ERROR_COLOURS: Final[dict[ErrorType, str]] = {
    # The paper's green / olive / red / blue / yellow, in shades that stay distinct for
    # colour-blind readers (Okabe-Ito vermillion, blue, yellow, bluish green; Tol olive).
    "correct_significant": "#009E73",
    "correct_undecided": "#999933",
    "inversion": "#D55E00",
    "omission": "#0072B2",
    "insertion": "#F0E442",
}


def human_reference_outcomes(n_all: npt.ArrayLike, gamma: float = DEFAULT_GAMMA) -> npt.NDArray[np.int8]:
    """Reference outcome per pair from all its human outcome counts ``n_all`` (P, 3)."""
    return decision_from_theta(human_only_theta(n_all), gamma)


def paired_t_outcomes(differences: npt.ArrayLike, gamma: float = DEFAULT_GAMMA) -> npt.NDArray[np.int8]:
    """Reference outcome per pair of the mean statistic (method.md §13): the two-sided paired
    t-test at ``gamma`` of the differences (P, T) (NaN: no difference on that item), direction of
    the mean; undecided with fewer than 2 differences or none that vary."""
    d = np.asarray(differences, dtype=np.float64)
    n, mean = _counts_and_means(d)
    spread = np.sqrt(np.nansum((d - mean[:, None]) ** 2, axis=1) / np.maximum(n - 1, 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / (spread / np.sqrt(np.maximum(n, 1)))
    from scipy.stats import t as student_t  # SciPy's stats take a second to import: only when asked

    p = np.where((n >= 2) & (spread > 0), 2.0 * student_t.sf(np.abs(t), np.maximum(n - 1, 1)), 1.0)
    codes = np.full(len(d), TIE, dtype=np.int8)
    codes[(p < gamma) & (mean > 0)] = BETTER
    codes[(p < gamma) & (mean < 0)] = WORSE
    return codes


def _counts_and_means(d: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """Per pair (row of ``d``, NaN: no difference on that item) the differences and their mean (0 with none)."""
    n = (~np.isnan(d)).sum(axis=1)
    return n, np.where(n > 0, np.nansum(d, axis=1) / np.maximum(n, 1), 0.0)


def mean_differences(differences: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """(P,) the mean difference per pair over all its items (P, T) (NaN: no difference on that item;
    0 with none): what an equivalence within δ is checked against on the full evaluation."""
    return _counts_and_means(np.asarray(differences, dtype=np.float64))[1]


def pool_mean_outcomes(differences: npt.ArrayLike) -> npt.NDArray[np.int8]:
    """Reference outcome per pair of the pool-mean statistic (method.md §13): the direction of the
    mean difference over the pool (P, T) itself (NaN: no difference on that item) — with every item
    of a finite pool known there is nothing left to test; an exactly zero mean (or none) is a tie."""
    d = np.asarray(differences, dtype=np.float64)
    _, mean = _counts_and_means(d)
    tolerance = 1e-9 * np.maximum(np.nanmax(np.abs(d), axis=1, initial=0.0), 1.0)
    codes = np.full(len(d), TIE, dtype=np.int8)
    codes[mean > tolerance] = BETTER
    codes[mean < -tolerance] = WORSE
    return codes


def sign_test_p_values(m_all: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Two-sided exact sign-test p-values of ``m>`` vs ``m<`` per pair (ties dropped); 1 where
    the metric has no non-tie outcome."""
    from scipy.stats import binomtest  # on use, like the t-test's

    m_all = np.asarray(m_all, dtype=np.int64)
    p_values = np.ones(m_all.shape[0], dtype=np.float64)
    for index, (better, _, worse) in enumerate(m_all):
        if better + worse > 0:
            p_values[index] = binomtest(int(better), int(better + worse), 0.5, alternative="two-sided").pvalue
    return p_values


def naive_metric_outcomes(m_all: npt.ArrayLike, gamma: float = DEFAULT_GAMMA) -> npt.NDArray[np.int8]:
    """Naive metric outcome per pair: significant sign test at ``gamma``, direction of the
    larger of ``m>`` and ``m<``; ``m_all`` is (P, 3) metric outcome counts over all its items."""
    m_all = np.asarray(m_all, dtype=np.int64)
    significant = sign_test_p_values(m_all) < gamma
    codes = np.full(m_all.shape[0], TIE, dtype=np.int8)
    codes[significant & (m_all[:, 0] > m_all[:, 2])] = BETTER
    codes[significant & (m_all[:, 2] > m_all[:, 0])] = WORSE
    return codes


def error_types(outcomes: npt.ArrayLike, reference: npt.ArrayLike) -> npt.NDArray[np.str_]:
    """Error type of each pair's outcome against the human reference (both as codes)."""
    x = np.asarray(outcomes)
    h = np.asarray(reference)
    x_sig, h_sig = x != TIE, h != TIE
    types = np.full(x.shape, "insertion", dtype="<U19")
    types[x_sig & h_sig & (x == h)] = "correct_significant"
    types[~x_sig & ~h_sig] = "correct_undecided"
    types[x_sig & h_sig & (x != h)] = "inversion"
    types[h_sig & ~x_sig] = "omission"
    return types


@dataclass(frozen=True)
class ErrorFrequencies:
    """Fractions of pairs of each error type, in [0, 1]; ``correct`` counts both correct kinds."""

    correct: float
    correct_significant: float
    correct_undecided: float
    inversion: float
    omission: float
    insertion: float
    pairs: int


def error_frequencies(types: npt.ArrayLike) -> ErrorFrequencies:
    """Frequencies of the error types over pairs."""
    types = np.asarray(types)
    total = max(len(types), 1)
    share = {t: float(np.sum(types == t)) / total for t in ERROR_TYPES}
    return ErrorFrequencies(
        correct=share["correct_significant"] + share["correct_undecided"],
        pairs=len(types),
        **share,
    )


def kl_divergence(p: npt.ArrayLike, q: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """``KL(p || q)`` along the last axis (nats); ``0 log 0 = 0``."""
    p = np.asarray(p, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    terms = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0) / q), 0.0)
    return np.asarray(terms.sum(axis=-1), dtype=np.float64)


def annotation_fraction(human_used: int, human_available: int) -> float:
    """ "Ann." (Deriu et al. Table 3): human outcomes used over all pairs divided by all human
    outcomes available over all pairs, in [0, 1]; 0 when nothing is available."""
    if human_used < 0 or human_available < 0:
        raise settings_error("annotation counts must be >= 0")
    if human_used > human_available:
        raise settings_error(f"{human_used} human outcomes used but only {human_available} available")
    return human_used / human_available if human_available else 0.0


@dataclass(frozen=True)
class Comparison:
    """An evaluation's pair outcomes compared with the full human evaluation (method.md §6).

    Attributes:
        outcomes: (P,) int8 codes of the evaluation (1 = undecided / not significant).
        reference: (P,) int8 human reference codes (exact human-only decision on all outcomes).
        error_types: (P,) error type names (``ERROR_TYPES``).
        kld: (P,) ``KL(p_X || p_hum)`` in nats, ``p_hum`` the mean of ``Dirichlet(n_all + 1)``.
        frequencies: error-type frequencies over the pairs.
        mean_kld: mean of ``kld`` over pairs.
    """

    outcomes: npt.NDArray[np.int8]
    reference: npt.NDArray[np.int8]
    error_types: npt.NDArray[np.str_]
    kld: npt.NDArray[np.float64]
    frequencies: ErrorFrequencies
    mean_kld: float


def compare_with_reference(
    outcomes: npt.ArrayLike,
    p_estimate: npt.ArrayLike,
    n_all: npt.ArrayLike,
    gamma: float = DEFAULT_GAMMA,
    *,
    reference: npt.NDArray[np.int8] | None = None,
) -> Comparison:
    """Compare outcomes (P,) and estimated rates ``p_estimate`` (P, 3) with the human reference
    computed from all human outcome counts ``n_all`` (P, 3), or with ``reference`` (P,) codes
    where the statistic is another (the mean statistic's paired t-test, method.md §13)."""
    outcomes = np.asarray(outcomes, dtype=np.int8)
    reference = human_reference_outcomes(n_all, gamma) if reference is None else reference
    types = error_types(outcomes, reference)
    kld = kl_divergence(p_estimate, dirichlet_mean(n_all))
    return Comparison(outcomes, reference, types, kld, error_frequencies(types), float(kld.mean()) if len(kld) else 0.0)


def naive_metric_comparison(m_all: npt.ArrayLike, n_all: npt.ArrayLike, gamma: float = DEFAULT_GAMMA) -> Comparison:
    """The naive metric (Deriu et al. Table 2): sign-test outcomes of ``m_all`` (P, 3), rates
    ``(m + 1) / (sum + 3)``, against the human reference from ``n_all`` (P, 3)."""
    return compare_with_reference(naive_metric_outcomes(m_all, gamma), dirichlet_mean(m_all), n_all, gamma)
