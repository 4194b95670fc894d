"""How a setting is declared once: a dataclass field whose metadata holds a :class:`Setting`.

The field's annotation is its type and its default the default; the :class:`Setting` adds what
every reader of the field needs besides: the words (label, help), the bounds, the choices and
their words, the name of its command-line option, and what ``None`` means. The CLI's options, the
dashboard's form, the saved document's schema and the checks on construction are all read from
it (:mod:`prefeval_core.workflow.setup`), so a field is described in one place.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import MISSING, Field, dataclass, field, fields
from typing import Any, Final

from prefeval_core.errors import settings_error

INT_LIMIT: Final = 2**63
"""Integer settings stay below 2^63 (they become int64 in numpy)."""

Words = Mapping[str, str]
"""A choice's value -> its words, in the order offered."""


@dataclass(frozen=True)
class Bounds:
    """The closed (``ge``, ``le``) and open (``gt``, ``lt``) bounds of a number; ``None``: unbounded."""

    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None

    def holds(self, value: float) -> bool:
        """Whether ``value`` is finite and within the bounds."""
        return (
            math.isfinite(value)
            and (self.ge is None or value >= self.ge)
            and (self.gt is None or value > self.gt)
            and (self.le is None or value <= self.le)
            and (self.lt is None or value < self.lt)
        )

    @property
    def low(self) -> float | None:
        return self.ge if self.ge is not None else self.gt

    @property
    def high(self) -> float | None:
        return self.le if self.le is not None else self.lt

    def words(self) -> str:
        """The bounds in words: ``in (0, 1)``, ``>= 1``, ``from 0 to 100,000``."""
        low, high = self.low, self.high
        if self.ge is not None and self.le is not None:
            return f"from {self.ge:,g} to {self.le:,g}"
        if low is not None and high is not None and self.lt != INT_LIMIT:
            return f"in {'[' if self.ge is not None else '('}{low:g}, {high:g}{']' if self.le is not None else ')'}"
        if low is not None:
            return f"{'>=' if self.ge is not None else '>'} {low:g}"
        return "a finite number" if high is None else f"{'<=' if self.le is not None else '<'} {high:g}"


@dataclass(frozen=True)
class Setting:
    """What is declared of one setting besides its type and default.

    Attributes:
        label: its name in words, as the form shows it ("Significance level γ").
        help: what it means (the CLI's help and the form's tooltip).
        bounds: of a number (``None`` is allowed where the type says so).
        choices: the values allowed and their words, in the order offered, or a function giving
            them from a registry (read each time: a registered entry appears everywhere).
        option: its command-line option without ``--``; ``""``: the field's name with dashes;
            ``None``: not an option of the commands that take a study setup.
        none: what ``None`` means, for a setting that may be unset ("all the data holds").
        shown: the range the form offers, where it is narrower than the bounds (``None``: the bounds).
    """

    label: str
    help: str
    bounds: Bounds = Bounds()
    choices: Words | Callable[[], Words] | None = None
    option: str | None = ""
    none: str = ""
    shown: tuple[float, float] | None = None

    def words(self) -> dict[str, str]:
        """The choices and their words (empty for a setting without choices)."""
        choices = self.choices() if callable(self.choices) else self.choices
        return dict(choices or {})


def setting(default: Any = MISSING, **declared: Any) -> Any:
    """A dataclass field with ``default`` (a list or tuple default is shared: it must be immutable)
    described by ``Setting(**declared)``; without ``default`` the field is required."""
    return field(default=default, metadata={"setting": Setting(**declared)})


def declared(cls: type) -> dict[str, tuple[Field[Any], Setting]]:
    """Every declared field of a dataclass by name, in declaration order."""
    return {f.name: (f, f.metadata["setting"]) for f in fields(cls) if "setting" in f.metadata}


def check_declared(instance: Any) -> None:
    """:class:`~prefeval_core.errors.SettingsError` naming the field for a number outside its bounds
    or a value outside its choices (``None`` is left to the type)."""
    for name, (_, spec) in declared(type(instance)).items():
        value = getattr(instance, name)
        if value is None or isinstance(value, bool):
            continue
        if isinstance(value, int | float) and not spec.bounds.holds(value):
            raise settings_error(f"{name} must be {spec.bounds.words()}, got {value}", field=name)
        choices = spec.words()
        if choices and isinstance(value, str) and value not in choices:
            raise settings_error(f"unknown {name} {value!r}; expected one of {', '.join(choices)}", field=name)
