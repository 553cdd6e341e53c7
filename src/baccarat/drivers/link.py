"""A reconnecting link to one device: serial transport + codec -> device events.

Usage (the daemon's side)::

    from baccarat.drivers.link import DeviceLink

    async with DeviceLink("/dev/serial/by-id/usb-shoe", "framed", baud=9600) as link:
        async for event in link:          # CardDrawn, LinkUp, LinkDown, Rejected, ...
            handle(event)

or with a callback instead of iteration (called on the event loop, must not block)::

    link = DeviceLink("socket://10.0.0.7:4001", "line", on_event=handle)
    await link.start()
    ...
    await link.stop()

What it does:

* opens the device (path or ``socket://host:port``) without blocking the loop, and when
  the port fails or goes away, opens it again after a jittered, capped, doubling delay
  (:data:`RECONNECT_DELAY_MIN` .. :data:`RECONNECT_DELAY_MAX` seconds) that starts over
  after every successful open; it always waits until the old port is closed first. The
  first failure is logged as a warning, the repeats at debug level. With
  ``max_attempts`` set, the link gives up after that many failed opens in a row, enters
  :attr:`LinkState.FAILED` (a :class:`LinkDown` says so) and iteration ends.
* reports :class:`LinkUp` / :class:`LinkDown`, strictly alternating (a first open that
  fails reports :class:`LinkDown` too). For a protocol with a heartbeat (``framed``) the
  link is up once valid frames arrive, and down again when none came for the codec's
  ``heartbeat_timeout`` while the port stays open; for ``line`` it is up when the port
  is open.
* writes back what the decoder owes the device (``framed`` acknowledgements), but only
  once the events are handled: with ``on_event``, after it has returned for each of them;
  when iterating, when the consumer asks for the next event. So a consumer that makes
  an event durable before it asks for the next one never loses an event the device was
  told it may forget.
* keeps the decoder across reconnections, so ``framed`` drops frames the device
  retransmits after an unplug instead of delivering them twice.
* :attr:`DeviceLink.counters`: bytes, frames, rejected bytes, CRC errors,
  retransmissions seen, reconnects, ...; :meth:`DeviceLink.dump_debug`: the last
  :data:`DEBUG_RING_SIZE` chunks in and out, with times, in hex (logged when a link
  that was up goes down).

Queue policy (iteration mode): events wait in a queue; when it holds
:data:`QUEUE_HIGH` events the link stops reading the port (the kernel and, for
``framed``, the device's retransmission hold the rest) and reads again below
:data:`QUEUE_LOW`. The queue never holds more than :data:`QUEUE_HIGH` plus the events of
one read.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import random
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from types import TracebackType
from typing import Final, Self

from baccarat.drivers.codec import Codec, Decoder, get_codec
from baccarat.drivers.events import DeviceEvent, LinkDown, LinkUp
from baccarat.drivers.serial_transport import PortError, SerialPort, open_port

log = logging.getLogger(__name__)

RECONNECT_DELAY_MIN: Final = 0.1
"""Seconds before the first reopen after a failure or a loss."""
RECONNECT_DELAY_MAX: Final = 1.5
"""Cap of the doubling reopen delay, in seconds (before jitter)."""
RECONNECT_JITTER: Final = 0.5
"""Each delay is scaled by a random factor in [1 - jitter, 1]."""
WATCHDOG_TICK: Final = 0.25
"""Seconds between checks for a missing heartbeat."""
DEBUG_RING_SIZE: Final = 64
"""Chunks in and out kept for :meth:`DeviceLink.dump_debug`."""
QUEUE_HIGH: Final = 1024
QUEUE_LOW: Final = 256


class LinkState(enum.Enum):
    """Where the link is."""

    IDLE = "idle"
    CONNECTING = "connecting"
    OPEN = "open"  # port open, no valid frame yet (or heartbeat missing)
    UP = "up"
    WAITING = "waiting"  # between a failure and the next attempt
    FAILED = "failed"
    STOPPED = "stopped"


def reconnect_delay(attempt: int, rng: random.Random) -> float:
    """Seconds to wait before open attempt ``attempt + 1`` (``attempt`` >= 1)."""
    base = min(RECONNECT_DELAY_MAX, RECONNECT_DELAY_MIN * 2.0 ** min(attempt - 1, 30))
    return base * rng.uniform(1.0 - RECONNECT_JITTER, 1.0)


_STOP: Final = object()


class DeviceLink:
    """A device behind a serial port or socket, as a stream of device events.

    ``device``: a path or ``socket://host:port``; ``protocol``: a codec name
    (``"line"``, ``"framed"``) or a :class:`~baccarat.drivers.codec.Codec`; ``baud``: the
    line speed (8N1); ``on_event``: a callback for every event, instead of iterating over
    the link; ``max_attempts``: failed opens in a row before giving up (``None``: never);
    ``seed``: of the backoff jitter (tests). Iterate over a link once, from one consumer.
    """

    def __init__(
        self,
        device: str,
        protocol: str | Codec = "line",
        *,
        baud: int = 9600,
        on_event: Callable[[DeviceEvent], None] | None = None,
        max_attempts: int | None = None,
        seed: int | None = None,
    ) -> None:
        self.device = device
        self.codec = protocol if isinstance(protocol, Codec) else get_codec(protocol)
        self.baud = baud
        self._on_event = on_event
        self.max_attempts = max_attempts
        self._rng = random.Random(seed)
        self._decoder: Decoder = self.codec.decoder()
        self._queue: asyncio.Queue[DeviceEvent | object] = asyncio.Queue()
        self._paused = False
        self._ended = False
        self._queued = 0  # events put on the queue, ever
        self._consumed = 0  # events the consumer is done with
        self._acks_waiting: deque[tuple[int, bytes]] = deque()  # (after event n, ACK)
        self._port: SerialPort | None = None
        self._task: asyncio.Task[None] | None = None
        self._reported_up: bool | None = None
        self._last_frame_at = 0.0
        self._frames_seen = 0
        self._ring: deque[tuple[float, str, bytes]] = deque(maxlen=DEBUG_RING_SIZE)
        self.state = LinkState.IDLE
        self._stats = dict.fromkeys(
            (
                "bytes_out",
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

    # -- lifecycle -------------------------------------------------------------------

    async def start(self) -> None:
        """Start connecting in the background. Idempotent."""
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name=f"link {self.device}")

    async def stop(self) -> None:
        """Close the port, stop reconnecting and end iteration. Idempotent."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self._close_port()
        if self.state is not LinkState.FAILED:
            self.state = LinkState.STOPPED
        self._end_iteration()

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

    def _end_iteration(self) -> None:
        if not self._ended:
            self._ended = True
            self._queue.put_nowait(_STOP)

    def __aiter__(self) -> AsyncIterator[DeviceEvent]:
        return self._events()

    async def _events(self) -> AsyncIterator[DeviceEvent]:
        while True:
            item = await self._queue.get()
            if self._paused and self._queue.qsize() <= QUEUE_LOW:
                self._resume_reading()
            if isinstance(item, DeviceEvent):
                yield item
                self._consumed_one()
            else:
                return

    def resume_after(self, seq: int) -> None:
        """Frames up to device sequence number ``seq`` were handled before a restart.

        For a protocol with sequence numbers (``framed``) the device's retransmissions of
        them are acknowledged and dropped; for others this does nothing.
        """
        resume = getattr(self._decoder, "resume_after", None)
        if resume is not None:
            resume(seq)

    # -- diagnostics -----------------------------------------------------------------

    @property
    def counters(self) -> dict[str, int]:
        """Link and decoder counters.

        ``retransmissions`` counts frames the device sent (or must send) again: duplicates
        received plus frames discarded because one before them was lost.
        """
        counters = dict(self._decoder.counters)
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

    # -- the connection loop ---------------------------------------------------------

    async def _run(self) -> None:
        failures = 0
        while True:
            self.state = LinkState.CONNECTING
            try:
                port = await open_port(self.device, self.baud, self._received)
            except PortError as exc:
                failures += 1
                self._stats["open_failures"] += 1
                if self._open_failed(exc, failures):
                    return
                await self._wait(failures)
                continue
            if self._stats["opens"]:
                self._stats["reconnects"] += 1
            self._stats["opens"] += 1
            failures = 0
            reason = await self._serve(port)
            self._lost(reason)
            await self._wait(1)

    def _open_failed(self, exc: PortError, failures: int) -> bool:
        """Report a failed open; return whether to give up."""
        if failures == 1:
            log.warning("%s: cannot open (%s); retrying", self.device, exc)
        else:
            log.debug("%s: still cannot open (%s), attempt %d", self.device, exc, failures)
        if self.max_attempts is not None and failures >= self.max_attempts:
            self.state = LinkState.FAILED
            self._report_down(f"gave up after {failures} failed opens: {exc}", force=True)
            log.error("%s: link FAILED after %d attempts", self.device, failures)
            self._end_iteration()
            return True
        self._report_down(f"cannot open: {exc}")
        return False

    async def _wait(self, failures: int) -> None:
        self.state = LinkState.WAITING
        await asyncio.sleep(reconnect_delay(failures, self._rng))

    async def _serve(self, port: SerialPort) -> str:
        """Read from ``port`` until it is lost; return why. Closes the port."""
        self._port = port
        self._paused = False  # a new port reads; _emit pauses it again if need be
        self._last_frame_at = time.monotonic()
        self._frames_seen = self._frames_ok()
        self.state = LinkState.OPEN
        if self.codec.heartbeat_timeout is None:
            self._report_up(f"{self.device} open at {self.baud} baud")
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
            silent = time.monotonic() - self._last_frame_at
            if timeout is not None and silent > timeout and self.state is LinkState.UP:
                self._stats["heartbeat_timeouts"] += 1
                self.state = LinkState.OPEN
                self._report_down(f"no frame for {silent:.1f} s (heartbeat timeout {timeout} s)")

    async def _close_port(self) -> None:
        """Close the port and wait until it is closed (again, if a close was cancelled)."""
        port = self._port
        if port is None:
            return
        await port.close()
        if self._port is port:
            self._port = None
            for event in self._decoder.resync():
                self._emit(event)

    def _lost(self, reason: str) -> None:
        was_up = self._reported_up
        self._report_down(reason)
        if was_up:
            log.info("%s: link lost (%s)\n%s", self.device, reason, self.dump_debug())

    # -- bytes in, events out ----------------------------------------------------------

    def _received(self, data: bytes) -> None:
        """Called by the transport with every chunk: decode, acknowledge, emit."""
        self._ring.append((time.monotonic(), "rx", data))
        events = self._decoder.feed(data)
        if self.codec.heartbeat_timeout is not None:
            self._check_frames()
        for event in events:
            self._emit(event)
        reply = self._decoder.pending_output()
        if reply:
            self._acknowledge(reply)

    def _acknowledge(self, reply: bytes) -> None:
        """Write ``reply`` once every event emitted so far has been handled.

        With a callback that is now (it has returned for each of them: the daemon's
        journal has them); when iterating, it is when the consumer asks for the event after
        the last of them. Only then may the device forget them.
        """
        if self._on_event is not None or self._consumed >= self._queued:
            self._write(reply)
        else:
            self._acks_waiting.append((self._queued, reply))

    def _consumed_one(self) -> None:
        """The consumer asked for the next event: it is done with the previous one."""
        self._consumed += 1
        reply = b""
        while self._acks_waiting and self._acks_waiting[0][0] <= self._consumed:
            reply = self._acks_waiting.popleft()[1]  # cumulative: the newest covers all
        if reply:
            self._write(reply)

    def _write(self, reply: bytes) -> None:
        if self._port is not None:
            self._port.write(reply)
            self._stats["bytes_out"] += len(reply)
            self._ring.append((time.monotonic(), "tx", reply))

    def _check_frames(self) -> None:
        frames = self._frames_ok()
        if frames != self._frames_seen:
            self._frames_seen = frames
            self._last_frame_at = time.monotonic()
            if self.state is LinkState.OPEN:
                self.state = LinkState.UP
                self._report_up(f"{self.device}: frames arriving at {self.baud} baud")

    def _frames_ok(self) -> int:
        return self._decoder.counters.get("frames_ok", 0)

    def _report_up(self, detail: str) -> None:
        self.state = LinkState.UP
        if self._reported_up is not True:
            self._reported_up = True
            self._stats["link_ups"] += 1
            self._emit(LinkUp(detail))

    def _report_down(self, reason: str, *, force: bool = False) -> None:
        if self._reported_up is not False or force:
            self._reported_up = False
            self._stats["link_downs"] += 1
            self._emit(LinkDown(reason))

    def _emit(self, event: DeviceEvent) -> None:
        self._stats["events"] += 1
        if self._on_event is not None:
            try:
                self._on_event(event)
            except Exception:
                log.exception("%s: event handler failed on %r", self.device, event)
            return
        self._queue.put_nowait(event)
        self._queued += 1
        if not self._paused and self._queue.qsize() >= QUEUE_HIGH and self._port is not None:
            self._paused = True
            self._stats["read_pauses"] += 1
            self._port.pause_reading()

    def _resume_reading(self) -> None:
        self._paused = False
        if self._port is not None:
            self._port.resume_reading()
