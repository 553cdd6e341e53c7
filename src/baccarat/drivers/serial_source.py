"""A device behind a serial port or a socket, as a :class:`~baccarat.drivers.source.DeviceSource`.

::

    async with SerialSource("/dev/serial/by-id/usb-shoe", "framed", baud=9600) as source:
        async for event in source:
            record(event)

What it does besides decoding:

* opens the device (a path or ``socket://host:port``) without blocking the loop and without
  discarding what it holds (cards sent while the controller was down are read), and when
  the port fails or goes away, opens it again after the reconnection backoff of
  :func:`~baccarat.drivers.source.reconnect_backoff`, which starts over after every
  successful open; it always waits until the old port is closed first. The first failure
  is logged as a warning, the repeats at debug level. With ``max_attempts`` set, the
  source gives up after that many failed opens in a row, enters
  :attr:`~baccarat.drivers.source.LinkState.FAILED` (a :class:`LinkDown` says so) and
  iteration ends.
* reports :class:`LinkUp` / :class:`LinkDown`, strictly alternating (a first open that
  fails reports :class:`LinkDown` too). For a protocol with a heartbeat (``framed``) the
  link is up once valid frames arrive, and down again when none came for the codec's
  ``heartbeat_timeout`` while the port stays open; for ``line`` it is up when the port
  is open.
* tells the device which of the table's alarms are open (:meth:`SerialSource.tell_alarms`)
  when its codec can (``framed``: ALARM frames, written beside the acknowledgements; the
  open ones repeated every ``ALARM_REFRESH``, checked each :data:`WATCHDOG_TICK`, and all
  of them at once on every new port);
* keeps the decoder across reconnections, so ``framed`` drops frames the device
  retransmits after an unplug instead of delivering them twice.
* :attr:`SerialSource.counters`: bytes, frames, rejected bytes, CRC errors,
  retransmissions seen, reconnects, ...; :meth:`SerialSource.dump_debug`: the last
  :data:`DEBUG_RING_SIZE` chunks in and out, with times, in hex (logged when a link
  that was up goes down).

Queue policy: each chunk read is one batch of events; when :data:`QUEUE_HIGH` batches
wait for the consumer the source stops reading the port (the kernel and, for ``framed``,
the device's retransmissions hold the rest) and reads again once :data:`QUEUE_LOW` are
left.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections import deque
from collections.abc import Sequence
from typing import Final

from baccarat.drivers.codec import AlarmTeller, Codec, get_codec
from baccarat.drivers.events import DeviceEvent, LinkDown, LinkUp
from baccarat.drivers.serial_transport import PortError, SerialPort, open_port
from baccarat.drivers.source import Batch, DeviceSource, reconnect_backoff
from baccarat.reconnect import LinkState, Lost, Reconnector

log = logging.getLogger(__name__)

WATCHDOG_TICK: Final = 0.25
"""Seconds between checks for a missing heartbeat (and for alarms to tell again)."""
DEBUG_RING_SIZE: Final = 64
"""Chunks in and out kept for :meth:`SerialSource.dump_debug`."""
QUEUE_HIGH: Final = 1024
"""Batches waiting for the consumer at which the source stops reading the port."""
QUEUE_LOW: Final = 256
"""Batches left waiting at which it reads again."""


class SerialSource(DeviceSource):
    """Events of a device behind a serial port or socket (see the module).

    ``device``: a path or ``socket://host:port``; ``protocol``: a codec name (``"line"``,
    ``"framed"``) or a :class:`~baccarat.drivers.codec.Codec`; ``baud``: the line speed
    (8N1); ``max_attempts``: failed opens in a row before giving up (``None``: never);
    ``seed``: of the backoff jitter (tests).
    """

    def __init__(
        self,
        device: str,
        protocol: str | Codec = "line",
        *,
        baud: int = 9600,
        max_attempts: int | None = None,
        seed: int | None = None,
    ) -> None:
        self.codec = protocol if isinstance(protocol, Codec) else get_codec(protocol)
        super().__init__(self.codec.decoder())
        self.device = device
        self.baud = baud
        self.max_attempts = max_attempts
        self._link = Reconnector(
            self._attempt, backoff=reconnect_backoff(random.Random(seed)), errors=(PortError,),
            on_lost=self._on_lost, on_state=self._on_state, max_attempts=max_attempts,
        )
        self._port: SerialPort | None = None
        self._task: asyncio.Task[None] | None = None
        self._paused = False
        self._reported_up: bool | None = None
        self._last_frame_at = 0.0
        self._frames_seen = 0
        self._ring: deque[tuple[float, str, bytes]] = deque(maxlen=DEBUG_RING_SIZE)
        teller = self.codec.alarm_teller
        self._alarms: AlarmTeller | None = teller() if teller is not None else None
        self._stats = dict.fromkeys(
            (
                "bytes_out",
                "alarm_bytes_out",
                "opens",
                "reconnects",
                "open_failures",
                "link_ups",
                "link_downs",
                "heartbeat_timeouts",
                "events",
                "read_pauses",
            ),
            0,
        )

    # -- diagnostics -----------------------------------------------------------------

    @property
    def counters(self) -> dict[str, int]:
        """Link and decoder counters.

        ``retransmissions`` counts frames the device sent (or must send) again: duplicates
        received plus frames discarded because one before them was lost.
        """
        counters = dict(self.decoder.counters)
        counters.update(self._stats)
        counters["retransmissions"] = counters.get("duplicates", 0) + counters.get(
            "out_of_order", 0
        )
        return counters

    def dump_debug(self) -> str:
        """The recent traffic (newest last) and the counters, as text for a log."""
        now = time.monotonic()
        lines = [f"link {self.device} ({self.codec.name}), state {self.state.value}"]
        for at, direction, data in self._ring:
            lines.append(f"  {at - now:+9.3f} s {direction} {data.hex(' ')}")
        counters = " ".join(f"{k}={v}" for k, v in self.counters.items())
        lines.append(f"  counters: {counters}")
        return "\n".join(lines)

    # -- DeviceSource ----------------------------------------------------------------

    async def _open(self) -> None:
        self._task = asyncio.create_task(self._link.run(), name=f"link {self.device}")

    async def _close(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self._close_port()

    def tell_alarms(self, alarms: Sequence[tuple[int, str]]) -> None:
        """Tell the device the table's open alarms, ``(id, kind)`` each (see the base class).

        A no-op when the codec cannot (``line``). Without a port the change is kept and
        told when the next port opens.
        """
        if self._alarms is not None:
            self._write_alarms(self._alarms.tell(alarms, time.monotonic()))

    def _refresh_alarms(self, *, every: bool = False) -> None:
        if self._alarms is not None:
            self._write_alarms(self._alarms.refresh(time.monotonic(), every=every))

    def _write_alarms(self, frames: bytes) -> None:
        if frames and self._port is not None:
            self._stats["alarm_bytes_out"] += len(frames)
            self._write_ack(frames)

    def _write_ack(self, ack: bytes) -> None:
        if self._port is not None:
            self._port.write(ack)
            self._stats["bytes_out"] += len(ack)
            self._ring.append((time.monotonic(), "tx", ack))

    def _taken(self) -> None:
        if self._paused and self.backlog <= QUEUE_LOW:
            self._paused = False
            if self._port is not None:
                self._port.resume_reading()

    # -- the connection loop ---------------------------------------------------------

    async def _attempt(self) -> str:
        """Open the port and read it until it is lost; why it was (the reconnector's)."""
        port = await open_port(self.device, self.baud, self._received)
        if self._stats["opens"]:
            self._stats["reconnects"] += 1
        self._stats["opens"] += 1
        self._link.connected(LinkState.OPEN)
        return await self._serve(port)

    def _on_state(self, state: LinkState) -> None:
        self.state = state

    def _on_lost(self, lost: Lost) -> None:
        """Report a lost link, or a failed open (and, after ``max_attempts``, give up)."""
        if lost.was_up:
            self._lost(str(lost.reason))
            return
        exc, failures = lost.reason, lost.failures
        self._stats["open_failures"] += 1
        if lost.failures == 1:
            log.warning("%s: cannot open (%s); retrying", self.device, exc)
        else:
            log.debug("%s: still cannot open (%s), attempt %d", self.device, exc, failures)
        if lost.delay is None:
            self._report_down(f"gave up after {failures} failed opens: {exc}", force=True)
            log.error("%s: link FAILED after %d attempts", self.device, failures)
            self._end()
            return
        self._report_down(f"cannot open: {exc}")

    async def _serve(self, port: SerialPort) -> str:
        """Read from ``port`` until it is lost; return why. Closes the port."""
        self._port = port
        self._paused = False  # a new port reads; _received pauses it again if need be
        self._last_frame_at = time.monotonic()
        self._frames_seen = self._frames_ok()
        if self.codec.heartbeat_timeout is None:
            self._report_up(f"{self.device} open at {self.baud} baud")
        port.start()  # what the port held already (cards sent while we were away) comes now
        self._refresh_alarms(every=True)  # a device that restarted forgot them
        try:
            return await self._watch(port)
        finally:
            await self._close_port()

    async def _watch(self, port: SerialPort) -> str:
        timeout = self.codec.heartbeat_timeout
        while True:
            done, _ = await asyncio.wait({port.lost}, timeout=WATCHDOG_TICK)
            if done:
                return port.lost.result()
            self._refresh_alarms()
            silent = time.monotonic() - self._last_frame_at
            if timeout is not None and silent > timeout and self.state is LinkState.UP:
                self._stats["heartbeat_timeouts"] += 1
                self._link.set_state(LinkState.OPEN)
                self._report_down(f"no frame for {silent:.1f} s (heartbeat timeout {timeout} s)")

    async def _close_port(self) -> None:
        """Close the port and wait until it is closed (again, if a close was cancelled)."""
        port = self._port
        if port is None:
            return
        await port.close()
        if self._port is port:
            self._port = None
            self._hand_over(self.decoder.resync())

    def _lost(self, reason: str) -> None:
        was_up = self._reported_up
        self._report_down(reason)
        if was_up:
            log.info("%s: link lost (%s)\n%s", self.device, reason, self.dump_debug())

    # -- bytes in, events out ----------------------------------------------------------

    def _received(self, data: bytes) -> None:
        """Called by the transport with every chunk: decode, and queue the batch."""
        self._ring.append((time.monotonic(), "rx", data))
        events = self.decoder.feed(data)
        if self.codec.heartbeat_timeout is not None:
            self._check_frames()
        self._stats["events"] += len(events)
        self._deliver(Batch.of(events, self.decoder))
        if not self._paused and self.backlog >= QUEUE_HIGH and self._port is not None:
            self._paused = True
            self._stats["read_pauses"] += 1
            self._port.pause_reading()

    def _hand_over(self, events: list[DeviceEvent]) -> None:
        """Queue events that earn no acknowledgement (the link's, the dropped bytes)."""
        if events:
            self._stats["events"] += len(events)
            self._deliver(Batch.unacknowledged(events))

    def _check_frames(self) -> None:
        frames = self._frames_ok()
        if frames != self._frames_seen:
            self._frames_seen = frames
            self._last_frame_at = time.monotonic()
            if self.state is LinkState.OPEN:
                self._report_up(f"{self.device}: frames arriving at {self.baud} baud")

    def _frames_ok(self) -> int:
        return self.decoder.counters.get("frames_ok", 0)

    def _report_up(self, detail: str) -> None:
        self._link.set_state(LinkState.UP)
        if self._reported_up is not True:
            self._reported_up = True
            self._stats["link_ups"] += 1
            self._hand_over([LinkUp(detail)])

    def _report_down(self, reason: str, *, force: bool = False) -> None:
        if self._reported_up is not False or force:
            self._reported_up = False
            self._stats["link_downs"] += 1
            self._hand_over([LinkDown(reason)])
