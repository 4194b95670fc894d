"""Turning core exceptions into messages: no traceback ever reaches the user."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import pandas as pd
import streamlit as st

from prefeval_core.errors import PrefevalError, Problem

_LOG = logging.getLogger("prefeval.ui")
_MARKDOWN_SPECIALS = set("\\`*_{}[]()<>#+-.!|~$:=")
MAX_LISTED = 5


def escape_markdown(text: object) -> str:
    """``text`` with every character Markdown could interpret backslash-escaped (data is
    shown as written, never rendered as links, images, HTML or formulas); line breaks kept."""
    escaped = "".join("\\" + c if c in _MARKDOWN_SPECIALS else c for c in str(text))
    return escaped.replace("\n", "  \n")


def problems_frame(problems: Sequence[Problem]) -> pd.DataFrame:
    """One row per problem: severity, file, row, line, column, JSON path, message (shown as plain text)."""
    columns = ("severity", "file", "row", "line", "column", "path", "message")
    return pd.DataFrame([{name: getattr(p, name) for name in columns} for p in problems], columns=list(columns))


def show_problems(problems: Sequence[Problem], title: str, *, severity: str = "error") -> None:
    """A message naming the first problems (file, row, column, what was expected) and a table
    of all of them."""
    if not problems:
        return
    listed = "\n".join(f"- {escape_markdown(p)}" for p in problems[:MAX_LISTED])
    more = f"\n\n… and {len(problems) - MAX_LISTED} more (table below)" if len(problems) > MAX_LISTED else ""
    show = st.error if severity == "error" else st.warning
    show(f"**{escape_markdown(title)}**\n\n{listed}{more}")
    if len(problems) > MAX_LISTED:
        st.dataframe(problems_frame(problems), hide_index=True, width="stretch")


@contextmanager
def user_errors(what: str, *, stop: bool = True) -> Iterator[None]:
    """Run a block; a :class:`DataError` becomes a message listing its problems, any other
    exception a short message (details go to the server log). Then the page stops (``stop``)."""
    try:
        yield
    except PrefevalError as error:
        show_problems(error.problems, f"{what}: please fix the input")
        if stop:
            st.stop()
    except Exception as error:  # the last line of defence before the user
        _LOG.exception("%s failed", what)
        st.error(f"**{escape_markdown(what)} failed**: {escape_markdown(type(error).__name__)}: {escape_markdown(error)}")
        if stop:
            st.stop()
