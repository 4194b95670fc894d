"""Asymptotic e-processes: the one-sided normal mixture of a self-normalised sum (method.md §13).

For increments ``y_t`` with conditional mean <= 0 under a null, ``S_t = sum y`` and
``V_t = sum y²`` over the ``t`` items bet on so far, the standardised sum is
``Z_t = S_t / sigma_t`` with ``sigma_t² = V_t / t``. If ``Z`` behaved as a Gaussian random walk in
``t``, ``exp(λ Z_t - λ² t / 2)`` would be a martingale for every ``λ``; mixing ``λ`` over a
half-normal with precision ``1 / ρ²`` gives, in closed form,

    E_t = 2 / sqrt(1 + ρ² t) · exp(ρ² Z_t² / (2 (1 + ρ² t))) · Φ(ρ Z_t / sqrt(1 + ρ² t)).

By the strong invariance principle this holds asymptotically: the time-uniform boundary it
implies is the asymptotic confidence sequence of Waudby-Smith, Arbour, Sinha, Kennedy & Ramdas
(2024, *Time-uniform central limit theory and asymptotic confidence sequences*, Ann. Statist.,
their Theorem 2.2 with the Robbins normal mixture; Robbins 1970). The guarantee is asymptotic —
like PPI++'s and the paired t-test's — and is shown by simulation (docs/results_question_control.md
§7), not by a theorem at finite samples; :mod:`~prefeval_core.sequential.pool_betting` keeps the
exact test. ``V`` is the uncentred sum of squares of the null-centred increments (the self-normalised
form of de la Peña 1999, exact for conditionally symmetric increments), so a run of equal early
differences does not make ``sigma_t`` vanish.

The mixture's width ``ρ`` is fixed in advance from the pool size, never from the scores: it makes
the boundary tightest at ``t* = HORIZON_SHARE · pool`` items for a test at level
:data:`TUNING_LEVEL` (Waudby-Smith et al., eq. 9: ``ρ² = (-2 log a + log(1 - 2 log a)) / t*``).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
from scipy.special import log_ndtr

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

HORIZON_SHARE = 0.5
"""The mixture is tuned for a decision after this share of a pair's pool **(choice: the pool's
middle, where a run that decides anything early or late is least penalised)**."""
TUNING_LEVEL = 0.01
"""The level the mixture's width is tuned for **(choice: a Holm step among a few dozen nulls at
γ = 0.05 asks about this)**; any level keeps the guarantee, it only moves where the boundary is tightest."""
REFUTED_LOG_E = 50.0
"""The log e-value of a null the data have ruled out (its probability is 0): beyond any threshold."""


def mixture_width(horizon: FloatArray) -> FloatArray:
    """(rows,) ``ρ²`` of the mixture tuned for ``horizon`` items (module docstring)."""
    level = -2.0 * math.log(TUNING_LEVEL)
    return np.asarray((level + math.log1p(level)) / np.maximum(horizon, 1.0), dtype=np.float64)


def mixture_log_e(
    y: FloatArray, observed: BoolArray, allowed: BoolArray, horizon: FloatArray, refuted: BoolArray | None = None
) -> FloatArray:
    """(P, T) log ``E_t`` (module docstring) after each position, of increments ``y`` counted where
    ``observed & allowed``; once a position in ``refuted`` is reached, :data:`REFUTED_LOG_E`."""
    use = observed & allowed
    t = np.cumsum(use, axis=1).astype(np.float64)
    total = np.cumsum(np.where(use, y, 0.0), axis=1)
    squares = np.cumsum(np.where(use, y * y, 0.0), axis=1)
    z = np.where(squares > 0, total * np.sqrt(t / np.maximum(squares, 1e-300)), 0.0)
    rho2 = mixture_width(horizon)[:, None]
    spread = 1.0 + rho2 * t
    log_e = rho2 * z * z / (2.0 * spread) - 0.5 * np.log(spread) + math.log(2.0) + log_ndtr(z * np.sqrt(rho2 / spread))
    if refuted is not None:
        log_e = np.where(np.cumsum(refuted & use, axis=1) > 0, REFUTED_LOG_E, log_e)
    return np.asarray(log_e, dtype=np.float64)
