"""One way to read a device: :class:`DeviceSource`, an async iterator of device events.

Serial ports (:class:`~baccarat.drivers.serial_source.SerialSource`) and USB shufflers
(:class:`~baccarat.drivers.usb_source.UsbSource`) are both used like this::

    source = SerialSource("/dev/serial/by-id/usb-shoe", "framed")
    source.resume_after(last_recorded_seq)   # after a restart; before the source starts
    async with source:
        async for event in source:           # CardDrawn, LinkUp, LinkDown, Rejected, ...
            record(event)

The acknowledgement rule: a frame is acknowledged to the device only once the consumer
has taken its event and asked for the next one. A consumer that records each event before
it asks for the next therefore never has the device forget an event it did not record.
If the consumer raises, or stops iterating, the event it was handed is never acknowledged,
and the device sends it again (``framed``).

Each source decodes the bytes as they arrive and queues, in one :class:`Batch` per chunk,
every event with the acknowledgement it earns (the decoder's
:meth:`~baccarat.drivers.codec.Decoder.acknowledgement`), then the acknowledgement owed for
frames that gave no event. The iterator writes an event's acknowledgement when it is asked
for the next event. Since everything is taken in order, an acknowledgement (which is
cumulative) never covers an event still waiting to be taken.
"""

from __future__ import annotations

import abc
import asyncio
import random
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Final, Self

from baccarat.backoff import Backoff
from baccarat.drivers.codec import Decoder
from baccarat.drivers.events import DeviceEvent
from baccarat.errors import BaccaratError
from baccarat.reconnect import LinkState

RECONNECT_FIRST: Final = 0.1
"""Seconds before the first reopen after a failure or a loss; doubles with each failure."""
RECONNECT_CAP: Final = 1.5
"""Longest wait between two attempts to open a device, in seconds (before jitter)."""
RECONNECT_JITTER: Final = 0.5
"""Each wait is scaled by a random factor in [1 - jitter, 1]."""


def reconnect_backoff(rng: random.Random | None = None) -> Backoff:
    """The backoff between attempts to open a device (read when a source is created)."""
    return Backoff(RECONNECT_FIRST, RECONNECT_CAP, RECONNECT_JITTER, rng or random.Random())


class DeviceSourceError(BaccaratError, RuntimeError):
    """A source used out of order (iterated before it was started)."""


Owed = tuple[DeviceEvent | None, bytes]
"""An event and the acknowledgement to write once the consumer is done with it; or
``None`` and an acknowledgement to write as soon as the consumer gets to it."""


@dataclass(frozen=True, slots=True)
class Batch:
    """What one chunk of bytes (or the link) gave, in order."""

    items: list[Owed] = field(default_factory=list)

    @classmethod
    def of(cls, events: list[DeviceEvent], decoder: Decoder) -> Batch:
        """``events`` just decoded by ``decoder``, with the acknowledgements they earn."""
        items: list[Owed] = [(event, decoder.acknowledgement(event)) for event in events]
        rest = decoder.pending_output()
        if rest and (not items or items[-1][1] != rest):
            items.append((None, rest))
        return cls(items)

    @classmethod
    def unacknowledged(cls, events: list[DeviceEvent]) -> Batch:
        """Events that earn no acknowledgement: the link's own, and bytes dropped."""
        return cls([(event, b"") for event in events])


