"""Shared helpers of the decision-engine tests: the golden reference file and test-sized settings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from prefeval_core.decision import SamplerSettings

GOLDEN = Path(__file__).resolve().parent / "golden" / "decision_reference.json"

# importance sampling aimed at a small standard error (no early stop on certain decisions),
# a small NUTS fallback: what the agreement test needs, in seconds per pair
PRECISE = SamplerSettings().with_(
    is_max_rounds=16,
    is_target_se=0.003,
    is_decision_z=float("inf"),
    fallback_chains=2,
    fallback_warmup=500,
    fallback_draws=2500,
)


def golden_cases() -> list[dict[str, Any]]:
    return json.loads(GOLDEN.read_text())["cases"]


def stacked(cases: list[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``n`` (P, 3), ``K`` (P, 3, 3), ``m`` (P, 3) of the cases."""
    return (
        np.array([c["n"] for c in cases], dtype=float),
        np.array([c["K"] for c in cases], dtype=float),
        np.array([c["m"] for c in cases], dtype=float),
    )


def flipped(n: np.ndarray, K: np.ndarray, m: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The counts seen from the swapped pair (B, A): outcome order reversed on every axis."""
    return n[..., ::-1], K[..., ::-1, ::-1], m[..., ::-1]
