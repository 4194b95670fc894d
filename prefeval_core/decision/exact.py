"""Exact (sampler-free) posteriors of the decision model (method.md §4).

Two routes, both exact up to floating point:

* **Closed form** when there is no metric-only item (``m = 0``) or for the human-only model:
  ``p | data ~ Dirichlet(n + 1)``, so ``p> / (p> + p<) ~ Beta(n> + 1, n< + 1)`` and
  ``theta = P(p> > p<) = I_{1/2}(n< + 1, n> + 1)`` (regularised incomplete beta).
* **Enumeration** of the latent true outcomes of the metric-only items. With ``L[c, h]`` the
  number of metric-only items where the metric said ``c`` and the truth is ``h`` (rows of L
  sum to ``m``), integrating ``p`` and ``mu`` out of the joint gives

  ``P(L | data) ∝ prod_{c,h} Γ(K[c,h] + 1 + L[c,h]) / L[c,h]!
  × B(n + 1 + S) / prod_h Γ(sum_c K[c,h] + 3 + S[h])``  (full model),

  ``P(L | data) ∝ prod_{c,h} mu[c,h]^L[c,h] / L[c,h]! × B(n + 1 + S)``  (known ``mu``),

  with ``S = L.sum(0)`` the true outcomes of the metric-only items and ``B`` the multivariate
  beta function. Given ``L``, ``p ~ Dirichlet(n + 1 + S)`` exactly, so ``theta`` and
  ``E[p]`` are sums over ``S`` of closed forms. The sum over tables ``L`` with row sums ``m``
  and column sums ``S`` factorises by rows: it is the 2-D convolution (over ``S>, S=``) of one
  table per metric outcome ``c``, computed directly (never by FFT, which would lose the small
  terms). Cost grows like ``sum(m)^4``; the engine uses it for small ``sum(m)``.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.special import betainc, gammaln, xlogy

from prefeval_core.errors import settings_error
from prefeval_core.vocabulary.outcomes import BETTER, TIE, WORSE

FloatArray = npt.NDArray[np.float64]


def human_only_theta(n: npt.ArrayLike) -> FloatArray:
    """``theta = P(p> > p< | n) = I_{1/2}(n< + 1, n> + 1)`` for ``p ~ Dirichlet(n + 1)``.

    Args:
        n: human outcome counts, shape (..., 3), order ``>, =, <``.

    Returns:
        ``theta`` with the leading shape of ``n``, float64. ``n=`` does not matter.
    """
    n = np.asarray(n, dtype=np.float64)
    return np.asarray(betainc(n[..., WORSE] + 1.0, n[..., BETTER] + 1.0, 0.5), dtype=np.float64)


def dirichlet_mean(n: npt.ArrayLike) -> FloatArray:
    """Posterior mean of ``p ~ Dirichlet(n + 1)``: ``(n + 1) / (sum(n) + 3)``, shape of ``n``."""
    alpha = np.asarray(n, dtype=np.float64) + 1.0
    return alpha / alpha.sum(axis=-1, keepdims=True)


def decision_from_theta(theta: npt.ArrayLike, gamma: float) -> npt.NDArray[np.int8]:
    """The decision function (method.md §4) at significance level ``gamma``.

    Returns outcome codes (int8): ``0`` (``>``, A better) where ``theta > 1 - gamma/2``,
    ``2`` (``<``, B better) where ``theta < gamma/2``, else ``1`` (undecided, shown ``=``).
    Both inequalities are strict: ``theta`` exactly at a threshold stays undecided.
    """
    if not 0.0 < gamma < 1.0:
        raise settings_error(f"gamma must be in (0, 1), got {gamma}", field="gamma")
    theta = np.asarray(theta, dtype=np.float64)
    codes = np.full(theta.shape, TIE, dtype=np.int8)
    codes[theta > 1.0 - gamma / 2.0] = BETTER
    codes[theta < gamma / 2.0] = WORSE
    return codes


@dataclass(frozen=True)
class ExactPosterior:
    """Exact posterior summaries of one pair: ``theta`` and ``p_mean`` (3,)."""

    theta: float
    p_mean: FloatArray


def enumerate_posterior(n: npt.ArrayLike, K: npt.ArrayLike, m: npt.ArrayLike, mu: npt.ArrayLike | None = None) -> ExactPosterior:
    """``theta`` and ``E[p]`` of one pair by enumerating the latent true outcomes (module docstring).

    Args:
        n: (3,) human outcome counts; K: (3, 3) confusion counts (rows = metric, columns =
            human); m: (3,) metric-only outcome counts; mu: (3, 3) known mixture matrix
            (columns sum to 1) or ``None`` for the full model.

    Raises:
        SettingsError: with a known ``mu`` under which the observed ``m`` is impossible (a row
            of zeros where ``m[c] > 0``).
    """
    mixture = latent_mixture(n, K, m, mu)
    alpha, weight = mixture.alpha, mixture.weight
    theta = float(weight @ betainc(alpha[:, WORSE], alpha[:, BETTER], 0.5))
    p_mean = weight @ (alpha / alpha.sum(axis=-1, keepdims=True))
    return ExactPosterior(theta=min(max(theta, 0.0), 1.0), p_mean=p_mean)


@dataclass(frozen=True)
class DirichletMixture:
    """One pair's exact posterior of ``p`` as a finite mixture of Dirichlets (module docstring).

    Attributes:
        alpha: (J, 3) ``n + 1 + S`` for each possible vector ``S`` of true outcomes of the
            metric-only items (order ``>, =, <``).
        weight: (J,) ``P(S | data)``, summing to 1.
    """

    alpha: FloatArray
    weight: FloatArray


def latent_mixture(n: npt.ArrayLike, K: npt.ArrayLike, m: npt.ArrayLike, mu: npt.ArrayLike | None = None) -> DirichletMixture:
    """The exact posterior of ``p`` of one pair: ``sum_S P(S | data) Dirichlet(n + 1 + S)``.

    Same arguments and errors as :func:`enumerate_posterior`, which summarises it.
    """
    n = np.asarray(n, dtype=np.float64)
    K = np.asarray(K, dtype=np.float64)
    m_int = np.asarray(m, dtype=np.int64)
    total = int(m_int.sum())
    if mu is None:
        log_cell = _full_cell_terms(K, m_int)
    else:
        mu = np.asarray(mu, dtype=np.float64)
        if np.any((mu.sum(axis=1) <= 0.0) & (m_int > 0)):
            raise settings_error("the known mixture matrix gives probability 0 to an observed metric outcome", field="mu")
        log_cell = _known_cell_terms(mu, m_int)
    rows = sorted((_row_table(log_cell[c], int(m_int[c])) for c in range(3)), key=len, reverse=True)
    tables = _convolve(_convolve(rows[0], rows[1]), rows[2])  # smallest table last: cheapest order
    # tables[a, b]: sum over L with column sums S = (a, b, total - a - b), up to a constant
    s_better, s_tie = np.meshgrid(np.arange(total + 1), np.arange(total + 1), indexing="ij")
    s_worse = total - s_better - s_tie
    valid = (s_worse >= 0) & (tables > 0.0)
    S = np.stack([s_better[valid], s_tie[valid], s_worse[valid]], axis=-1).astype(np.float64)
    alpha = n + 1.0 + S
    log_weight = np.log(tables[valid]) + gammaln(alpha).sum(axis=-1)  # B(n+1+S) up to Γ(const)
    if mu is None:
        log_weight -= gammaln(K.sum(axis=0) + 3.0 + S).sum(axis=-1)
    weight = np.exp(log_weight - log_weight.max())
    return DirichletMixture(alpha=alpha, weight=weight / weight.sum())


def single_threaded_blas() -> AbstractContextManager[object]:
    """Limit BLAS to one thread around a batch of enumerations (entering the limit costs about
    2 ms: once per batch, not per pair): their small products ran 10x slower multi-threaded on a
    busy 2-core machine (threads spin while other processes hold the cores)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # optional: only speed depends on it
        return nullcontext()
    return threadpool_limits(1, user_api="blas")


