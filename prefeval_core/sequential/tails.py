"""``log I_{1/2}(p, q)``, the log of the regularised incomplete beta function at 1/2, without underflow.

``I_{1/2}(p, q) = P(T < 1/2)`` for ``T ~ Beta(p, q)``; for integers it is the binomial tail
``P(Bin(p + q - 1, 1/2) >= p)``. SciPy's ``betainc`` underflows to 0 below about ``1e-308``
(``p`` much larger than ``q``, e.g. ``p = 2001, q = 1``); the e-processes multiply it by
``2^(D+1)`` and so need its logarithm exactly there. Where ``betainc`` is below ``1e-250``
the log comes from the hypergeometric series (Abramowitz & Stegun 26.5.4 with 15.1.1)

    I_x(p, q) = x^p (1 - x)^q / (p B(p, q)) * sum_k [(p + q)_k / (p + 1)_k] x^k,

whose term ratio ``x (p + q + k) / (p + 1 + k)`` is at most about 0.6 in that region
(``p`` far above ``q``), so a fixed number of terms reaches double precision for any count
below about 10^5. Every term is positive, so cutting the series off can only make the value
smaller: an e-value built on it errs on the safe side.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy.special import betainc, betaln, logsumexp

FloatArray = npt.NDArray[np.float64]

_SERIES_TERMS = 400
_UNDERFLOW = 1e-250


def log_betainc_half(p: npt.ArrayLike, q: npt.ArrayLike) -> FloatArray:
    """``log I_{1/2}(p, q)`` elementwise (broadcast), for real ``p, q > 0``; never ``-inf``."""
    p_arr, q_arr = np.broadcast_arrays(np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64))
    value = np.asarray(betainc(p_arr, q_arr, 0.5), dtype=np.float64)
    out = np.empty(value.shape, dtype=np.float64)
    direct = value >= _UNDERFLOW
    out[direct] = np.log(value[direct])
    small = ~direct
    if np.any(small):
        out[small] = _log_series(p_arr[small], q_arr[small])
    return out


def _log_series(p: FloatArray, q: FloatArray) -> FloatArray:
    """The series of the module docstring at ``x = 1/2``, in logs; for ``I_{1/2}(p, q)`` tiny."""
    k = np.arange(_SERIES_TERMS, dtype=np.float64)
    log_ratio = np.log((p[:, None] + q[:, None] + k[None, :]) / (p[:, None] + 1.0 + k[None, :])) - np.log(2.0)
    log_terms = np.concatenate([np.zeros((p.size, 1)), np.cumsum(log_ratio[:, :-1], axis=1)], axis=1)
    log_prefactor = -(p + q) * np.log(2.0) - np.log(p) - betaln(p, q)
    return np.asarray(log_prefactor + logsumexp(log_terms, axis=1), dtype=np.float64)
