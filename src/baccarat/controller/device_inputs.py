"""What the device says, as the engine's inputs: its events, bad bytes, a restart, deafness.

The table (``controller/table.py``) feeds every device event through :func:`device_input`;
rejected bytes are summed by :class:`BadDataSummary` into at most one ``bad_data`` alarm a
second; :class:`DeviceLog` says in the daemon's own log what the device sends that is not a
card (bad bytes with a hint at the protocol or line speed, the device's faults and reports,
a line that goes quiet), repeats counted, not written; a restart in the middle of a round
of a device that cannot resend is :func:`restart_report`'s alarm; and :func:`watch_deaf`
notices a shoe that does not hear the controller.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Final

from baccarat.controller.commands import button_input
from baccarat.controller.config import DeviceConfig
from baccarat.controller.engine.engine import Engine
from baccarat.controller.engine.inputs import (
    CutCardSeen,
    DeviceReport,
    DrawCard,
    Input,
    NewShoe,
)
from baccarat.controller.outbox import Outbox, OutMessage
from baccarat.controller.publisher import Publisher, status_payload
from baccarat.drivers import events as ev
from baccarat.drivers.codec import get_codec
from baccarat.drivers.hints import rejected_hint
from baccarat.drivers.serial_source import SerialSource
from baccarat.drivers.source import DeviceSource
from baccarat.drivers.usb_source import UsbSettings, UsbSource
from baccarat.logs import Repeated
from baccarat.reconnect import LinkState

log = logging.getLogger("baccarat.daemon")

BAD_DATA_INTERVAL: Final = 1.0
"""Seconds: at most one bad_data alarm this often; rejected bytes in between are summed."""
DEAF_WINDOW: Final = 5.0
"""Seconds in which a framed shoe that sends only frames already taken, and nothing new,
counts as not hearing the controller's acknowledgements."""
DEAF_REPEATS: Final = 3
"""Frames sent again within :data:`DEAF_WINDOW` that make it so."""
QUIET_AFTER: Final = 30.0
"""Seconds without a byte from the device after which the log says so (once, until bytes
come again)."""


def open_device(device: DeviceConfig) -> DeviceSource | None:
    """The source the configuration names, not yet started; ``None`` for kind = none."""
    if device.kind == "serial":
        assert device.path is not None
        return SerialSource(device.path, device.protocol, baud=device.baud)
    if device.kind == "usb":
        settings = UsbSettings(
            vendor_id=device.usb_vendor, product_id=device.usb_product, protocol=device.protocol
        )
        return UsbSource(settings)
    return None


class BadDataSummary:
    """Rejected bytes summed for the ``bad_data`` alarm: every byte counted, once.

    Timed on ``clock``, the monotonic clock: a step of the wall clock (NTP) neither
    silences the alarm nor hurries it.
    """

    SAMPLE: Final = 16
    """Bytes shown in the alarm's text, in hex."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.bytes = 0
        self.pieces = 0
        self.sample = b""
        self.reason = ""
        self._reported_at: float | None = None

    def add(self, event: ev.Rejected) -> float:
        """Count ``event``'s bytes; the seconds until the alarm is due (0 or less: now)."""
        if not self.bytes:
            self.reason = event.reason
        self.bytes += event.size
        self.pieces += 1
        self.sample += event.data[: self.SAMPLE - len(self.sample)]
        if self._reported_at is None:
            return 0.0
        return BAD_DATA_INTERVAL - (self.clock() - self._reported_at)

    def take(self) -> str | None:
        """The alarm's text for the bytes counted, and start counting again; ``None``: none."""
        if not self.bytes:
            return None
        more = " ..." if self.bytes > len(self.sample) else ""
        why = self.reason if self.pieces == 1 else f"{self.pieces} pieces, first {self.reason}"
        text = f"{self.bytes} byte(s) rejected ({why}): {self.sample.hex(' ')}{more}"
        self.bytes, self.pieces, self.sample = 0, 0, b""
        self._reported_at = self.clock()
        return text


