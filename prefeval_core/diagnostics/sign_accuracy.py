"""Sample- and system-level sign accuracy of a metric against a human rater (method.md §7).

von Däniken et al. 2024, Def. 10-11, from the confusion matrices ``K`` (P, 3, 3) (rows =
metric, columns = human):

* **sample level**: ``sum_p trace(K_p) / sum_p sum(K_p)``, the fraction of jointly rated
  items on which metric and human give the same outcome (ties must match ties), pooled
  over pairs;
* **system level**: the fraction of pairs where ``sign(M> - M<) == sign(H> - H<)``, with
  ``M = K.sum(1)`` and ``H = K.sum(0)`` the outcome counts on the same items (a zero margin
  has sign 0 and only matches a zero margin). Pairs without jointly rated items are left out.

Both are NaN when there is nothing to count.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt


def margins(K: npt.ArrayLike) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Outcome margins ``(M> - M<, H> - H<)`` of each pair on its jointly rated items; (P,) each."""
    K = np.asarray(K, dtype=np.int64)
    metric = K.sum(axis=-1)
    human = K.sum(axis=-2)
    return metric[..., 0] - metric[..., 2], human[..., 0] - human[..., 2]


def pair_sign_agreement(K: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """Whether the metric's and the human's margins have the same sign, per pair; (P,)."""
    metric_margin, human_margin = margins(K)
    return np.asarray(np.sign(metric_margin) == np.sign(human_margin))


@dataclass(frozen=True)
class SignAccuracy:
    """Sign accuracies of one metric.

    Attributes:
        sample: fraction of jointly rated items with the same outcome, in [0, 1] (NaN if none).
        system: fraction of pairs whose margins have the same sign, in [0, 1] (NaN if none).
        items: jointly rated items counted at sample level.
        pairs: pairs counted at system level.
    """

    sample: float
    system: float
    items: int
    pairs: int


def sign_accuracy(K: npt.ArrayLike) -> SignAccuracy:
    """Sample- and system-level sign accuracy from the confusion matrices ``K`` (P, 3, 3)."""
    K = np.asarray(K, dtype=np.int64).reshape(-1, 3, 3)
    totals = K.sum(axis=(1, 2))
    items = int(totals.sum())
    counted = totals > 0
    agree = pair_sign_agreement(K[counted])
    return SignAccuracy(
        sample=float(np.trace(K, axis1=1, axis2=2).sum() / items) if items else float("nan"),
        system=float(agree.mean()) if agree.size else float("nan"),
        items=items,
        pairs=int(counted.sum()),
    )
