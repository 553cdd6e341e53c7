"""The checker: a table's events, in the order stored, against its chain and its keys.

What the recorder (:mod:`baccarat.floor.chain_watch`) and ``baccarat verify`` share: each
event's link to the one before (or, after a jump, to the event it names and the
``journal_damaged`` alarm that names the seqs lost), its signature under a known key of its
table, and a key's hand-over signed by the key before it. A break is a :class:`Break`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PublicKey,
)

from baccarat.chain.keys import ChainError, Keys
from baccarat.chain.link import GENESIS, Head, Seal, event_hash, verified_handover

HASHES_KEPT: Final = 200_000
"""Events whose hash a checker keeps to check an ``after`` against (the newest)."""
LOST_FIELDS: Final = ("lost_first", "lost_last")
"""The fields of a ``journal_damaged`` alarm that name the seq range its table lost."""
NAMED_WITHIN: Final = 2
"""Events after a jump within which the ``journal_damaged`` alarm that names it must come."""


@dataclass(frozen=True, slots=True)
class Break:
    """Where a table's chain breaks, and why."""

    table: str
    seq: int
    why: str

    def __str__(self) -> str:
        return f"table {self.table}, seq {self.seq}: {self.why}"


@dataclass(slots=True)
class Link:
    """One event as stored: its seq, the engine's body, its seal and any stored hash."""

    seq: int
    body: bytes
    seal: Seal | None
    stored_hash: bytes | None = None
    lost: tuple[int, int] | None = None
    """The seq range the event names as lost (a ``journal_damaged`` alarm), if any."""


def lost_range(body: Mapping[str, object]) -> tuple[int, int] | None:
    """The seq range a ``journal_damaged`` alarm's body names as lost, if it names one."""
    if body.get("type") != "alarm" or body.get("kind") != "journal_damaged":
        return None
    first, last = (body.get(name) for name in LOST_FIELDS)
    if isinstance(first, int) and isinstance(last, int) and 0 < first <= last:
        return first, last
    return None


class Checker:
    """Checks one table's events in seq order: each one follows the one before, signed."""

    def __init__(self, table: str, keys: Keys, *, kept: int = HASHES_KEPT) -> None:
        self.table = table
        self.keys = keys
        self.kept = kept
        self.head: Head | None = None
        self.events = 0
        self.starts = 0
        self.hashes: dict[int, bytes] = {}
        """Each checked event's hash, by seq (to check an ``after`` against)."""
        self.learned: dict[str, Ed25519PublicKey] = {}
        """Keys handed over by a known key of this table (key rotation)."""
        self.pending: tuple[int, int, int] | None = None
        """A jump not named yet: the first and last seq it skipped, and its event's seq."""

    def check(self, link: Link) -> Break | None:
        """The first thing wrong with this event, given those before; ``None``: intact."""
        seal = link.seal
        if seal is None:
            return self._break(link, "the event carries no chain member (unsigned)")
        if seal.handover is not None:
            try:
                public = verified_handover(seal.handover, self.table, link.seq, self.keys,
                                           self.learned)
            except ChainError as exc:
                return self._break(link, str(exc))
            if seal.handover.new_id != seal.key:
                return self._break(link, "a hand-over to another key than the one that signs")
            self.learned[seal.key] = public
        found = self.keys.find(seal.key)
        if found is None and seal.key in self.learned:
            found = (self.table, self.learned[seal.key])
        if found is None:
            return self._break(link, f"signed by key {seal.key}, which the floor does not know "
                                     f"for any table")
        owner, public = found
        if owner != self.table:
            return self._break(link, f"signed by key {seal.key}, which is table {owner}'s: "
                                     f"the record of another table")
        digest = event_hash(self.table, link.body, seal)
        if link.stored_hash is not None and link.stored_hash != digest:
            return self._break(link, "the stored hash is not the hash of the stored body")
        try:
            public.verify(seal.sig, digest)
        except InvalidSignature:
            return self._break(link, f"the signature does not verify under key {seal.key}: "
                                     "the body was changed after it was signed")
        problem = self._follows(link, seal)
        if problem is None and self.pending is not None:
            problem = self._named(link)
        if problem is not None:
            return self._break(link, problem)
        self.head = Head(link.seq, digest)
        self.hashes[link.seq] = digest
        if len(self.hashes) > self.kept:  # bounded: keep the newest half
            for old in sorted(self.hashes)[: self.kept // 2]:
                del self.hashes[old]
        self.events += 1
        return None

    def _follows(self, link: Link, seal: Seal) -> str | None:
        head = self.head
        if seal.after is not None:
            return self._after(link, seal.after, seal.prev)
        if head is None:  # the first event read: a start, or the first one kept
            if seal.prev == GENESIS:
                self.starts += 1
            return None if link.seq == 1 or seal.prev != GENESIS else (
                f"the chain starts again at seq {link.seq} (prev is zeros)")
        if link.seq != head.seq + 1:
            return (f"seq {head.seq + 1} to {link.seq - 1} missing: the record lacks "
                    f"{link.seq - head.seq - 1} event(s) the chain holds")
        if seal.prev != head.hash:
            return (f"prev is not the hash of seq {head.seq}: an event before it was changed, "
                    "or this one belongs to another chain (a fork)")
        return None

    def _after(self, link: Link, after: int, prev: bytes) -> str | None:
        """An event that follows ``after``, not seq - 1: the events between must be named.

        By this event, a ``journal_damaged`` alarm, or by one of the next
        :data:`NAMED_WITHIN` events (the engine may clear an earlier loss's alarm first).
        """
        if link.lost is not None and link.lost != (after + 1, link.seq - 1):
            return (f"it follows seq {after} but names seq {link.lost[0]} to {link.lost[1]} "
                    "as lost")
        if link.lost is None:
            if self.pending is not None:
                return self._unnamed(self.pending)
            self.pending = (after + 1, link.seq - 1, link.seq)
        known = self.hashes.get(after)
        if known is None and self.head is not None and after > 0:
            return f"it follows seq {after}, which the record does not hold"
        if known is not None and prev != known:
            return f"prev is not the hash of seq {after}, which it follows"
        return None

    def _named(self, link: Link) -> str | None:
        """A jump waits to be named: by this event, or too late now."""
        assert self.pending is not None
        first, last, jump = self.pending
        if link.lost == (first, last) and link.seq <= jump + NAMED_WITHIN:
            self.pending = None
            return None
        if link.seq > jump + NAMED_WITHIN:
            return self._unnamed(self.pending)
        return None

    def _unnamed(self, pending: tuple[int, int, int]) -> str:
        first, last, jump = pending
        self.pending = None
        return (f"seq {jump} follows seq {first - 1}, and no journal_damaged alarm among it "
                f"and the {NAMED_WITHIN} events after it names seq {first} to {last} as lost")

    def finish(self) -> str | None:
        """At the end of the record: a jump still waiting to be named is a break."""
        if self.pending is None:
            return None
        return self._unnamed(self.pending)

    def _break(self, link: Link, why: str) -> Break:
        return Break(self.table, link.seq, why)