class DeviceLog:
    """The daemon's log lines of what its device sends, other than cards.

    The same events go on to the engine and MQTT as alarms; this is what an engineer sees
    with ``journalctl -u baccarat``. Repeats of a kind within
    :data:`~baccarat.logs.REPEAT_WINDOW` are counted, not written (:class:`Repeated`).
    """

    def __init__(self, device: DeviceConfig, repeated: Repeated | None = None) -> None:
        self.device = device
        self.repeated = repeated or Repeated(log)

    @property
    def name(self) -> str:
        """The device as the log names it: its path, or the USB ids."""
        if self.device.kind == "usb":
            return f"USB device {self.device.usb_vendor:04x}:{self.device.usb_product:04x}"
        return self.device.path or "the device"

    def rejected(self, text: str, sample: bytes) -> None:
        """A ``bad_data`` alarm's text, with a hint if the bytes fit another protocol/speed."""
        baud = self.device.baud if self.device.kind == "serial" else None
        hint = rejected_hint(self.device.protocol, sample, baud, config=True)
        self.repeated.log(
            logging.WARNING, "bad_data", "device %s: %s%s", self.name, text,
            f"; hint: {hint}" if hint else "",
        )

    def event(self, event: ev.DeviceEvent) -> None:
        """The device's own report (a fault, a link down or up, a gap, a restart), if any."""
        if isinstance(event, ev.DeviceFault):
            self.repeated.log(logging.WARNING, ("fault", event.code),
                              "device %s reports fault code %d: %s", self.name, event.code,
                              event.text)
        elif isinstance(event, ev.LinkDown):
            self.repeated.log(logging.WARNING, "link_down", "device %s: link down: %s",
                              self.name, event.reason)
        elif isinstance(event, ev.LinkUp):
            self.repeated.log(logging.INFO, "link_up", "device %s: link up: %s",
                              self.name, event.detail)
        elif isinstance(event, ev.SequenceGap | ev.SessionUnknown | ev.SessionReplayed
                        | ev.SessionReused):
            self.repeated.log(logging.WARNING, type(event).__name__, "device %s: %s",
                              self.name, event.detail)
        elif isinstance(event, ev.UnreadableCard):
            self.repeated.log(logging.WARNING, "unreadable", "device %s: unreadable card (%s)",
                              self.name, event.raw.hex(" "))

    async def watch_quiet(self, device: DeviceSource, after: float = QUIET_AFTER) -> None:
        """Say when no byte has come from ``device`` for ``after`` seconds, and when they do.

        Once per silence: a shoe that sends nothing between shoes is not a flood. A framed
        shoe's heartbeats keep a healthy line from being quiet. Only while the port is
        open: a port that cannot be opened is said by the source itself.
        """
        last = device.counters.get("bytes_in", 0)
        quiet_since = time.monotonic()
        told = False
        while True:
            await asyncio.sleep(min(after, 1.0))
            now_bytes = device.counters.get("bytes_in", 0)
            if device.state not in (LinkState.OPEN, LinkState.UP):  # not open: said already
                last, quiet_since, told = now_bytes, time.monotonic(), False
                continue
            if now_bytes != last:
                if told:
                    log.info("device %s: bytes again after %.0f s of silence", self.name,
                             time.monotonic() - quiet_since)
                last, quiet_since, told = now_bytes, time.monotonic(), False
            elif not told and time.monotonic() - quiet_since >= after:
                told = True
                log.warning("no bytes from %s for %.0f s (is it on, plugged in, at %s?)",
                            self.name, after, self._settings())

    def _settings(self) -> str:
        if self.device.kind == "serial":
            return f"{self.device.baud} baud, protocol {self.device.protocol}"
        return f"protocol {self.device.protocol}"


def device_input(event: ev.DeviceEvent, ts: float) -> Input | None:
    """The engine input a device event stands for, if any."""
    if isinstance(event, ev.CardDrawn):
        return DrawCard(event.card, ts=ts)
    if isinstance(event, ev.UnreadableCard):
        return DrawCard(None, ts=ts)
    if isinstance(event, ev.CutCard):
        return CutCardSeen(ts=ts)
    if isinstance(event, ev.DealerButton):
        try:
            return button_input(event.button, ts)
        except KeyError:
            return DeviceReport("fault", f"unknown dealer button {event.button!r}", ts=ts)
    if isinstance(event, ev.ShoeInserted | ev.ShuffleDone):
        return NewShoe(ts=ts)  # a freshly loaded shoe, or the shuffler's new shoe
    if isinstance(event, ev.DeviceFault):
        return DeviceReport("fault", f"code {event.code}: {event.text}", ts=ts)
    if isinstance(event, ev.LinkDown):
        return DeviceReport("link_down", event.reason, ts=ts)
    if isinstance(event, ev.LinkUp):
        return DeviceReport("link_up", event.detail, ts=ts)
    if isinstance(event, ev.SequenceGap):
        return DeviceReport("sequence_gap", event.detail, ts=ts)
    if isinstance(event, ev.Hello):
        session = "unknown" if event.session is None else f"0x{event.session:04x}"
        return DeviceReport("hello", f"protocol version {event.version}, session {session}", ts=ts)
    if isinstance(event, ev.SessionUnknown):  # cards may come twice: the pit checks the round
        return DeviceReport("restart", event.detail, ts=ts)
    if isinstance(event, ev.SessionReplayed):
        return DeviceReport("replay", event.detail, ts=ts)
    if isinstance(event, ev.SessionReused):
        return DeviceReport("session_reused", event.detail, ts=ts)
    return None


