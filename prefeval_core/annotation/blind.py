"""Blind requests: what annotators are handed outside the app names no system and can be checked.

A request file or a Label Studio task is keyed with the study's secret (:class:`BlindKey`, a
random key kept in the store, :mod:`prefeval_core.store.secrets`; a data key's outside studies):

* **Token**: each row carries an opaque token instead of system names, dataset key or study id:
  ``HMAC-SHA256(secret, request id, side)``, 128 bits. Without the secret, hashing candidate
  system names finds nothing; with it, the import finds the task and the side again among the
  data's systems (:meth:`BlindTasks.find`).
* **Side**: which system of the canonical pair is shown as A is the app's seeded coin
  (:func:`~prefeval_core.annotation.left_right.left_right`) with a seed drawn from the secret and the
  export's seed (:meth:`BlindKey.coin_seed`): unpredictable without the secret, reproducible with
  it, never a column of the file. The token names the side, so it cannot be flipped either.
* **Digest**: each row carries ``HMAC-SHA256(secret, token, item, texts shown)``, 128 bits; a
  row whose token, item, source or outputs were edited, swapped or moved to another row is
  refused on import (:meth:`BlindKey.digest`; texts compared with line ends as ``\\n`` and
  without surrounding white space, which spreadsheets change).

Rows go out in :func:`blind_order` (per item, by token: a keyed shuffle), so a row's place does
not give its system away either. Files of the older layout (an unkeyed request id,
:func:`~prefeval_core.store.request_id_for`, and a ``left`` column) are still read, by
:meth:`BlindTasks.task_of`.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from prefeval_core.annotation.left_right import left_right
from prefeval_core.store.records import JudgmentKind, request_id_for
from prefeval_core.vocabulary.tasks import ComparisonTask, RatingTask, Task

Side = Literal["first", "second"]
"""Which system of a canonical pair (``system_a < system_b``) is shown as A, on the left."""
SIDES: Final[tuple[Side, Side]] = ("first", "second")
_HEX: Final = 32
"""Hex digits kept of a token or digest (128 bits)."""


def shown_side(seed: int, dataset: str, task: ComparisonTask) -> Side:
    """The side shown as A for ``task``: the app's left/right coin flip for ``seed``."""
    left, _ = left_right(seed, dataset, task.item_id, task.system_a, task.system_b)
    return "first" if left == task.system_a else "second"


def left_system_of(task: ComparisonTask, side: Side) -> str:
    """The system shown as A when ``side`` is shown."""
    return task.system_a if side == "first" else task.system_b


def blind_order(item_ids: Sequence[str], keys: Sequence[str]) -> list[int]:
    """Row positions for a blind file: items in their order of first appearance, the tasks of
    one item in the order of ``keys`` (tokens or digests: a different, fixed shuffle on every item)."""
    first_seen: dict[str, int] = {}
    for item in item_ids:
        first_seen.setdefault(item, len(first_seen))
    return sorted(range(len(item_ids)), key=lambda k: (first_seen[item_ids[k]], keys[k]))


def _normal(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n").strip()


@dataclass(frozen=True)
class BlindKey:
    """A scope's secret (:meth:`prefeval_core.store.Store.secret`) and what it makes."""

    secret: bytes = field(repr=False)

    def _mac(self, *parts: str) -> str:
        message = "\x1f".join(parts).encode("utf-8", "surrogatepass")
        return hmac.new(self.secret, message, hashlib.sha256).hexdigest()[:_HEX]

    def coin_seed(self, seed: int) -> int:
        """The seed of the left/right coin of a file exported with ``seed`` (63 bits of a MAC)."""
        return int(self._mac("coin", str(seed))[:16], 16) >> 1

    def token(self, request_id: str, side: Side | None) -> str:
        """The opaque token of a request (and, for a comparison, the side shown as A)."""
        return self._mac("token", request_id, side or "")

    def tag(self, name: str) -> str:
        """A short keyed tag of ``name`` (8 hex digits): tells this scope's things (a Label Studio
        project) apart from another store's, and says nothing about the scope."""
        return self._mac("tag", name)[:8]

    def digest(self, token: str, item: str, texts: Sequence[str]) -> str:
        """The digest of a row as shown: its token, item and texts (source, then the outputs in
        the order shown)."""
        return self._mac("row", token, item, *map(_normal, texts))

    def matches(self, digest: str, token: str, item: str, texts: Sequence[str]) -> bool:
        """Whether ``digest`` is this row's (compared in constant time)."""
        return hmac.compare_digest(digest.strip().lower(), self.digest(token, item, texts))


@dataclass(frozen=True)
class BlindTasks:
    """The tasks a blind file of ``dataset`` and ``study_id`` can hold (every rating and every
    canonical pair of ``systems`` on an item), found by token (with ``key``) or by the older
    unkeyed request id; indexed per item on first use."""

    dataset: str
    study_id: int | None
    systems: frozenset[str]
    key: BlindKey | None = None
    _by_token: dict[tuple[JudgmentKind, str], dict[str, tuple[Task, Side | None]]] = field(default_factory=dict, compare=False, repr=False)
    _by_request: dict[tuple[JudgmentKind, str], dict[str, Task]] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, dataset: str, study_id: int | None, systems: Collection[str], key: BlindKey | None = None) -> BlindTasks:
        return cls(dataset, study_id, frozenset(systems), key)

    def request_id(self, task: Task) -> str:
        return request_id_for(self.dataset, self.study_id, task.item_id, task.systems)

    def token(self, task: Task, side: Side | None) -> str:
        """The token of ``task`` shown with ``side`` as A (``None`` for a rating)."""
        if self.key is None:
            raise ValueError("a token needs the study's key")
        return self.key.token(self.request_id(task), side)

    def find(self, kind: JudgmentKind, item: str, token: object) -> tuple[Task, Side | None] | None:
        """The task of ``kind`` on ``item`` and the side it was shown with, whose token is ``token``
        (``None``: none is, or there is no key)."""
        if self.key is None:
            return None
        if (kind, item) not in self._by_token:
            sides: tuple[Side | None, ...] = (None,) if kind == "rating" else SIDES
            index = {self.token(t, s): (t, s) for t in self._candidates(kind, item) for s in sides}
            self._by_token[kind, item] = index
        return self._by_token[kind, item].get(str(token).strip().lower())

    def task_of(self, kind: JudgmentKind, item: str, request_id: object) -> Task | None:
        """The task of ``kind`` on ``item`` whose unkeyed request id (older files) is ``request_id``."""
        if (kind, item) not in self._by_request:
            self._by_request[kind, item] = {self.request_id(t): t for t in self._candidates(kind, item)}
        return self._by_request[kind, item].get(str(request_id))

    def _candidates(self, kind: JudgmentKind, item: str) -> list[Task]:
        if kind == "rating":
            return [RatingTask(item, s) for s in self.systems]
        return [ComparisonTask(item, a, b) for a, b in itertools.combinations(sorted(self.systems), 2)]
