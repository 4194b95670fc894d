"""The decision step of a round: counts in, ``theta``, decisions, evidence and futility out.

Two rules (method.md §4, §12), chosen by ``settings.error_control``:

* ``none`` (the paper): the decision engine's ``theta = P(p> > p< | data)`` at level γ at every
  look (:func:`prefeval_core.decision.decide_counts`; exact ``I_{1/2}(n< + 1, n> + 1)`` for
  the human-only model).
* ``anytime``: decisions by e-processes that keep the false decisions at true ties below γ
  over the whole run (:mod:`prefeval_core.sequential`); ``theta`` is still reported.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from prefeval_core.decision import SamplerSettings, decide_counts
from prefeval_core.errors import SettingsError
from prefeval_core.protocol.state import ProtocolState


@dataclass(frozen=True)
class RoundDecisions:
    """The values a round records for its D chosen pairs (see :class:`~prefeval_core.protocol.state.RoundRecord`)."""

    theta: npt.NDArray[np.float64]
    decision: npt.NDArray[np.int8]
    p_mean: npt.NDArray[np.float64]
    log_evidence: npt.NDArray[np.float64]
    log_numerator: npt.NDArray[np.float64]
    futile: npt.NDArray[np.bool_]


def round_seed(seed: int, round_number: int) -> int:
    """The sampler seed of a round, derived from the run's seed (independent streams per round)."""
    return int(np.random.SeedSequence([seed, round_number]).generate_state(1)[0])


def decide_pairs_of_round(
    state: ProtocolState, chosen: npt.NDArray[np.int64], number: int, sampler_settings: SamplerSettings | None
) -> RoundDecisions:
    """Decide the pairs ``chosen`` (indices) on the judgments revealed up to round ``number``."""
    settings = state.settings
    D = len(chosen)
    if D == 0:
        return RoundDecisions(
            np.zeros(0), np.zeros(0, dtype=np.int8), np.zeros((0, 3)), np.zeros((0, 2)), np.zeros(0), np.zeros(0, dtype=bool)
        )
    counts = state.revealed_counts().subset(chosen)
    if counts.k > 1 and settings.model != "human_only":
        raise SettingsError.single("bad_setting", "deciding with several metrics at once needs the joint decision engine", column="metrics")
    if settings.error_control != "none":
        raise SettingsError.single("bad_setting", f"error control {settings.error_control!r} is not available", column="error_control")
    result = decide_counts(
        counts.triples(0),
        model=settings.model,
        mu=None if settings.mu is None else np.asarray(settings.mu, dtype=np.float64),
        sampler=settings.sampler,
        gamma=settings.gamma,
        seed=round_seed(settings.seed, number),
        settings=sampler_settings,
    )
    return RoundDecisions(
        theta=result.theta,
        decision=result.decision,
        p_mean=result.p_mean,
        log_evidence=np.full((D, 2), np.nan),
        log_numerator=np.zeros(D),
        futile=np.zeros(D, dtype=bool),
    )
