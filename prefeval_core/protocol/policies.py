"""Allocation policies: how many human outcomes each pair should get in the next round.

A policy is a pure function ``policy(state) -> wanted`` with ``wanted`` an ``int64`` array of
shape ``(P,)``: the number of further human outcomes it would like per pair this round.
:func:`prefeval_core.protocol.steps.next_request` then caps it by each pair's remaining pool
and by the budget, so a policy never has to care about either. Decided pairs should get 0.

Policies are looked up by name in :data:`POLICIES` (the name is stored in the settings, so a
saved session knows its policy); a new policy is added there, or passed to ``next_request``
directly to try it out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Final

import numpy as np
import numpy.typing as npt

from prefeval_core.protocol.state import ProtocolState

Policy = Callable[[ProtocolState], npt.NDArray[np.int64]]


def paper_allocation(state: ProtocolState) -> npt.NDArray[np.int64]:
    """Deriu et al. Alg. 2: ``N`` (the batch size) to every undecided pair, 0 to decided ones."""
    undecided = np.array([p.undecided for p in state.pairs], dtype=bool)
    return np.where(undecided, state.settings.batch, 0).astype(np.int64)


def closest_first(state: ProtocolState) -> npt.NDArray[np.int64]:
    """A first batch of ``N`` to each pair never decided on; then ``2N`` to the half of the
    undecided pairs with items left whose latest ``theta`` is farthest from 1/2 (closest to a decision) and
    nothing to the other half, which spends about the paper's ``N`` per undecided pair and
    round on the pairs most likely to be settled soon. An option to compare against the
    paper's policy, not the default."""
    batch = state.settings.batch
    wanted = np.zeros(len(state.pairs), dtype=np.int64)
    waiting = [i for i, p in enumerate(state.pairs) if p.undecided and p.theta is not None and p.unrevealed_pool()]
    fresh = [i for i, p in enumerate(state.pairs) if p.undecided and p.theta is None]
    wanted[fresh] = batch
    distance = np.array([abs(state.pairs[i].theta - 0.5) for i in waiting])  # type: ignore[operator]
    closest = [waiting[i] for i in np.argsort(-distance, kind="stable")[: (len(waiting) + 1) // 2]]
    wanted[closest] = 2 * batch
    return wanted


POLICIES: Final[Mapping[str, Policy]] = MappingProxyType({"paper": paper_allocation, "closest_first": closest_first})
"""Policies by the name stored in :class:`ProtocolSettings.policy`."""
