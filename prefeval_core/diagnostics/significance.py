"""Significance DAGs of the human reference, the naive metric and a protocol (method.md §6, §8).

* **human**: the human reference outcome of each pair (decision function on all its human
  outcomes, exact ``Dirichlet(n + 1)``, level ``gamma``);
* **naive metric**: the two-sided exact sign test on all the metric's outcomes of the pair;
* **protocol** (optional): outcome codes a protocol run produced for the same pairs.

Each is a :class:`~prefeval_core.diagnostics.partial_order.PartialOrder` whose edges carry the error type
against the human reference (the human DAG against itself: every edge is correct).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from prefeval_core.diagnostics.comparison import error_types, human_reference_outcomes, naive_metric_outcomes
from prefeval_core.diagnostics.confusion import PairConfusions
from prefeval_core.diagnostics.partial_order import PartialOrder, partial_order
from prefeval_core.vocabulary.levels import DEFAULT_GAMMA


@dataclass(frozen=True)
class SignificanceDags:
    """The partial orders of one metric's diagnostics.

    Attributes:
        pairs: ``(system_a, system_b)`` per pair, canonical order.
        reference: human reference outcome codes per pair (0 ``>``, 1 undecided, 2 ``<``).
        naive: naive metric outcome codes per pair.
        naive_error_types: error type of each naive outcome against the reference.
        human: partial order of the reference.
        metric: partial order of the naive metric outcomes.
        protocol: partial order of the protocol outcomes, ``None`` if none were given.
        protocol_error_types: error types of the protocol outcomes, ``None`` if none were given.
        gamma: the significance level used.
    """

    pairs: tuple[tuple[str, str], ...]
    reference: npt.NDArray[np.int8]
    naive: npt.NDArray[np.int8]
    naive_error_types: npt.NDArray[np.str_]
    human: PartialOrder
    metric: PartialOrder
    protocol: PartialOrder | None
    protocol_error_types: npt.NDArray[np.str_] | None
    gamma: float


def significance_dags(
    confusions: PairConfusions, *, gamma: float = DEFAULT_GAMMA, protocol_outcomes: npt.ArrayLike | None = None
) -> SignificanceDags:
    """Human, naive-metric and (optionally) protocol partial orders for the pairs of ``confusions``.

    Args:
        confusions: gives the pairs and their all-item human and metric counts.
        gamma: significance level of the decision function and of the sign test.
        protocol_outcomes: outcome code per pair of ``confusions.pairs`` from a protocol run.
    """
    pairs = confusions.pairs
    reference = human_reference_outcomes(confusions.human_all, gamma)
    naive = naive_metric_outcomes(confusions.metric_all, gamma)
    naive_types = error_types(naive, reference)
    protocol = protocol_types = None
    if protocol_outcomes is not None:
        codes = np.asarray(protocol_outcomes, dtype=np.int8).reshape(-1)
        protocol_types = error_types(codes, reference)
        protocol = partial_order(pairs, codes, protocol_types, reference=reference)
    return SignificanceDags(
        pairs=pairs,
        reference=reference,
        naive=naive,
        naive_error_types=naive_types,
        human=partial_order(pairs, reference, error_types(reference, reference)),
        metric=partial_order(pairs, naive, naive_types, reference=reference),
        protocol=protocol,
        protocol_error_types=protocol_types,
        gamma=gamma,
    )
