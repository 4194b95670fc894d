"""The metrics computed from texts, by name (method.md §11), and how long the learned one trains by
default: what the commands and the Data page list, declared apart from the scorers so that
listing them loads none."""

from __future__ import annotations

from typing import Final, Literal

MetricName = Literal["bleu", "chrf", "ter", "embed", "sescore2"]
METRICS: tuple[MetricName, ...] = ("bleu", "chrf", "ter", "embed", "sescore2")
LEARNED_METRICS: frozenset[str] = frozenset({"embed", "sescore2"})
"""Metrics that need the encoder (optional extra ``requirements-learned.txt``)."""
SESCORE2_EPOCHS: Final = 40
"""Training epochs of an SEScore2-style metric by default."""
