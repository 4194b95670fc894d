"""The outcome vocabulary shared by every module (method.md §1).

An outcome of an ordered system pair ``(A, B)`` on one item is one of ``>`` (A better),
``=`` (no preference) or ``<`` (B better), encoded as the integers 0, 1, 2 in that order
everywhere in code, arrays and plots. Its value is ``v(>) = +1, v(=) = 0, v(<) = -1``.
Pairs are ordered canonically (A before B in sorted order); flipping a pair maps
``>`` <-> ``<`` and leaves ``=`` alone.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

BETTER: Final = 0
"""Code of ``>``: system A is better."""
TIE: Final = 1
"""Code of ``=``: no preference."""
WORSE: Final = 2
"""Code of ``<``: system B is better."""
UNDECIDED: Final = TIE
"""Decision code of a pair not (yet) significantly decided: the code of ``=``, so that an
undecided pair reads as "no preference" wherever decisions and outcomes share an array."""
MISSING: Final = -1
"""Code used in outcome arrays where a rater gave no outcome."""

SYMBOLS: Final = (">", "=", "<")
"""Outcome symbols indexed by code."""
WORDS: Final = ("A better", "no preference", "B better")
"""Plain-language outcome names indexed by code, for figures and reports."""
VALUES: Final = np.array([1, 0, -1], dtype=np.int8)
"""``v(outcome)`` indexed by code."""


def flip_codes(codes: npt.NDArray[np.int8]) -> npt.NDArray[np.int8]:
    """Outcome codes seen from the swapped pair ``(B, A)``; ``MISSING`` stays missing."""
    flipped = np.where(codes >= 0, 2 - codes, codes)
    return flipped.astype(np.int8)


def flip_code(code: int) -> int:
    """One outcome code seen from the swapped pair ``(B, A)``: ``>`` <-> ``<``, ``=`` stays."""
    return 2 - code


def oriented_code(code: int, flipped: bool) -> int:
    """``code`` given for a pair in the order shown, in canonical order (:func:`canonical_pair`'s ``flipped``)."""
    return flip_code(code) if flipped else code


def codes_from_differences(diff: npt.NDArray[np.float64], eps: float) -> npt.NDArray[np.int8]:
    """Outcome codes from score differences ``score(A) - score(B)`` (method.md §2).

    ``>`` where ``diff > eps``, ``<`` where ``diff < -eps``, else ``=``. Differences that
    exceed ``eps`` by at most ``1e-9`` (absolute, in score units) count as ties, so that
    rounding in averaged scores (``(4+5+5)/3`` vs ``(5+5+4)/3``) never creates a preference
    **(choice)**. NaN differences give ``MISSING``.
    """
    tolerance = eps + 1e-9
    codes = np.full(diff.shape, TIE, dtype=np.int8)
    codes[diff > tolerance] = BETTER
    codes[diff < -tolerance] = WORSE
    codes[np.isnan(diff)] = MISSING
    return codes


def canonical_pair(system_a: str, system_b: str) -> tuple[str, str, bool]:
    """The pair in canonical order and whether it was flipped to get there."""
    if system_a <= system_b:
        return system_a, system_b, False
    return system_b, system_a, True
