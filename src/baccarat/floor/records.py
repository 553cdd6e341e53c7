"""What the floor's store takes and gives: the rows as Python values, its errors, its interface.

:class:`Received` and :class:`Quarantined` are what the recorder hands the store;
:class:`AddResult`, :class:`TableTail`, :class:`ShoeSummary`, :class:`DerivedSeq`,
:class:`LatestView` and :class:`QuarantineTopic` are what it gives back; :class:`Store` is
the interface both databases implement (:mod:`baccarat.floor.store`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from baccarat.chain import Seal, event_hash
from baccarat.errors import BaccaratError

QUARANTINE_KEEP: Final = 64 * 1024
"""Bytes of a quarantined body that are kept (its size is kept whole)."""
QUARANTINE_KEEP_SIZE: Final = 1024
"""Bytes kept of a body refused for its length: its start says what it was."""
QUARANTINE_SAMPLE: Final = 1000
"""Quarantined bodies kept, the newest (``baccarat record --quarantine-keep``): the oldest
are deleted as new ones come, while every one is counted for ever in
``quarantine_counts`` by topic and reason. At most 64 MB of bodies."""



class StoreError(BaccaratError):
    """The database cannot be opened or written; the text says which and why."""


class StoreUnavailableError(StoreError):
    """The database cannot take anything now (connection lost, disk full, locked): retry."""


class StoreRefusedError(StoreError):
    """The database refused what it was given (a value it cannot hold): not worth a retry."""


@dataclass(frozen=True, slots=True)
class Received:
    """One message as it came from the broker, parsed enough to be stored."""

    table: str
    topic: str
    body: dict[str, Any]
    payload: str
    received: float
    place: bool = False
    """A derived view made again byte for byte from the facts before it
    (:mod:`baccarat.floor.derived`): kept as its place, not whole."""
    seal: Seal | None = None
    """The table's chain member that came with the body (docs/record.md); ``payload`` is
    the body without it."""

    def chain_row(self) -> tuple[Any, ...] | None:
        """The ``chain`` row of this event: table, seq, after, prev, key, hash, signature."""
        seal, seq = self.seal, self.seq
        if seal is None or seq is None:
            return None
        digest = event_hash(self.table, self.payload.encode(), seal)
        return (self.table, seq, seal.after, seal.prev, seal.key, digest, seal.sig)

    @property
    def seq(self) -> int | None:
        """The engine's sequence number, if the body has one."""
        seq = self.body.get("seq")
        return seq if isinstance(seq, int) and not isinstance(seq, bool) else None


@dataclass(frozen=True, slots=True)
class Quarantined:
    """Something from the broker that is kept aside, not stored as a message, and why."""

    topic: str
    payload: bytes
    reason: str
    received: float
    cause: str = "shape"
    """The reason's class (:data:`baccarat.floor.bodies.CAUSES`), for the recorder's count."""

    def row(self) -> tuple[Any, ...]:
        """The ``quarantine`` row: the topic and reason made safe for any database."""
        keep = QUARANTINE_KEEP_SIZE if self.cause == "size" else QUARANTINE_KEEP
        return (
            self.received, safe_text(self.topic, 1024), safe_text(self.reason, 1024),
            len(self.payload), self.payload[:keep],
        )


@dataclass
class AddResult:
    """What one :meth:`Store.add` did with its batch."""

    stored: int = 0
    duplicates: int = 0
    conflicts: int = 0
    statuses: int = 0
    quarantined: int = 0


@dataclass(frozen=True, slots=True)
class TableTail:
    """A table's newest stored message and its latest status, as the store holds them."""

    table: str
    last_seq: int | None
    last_received: float | None
    status: dict[str, Any] | None
    status_received: float | None


@dataclass(frozen=True, slots=True)
class QuarantineTopic:
    """What the quarantine holds of one topic: how many, and the newest one's time and reason."""

    topic: str
    count: int
    newest: float
    reason: str


@dataclass(frozen=True, slots=True)
class ShoeSummary:
    """One shoe of a table as stored: its number, how many messages, first and last ``ts``."""

    shoe: int
    messages: int
    first: float | None
    last: float | None


@dataclass(frozen=True, slots=True)
class DerivedSeq:
    """A derived view the store did not keep whole: its ``seq``, topic (last level) and ``ts``."""

    seq: int
    topic: str
    ts: float | None


@dataclass(frozen=True, slots=True)
class ShoeStart:
    """Where a table's newest stored shoe starts: what a fold resumed from the store needs."""

    first_seq: int
    """The table's first stored ``seq`` (a message or a derived view's place)."""
    shoe_seq: int | None
    """The ``seq`` of the newest shoe's first ``shoe`` message (None: no shoe stored)."""
    before: bool
    """A ``shoe`` message of an older shoe is stored before it."""


