"""What each rater of the data is (the Data page's table): its role and direction, as detected
from its name and scores or as the user set them; which raters may serve as metrics; the raters
a study opens with; a higher-is-better copy of lower-is-better raters. Detection rules:
:mod:`prefeval_core.data.rater_roles`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from prefeval_core.data.dataset import Dataset
from prefeval_core.data.rater_roles import (
    NEGATED_PREFIX,
    ROLE_WORDS,
    Direction,
    RaterProfile,
    RaterRole,
    default_raters,
    direction_of,
    negated_raters_file,
    profile_raters,
    rater_role,
)

__all__ = [
    "NEGATED_PREFIX",
    "ROLE_WORDS",
    "Direction",
    "RaterProfile",
    "RaterRole",
    "metric_candidates",
    "negated_copy",
    "rater_directions",
    "rater_profiles",
    "rater_roles",
    "starting_raters",
]


def rater_profiles(dataset: Dataset) -> tuple[RaterProfile, ...]:
    """Each rater's detected role, direction, criterion, scale, paired human rater and what looks wrong."""
    return profile_raters(dataset)


def rater_roles(dataset: Dataset, edits: Mapping[str, RaterRole]) -> dict[str, RaterRole]:
    """Each rater's role: as ``edits`` set it, else as detected from its name."""
    return {r: edits.get(r, rater_role(r)) for r in dataset.raters}


def rater_directions(dataset: Dataset, edits: Mapping[str, Direction]) -> dict[str, Direction]:
    """Each rater's direction: as ``edits`` set it, else as detected from its name and scores
    (``higher`` for a rater without scores)."""
    scores = dataset.ratings.groupby("rater")["score"]
    detected = {str(r): direction_of(str(r), values.to_numpy(dtype=float)) for r, values in scores}
    return {r: edits.get(r, detected.get(r, "higher")) for r in dataset.raters}


def metric_candidates(dataset: Dataset, human: str, roles: Mapping[str, RaterRole], directions: Mapping[str, Direction]) -> list[str]:
    """Raters that can serve as metrics for ``human``: the metrics and LLM judges that are higher
    is better (never a human rater, one annotator, or a lower-is-better rater as it stands)."""
    return [r for r in dataset.raters if r != human and roles[r] in ("metric", "judge") and directions[r] == "higher"]


def starting_raters(
    dataset: Dataset,
    roles: Mapping[str, RaterRole],
    directions: Mapping[str, Direction],
    preset: tuple[str, tuple[str, ...]] | None = None,
) -> tuple[str, tuple[str, ...]]:
    """The human rater and metrics to open ``dataset`` with: ``preset`` where the data hold its
    raters (its metrics only if all are candidates), else the detected human rater (the first
    rater without one) with its paired metrics, or the first candidate metric."""
    detected, paired = default_raters(profile_raters(dataset), dataset.ratings)
    human = preset[0] if preset and preset[0] in dataset.raters else detected or dataset.raters[0]
    candidates = metric_candidates(dataset, human, roles, directions)
    if preset and all(m in candidates for m in preset[1]):
        return human, preset[1]
    return human, tuple(m for m in paired if m in candidates) if detected == human else tuple(candidates[:1])


def negated_copy(dataset: Dataset, raters: Sequence[str]) -> tuple[str, bytes]:
    """A computed ratings file (name, CSV bytes) holding, for each of ``raters`` (lower is better),
    ``neg_<name>`` with every score negated: to load along with the data."""
    return negated_raters_file(dataset, raters)
