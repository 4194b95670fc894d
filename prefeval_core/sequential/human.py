"""The human-only e-process: a mixture martingale that is the decision engine's own model.

Only decisive human outcomes (``>`` or ``<``) move it. Whatever ``p=``, at ``p> = p<`` each
decisive outcome is ``>`` with probability exactly 1/2, so with ``a = n>``, ``b = n<``,
``D = a + b`` the likelihood of the decisive outcomes under the null's boundary is ``2^-D``.
The engine's prior ``p ~ Dirichlet(1, 1, 1)`` makes ``t = p> / (p> + p<) ~ Beta(1, 1)``;
restricted to the alternative ``t > 1/2`` (density 2 there) it gives the mixture likelihood
``2 * int_{1/2}^1 t^a (1 - t)^b dt``, so

    E_>  = 2^D * 2 * int_{1/2}^1 t^a (1 - t)^b dt = 2^(D+1) B(a+1, b+1) theta,
    E_<  = 2^(D+1) B(a+1, b+1) (1 - theta),

with ``theta = I_{1/2}(b+1, a+1) = P(p> > p< | n)`` the human-only decision statistic of
method.md §4 (:func:`prefeval_core.decision.human_only_theta`).

**Why it controls errors.** For each fixed ``t > 1/2``, ``(2t)^a (2(1-t))^b`` is a
nonnegative martingale with mean 1 when ``t0 = 1/2`` and a supermartingale when ``t0 < 1/2``
(its factor per decisive outcome has mean ``2(t0 t + (1-t0)(1-t)) <= 1``); a mixture of
them, ``E_>``, is one too, for every ``p=``. Ville's inequality (Ville 1939; Robbins 1970 for
mixtures) gives ``P(sup_t E_> >= 1/a) <= a`` under ``p> <= p<``, over any number of looks, any
batch, any pool and any rule for stopping. Deciding ``>`` when ``E_> >= 2/gamma`` and ``<``
when ``E_< >= 2/gamma`` therefore keeps the probability that a pair with ``p> = p<`` *ever*
gets a decision at most ``gamma`` (``gamma/2`` per direction), and a pair with ``p> < p<``
gets the wrong decision ``>`` with probability at most ``gamma/2`` (Ramdas, Grünwald, Vovk &
Shafer 2023, "Game-theoretic statistics and safe anytime-valid inference", Sec. 2-3; Howard,
Ramdas, McAuliffe & Sekhon 2021 for mixture boundaries). The argument needs the items of a
pair to be revealed in an order that does not depend on their outcomes (the protocol's seeded
order) and treats items as independent draws from the pair's rates (the model of method.md §4).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy.special import betaln

from prefeval_core.outcomes import BETTER, WORSE
from prefeval_core.sequential.tails import log_betainc_half

FloatArray = npt.NDArray[np.float64]

LOG2 = float(np.log(2.0))


def human_log_e(n: npt.ArrayLike) -> FloatArray:
    """``log E_>`` and ``log E_<`` of the human-only e-process (module docstring).

    Args:
        n: human outcome counts, shape (..., 3), order ``>, =, <`` (``=`` is ignored); real
            values are allowed (the futility rule evaluates the boundary between integers).

    Returns:
        shape (..., 2), float64: ``[..., 0] = log E_>`` (evidence against ``p> <= p<``, for
        ``>``), ``[..., 1] = log E_<`` (against ``p> >= p<``, for ``<``). Both are ``0`` with no
        decisive outcome.
    """
    counts = np.asarray(n, dtype=np.float64)
    return decisive_log_e(counts[..., BETTER], counts[..., WORSE])


def decisive_log_e(a: npt.ArrayLike, b: npt.ArrayLike) -> FloatArray:
    """:func:`human_log_e` from the decisive counts ``a = n>`` and ``b = n<`` (broadcast); shape (..., 2)."""
    a_arr, b_arr = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    common = (a_arr + b_arr + 1.0) * LOG2 + betaln(a_arr + 1.0, b_arr + 1.0)
    return np.stack([common + log_betainc_half(b_arr + 1.0, a_arr + 1.0), common + log_betainc_half(a_arr + 1.0, b_arr + 1.0)], axis=-1)
