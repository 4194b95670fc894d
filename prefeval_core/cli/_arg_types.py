"""argparse types for options shared by commands: a bad value is a usage error (exit 2) naming the option.

``seed_arg`` (an integer in ``[0, 2**63)``, what NumPy and JAX take), ``gamma_arg`` (a level in
(0, 1)) and ``eps_arg`` (a finite tie threshold >= 0). Use as ``type=seed_arg`` in ``add_argument``.
"""

from __future__ import annotations

import argparse
import math

from prefeval_core.decision.options import MAX_SEED


def seed_arg(text: str) -> int:
    """A seed: an integer in ``[0, 2**63)``."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer seed, got {text!r}") from None
    if not 0 <= value < MAX_SEED:
        raise argparse.ArgumentTypeError(f"a seed must be in [0, 2**63), got {text}")
    return value


def gamma_arg(text: str) -> float:
    """A significance level: a number strictly between 0 and 1."""
    value = _number(text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"gamma must be in (0, 1), got {text}")
    return value


def eps_arg(text: str) -> float:
    """A tie threshold: a finite number >= 0."""
    value = _number(text)
    if not (math.isfinite(value) and value >= 0.0):
        raise argparse.ArgumentTypeError(f"a tie threshold must be a finite number >= 0, got {text}")
    return value


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
