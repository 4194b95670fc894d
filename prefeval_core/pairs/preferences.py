"""From ratings to per-pair preference outcomes (method.md §2).

A scalar rater gives ``score(s, i)`` (higher is better). For the canonical pair ``(A, B)``
(A before B in sorted order) on item ``i``, with tie threshold ``eps >= 0``: ``>`` if
``score(A, i) - score(B, i) > eps``, ``<`` if it is ``< -eps``, else ``=``. An item counts
for a pair only where the rater scored both systems. A natively pairwise rater's outcomes
are used as given.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from prefeval_core.data.dataset import Dataset
from prefeval_core.errors import CoverageError, Problem, UnknownNameError, settings_error
from prefeval_core.vocabulary.outcomes import canonical_pair, codes_from_differences, flip_codes


@dataclass(frozen=True)
class PairOutcomes:
    """One rater's outcomes for every pair it covers.

    Attributes:
        rater: the rater's name.
        eps: the tie threshold used (0 for pairwise raters).
        frame: ``system_a, system_b, item_id, outcome`` with ``system_a < system_b`` and
            ``outcome`` an ``int8`` code (0 ``>``, 1 ``=``, 2 ``<``); sorted by pair, item.
    """

    rater: str
    eps: float
    frame: pd.DataFrame

    @property
    def pairs(self) -> tuple[tuple[str, str], ...]:
        unique = self.frame[["system_a", "system_b"]].drop_duplicates()
        return tuple(zip(unique["system_a"], unique["system_b"]))

    def of_pair(self, system_a: str, system_b: str) -> pd.DataFrame:
        """``item_id, outcome`` for the pair, seen from ``(system_a, system_b)`` in the order given."""
        a, b, flipped = canonical_pair(system_a, system_b)
        rows = self.frame[(self.frame["system_a"] == a) & (self.frame["system_b"] == b)]
        if rows.empty:
            raise CoverageError.single(
                "no_common_items", f"rater '{self.rater}' has no item on which it rated both {a} and {b}", column="item_id"
            )
        outcome = rows["outcome"].to_numpy()
        return pd.DataFrame({"item_id": rows["item_id"].to_numpy(), "outcome": flip_codes(outcome) if flipped else outcome})


def require_rater(dataset: Dataset, rater: str) -> None:
    """Raise :class:`UnknownNameError` naming the closest known raters if ``rater`` is absent."""
    if rater in dataset.raters:
        return
    close = difflib.get_close_matches(rater, dataset.raters, n=3)
    hint = f"; did you mean {', '.join(map(repr, close))}?" if close else f"; known raters: {', '.join(dataset.raters)}"
    raise UnknownNameError.single("unknown_name", f"no rater named '{rater}' in the data{hint}", column="rater")


def unknown_system_problems(
    known: Sequence[str], systems: Sequence[str], *, file: str | None = None, column: str | None = None
) -> list[Problem]:
    """An error per entry of ``systems`` (its 1-based position is the row) that is not among
    the ``known`` systems, suggesting the closest known names; for uploads that refer to a
    dataset's systems (``known = dataset.systems``)."""
    known_set = set(known)
    problems: list[Problem] = []
    for row, name in enumerate(systems, start=1):
        if name in known_set:
            continue
        close = difflib.get_close_matches(name, list(known), n=3)
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else f"; known systems: {', '.join(sorted(known_set))}"
        problems.append(Problem("error", "unknown_name", f"unknown system '{name}'{hint}", file, row=row, column=column))
    return problems


def pair_outcomes(dataset: Dataset, rater: str, eps: float = 0.0) -> PairOutcomes:
    """Outcomes of ``rater`` for every pair of systems it rated on common items.

    Raises:
        UnknownNameError: no such rater.
        CoverageError: the rater gives no pair at all (it rated only one system).
    """
    if eps < 0:
        raise settings_error(f"the tie threshold eps must be >= 0, got {eps}")
    require_rater(dataset, rater)
    if dataset.rater_kind(rater) == "pairwise":
        rows = dataset.preferences[dataset.preferences["rater"] == rater]
        frame = rows[["system_a", "system_b", "item_id", "outcome"]]
    else:
        frame = _scalar_outcomes(dataset.ratings[dataset.ratings["rater"] == rater], eps)
    if frame.empty:
        file = dataset.rater_files.get(rater)
        raise CoverageError.single(
            "single_system",
            f"rater '{rater}' gives no preferences: it rated only one system, or no two systems on a common item",
            file=file,
            column="system",
        )
    frame = frame.sort_values(["system_a", "system_b", "item_id"], kind="stable").reset_index(drop=True)
    return PairOutcomes(rater, eps if dataset.rater_kind(rater) == "scalar" else 0.0, frame)


def _scalar_outcomes(ratings: pd.DataFrame, eps: float) -> pd.DataFrame:
    scores = ratings.pivot(index="item_id", columns="system", values="score")
    systems = [str(s) for s in scores.columns]
    matrix = scores.to_numpy(dtype=np.float64)
    items = scores.index.to_numpy()
    a_idx, b_idx = np.triu_indices(len(systems), k=1)
    diff = matrix[:, a_idx] - matrix[:, b_idx]  # items x pairs
    codes = codes_from_differences(diff, eps)
    pair_pos, item_pos = np.nonzero(codes.T >= 0)  # row-major: by pair, then item
    names = np.asarray(systems, dtype=object)
    return pd.DataFrame(
        {
            "system_a": names[a_idx[pair_pos]],
            "system_b": names[b_idx[pair_pos]],
            "item_id": items[item_pos],
            "outcome": codes[item_pos, pair_pos],
        }
    )
