"""The human-only e-process: a mixture martingale over the rate of ``>`` among decisive outcomes.

Only decisive human outcomes (``>`` or ``<``) move it. Whatever ``p=``, at ``p> = p<`` each
decisive outcome is ``>`` with probability exactly 1/2, so with ``a = n>``, ``b = n<``,
``D = a + b`` the likelihood of the decisive outcomes under the null's boundary is ``2^-D``.
Mixing the likelihood ``t^a (1 - t)^b`` of ``t = p> / (p> + p<)`` over a ``Beta(c, c)`` prior
restricted to the alternative ``t > 1/2`` (density doubled there) gives

    E_>  = 2^D * 2 * int_{1/2}^1 t^a (1 - t)^b Beta(t; c, c) dt
         = 2^(D+1) B(a+c, b+c) / B(c, c) * I_{1/2}(b+c, a+c),
    E_<  = 2^(D+1) B(a+c, b+c) / B(c, c) * I_{1/2}(a+c, b+c).

With ``c = 1`` this is the decision engine's own model: the prior ``p ~ Dirichlet(1, 1, 1)``
makes ``t ~ Beta(1, 1)`` and ``E_> = 2^(D+1) B(a+1, b+1) theta`` with
``theta = P(p> > p< | n)``, the human-only decision statistic of method.md §4
(:func:`prefeval_core.decision.human_only_theta`). The default is ``c = 10``
(``MIXTURE_CONCENTRATION``) **(choice)**: the mixture then expects ``t`` within about
``0.5 ± 0.2`` (prior s.d. 0.11), the imbalances that pairs of evaluated systems show and that
cost judgments, instead of spreading its weight over ``t`` up to 1, which pairs decide within a
few dozen outcomes anyway (as Howard et al. 2021 choose a mixture's scale for the sample sizes
that matter). Measured (``bench/bench_error_control.py``; a valid e-process for any ``c``): at a
difference ``p> - p<`` of 0.1 it decides 0.08-0.10 more of the runs from a pool of 500 and needs
8-17% fewer outcomes from a pool of 2,000 than ``c = 1``, at 0.2 it is 6-14% cheaper, and only very
lopsided pairs (``t = 0.75``) take more outcomes (111 instead of 95).

**Why it controls errors.** For each fixed ``t > 1/2``, ``(2t)^a (2(1-t))^b`` is a
nonnegative martingale with mean 1 when ``t0 = 1/2`` and a supermartingale when ``t0 < 1/2``
(its factor per decisive outcome has mean ``2(t0 t + (1-t0)(1-t)) <= 1``); a mixture of
them, ``E_>``, is one too, for every ``p=``. Ville's inequality (Ville 1939; Robbins 1970 for
mixtures) gives ``P(sup_t E_> >= 1/a) <= a`` under ``p> <= p<``, over any number of looks, any
batch, any pool and any rule for stopping. Deciding ``>`` when ``E_> >= 2/gamma`` and ``<``
when ``E_< >= 2/gamma`` therefore keeps the probability that a pair with ``p> = p<`` *ever*
gets a decision at most ``gamma`` (``gamma/2`` per direction), and a pair with ``p> < p<``
gets the wrong decision ``>`` with probability at most ``gamma/2`` (Ramdas, Grünwald, Vovk &
Shafer 2023, "Game-theoretic statistics and safe anytime-valid inference"; Howard,
Ramdas, McAuliffe & Sekhon 2021 for mixture boundaries). The argument needs the items of a
pair to be revealed in an order that does not depend on their outcomes (the protocol's seeded
order) and treats items as independent draws from the pair's rates (the model of method.md §4).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy.special import betaln

from prefeval_core.sequential.tails import log_betainc_half
from prefeval_core.vocabulary.outcomes import BETTER, WORSE

FloatArray = npt.NDArray[np.float64]

LOG2 = float(np.log(2.0))


MIXTURE_CONCENTRATION = 10.0
"""``c`` of the ``Beta(c, c)`` mixture (module docstring)."""


def human_log_e(n: npt.ArrayLike, concentration: float = MIXTURE_CONCENTRATION) -> FloatArray:
    """``log E_>`` and ``log E_<`` of the human-only e-process (module docstring).

    Args:
        n: human outcome counts, shape (..., 3), order ``>, =, <`` (``=`` is ignored); real
            values are allowed.
        concentration: ``c`` of the mixture; 1 gives the decision engine's own model.

    Returns:
        shape (..., 2), float64: ``[..., 0] = log E_>`` (evidence against ``p> <= p<``, for
        ``>``), ``[..., 1] = log E_<`` (against ``p> >= p<``, for ``<``). Both are ``0`` with no
        decisive outcome.
    """
    counts = np.asarray(n, dtype=np.float64)
    return decisive_log_e(counts[..., BETTER], counts[..., WORSE], concentration)


def decisive_log_e(a: npt.ArrayLike, b: npt.ArrayLike, concentration: float = MIXTURE_CONCENTRATION) -> FloatArray:
    """:func:`human_log_e` from the decisive counts ``a = n>`` and ``b = n<`` (broadcast); shape (..., 2)."""
    c = concentration
    a_arr, b_arr = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    common = (a_arr + b_arr + 1.0) * LOG2 + betaln(a_arr + c, b_arr + c) - betaln(c, c)
    return np.stack([common + log_betainc_half(b_arr + c, a_arr + c), common + log_betainc_half(a_arr + c, b_arr + c)], axis=-1)
