"""The decision engine's options: one definition of each, reused by the protocol, the CLI and the UI.

* :data:`Model`: which posterior (method.md §4): ``"human_only"`` (``p ~ Dirichlet(n + 1)``,
  the metric ignored), ``"known_mu"`` (the metric's mixture matrix fixed), ``"full"`` (``mu``
  uncertain; with several metrics, one ``mu_j`` per metric, Dawid–Skene, ``docs/model.md``).
* :data:`Sampler`: ``"fast"`` (each pair by the cheapest exact or exactly corrected route) or
  ``"nuts"`` (the NumPyro NUTS reference, paper settings).
* :data:`Route`: how a pair was (or will be) decided; see :mod:`prefeval_core.decision.routes`.
* :class:`DecisionSettings`: everything a decision was made with, as a frozen record.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, Literal, get_args

from prefeval_core.decision.settings import SamplerSettings
from prefeval_core.errors import settings_error

Model = Literal["human_only", "known_mu", "full"]
Sampler = Literal["fast", "nuts"]
MODELS: tuple[Model, ...] = get_args(Model)
SAMPLERS: tuple[Sampler, ...] = get_args(Sampler)
Route = Literal["closed_form", "enumeration", "importance", "joint_importance", "joint_gibbs", "nuts_fallback", "nuts"]
"""``closed_form`` and ``enumeration`` are exact; ``importance`` (one metric) and ``joint_importance``
(several metrics) are importance sampling with exact weights; ``joint_gibbs`` (several metrics, when
the importance weights stayed too uneven) is data augmentation (Gibbs) with Rao-Blackwellised
estimates; ``nuts_fallback`` is NUTS for pairs whose importance weights stayed too uneven (one
metric) or whose chains failed their diagnostics; ``nuts`` the reference."""
EXACT_ROUTES: frozenset[Route] = frozenset({"closed_form", "enumeration"})
"""Routes whose ``theta`` has no Monte-Carlo error."""
MAX_SEED = 2**63
"""Seeds are integers in ``[0, MAX_SEED)`` (NumPy and JAX both take them)."""


@dataclass(frozen=True)
class DecisionSettings:
    """What a decision was made with.

    Attributes:
        model: the posterior (:data:`Model`).
        sampler: ``"fast"`` or ``"nuts"``.
        gamma: significance level of the decision, in (0, 1).
        seed: the seed of every random step, in ``[0, 2**63)``.
        sampler_settings: sampler sizes and thresholds.
        metrics: the metric names of a several-metric decision (:func:`decide_joint`), in
            pattern order; ``None`` for a count-triple decision (:func:`decide_pairs`).
    """

    model: Model
    sampler: Sampler
    gamma: float
    seed: int
    sampler_settings: SamplerSettings
    metrics: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        check_options(self.model, self.sampler, self.gamma, self.seed)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready, flat: ``model``, ``sampler``, ``gamma``, ``seed``, every sampler setting
        by its name, and ``metrics`` (a list, or ``None``)."""
        return {
            "model": self.model,
            "sampler": self.sampler,
            "gamma": self.gamma,
            "seed": self.seed,
            **self.sampler_settings.as_dict(),
            "metrics": None if self.metrics is None else list(self.metrics),
        }


def check_options(model: str, sampler: str, gamma: float, seed: int) -> None:
    """:class:`~prefeval_core.errors.SettingsError` naming the option if ``model`` or ``sampler``
    is unknown, ``gamma`` is not in (0, 1) or ``seed`` is not an integer in ``[0, 2**63)``."""
    if model not in MODELS:
        raise settings_error(f"unknown model {model!r}; expected one of {', '.join(MODELS)}", field="model")
    if sampler not in SAMPLERS:
        raise settings_error(f"unknown sampler {sampler!r}; expected one of {', '.join(SAMPLERS)}", field="sampler")
    check_gamma(gamma)
    check_seed(seed)


def check_gamma(gamma: float) -> None:
    """SettingsError unless ``0 < gamma < 1``."""
    if isinstance(gamma, bool) or not isinstance(gamma, numbers.Real) or not 0.0 < float(gamma) < 1.0:
        raise settings_error(f"gamma must be in (0, 1), got {gamma}", field="gamma")


def check_seed(seed: int) -> None:
    """SettingsError unless ``seed`` is an integer in ``[0, 2**63)``."""
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= int(seed) < MAX_SEED:
        raise settings_error(f"seed must be an integer in [0, 2**63), got {seed!r}", field="seed")
