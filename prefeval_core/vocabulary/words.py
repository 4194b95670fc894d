"""Names in English sentences: lists of names, small numbers, and the order people expect."""

from __future__ import annotations

import re
from collections.abc import Sequence

_NUMBER_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine", 10: "ten"}


def listing(names: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} and {names[-1]}"


def first_upper(text: str) -> str:
    """``text`` with its first letter upper-cased and nothing else touched (``str.capitalize`` would
    lower-case the rest, system names included: "than M8" must not become "than m8")."""
    return text[:1].upper() + text[1:]


def number_word(n: int) -> str:
    """``n`` in words up to ten, in digits above."""
    return _NUMBER_WORDS.get(n, str(n))


def natural(name: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that puts M2 before M10."""
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", name) if part)