def restart_report(engine: Engine, device: DeviceConfig, ts: float) -> DeviceReport | None:
    """The alarm for a restart during a round, if the device cannot resend what it sent.

    A device whose codec resends what was not acknowledged (``framed``) keeps each card
    until the journal holds it; another (a ``line`` shoe) does not: a card dealt while the
    daemon was down may be missing (a port that held the bytes gives them, but the daemon
    cannot know that none were lost), so the pit checks the round on the table against the
    cards the controller has.
    """
    rnd = engine.round
    if device.kind == "none" or rnd is None or rnd.closed:
        return None
    if get_codec(device.protocol).resends_unacknowledged:
        return None
    cards = ", ".join(f"{d.position} {d.card or 'unreadable'}" for d in rnd.dealt) or "none"
    text = (
        f"the controller restarted during round {rnd.number}; cards it has: {cards}; "
        f"next: {rnd.next_card or 'none'}. A card dealt while it was down may be missing: "
        "check the round on the table against these cards (void it if they differ)"
    )
    return DeviceReport("restart", text, ts=ts)


async def watch_deaf(
    device: DeviceSource, report: Callable[[DeviceReport], object], now: Callable[[], float]
) -> None:
    """A shoe that repeats what it sent and sends nothing new does not hear us: alarm.

    Its frames reach the controller (the link is up) but the controller's ACKs do not
    reach it (the cable's line towards the shoe), so it sends its window again and
    again and no card gets through. ``shoe_deaf`` is raised once, retained while it
    lasts, and cleared by the first new frame.
    """
    before = dict(device.counters)
    deaf = False
    while True:
        await asyncio.sleep(DEAF_WINDOW)
        now_counters = dict(device.counters)
        repeated = now_counters.get("duplicates", 0) - before.get("duplicates", 0)
        new = now_counters.get("events", 0) - before.get("events", 0)
        before = now_counters
        if not deaf and repeated >= DEAF_REPEATS and new == 0:
            deaf = True
            text = (
                f"the shoe sent {repeated} frames again and nothing new in"
                f" {DEAF_WINDOW:.0f} s: it does not hear the controller's acknowledgements"
                " (check the cable's line towards the shoe)"
            )
            log.error("device: %s", text)
            report(DeviceReport("shoe_deaf", text, ts=now()))
        elif deaf and new:
            deaf = False
            log.info("device: the shoe hears the controller again")
            report(DeviceReport("shoe_hears", ts=now()))


class DeviceStatus:
    """Where the table's device is, as the retained ``status`` says: none, waiting or up.

    Said on every connect and, at a change, queued at once, so that a board or the pit
    sees a table online whose shoe is not (yet) heard; not once the table is in fault
    (``in_fault``: its status says so then).
    """

    def __init__(
        self, device: DeviceConfig, table: str, publisher: Publisher, outbox: Outbox, *,
        key: str | None, in_fault: Callable[[], bool],
    ) -> None:
        self.table, self.publisher, self.outbox, self.key = table, publisher, outbox, key
        self.in_fault = in_fault
        self.state = "none" if device.kind == "none" else "waiting"
        self.up = asyncio.Event()
        """Set while the device is up (or when there is none)."""
        if self.state == "none":
            self.up.set()
        else:
            publisher.say_on_connect(self._payload())

    def say(self, state: str) -> None:
        """The device is now ``waiting`` or ``up``."""
        if self.in_fault() or state == self.state:
            return
        self.state = state
        if state == "up":
            self.up.set()
        else:
            self.up.clear()
        status = self._payload()
        self.publisher.say_on_connect(status)
        self.outbox.put(OutMessage(self.publisher.status_topic, status, retain=True))

    def _payload(self) -> bytes:
        return status_payload("online", self.table, device=self.state, key=self.key)
