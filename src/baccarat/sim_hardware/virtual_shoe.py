"""A virtual electronic shoe on a real pty, behind a stable symlink.

The shoe opens a pty pair (``os.openpty``, raw mode) and points a symlink at the slave's
name, as udev's ``/dev/serial/by-id/...`` points at a real adapter, so the host opens the
symlink exactly as it would open the real device. It speaks ``line`` or ``framed`` (the
same codec code the host uses, played from the device's side: acknowledgements read
back, retransmission after a timeout, heartbeats), paces its bytes at the configured baud
rate (10 bits a byte, 8N1), and can be unplugged: the pty is closed and the symlink
removed, and after the given time a new pty appears behind the same symlink.

Usage::

    async with VirtualShoe("/tmp/shoe", "framed", baud=9600) as shoe:
        await shoe.play(Dealer(decks=8, seed=1).events())   # queue a whole shoe
        await shoe.drain()                                   # written (and acknowledged)

The dealer stops while the host has an alarm open: over ``framed`` the host tells the shoe
which (ALARM frames, PROTOCOL.md 6.9), and :meth:`VirtualShoe.dealer_ready`, awaited
before each of the dealer's events by :meth:`VirtualShoe.play` and ``baccarat sim shoe``,
returns only once none is open (cleared, or its lease ran out). Events already queued are
not taken back. ``dealer_ignores_alarms`` deals on regardless (for fault tests).

Faults on the wire come from a :class:`~baccarat.sim_hardware.faults.FaultPlan`. While
the shoe is unplugged what it writes is lost, as on a pulled cable: ``line`` cards are
gone, ``framed`` frames are retransmitted after the replug. The shoe runs on the event
loop (a reader on the pty master, one writer task); :class:`ShoeThread` runs one in a
thread of its own for synchronous tests.

For the host's sessions (PROTOCOL.md 6.4): :meth:`VirtualShoe.power_up` restarts a
``framed`` shoe (what it had in flight is lost), in a new session or, against the
protocol, in one it used before; :attr:`VirtualShoe.recording` keeps every frame it
writes, and :meth:`VirtualShoe.replay` writes such frames again verbatim, as a device or
a converter between the shoe and the host that sends an earlier session again would.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
import tty
from collections import deque
from collections.abc import Callable, Coroutine, Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Protocol, Self, TypeVar

from baccarat.drivers.codec import Codec, Encoder, get_codec
from baccarat.drivers.events import CardDrawn, DealerButton, DeviceEvent
from baccarat.drivers.framed_device import HEARTBEAT_INTERVAL, RETRANSMIT_TIMEOUT, FramedSender
from baccarat.drivers.line import LineEncoder
from baccarat.rules.alarm_kinds import kinds_where
from baccarat.sim_hardware.faults import SPLIT_GAP, FaultInjector, FaultPlan

log = logging.getLogger(__name__)

BITS_PER_BYTE: Final = 10
"""8N1: a start bit, eight data bits, a stop bit."""
WRITE_RETRY: Final = 0.005
"""Seconds to wait when the pty is full (the host is not reading)."""
READ_SIZE: Final = 4096
DEALER_GOES_ON: Final = kinds_where(dealer="goes_on")
"""Alarm kinds the dealer does not stop for: his next cards are what settles them."""
DEALER_ENDS_ROUND: Final = kinds_where(dealer="ends_round")
"""Alarm kinds the dealer stops for only before his next ``open``: the round he is dealing
is what the pit looks at (its cards are its hands), so he deals it to the end first."""

T = TypeVar("T")


class Sender(Protocol):
    """What the shoe's writer needs from a protocol's device side.

    :class:`~baccarat.drivers.framed_device.FramedSender` is one; :class:`LineSender`
    another.
    """

    @property
    def idle(self) -> bool:
        """Nothing left to write or to have acknowledged."""
        ...

    def queue(self, event: DeviceEvent) -> None:
        """Queue an event."""
        ...

    def next_frame(self, now: float) -> bytes | None:
        """The next bytes to write, or ``None`` for now."""
        ...

    def next_deadline(self) -> float | None:
        """When there may be something to write without new input."""
        ...

    def receive(self, data: bytes, now: float | None = None) -> int:
        """Bytes from the host, arrived at ``now``; return how many frames they released."""
        ...

    def open_alarms(self, now: float) -> Mapping[int, str]:
        """The host's alarms open at ``now``: id -> kind."""
        ...

    def alarm_deadline(self) -> float | None:
        """When an open alarm lapses unless the host repeats it, or ``None``."""
        ...

    @property
    def answers_due(self) -> int:
        """Answers to the host's questions waiting to be written."""
        ...

    @property
    def in_flight(self) -> int:
        """Frames written and not yet acknowledged."""
        ...

    @property
    def counters(self) -> dict[str, int]:
        """The protocol side's counters (frames sent, retransmissions, ...)."""
        ...