class DeviceSource(abc.ABC):
    """The base of every source: one consumer iterates; frames are acknowledged after use.

    A subclass starts and stops its transport (:meth:`_open`, :meth:`_close`), hands each
    chunk's events to :meth:`_deliver`, writes acknowledgements in :meth:`_write_ack`, and
    is told in :meth:`_taken` that a batch was taken (to read again after a pause).
    """

    def __init__(self, decoder: Decoder) -> None:
        self.decoder = decoder
        self.state = LinkState.IDLE
        self._batches: asyncio.Queue[Batch | None] = asyncio.Queue()  # None: the end
        self._ready: deque[Owed] = deque()
        self._owed = b""  # the acknowledgement of the event the consumer was handed last
        self._started = False
        self._stopping = False
        self._ended = False

    # -- for the consumer ------------------------------------------------------------

    def resume_after(
        self, seq: int, session: int | None = None, *, journal_lost: bool = False
    ) -> None:
        """Frames up to device sequence number ``seq`` were recorded before a restart.

        ``session``: the device's session of frame ``seq`` (the ``session`` of its event),
        if the record says. Call before the source starts. With ``framed``, the decoder
        asks the device where it stands before it takes anything: frames up to ``seq``
        that the device still has in that session are acknowledged and dropped instead of
        being delivered a second time (its HELLO among them, if its ACK was lost), and a
        device past them resumes at its oldest unacknowledged frame. Without a call the
        decoder asks too (a host with no record): it never acknowledges a frame it did not
        take in order. ``journal_lost``: the journal lost records (the table found it at
        its start), so the frames the device skips were inputs lost, and are said so.
        """
        if self._started:
            raise DeviceSourceError("resume_after() must come before the source starts")
        self.decoder.resume_after(seq, session, journal_lost=journal_lost)

    def remember_sessions(self, sessions: Iterable[int]) -> None:
        """The device sessions the journal holds, oldest first; call before the source starts.

        With ``framed``, a HELLO of one of them that is not the device's session now is
        a replay (refused, an alarm) or a power-up that reused it (an alarm): the decoder
        asks the device which (PROTOCOL.md 6.4).
        """
        if self._started:
            raise DeviceSourceError("remember_sessions() must come before the source starts")
        self.decoder.remember_sessions(sessions)

    def tell_alarms(self, alarms: Sequence[tuple[int, str]]) -> None:
        """Tell the device the table's open alarms now: ``(id, kind)`` of each.

        Idempotent: call it after every input with the whole set; only changes go to the
        device, and a source that can tell repeats the open ones on a timer (``framed``:
        the ALARM frame, PROTOCOL.md 6.9). A no-op here: for a protocol with no way back
        to the device (``line``), and for :class:`~baccarat.drivers.usb_source.UsbSource`,
        which does not tell alarms (its bulk OUT carries acknowledgements only).
        """
        del alarms

    async def start(self) -> None:
        """Start reading the device in the background. Idempotent."""
        if not self._started:
            self._started = True
            await self._open()

    async def stop(self) -> None:
        """Stop reading and close the device; iteration ends after the events queued.

        Idempotent. Nothing is acknowledged once the device is closed.
        """
        if self._started and not self._stopping:
            self._stopping = True
            await self._close()
            if self.state is not LinkState.FAILED:
                self.state = LinkState.STOPPED
        self._end()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> DeviceEvent:
        """The next event; the consumer is done with the one before (see the module)."""
        if not self._started:
            raise DeviceSourceError("start the source first (async with source: ...)")
        while True:
            if self._owed:
                self._write_ack(self._owed)
                self._owed = b""
            if self._ready:
                event, self._owed = self._ready.popleft()
                if event is not None:
                    return event
                continue
            batch = await self._batches.get()
            if batch is None:
                self._batches.put_nowait(None)  # for anyone who asks again
                raise StopAsyncIteration
            self._taken()
            self._ready.extend(batch.items)

    @property
    def backlog(self) -> int:
        """Batches (chunks of events) queued and not yet taken by the consumer."""
        return self._batches.qsize()

    @property
    def counters(self) -> Mapping[str, int]:
        """The decoder's counters (bytes, frames, rejected bytes, CRC errors, ...)."""
        return self.decoder.counters

    # -- for the subclasses ------------------------------------------------------------

    def _deliver(self, batch: Batch) -> None:
        """Queue ``batch`` for the consumer (on the event loop)."""
        if not self._ended:
            self._batches.put_nowait(batch)

    def _end(self) -> None:
        """Iteration ends once the batches queued so far are taken."""
        if not self._ended:
            self._ended = True
            self._batches.put_nowait(None)

    @abc.abstractmethod
    async def _open(self) -> None:
        """Start reading the device in the background."""

    @abc.abstractmethod
    async def _close(self) -> None:
        """Stop reading and close the device; return once it is closed."""

    @abc.abstractmethod
    def _write_ack(self, ack: bytes) -> None:
        """Write ``ack`` to the device, or drop it if the device is not there."""

    @abc.abstractmethod
    def _taken(self) -> None:
        """A batch was taken from the queue (a source that paused reading may resume)."""
