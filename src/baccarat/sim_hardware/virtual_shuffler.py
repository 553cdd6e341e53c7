"""A virtual USB shuffler: an emulated device on the emulated USB bus (:mod:`.usb_bus`).

The real USB driver (:mod:`baccarat.drivers.usb_source`) reads it through the bus's pyusb
backend, unchanged. :class:`ShufflerFirmware` is the function behind its endpoints: it
deals an N-deck shoe from a seed as ``framed`` frames, one ``CardDrawn`` frame per card,
with ``ShuffleStarted`` / ``ShuffleDone`` around the shuffle, and retransmits every frame
the host has not acknowledged in time; :class:`VirtualShuffler` plugs it into a bus.

The firmware runs no thread of its own: it is asked for bytes whenever the host polls the IN
endpoint, which is also when a real device's FIFO is drained. The shuffler is self-powered,
so pulling the cable loses the bytes in flight but not the firmware's state: after a replug it
retransmits whatever was not acknowledged.
"""

from __future__ import annotations

from typing import Final

from baccarat.cards import Card, shuffled_shoe
from baccarat.drivers import framed_device
from baccarat.drivers.events import CardDrawn, ShuffleDone, ShuffleStarted
from baccarat.sim_hardware.usb_bus import (
    MAX_PACKET_SIZE,
    TEST_PRODUCT_ID,
    TEST_VENDOR_ID,
    EmulatedUsbBackend,
    EmulatedUsbDevice,
)

VIRTUAL_SHUFFLER_VID: Final = TEST_VENDOR_ID
VIRTUAL_SHUFFLER_PID: Final = TEST_PRODUCT_ID
"""The shuffler's USB ids: pid.codes' test ids, which no real shuffler has."""
RETRANSMIT_TIMEOUT = framed_device.RETRANSMIT_TIMEOUT
"""Seconds the shuffler waits for an acknowledgement before sending its frames again."""
HEARTBEAT_INTERVAL = framed_device.HEARTBEAT_INTERVAL
"""Seconds of silence after which the shuffler sends a HEARTBEAT frame."""




class ShufflerFirmware:
    """The shuffler's firmware: shuffles a shoe and deals it as ``framed`` frames.

    At power-up it sends HELLO, then ShuffleStarted and ShuffleDone, then one CardDrawn
    frame per card, every ``pace`` seconds (0: as fast as the window allows). The
    reliability is :class:`~baccarat.drivers.framed_device.FramedSender`'s: at most ``window``
    frames unacknowledged, all of them sent again after :data:`RETRANSMIT_TIMEOUT`, and a
    HEARTBEAT after :data:`HEARTBEAT_INTERVAL` of silence. Implements :class:`UsbFunction`.
    """

    def __init__(
        self,
        decks: int = 8,
        seed: int | None = None,
        *,
        pace: float = 0.0,
        window: int = framed_device.WINDOW,
        heartbeat: bool = True,
        session: int | None = None,
    ) -> None:
        self.shoe = shuffled_shoe(decks, seed)
        self.pace = pace
        self.sender = framed_device.FramedSender(
            window=window,
            retransmit_timeout=RETRANSMIT_TIMEOUT,
            heartbeat_interval=HEARTBEAT_INTERVAL if heartbeat else None,
            session=session,
        )
        self.sender.queue(ShuffleStarted())
        self.sender.queue(ShuffleDone())
        self.cards_queued = 0
        self._dealing_since: float | None = None
        self.unplugs = 0
        self.deaf = False
        """A fault, for tests: the host's bytes are lost on their way (set under the lock).

        The shuffler retransmits what it sent, as to a host that died before it wrote its
        acknowledgements."""

    @property
    def dealt_all(self) -> bool:
        """Every card of the shoe was sent and acknowledged."""
        return self.cards_queued == len(self.shoe) and self.sender.idle

    def take_in(self, now: float) -> bytes:
        """Queue the cards now due, then every frame the window and the clock allow."""
        self._draw_due_cards(now)
        frames = bytearray()
        while (frame := self.sender.next_frame(now)) is not None:
            frames += frame
        return bytes(frames)

    def next_wakeup(self, now: float) -> float | None:
        """The next retransmission, heartbeat or paced card, whichever comes first."""
        times = [self.sender.next_deadline(), self._next_card_due()]
        return min((t for t in times if t is not None), default=None)

    def receive_out(self, data: bytes, now: float) -> None:
        """Acknowledgements from the host release frames from the window (unless deaf)."""
        if not self.deaf:
            self.sender.receive(data)

    def unplugged(self) -> None:
        """The frames in flight are lost on the wire; the sender retransmits them later."""
        self.unplugs += 1

    def _draw_due_cards(self, now: float) -> None:
        if self._dealing_since is None:
            self._dealing_since = now
        while self.cards_queued < len(self.shoe):
            due = self._next_card_due()
            if due is not None and due > now:
                return
            self.sender.queue(CardDrawn(self.shoe[self.cards_queued]))
            self.cards_queued += 1

    def _next_card_due(self) -> float | None:
        if self.cards_queued >= len(self.shoe) or self._dealing_since is None:
            return None
        return self._dealing_since + self.pace * (self.cards_queued + 1)


class VirtualShuffler:
    """A shuffler plugged into its own emulated bus: pass :attr:`backend` to pyusb.

    ``packet_size`` below 64 makes the device send short packets, splitting frames more.
    """

    def __init__(
        self,
        decks: int = 8,
        seed: int | None = None,
        *,
        pace: float = 0.0,
        window: int = framed_device.WINDOW,
        heartbeat: bool = True,
        packet_size: int = MAX_PACKET_SIZE,
        vendor_id: int = VIRTUAL_SHUFFLER_VID,
        product_id: int = VIRTUAL_SHUFFLER_PID,
    ) -> None:
        self.firmware = ShufflerFirmware(decks, seed, pace=pace, window=window, heartbeat=heartbeat)
        self.device = EmulatedUsbDevice(
            self.firmware, vendor_id=vendor_id, product_id=product_id, packet_size=packet_size
        )
        self.backend = EmulatedUsbBackend(self.device)

    @property
    def shoe(self) -> list[Card]:
        """The cards in the order the shuffler deals them."""
        return self.firmware.shoe

    @property
    def attached(self) -> bool:
        """Whether the cable is plugged in."""
        return self.device.attached

    def detach(self) -> None:
        """Pull the USB cable."""
        self.device.detach()

    def attach(self) -> None:
        """Plug the USB cable back in."""
        self.device.attach()

    def counters(self) -> dict[str, int]:
        """The firmware's sender counters and cards dealt, read consistently."""
        with self.device.lock:
            counters = self.firmware.sender.counters
            counters.update(cards_queued=self.firmware.cards_queued, unplugs=self.firmware.unplugs)
            return counters
