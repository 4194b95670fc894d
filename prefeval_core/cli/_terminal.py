"""Text for the terminal: names from the data never reach it raw.

A system or rater name may hold escape sequences (``ESC [ 2 J`` clears the screen, OSC
sequences set the window title or write hyperlinks), other control characters or invisible
bidirectional overrides. Printed lines escape every character that is not printable, the way
``repr`` does (``\\x1b``, ``\\u202e``), so the line shows exactly what the data holds. A line
longer than :data:`MAX_LINE` characters (a name of megabytes in a message) is cut, saying how long
it was.
"""

from __future__ import annotations

import sys
from typing import Final, TextIO

MAX_LINE: Final = 4_000
"""Characters of one printed line; the rest is cut (``--json`` output is never cut)."""


def _escaped(character: str) -> str:
    code = ord(character)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def terminal_safe(text: str) -> str:
    """``text`` with each non-printable character (``str.isprintable``: control, format,
    separator other than the space, unassigned) written as its escape."""
    if len(text) > MAX_LINE:
        text = f"{text[:MAX_LINE]}… (cut: {len(text):,} characters)"
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else _escaped(c) for c in text)


def print_safe(text: str, *, file: TextIO | None = None) -> None:
    """Print one line of ``text`` through :func:`terminal_safe` (stdout by default)."""
    print(terminal_safe(text), file=file or sys.stdout)
