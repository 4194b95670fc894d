"""What a file may hold, by name: the plain tables' kinds and the field formats' (whose registry is
:data:`~prefeval_core.data.field_formats.FIELD_FORMATS`), declared apart from their readers so that
listing them loads no pandas."""

from __future__ import annotations

from typing import Literal

TableKind = Literal["ratings", "wide_ratings", "preferences", "texts", "sources", "references", "ignored"]
"""What one parsed table holds."""
FieldKind = str
"""The name of a field's own file format, read into several tables: a key of the registry
:data:`prefeval_core.data.field_formats.FIELD_FORMATS` (``mqm``: WMT MQM error annotations,
``arena``: Chatbot-Arena battles)."""