class LineSender:
    """The device side of ``line``: frames written once, nothing comes back."""

    def __init__(self, encoder: Encoder) -> None:
        self._encoder = encoder
        self._frames: deque[bytes] = deque()
        self._sent = 0

    @property
    def idle(self) -> bool:
        """Nothing left to write."""
        return not self._frames

    def queue(self, event: DeviceEvent) -> None:
        """Queue an event (a card)."""
        self._frames.append(self._encoder.encode(event))

    def next_frame(self, now: float) -> bytes | None:
        """The next line, or ``None``."""
        if not self._frames:
            return None
        self._sent += 1
        return self._frames.popleft()

    def next_deadline(self) -> float | None:
        """No timers in ``line``."""
        return None

    def receive(self, data: bytes, now: float | None = None) -> int:
        """The host never talks in ``line``: ignored."""
        return 0

    def open_alarms(self, now: float) -> Mapping[int, str]:
        """The host cannot tell alarms in ``line``: none."""
        return {}

    def alarm_deadline(self) -> float | None:
        """No alarms in ``line``."""
        return None

    @property
    def answers_due(self) -> int:
        """The host asks nothing in ``line``."""
        return 0

    @property
    def in_flight(self) -> int:
        """Nothing waits for an acknowledgement in ``line``."""
        return 0

    @property
    def counters(self) -> dict[str, int]:
        """Lines sent, and how many wait to be."""
        return {"frames_sent": self._sent, "queued": len(self._frames)}


