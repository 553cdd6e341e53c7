"""The table's outbox: every message in publication order until the broker has it.

The table puts each message in (its ``seq`` if it is the engine's); the publisher
(:mod:`baccarat.controller.publisher`) takes them in order, hands them to the connection
and acknowledges each when the broker has (QoS 1). A new connection rewinds it, so what
was not acknowledged is sent again. It holds ``broker.outbox_limit`` messages at most:
past it the oldest are dropped and counted (they remain in the journal; the table raises
``outbox_full``).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass

from baccarat.controller.config import OUTBOX_LIMIT

log = logging.getLogger("baccarat.controller.publisher")  # the publisher's log, as before


@dataclass(frozen=True, slots=True)
class OutMessage:
    """One message to publish (at QoS 1); ``seq`` is the engine's, if it is its message.

    ``urgent``: sent past a message the broker refuses (the message class says so).
    """

    topic: str
    payload: bytes
    retain: bool = False
    seq: int | None = None
    urgent: bool = False


@dataclass(slots=True)
class Entry:
    """A message in the outbox, and whether the broker has acknowledged it."""

    message: OutMessage
    acked: bool = False


class Outbox:
    """Messages in publication order, each kept until the broker has acknowledged it.

    The front of the outbox may have been handed to the connection already; the rest
    waits for :meth:`next_unsent`. A new connection :meth:`rewind` s it.
    """

    def __init__(self, limit: int = OUTBOX_LIMIT) -> None:
        """Hold ``limit`` messages at most; past it drop the oldest and count it.

        A dropped message remains in the journal; the table raises ``outbox_full``.
        """
        self._entries: deque[Entry] = deque()
        self._sent = 0  # entries at the front already handed to the connection
        self._limit = limit
        self._unsent = asyncio.Event()
        self._empty = asyncio.Event()
        self._empty.set()
        self.dropped = 0
        """Messages dropped, oldest first, because the outbox was full."""
        self.acked_seq: int | None = None
        """The ``seq`` of the newest message the broker has, all before it included."""
        self.puts = 0
        """Messages put so far (:meth:`newest` takes the ones since a count)."""

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[OutMessage]:
        """The messages not yet acknowledged, oldest first."""
        return (entry.message for entry in self._entries)

    def put(self, message: OutMessage) -> None:
        """Queue a message behind the others; if the outbox is full, drop the oldest."""
        if len(self._entries) >= self._limit:
            self._entries.popleft()
            self._sent = max(0, self._sent - 1)
            self.dropped += 1
            if self.dropped == 1 or self.dropped % 1000 == 0:
                log.error("outbox full: %d oldest message(s) dropped (see journal)", self.dropped)
        self._entries.append(Entry(message))
        self.puts += 1
        self._empty.clear()
        self._unsent.set()

    async def next_unsent(self) -> Entry:
        """The oldest message not yet handed to the connection (waits for one); marks it sent.

        Messages the broker acknowledged out of order (alarms past a refused message) are
        skipped.
        """
        while True:
            while self._sent >= len(self._entries):
                self._unsent.clear()
                await self._unsent.wait()
            entry = self._entries[self._sent]
            self._sent += 1
            if not entry.acked:
                return entry

    def newest(self, count: int) -> list[Entry]:
        """The ``count`` newest entries (all, if fewer), oldest first; O(count)."""
        newest = list(itertools.islice(reversed(self._entries), count))
        newest.reverse()
        return newest

    async def wait_empty(self) -> None:
        """Until the broker has acknowledged everything."""
        await self._empty.wait()

    def ack(self, entry: Entry) -> None:
        """The broker has the message; forget every acknowledged one at the front."""
        entry.acked = True
        while self._entries and self._entries[0].acked:
            done = self._entries.popleft()
            self._sent = max(0, self._sent - 1)  # 0: acknowledged before a rewind
            if done.message.seq is not None:
                self.acked_seq = done.message.seq
        if not self._entries:
            self._empty.set()

    def rewind(self) -> None:
        """A new connection: everything unacknowledged is to be sent again."""
        self._sent = 0
        if self._entries:
            self._unsent.set()
