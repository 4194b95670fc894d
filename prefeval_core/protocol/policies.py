"""Allocation policies of a comparisons study: how many comparisons each pair gets in a round.

A policy is a pure function ``policy(state, matter) -> wanted``: ``matter`` (P,) says which
pairs can still change the answer (:func:`prefeval_core.protocol.steps.pairs_that_matter`);
``wanted`` (P,) int64 is how many further comparisons the policy would like per pair this
round. :func:`prefeval_core.protocol.steps.next_request` then caps it by each pair's items
left and by the budget. Pairs that do not matter should get 0. A ratings study always asks
for the next N items of every system that matters (method.md §12): one rating serves every
pair, so there is nothing to allocate per pair.

Policies are looked up by the name stored in the settings (:data:`POLICIES`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from prefeval_core.protocol.state import ProtocolState

Allocation = Callable[["ProtocolState", npt.NDArray[np.bool_]], npt.NDArray[np.int64]]


def paper_allocation(state: ProtocolState, matter: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
    """Deriu et al. Alg. 2: ``N`` (the batch size) to every pair that matters, 0 to the others."""
    return np.where(matter, state.settings.batch, 0).astype(np.int64)


def closest_first(state: ProtocolState, matter: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
    """A first batch of ``N`` to each pair never decided on; then ``2N`` to the half of the
    pairs that matter whose latest ``theta`` is farthest from 1/2 (closest to a decision) and
    nothing to the other half: about the paper's ``N`` per pair and round, spent on the pairs
    most likely to be settled soon. An option measured against the paper's policy (docs/results.md:
    no gain), not the default."""
    batch = state.settings.batch
    theta = state.status.theta
    wanted = np.zeros(len(matter), dtype=np.int64)
    fresh = matter & np.isnan(theta)
    waiting = np.flatnonzero(matter & ~np.isnan(theta))
    wanted[fresh] = batch
    distance = np.abs(theta[waiting] - 0.5)
    closest = waiting[np.argsort(-distance, kind="stable")[: (len(waiting) + 1) // 2]]
    wanted[closest] = 2 * batch
    return wanted


POLICIES: Final[Mapping[str, Allocation]] = MappingProxyType({"paper": paper_allocation, "closest_first": closest_first})
"""Policies by the name stored in :class:`~prefeval_core.protocol.settings.ProtocolSettings.policy`."""
