"""Annotator invitations: one link per annotator and study, its token kept only as a hash.

The lead invites an annotator by name; the store keeps the SHA-256 of the link's token
(``secrets.token_urlsafe(32)``: 256 random bits, so a hash without salt cannot be reversed by
guessing), who it names and for which study. Whoever opens the link is that annotator in that
study and nothing else. Revoking marks the invitation (never a delete): the token stops working,
the annotator's judgments stay. A judgment made through a link is stored only if the link still
works at that moment (:func:`check_link`, in the judgment's write transaction).
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, select, update

from prefeval_core.errors import PrefevalError, settings_error
from prefeval_core.store.engine import Database
from prefeval_core.store.records import utc_now
from prefeval_core.store.schema import invitations, studies

TOKEN_BYTES = 32
"""Random bytes in a link's token (``secrets.token_urlsafe``: 43 characters)."""


class AccessError(PrefevalError, PermissionError):
    """An annotator link that opens nothing: forged, revoked, or for another study."""


@dataclass(frozen=True)
class Invitation:
    """An annotator's link as the store knows it (never its token).

    Attributes:
        id: the invitation's id.
        study_id: the study the link opens.
        annotator: the name every judgment made through the link carries.
        created_at: when it was issued (UTC, ISO 8601).
        revoked_at: when it was revoked, or ``None`` while the link works.
    """

    id: int
    study_id: int
    annotator: str
    created_at: str
    revoked_at: str | None


def token_hash(token: str) -> str:
    """What the store keeps of a token: its SHA-256, hex."""
    return hashlib.sha256(token.encode()).hexdigest()


def _invitation(row: Any) -> Invitation:
    return Invitation(row["id"], row["study_id"], row["annotator"], row["created_at"], row["revoked_at"])


def invite(db: Database, study_id: int, annotator: str) -> tuple[Invitation, str]:
    """A new link for ``annotator`` in the study; any earlier link of that name in the study is
    revoked in the same transaction (one working link per annotator). Returns the invitation
    and the token (shown once: the store cannot give it back).

    Raises:
        SettingsError: an empty name, or no such study.
    """
    name = annotator.strip()
    if not name or "\x00" in name:
        raise settings_error("an annotator needs a name (the text every judgment of theirs carries)", field="annotator")
    token = secrets.token_urlsafe(TOKEN_BYTES)
    now = utc_now()
    with db.writing() as conn:
        if conn.execute(select(studies.c.id).where(studies.c.id == study_id)).first() is None:
            raise settings_error(f"there is no study with id {study_id} in the store {db.where}", field="study_id")
        live = (invitations.c.study_id == study_id) & (invitations.c.annotator == name) & invitations.c.revoked_at.is_(None)
        conn.execute(update(invitations).where(live).values(revoked_at=now))
        values = {"study_id": study_id, "annotator": name, "token_hash": token_hash(token), "created_at": now, "revoked_at": None}
        new_id = conn.execute(invitations.insert().values(values).returning(invitations.c.id)).scalar_one()
    return Invitation(new_id, study_id, name, now, None), token


def revoke(db: Database, study_id: int, annotator: str) -> int:
    """Revoke the study's working links of ``annotator``; returns how many were revoked (0: none)."""
    live = (invitations.c.study_id == study_id) & (invitations.c.annotator == annotator.strip()) & invitations.c.revoked_at.is_(None)
    with db.writing() as conn:
        return conn.execute(update(invitations).where(live).values(revoked_at=utc_now())).rowcount


def by_token(db: Database, token: str) -> Invitation | None:
    """The invitation whose token this is (revoked or not), or ``None`` for a token never issued."""
    with db.reading() as conn:
        return _by_token(conn, token)


def _by_token(conn: Connection, token: str, *, lock: bool = False) -> Invitation | None:
    query = select(invitations).where(invitations.c.token_hash == token_hash(token))
    row = conn.execute(query.with_for_update() if lock else query).mappings().first()
    return None if row is None else _invitation(row)


def check_link(conn: Connection, token: str, study_id: int | None = None, *, lock: bool = False) -> Invitation:
    """The working invitation of ``token``, read on ``conn`` (``study_id``: the study the link must
    open, where known). ``lock``: hold the invitation's row until the transaction ends, so that a
    revocation waits for a write made through the link (PostgreSQL; SQLite's writers are serialised).

    Raises:
        AccessError: a token never issued (``unknown_link``), a revoked one (``revoked_link``), or
            one of another study (``other_study``); the message is what the annotator is shown.
    """
    found = _by_token(conn, token.strip(), lock=lock) if token.strip() else None
    if found is None:
        raise AccessError.single("unknown_link", "This link is not valid: ask the study's lead for your own link.")
    if found.revoked_at is not None:
        raise AccessError.single(
            "revoked_link", "This link was withdrawn by the study's lead: ask them for a new one if you should still judge."
        )
    if study_id is not None and study_id != found.study_id:
        raise AccessError.single("other_study", "This link is for another study: open it exactly as the lead sent it.")
    return found


def open_link(db: Database, token: str, study_id: int | None = None) -> Invitation:
    """The working invitation of ``token`` (see :func:`check_link`).

    Raises:
        AccessError: as :func:`check_link`.
    """
    with db.reading() as conn:
        return check_link(conn, token, study_id)


def study_invitations(db: Database, study_id: int) -> list[Invitation]:
    """Every invitation of the study, oldest first (revoked ones too)."""
    query = select(invitations).where(invitations.c.study_id == study_id).order_by(invitations.c.id)
    with db.reading() as conn:
        return [_invitation(row) for row in conn.execute(query).mappings()]