class VirtualShoe:
    """A shoe on a pty behind ``link`` (a symlink path). See the module docstring.

    ``protocol``: ``"line"`` or ``"framed"``; ``baud``: pacing of the bytes; ``faults``:
    what goes wrong on the wire; ``session``: the ``framed`` HELLO session id (random if
    ``None``); ``retransmit_timeout`` and ``heartbeat_interval``: ``framed`` timers;
    ``dealer_ignores_alarms``: the dealer does not stop for the host's alarms.
    """

    def __init__(
        self,
        link: str | os.PathLike[str],
        protocol: str = "line",
        *,
        baud: int = 9600,
        faults: FaultPlan | None = None,
        session: int | None = None,
        line_ending: bytes = b"\r\n",
        retransmit_timeout: float = RETRANSMIT_TIMEOUT,
        heartbeat_interval: float | None = HEARTBEAT_INTERVAL,
        dealer_ignores_alarms: bool = False,
    ) -> None:
        self.link = Path(link)
        self.dealer_ignores_alarms = dealer_ignores_alarms
        self.dealer_paused = False
        """True while the dealer waits for the host's alarms to close."""
        self.deaf = False
        """True: what the host writes is lost (a broken line towards the shoe)."""
        self.codec: Codec = get_codec(protocol)
        self.baud = baud
        self.faults = FaultInjector(faults)
        self.sender: Sender
        self._framed_timers = (retransmit_timeout, heartbeat_interval)
        if self.codec.name == "framed":
            self.sender = FramedSender(
                retransmit_timeout=retransmit_timeout,
                heartbeat_interval=heartbeat_interval,
                session=session,
            )
        elif self.codec.name == "line":
            self.sender = LineSender(LineEncoder(line_ending))
        else:
            self.sender = LineSender(self.codec.encoder())
        self._master: int | None = None
        self._slave: int | None = None
        self.device_name = ""
        """The current pty slave's path (changes at every replug)."""
        self._wire_free_at = 0.0
        self._wakeup = asyncio.Event()
        self._idle = asyncio.Event()
        self._heard = asyncio.Event()  # bytes came from the host
        self._writer: asyncio.Task[None] | None = None
        self._unplug_task: asyncio.Task[None] | None = None
        self._stopping = False
        self.events_sent = 0
        self.cards_sent = 0
        self.counters: dict[str, int] = dict.fromkeys(
            (
                "bytes_out", "bytes_lost", "writes", "unplugs", "skipped_events", "frames_cut",
                "dealer_pauses",
            ),
            0,
        )
        self.cut: Callable[[bytes], bool] | None = None
        """A precise cut on the wire: each frame it returns ``True`` for is lost."""
        self.recording: list[bytes] | None = None
        """A list (set it) to keep every frame the shoe writes, as the wire carries it."""

    # -- lifecycle -------------------------------------------------------------------

    async def start(self) -> None:
        """Create the pty and the symlink and start writing. Idempotent."""
        if self._writer is not None:
            return
        self._stopping = False
        self._plug()
        self._writer = asyncio.create_task(self._write_loop(), name=f"shoe {self.link}")

    async def stop(self) -> None:
        """Stop writing, close the pty and remove the symlink. Idempotent."""
        self._stopping = True
        for task in (self._writer, self._unplug_task):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._writer = self._unplug_task = None
        self._unplug()

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

    @property
    def plugged(self) -> bool:
        """Whether the pty exists (the cable is in)."""
        return self._master is not None

    # -- what the dealer does ----------------------------------------------------------

    def send(self, event: DeviceEvent) -> bool:
        """Queue ``event``; ``False`` (and counted) if the protocol cannot carry it."""
        if not self.codec.can_carry(event):
            self.counters["skipped_events"] += 1
            return False
        self.sender.queue(event)
        self.events_sent += 1
        self.cards_sent += isinstance(event, CardDrawn)
        self._idle.clear()
        self._wakeup.set()
        return True

    async def play(self, events: Iterable[DeviceEvent], *, pace: float = 0.0) -> int:
        """Send ``events`` in order, ``pace`` seconds after each card; return how many were sent.

        Before each event the dealer waits while the host has an alarm open
        (:meth:`dealer_ready`). Events the protocol cannot carry are skipped.
        """
        sent = 0
        for event in events:
            await self.dealer_ready(event)
            if self.send(event):
                sent += 1
                if pace and isinstance(event, CardDrawn):
                    await asyncio.sleep(pace)
        return sent

    def open_alarms(self) -> Mapping[int, str]:
        """The alarms the host has told the shoe are open now: id -> kind."""
        return self.sender.open_alarms(asyncio.get_running_loop().time())

    def _stopping_alarms(self, before: DeviceEvent | None) -> dict[int, str]:
        """The open alarms that stop the dealer before ``before`` (:meth:`stopping`)."""
        return self.stopping(self.open_alarms(), before)

    @staticmethod
    def stopping(alarms: Mapping[int, str], before: DeviceEvent | None) -> dict[int, str]:
        """Of ``alarms`` (id -> kind), those that stop the dealer before ``before``.

        All but those his next cards settle (``burn_incomplete`` says the burn is not
        done: a dealer burns on, he does not wait), and those he stops for only before he
        opens the next round (:data:`DEALER_ENDS_ROUND`).
        """
        opening = isinstance(before, DealerButton) and before.button == "open"
        return {
            n: kind
            for n, kind in alarms.items()
            if kind not in DEALER_GOES_ON and (opening or kind not in DEALER_ENDS_ROUND)
        }

    async def dealer_ready(self, before: DeviceEvent | None = None) -> None:
        """Return once no alarm of the host is open: the dealer's pause before an event.

        At once if none is open (but for :data:`DEALER_GOES_ON`, and
        :data:`DEALER_ENDS_ROUND` unless ``before`` is his ``open``), or with
        ``dealer_ignores_alarms``. Logs (info) when the dealer pauses and when he goes on,
        with the alarms' ids.
        """
        if self.dealer_ignores_alarms:
            return
        alarms = self._stopping_alarms(before)
        if not alarms:
            return
        waited = dict(alarms)
        self.counters["dealer_pauses"] += 1
        self.dealer_paused = True
        log.info("%s: the dealer pauses: alarm(s) %s open", self.link, _listed(alarms))
        try:
            while alarms:
                self._heard.clear()
                await self._wait(self.sender.alarm_deadline(), self._heard)
                alarms = self._stopping_alarms(before)
                waited.update(alarms)
        finally:
            self.dealer_paused = False
        log.info("%s: the dealer goes on: alarm(s) %s no longer open", self.link, _listed(waited))

    def power_up(self, session: int | None = None) -> int:
        """A ``framed`` shoe restarts: its frames queued and in flight are lost; a HELLO.

        ``session``: its new session (random if ``None``); giving the one it was in, or
        one it used before, plays a device that breaks PROTOCOL.md 6.4. Returns it.
        """
        if self.codec.name != "framed":
            raise ValueError(f"a {self.codec.name} shoe has no sessions")
        retransmit_timeout, heartbeat_interval = self._framed_timers
        sender = FramedSender(
            retransmit_timeout=retransmit_timeout, heartbeat_interval=heartbeat_interval,
            session=session,
        )
        self.sender = sender
        self._idle.clear()
        self._wakeup.set()
        log.info("%s: powered up in session 0x%04x", self.link, sender.session)
        return sender.session

    async def replay(self, frames: Iterable[bytes]) -> None:
        """Write ``frames`` (e.g. an earlier :attr:`recording`) again as they are, at the baud."""
        for frame in frames:
            await self._write(frame)

    async def drain(self) -> None:
        """Wait until everything queued is written (``framed``: and acknowledged)."""
        while not (self.sender.idle and self._idle.is_set()):
            self._wakeup.set()
            await self._idle.wait()
            if not self.sender.idle:
                self._idle.clear()

    async def write_raw(self, data: bytes) -> None:
        """Write ``data`` to the wire as it is, outside the protocol (half a frame, noise)."""
        await self._write_all(data)

    async def unplug(self, seconds: float) -> None:
        """Pull the cable now and plug it back (a new pty, same symlink) after ``seconds``."""
        self._unplug()
        self.counters["unplugs"] += 1
        log.info("%s: unplugged for %.1f s", self.link, seconds)
        await asyncio.sleep(seconds)
        if not self._stopping:
            self._plug()
            self._wakeup.set()
            log.info("%s: plugged in again as %s", self.link, self.device_name)

    # -- the pty -----------------------------------------------------------------------

    def _plug(self) -> None:
        master, slave = os.openpty()
        tty.setraw(slave)
        os.set_blocking(master, False)
        self._master, self._slave = master, slave
        self.device_name = os.ttyname(slave)
        temporary = self.link.with_name(self.link.name + ".new")
        temporary.unlink(missing_ok=True)
        temporary.symlink_to(self.device_name)
        temporary.replace(self.link)
        asyncio.get_running_loop().add_reader(master, self._readable)

    def _unplug(self) -> None:
        master, slave = self._master, self._slave
        self._master = self._slave = None
        if master is not None:
            asyncio.get_running_loop().remove_reader(master)
            os.close(master)
        if slave is not None:
            os.close(slave)
        if master is not None or self.link.is_symlink():
            self.link.unlink(missing_ok=True)

    def _readable(self) -> None:
        if self._master is None:
            return
        try:
            data = os.read(self._master, READ_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:  # not expected while the shoe holds the slave open
            log.warning("%s: reading the pty failed (%s); no more ACKs", self.link, exc)
            asyncio.get_running_loop().remove_reader(self._master)
            return
        if self.deaf:
            return  # the line towards the shoe is broken: the host's bytes never arrive
        released = self.sender.receive(data, asyncio.get_running_loop().time())
        self._heard.set()
        if released or self.sender.answers_due:
            self._wakeup.set()
        if released and self.sender.idle:
            self._idle.set()

    # -- writing -----------------------------------------------------------------------

    async def _write_loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            self._wakeup.clear()
            if self.faults.unplug_due() and self._unplug_task is None:
                self._unplug_task = asyncio.create_task(self._planned_unplug())
            frame = self.sender.next_frame(loop.time())
            if frame is None:
                for chunk in self.faults.flush():
                    await self._write(chunk)
                if self.sender.idle:
                    self._idle.set()
                await self._wait(self.sender.next_deadline())
                continue
            if self.cut is not None and self.cut(frame):
                self.counters["frames_cut"] += 1
                continue
            if self.recording is not None:
                self.recording.append(frame)
            for index, chunk in enumerate(self.faults.apply(frame)):
                if index:
                    await asyncio.sleep(SPLIT_GAP)
                await self._write(chunk)

    async def _planned_unplug(self) -> None:
        try:
            await self.unplug(self.faults.plan.unplug_seconds)
        finally:
            self._unplug_task = None

    async def _wait(self, deadline: float | None, event: asyncio.Event | None = None) -> None:
        """Until ``event`` (the writer's wake-up by default) is set, or ``deadline``."""
        event = self._wakeup if event is None else event
        if deadline is None:
            await event.wait()
            return
        delay = deadline - asyncio.get_running_loop().time()
        if delay > 0:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(delay):
                    await event.wait()

    async def _write(self, chunk: bytes) -> None:
        """Write ``chunk`` when the wire has carried it: ``len * 10 / baud`` seconds."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        done_at = max(now, self._wire_free_at) + len(chunk) * BITS_PER_BYTE / self.baud
        if done_at > now:
            await asyncio.sleep(done_at - now)
        await self._write_all(chunk)
        self._wire_free_at = done_at

    async def _write_all(self, chunk: bytes) -> None:
        view = memoryview(chunk)
        self.counters["writes"] += 1
        while view:
            if self._master is None:
                self.counters["bytes_lost"] += len(view)
                return
            try:
                written = os.write(self._master, view)
            except (BlockingIOError, InterruptedError):
                await asyncio.sleep(WRITE_RETRY)
                continue
            except OSError:
                self.counters["bytes_lost"] += len(view)
                return
            self.counters["bytes_out"] += written
            view = view[written:]


def _listed(alarms: Mapping[int, str]) -> str:
    return ", ".join(f"{alarm_id} ({kind})" for alarm_id, kind in sorted(alarms.items()))


class ShoeThread:
    """A :class:`VirtualShoe` on an event loop of its own, in a thread, for plain tests.

    ``with ShoeThread(VirtualShoe(...)) as thread: thread.call(thread.shoe.send, event)``;
    :meth:`run` runs a coroutine on the shoe's loop and waits for its result. The shoe must
    be created outside any running loop (its asyncio objects bind to the loop lazily).
    """

    def __init__(self, shoe: VirtualShoe) -> None:
        self.shoe = shoe
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="virtual shoe")

    def __enter__(self) -> Self:
        self._thread.start()
        self.run(self.shoe.start())
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` on the shoe's loop and return its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    def call(self, function: Callable[..., T], *args: Any) -> T:
        """Call ``function(*args)`` on the shoe's loop (e.g. ``shoe.send``); return its result."""

        async def call() -> T:
            return function(*args)

        return self.run(call())

    def close(self) -> None:
        """Stop the shoe, the loop and the thread. Idempotent."""
        if not self._thread.is_alive():
            return
        self.run(self.shoe.stop())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()
