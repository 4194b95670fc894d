"""A session's uploaded data, kept by digest so that a reload of the page (a new session) finds
the same files: the address names the digest, the store holds the data choice's JSON.

Written once per distinct content (the digest is the SHA-256 of the JSON); never deleted here.
"""

from __future__ import annotations

import hashlib

from sqlalchemy import select

from prefeval_core.store.engine import Database
from prefeval_core.store.records import utc_now
from prefeval_core.store.schema import session_data


def save_data(db: Database, data_json: str) -> str:
    """Keep ``data_json`` (idempotent); returns its digest (32 hex characters)."""
    digest = hashlib.sha256(data_json.encode()).hexdigest()[:32]
    with db.writing() as conn:
        if conn.execute(select(session_data.c.digest).where(session_data.c.digest == digest)).first() is None:
            conn.execute(session_data.insert().values(digest=digest, data_json=data_json, created_at=utc_now()))
    return digest


def load_data(db: Database, digest: str) -> str | None:
    """The data JSON kept under ``digest``, or ``None``."""
    with db.reading() as conn:
        found = conn.execute(select(session_data.c.data_json).where(session_data.c.digest == digest)).scalar_one_or_none()
    return None if found is None else str(found)