def _convolve(image: FloatArray, kernel: FloatArray) -> FloatArray:
    """Full 2-D convolution of non-negative arrays, computed directly (every term kept, no FFT).

    One Toeplitz matrix product per kernel row (BLAS), about 8x faster than
    ``scipy.signal.convolve2d`` for these sizes; same numbers up to rounding.
    """
    X, Y = image.shape
    k, width = kernel.shape
    toeplitz = np.zeros((k, Y, Y + width - 1))
    y = np.arange(Y)[:, None]
    toeplitz[:, y, y + np.arange(width)[None, :]] = kernel[:, None, :]  # toeplitz[u, y, y + v] = kernel[u, v]
    shifted = np.matmul(image[None], toeplitz)  # (k, X, Y + width - 1): image convolved with kernel row u
    out = np.zeros((X + k - 1, Y + width - 1))
    for u in range(k):
        out[u : u + X] += shifted[u]
    return out


def _full_cell_terms(K: FloatArray, m: npt.NDArray[np.int64]) -> list[FloatArray]:
    """``log Γ(K[c,h] + 1 + l) - log l!`` for ``l = 0..m[c]``: per row c, shape (3, m[c] + 1)."""
    rows = []
    for c in range(3):
        counts = np.arange(m[c] + 1, dtype=np.float64)
        rows.append(gammaln(K[c][:, None] + 1.0 + counts[None, :]) - gammaln(counts + 1.0)[None, :])
    return rows


def _known_cell_terms(mu: FloatArray, m: npt.NDArray[np.int64]) -> list[FloatArray]:
    """``l log mu[c,h] - log l!`` for ``l = 0..m[c]`` (``0 log 0 = 0``): per row c, shape (3, m[c] + 1)."""
    rows = []
    for c in range(3):
        counts = np.arange(m[c] + 1, dtype=np.float64)
        with np.errstate(divide="ignore"):  # mu = 0 with l > 0 is log 0 = -inf: that table is impossible
            rows.append(xlogy(counts[None, :], mu[c][:, None]) - gammaln(counts + 1.0)[None, :])
    return rows


def _row_table(log_cell: FloatArray, m_c: int) -> FloatArray:
    """Table over ``(L[c,>], L[c,=])`` of ``prod_h exp(log_cell[h, L[c,h]])``, ``L[c,<] = m_c - L[c,>] - L[c,=]``.

    Scaled so that its largest entry is 1 (a constant factor per pair does not matter).
    """
    a, b = np.meshgrid(np.arange(m_c + 1), np.arange(m_c + 1), indexing="ij")
    rest = m_c - a - b
    log_table = np.where(rest >= 0, log_cell[BETTER][a] + log_cell[TIE][b] + log_cell[WORSE][np.clip(rest, 0, None)], -np.inf)
    return np.exp(log_table - log_table.max())
