"""Posterior densities of a pair's win rates ``p = (p>, p=, p<)`` for plotting (method.md §4).

Two sources, so that figures work with any sampler:

* **exact Dirichlet**: ``p ~ Dirichlet(alpha)`` (human only: ``alpha = n + 1``). Each
  marginal ``p_k`` is ``Beta(alpha_k, sum(alpha) - alpha_k)``, whose density is evaluated
  exactly; ``p> - p<`` has no simple density, so it is histogrammed from seeded draws;
  ``theta = P(p> > p<) = I_{1/2}(alpha<, alpha>)`` exactly (since ``p> / (p> + p<)`` is
  ``Beta(alpha>, alpha<)``).
* **posterior samples** (S, 3), e.g. from the decision engine: every density is a
  normalised histogram; ``theta`` is the fraction of draws with ``p> > p<``.

A ``theta`` computed elsewhere (the decision engine's) may be passed to override.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from prefeval_core.diagnostics.comparison import human_only_theta
from prefeval_core.errors import settings_error

Source = Literal["dirichlet", "samples"]


@dataclass(frozen=True)
class WinRateDensities:
    """Densities of one pair's win rates.

    Attributes:
        rate_grid: (G,) points in (0, 1) where ``rate_density`` is given (bin centres).
        rate_density: (3, G) density of ``p>``, ``p=``, ``p<`` (per unit of probability).
        difference_grid: (D,) points in (-1, 1), bin centres for ``p> - p<``.
        difference_density: (D,) density of ``p> - p<`` (per unit of difference).
        mean: (3,) posterior mean of ``p``.
        theta: ``P(p> > p<)``.
        source: ``"dirichlet"`` (exact marginals) or ``"samples"`` (histograms).
    """

    rate_grid: npt.NDArray[np.float64]
    rate_density: npt.NDArray[np.float64]
    difference_grid: npt.NDArray[np.float64]
    difference_density: npt.NDArray[np.float64]
    mean: npt.NDArray[np.float64]
    theta: float
    source: Source


def _centres(edges: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    return (edges[:-1] + edges[1:]) / 2


def win_rate_densities(
    *,
    alpha: npt.ArrayLike | None = None,
    samples: npt.ArrayLike | None = None,
    theta: float | None = None,
    seed: int = 0,
    draws: int = 20_000,
    bins: int = 100,
) -> WinRateDensities:
    """Densities of ``p>``, ``p=``, ``p<`` and ``p> - p<`` from exactly one of ``alpha`` or ``samples``.

    Args:
        alpha: (3,) Dirichlet parameters, all > 0 (human only: counts ``n + 1``).
        samples: (S, 3) posterior draws of ``p`` (rows sum to 1).
        theta: ``P(p> > p<)`` from elsewhere; default: computed from the source.
        seed: seed of the draws used for ``p> - p<`` under ``alpha``.
        draws: number of those draws.
        bins: histogram bins on [0, 1] (and on [-1, 1] for the difference).
    """
    if (alpha is None) == (samples is None):
        raise settings_error("give exactly one of alpha (Dirichlet parameters) or samples (S, 3)")
    rate_edges = np.linspace(0.0, 1.0, bins + 1)
    difference_edges = np.linspace(-1.0, 1.0, bins + 1)
    rate_grid = _centres(rate_edges)
    if alpha is not None:
        a = np.asarray(alpha, dtype=np.float64).reshape(3)
        if np.any(a <= 0):
            raise settings_error(f"Dirichlet parameters must be > 0, got {a.tolist()}")
        from scipy.stats import beta as beta_distribution  # SciPy's stats take a second to import

        density = np.stack([beta_distribution.pdf(rate_grid, a[k], a.sum() - a[k]) for k in range(3)])
        draws_p = np.random.default_rng(seed).dirichlet(a, size=draws)
        mean = a / a.sum()
        exact_theta = float(human_only_theta(a - 1))
        source: Source = "dirichlet"
    else:
        draws_p = np.asarray(samples, dtype=np.float64)
        if draws_p.ndim != 2 or draws_p.shape[1] != 3 or draws_p.shape[0] == 0:
            raise settings_error(f"samples must have shape (S, 3) with S > 0, got {draws_p.shape}")
        density = np.stack([np.histogram(draws_p[:, k], bins=rate_edges, density=True)[0] for k in range(3)])
        mean = draws_p.mean(axis=0)
        exact_theta = float(np.mean(draws_p[:, 0] > draws_p[:, 2]))
        source = "samples"
    difference, _ = np.histogram(draws_p[:, 0] - draws_p[:, 2], bins=difference_edges, density=True)
    return WinRateDensities(
        rate_grid=rate_grid,
        rate_density=np.asarray(density, dtype=np.float64),
        difference_grid=_centres(difference_edges),
        difference_density=difference.astype(np.float64),
        mean=np.asarray(mean, dtype=np.float64),
        theta=exact_theta if theta is None else float(theta),
        source=source,
    )
