"""JSON documents the user hands back (session files, stored protocol states): read with bounds,
then checked against a pydantic schema before anything is built from them.

:func:`load_json` refuses what would make Python's ``json`` blow up or lie — nesting deeper than
:data:`MAX_DEPTH` (found before parsing, so a deep document costs one scan, not a
``RecursionError``), integers longer than :data:`MAX_INT_DIGITS` (the
4,300-digit ``ValueError``, and any seed or count past 2^63), NaN/Infinity and floats that
overflow to infinity, and a key repeated within one object (which value would count?).
:func:`validated` checks a parsed value against a model with :data:`STRICT` settings (no text
turned into a number, no unknown keys, finite floats) and turns every violation into a
:class:`~prefeval_core.errors.Problem` naming the JSON path of the offending value, e.g.
``protocol.records[3].theta[7]``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any, Final, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from prefeval_core.data.json_rows import line_too_deep
from prefeval_core.errors import PrefevalError, Problem

MAX_DEPTH: Final = 12
"""Nesting depth of a document (a session file needs 6: ``protocol.records[i].p_mean[j][k]``)."""
MAX_INT_DIGITS: Final = 20
"""Digits of an integer literal (2^63 has 19)."""
MAX_NUMBER_CHARS: Final = 100
"""Characters of a float literal (a float64 needs at most 24)."""

STRICT: Final = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False, frozen=True)
"""Schema settings: types as written (``"5"`` is not a number, ``true`` not an integer),
unknown keys refused, NaN/Infinity refused."""

E = TypeVar("E", bound=PrefevalError)
M = TypeVar("M", bound=BaseModel)


class StrictModel(BaseModel):
    """Base of the document schemas (:data:`STRICT`)."""

    model_config = STRICT


class _Refused(Exception):
    """Raised by the parser hooks (not a ValueError: ``json`` must not wrap it)."""

    def __init__(self, message: str, literal: str | None = None):
        super().__init__(message)
        self.literal = literal


def _integer(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _Refused(f"an integer with {len(text.lstrip('-')):,} digits; at most {MAX_INT_DIGITS} are allowed", text)
    return int(text)


def _float(text: str) -> float:
    value = float(text) if len(text) <= MAX_NUMBER_CHARS else math.inf
    if not math.isfinite(value):
        raise _Refused(f"the number {text[:30]}{'...' if len(text) > 30 else ''} is too large or too long", text)
    return value


def _constant(text: str) -> float:
    raise _Refused(f"{text} is not a number JSON allows; write a finite number or null", text)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        repeated = next(k for i, (k, _) in enumerate(pairs) if k in dict(pairs[:i]))
        raise _Refused(f"the key '{repeated}' appears twice in one object; which value is meant?", f'"{repeated}"')
    return value


def _line_of(text: str, needle: str | None) -> int | None:
    position = -1 if needle is None else text.find(needle)
    return None if position < 0 else text.count("\n", 0, position) + 1


def load_json(data: str | bytes, *, file: str, error: type[E], max_bytes: int) -> Any:
    """The parsed document; raises ``error`` naming ``file`` (and the line where known) if it is
    larger than ``max_bytes``, not UTF-8, not JSON, or past one of the module's bounds."""
    size = len(data.encode() if isinstance(data, str) else data)
    if size > max_bytes:
        raise error.single("too_large", f"the file has {size:,} bytes; the limit is {max_bytes:,}", file=file)
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError as exc:
        raise error.single("encoding", f"not UTF-8 text (byte {exc.start})", file=file) from None
    if (deep := line_too_deep(text, MAX_DEPTH)) is not None:
        raise error.single("malformed", f"JSON nested too deeply; at most {MAX_DEPTH} levels are allowed", file=file, line=deep)
    try:
        value = json.loads(text, parse_int=_integer, parse_float=_float, parse_constant=_constant, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise error.single("malformed", f"not a JSON file ({exc.msg})", file=file, line=exc.lineno) from None
    except _Refused as exc:
        raise error.single("malformed", str(exc), file=file, line=_line_of(text, exc.literal)) from None
    return value


def json_path(location: Sequence[int | str], prefix: str = "") -> str:
    """``("records", 3, "theta", 7)`` -> ``records[3].theta[7]`` (after ``prefix``)."""
    path = prefix
    for part in location:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else str(part)
    return path or "(the document)"


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def problems_of(error: ValidationError, *, file: str | None, prefix: str = "", tags: frozenset[str] = frozenset()) -> list[Problem]:
    """One problem per schema violation, naming its JSON path and the value found (``tags``: the
    names of a tagged union's members, which pydantic puts into the location)."""
    found: list[Problem] = []
    for item in error.errors(include_url=False):
        # pydantic names union members in the location (``literal['a','b']``, tags): not keys
        location = [p for p in item["loc"] if not (isinstance(p, str) and (p in tags or p.startswith(("function-", "literal["))))]
        message = item["msg"]
        if item["type"] == "union_tag_invalid":  # pydantic's text names the discriminator function
            message = f"unknown kind {item['ctx']['tag']!r}; expected one of {item['ctx']['expected_tags']}"
        elif item["type"] != "missing":
            message += f", got {_shown(item['input'])}"
        found.append(Problem("error", "bad_value", message, file, path=json_path(location, prefix)))
    return found


def validated(model: type[M], value: Any, *, error: type[E], file: str | None, prefix: str = "", tags: frozenset[str] = frozenset()) -> M:
    """``value`` checked against ``model``; raises ``error`` listing every violation with its path."""
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        raise error(problems_of(exc, file=file, prefix=prefix, tags=tags)) from None


def at_path(error: PrefevalError, exc_type: type[E], *, file: str | None, prefix: str) -> E:
    """``error``'s problems as ``exc_type`` about ``file``, each at ``prefix`` (plus the setting
    a :class:`~prefeval_core.errors.SettingsError` names in ``column``, or its own path)."""
    problems = []
    for p in error.problems:
        inner = p.path or p.column
        separator = "" if inner and inner.startswith("[") else "."
        path = f"{prefix}{separator}{inner}" if inner and prefix else (inner or prefix or None)
        problems.append(Problem(p.severity, p.kind, p.message, file, p.row, p.line, None, path))
    return exc_type(problems)
