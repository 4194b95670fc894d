"""Who may do what in a study: a **lead** sets up and steers studies and sees results;
an **annotator** sees only the queue of the one study they were invited to.

* The lead invites an annotator by name (:func:`invite_annotator`): a link carrying a random
  token, kept in the store only as a hash. The annotator's identity comes from the token, never
  from a name in the address; :func:`annotator_for_token` refuses a token never issued
  (forged), a revoked one, or one shown with another study's id, with a :class:`AccessError`
  whose message the refusal page shows. Every judgment made through a link is checked again as it
  is stored (the ``link`` of :func:`~prefeval_core.workflow.judgments.record_rating` and
  :func:`~prefeval_core.workflow.judgments.record_comparison`): a page left open after the lead
  revoked the link stores nothing.
* The lead's pages ask for ``$PREFEVAL_LEAD_PASSWORD`` when it is set (:func:`lead_password`,
  :func:`password_matches`); unset, the dashboard opens to whoever reaches it, as on one's own
  machine (the server listens on 127.0.0.1 by default).
"""

from __future__ import annotations

import hmac
import os
from dataclasses import dataclass, field
from typing import Final

from prefeval_core.store import Store
from prefeval_core.store.invitations import AccessError, Invitation, invite, open_link, revoke, study_invitations

__all__ = [
    "LEAD_PASSWORD_ENV",
    "TOKEN_PARAM",
    "AccessError",
    "Annotator",
    "Invitation",
    "annotator_for_token",
    "annotator_link",
    "invitations",
    "invite_annotator",
    "lead_password",
    "password_matches",
    "revoke_annotator",
]

LEAD_PASSWORD_ENV: Final = "PREFEVAL_LEAD_PASSWORD"
"""Environment variable holding the lead's password; unset: the lead's pages open without one."""
TOKEN_PARAM: Final = "token"
"""The query parameter of an annotator's link."""


@dataclass(frozen=True)
class Annotator:
    """Who an annotator link lets in: ``annotator`` (the name their judgments carry) in ``study_id``;
    ``token``, the link's, is what each of their judgments is stored with (and checked by)."""

    study_id: int
    annotator: str
    token: str = field(default="", repr=False, compare=False)


def invite_annotator(store: Store, study_id: int, name: str) -> str:
    """Invite ``name`` to the study; returns the link's token (shown once). An earlier link of
    the same name in the study stops working.

    Raises:
        SettingsError: an empty name, or no such study.
    """
    return invite(store.db, study_id, name)[1]


def annotator_link(base_url: str, token: str) -> str:
    """The link an annotator opens: the dashboard's address with the token."""
    return f"{base_url.rstrip('/')}/?{TOKEN_PARAM}={token}"


def revoke_annotator(store: Store, study_id: int, name: str) -> int:
    """Revoke ``name``'s link in the study; returns how many links stopped working (0: none was live).

    Raises:
        SettingsError: no such study.
    """
    store.study(study_id)
    return revoke(store.db, study_id, name)


def invitations(store: Store, study_id: int) -> list[Invitation]:
    """The study's invitations, oldest first, revoked ones too."""
    return study_invitations(store.db, study_id)


def annotator_for_token(store: Store, token: str, study_id: int | None = None) -> Annotator:
    """The annotator and study a link's token names (``study_id``: the study the address also
    names, if it does; it must be the token's).

    Raises:
        AccessError: a token never issued, a revoked one, or one of another study.
    """
    found = open_link(store.db, token, study_id)
    return Annotator(found.study_id, found.annotator, token.strip())


def lead_password() -> str | None:
    """``$PREFEVAL_LEAD_PASSWORD`` if set and not empty, else ``None`` (no password asked)."""
    return os.environ.get(LEAD_PASSWORD_ENV) or None


def password_matches(given: str, password: str) -> bool:
    """Whether ``given`` is the lead's password (compared in constant time)."""
    return hmac.compare_digest(given.encode(), password.encode())