@dataclass(frozen=True, slots=True)
class LatestView:
    """A table's newest derived view of a topic, as published."""

    table: str
    topic: str
    seq: int
    body: str


class Store(Protocol):
    """A database of floor messages."""

    quarantine_keep: int
    """Quarantined bodies kept as a sample, the newest (:data:`QUARANTINE_SAMPLE`)."""

    def add(
        self, batch: Sequence[Received], quarantine: Sequence[Quarantined] = ()
    ) -> AddResult:
        """Store a batch and quarantine rows in one transaction; durable when this returns.

        :class:`StoreUnavailableError` if the database cannot take it now,
        :class:`StoreRefusedError` if it refused a value of the batch.
        """
        ...

    def reconnect(self) -> None:
        """Open the database again (after :class:`StoreUnavailableError`); StoreError if not."""
        ...

    def quarantined(self) -> list[tuple[str, str, bytes]]:
        """(topic, reason, payload) of every quarantined message kept, oldest first."""
        ...

    def quarantine_counts(self) -> dict[tuple[str, str], int]:
        """Every message ever quarantined, counted by (topic, the reason's class)."""
        ...

    def quarantine_topics(self, most: int = 1000) -> list[QuarantineTopic]:
        """The quarantine by topic: the ``most`` topics quarantined most recently, newest first."""
        ...

    def tails(self) -> list[TableTail]:
        """Each table's newest stored message and latest status, by table."""
        ...

    def stored(
        self, table: str, until_seq: int | None = None, since_seq: int | None = None
    ) -> list[tuple[dict[str, Any], str]]:
        """The table's stored messages (body, and its text as published), by ``seq``."""
        ...

    def derived(
        self, table: str, until_seq: int | None = None, since_seq: int | None = None
    ) -> list[DerivedSeq]:
        """The table's derived views not kept whole: (seq, topic, ts), by ``seq``."""
        ...

    def shoe_start(self, table: str) -> ShoeStart | None:
        """Where the table's newest stored shoe starts, or None if no message is stored."""
        ...

    def latest(self, table: str | None = None) -> list[LatestView]:
        """The newest derived view of each table and topic, whole, by table then topic."""
        ...

    def seqs(self, table: str | None = None) -> Iterator[tuple[str, int]]:
        """(table, seq) of every message stored or recorded as derived, by table then seq."""
        ...

    def links(self, table: str) -> list[tuple[int, int | None, bytes, str, bytes, bytes]]:
        """The table's chain rows by seq: seq, after, prev, key id, hash, signature."""
        ...

    def tables(self) -> list[str]:
        """Every table with something stored, sorted."""
        ...

    def messages(
        self,
        table: str | None = None,
        shoe: int | None = None,
        since: float | None = None,
        until: float | None = None,
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        """(table, body) of the stored messages, by table then ``seq``."""
        ...

    def shoes(self, table: str, newest: int = 500) -> list[ShoeSummary]:
        """The table's ``newest`` shoes (by their first message), oldest first."""
        ...

    def count(self) -> int:
        """How many messages are stored."""
        ...

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """The rows of one query (``?`` placeholders) of a module's own (floor/shuffle_store)."""
        ...

    def write(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """One statement for each row, in one transaction; StoreError if it fails."""
        ...

    def close(self) -> None:
        """Close the connection."""
        ...


def int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def float_or_none(value: object) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def object_or_none(text: str) -> dict[str, Any] | None:
    try:
        body = json.loads(text)
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


ENVELOPE_SCHEMA: Final = 1
"""The ``schema`` of the bodies whose envelope a row's columns make again."""


def envelope(seq: int, ts: float | None, kind: str) -> str:
    """A body's first fields as the engine writes them: what a row's columns give again."""
    shown_ts = "null" if ts is None else repr(ts)
    return (f'{{"schema":{ENVELOPE_SCHEMA},"seq":{seq},"ts":{shown_ts},'
            f'"type":{json.dumps(kind)},')


def stored_body(payload: str, seq: int, ts: float | None, kind: str) -> str:
    """What a row keeps of a body: the text after the envelope, or the body whole.

    The text after it if the row's columns make the envelope again byte for byte; else
    the body whole (a JSON object: it starts with ``{`` or a space, never with ``"``).
    """
    head = envelope(seq, ts, kind)
    return payload[len(head):] if payload.startswith(head) else payload


def published(seq: int, ts: float | None, kind: str, text: str) -> str:
    """The body as published, from a row (:func:`stored_body`).

    The envelope is put back if the row's text starts after it (with a key, ``"``).
    """
    return envelope(seq, ts, kind) + text if text.startswith('"') else text


def safe_text(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, surrogates and NULs escaped: any database takes it."""
    text = text[:limit].encode("utf-8", "backslashreplace").decode("utf-8")
    return text.replace("\x00", "\\x00")
