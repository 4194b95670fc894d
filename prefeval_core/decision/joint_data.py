"""The several-metric model's data (docs/model.md): :class:`JointInputs` from :class:`~prefeval_core.pairs.counts.JointCounts`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from prefeval_core.pairs.counts import JointCounts, pattern_codes

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class JointInputs:
    """The several-metric model's data for P pairs.

    Attributes:
        n: (P, 3) revealed human outcomes.
        K: (P, k, 3, 3) metric j's confusion counts on the revealed items (rows = metric,
            columns = human).
        patterns: (J, k) metric codes (0, 1, 2; 3 = no outcome) of the patterns in ``u``: every
            pattern with at least one metric outcome that some pair has an unrevealed item of.
        u: (P, J) unrevealed items per pattern.
    """

    n: FloatArray
    K: FloatArray
    patterns: npt.NDArray[np.int64]
    u: FloatArray


def joint_inputs(counts: JointCounts) -> JointInputs:
    """:class:`JointInputs` of ``counts`` (patterns no pair has an unrevealed item of are dropped)."""
    k = counts.k
    K = np.stack([counts.triples(j).K for j in range(k)], axis=1).astype(np.float64)
    unrevealed = counts.unrevealed[:, :-1]  # the last pattern: no metric outcome, no information
    used = np.flatnonzero(unrevealed.sum(axis=0) > 0)
    return JointInputs(counts.n.astype(np.float64), K, pattern_codes(k)[used], unrevealed[:, used].astype(np.float64))
