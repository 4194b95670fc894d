"""One random key per scope, kept in the store: what makes blind files blind.

A scope is a study (``study:<id>``) or, for requests outside any study, a data key
(``data:<key>``). Its key is 32 bytes from :func:`secrets.token_bytes`, made on first use and
never changed: the opaque request tokens and row digests of every file exported for the scope
(:mod:`prefeval_core.annotation.blind`) are keyed with it, so a file can be checked when it comes back and
cannot be de-blinded or forged by anyone without the store.
"""

from __future__ import annotations

import secrets as random_bytes
from typing import Final

from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite

from prefeval_core.store.engine import Database
from prefeval_core.store.records import utc_now
from prefeval_core.store.schema import secrets

SECRET_BYTES: Final = 32
"""Bytes of a scope's key (256 bits, the size of an HMAC-SHA256 key's block digest)."""


def scope_of(dataset: str, study_id: int | None) -> str:
    """The scope of a study's requests (``study:<id>``), else of a data key's (``data:<key>``)."""
    return f"study:{study_id}" if study_id is not None else f"data:{dataset}"


def scope_secret(db: Database, scope: str) -> bytes:
    """The key of ``scope``, made (and stored) on first use; every process gets the same one."""
    query = select(secrets.c.secret).where(secrets.c.scope == scope)
    with db.reading() as conn:
        found = conn.execute(query).scalar_one_or_none()
    if found is None:
        insert = (postgresql.insert if db.dialect == "postgresql" else sqlite.insert)(secrets)
        row = {"scope": scope, "secret": random_bytes.token_hex(SECRET_BYTES), "created_at": utc_now()}
        with db.writing() as conn:
            conn.execute(insert.values(**row).on_conflict_do_nothing(index_elements=["scope"]))
            found = conn.execute(query).scalar_one()  # another process's key if it was first
    return bytes.fromhex(found)
