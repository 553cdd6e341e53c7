"""USB shufflers as a :class:`~baccarat.drivers.source.DeviceSource`: pyusb in worker threads.

The shuffler is found by vendor and product id (:class:`UsbSettings`; the defaults are the
pid.codes *test* ids 0x1209:0x0001, which the virtual shuffler uses and no shipped product
may). Its one vendor-specific interface has a bulk IN endpoint, on which the device sends a
byte stream in a codec's framing (``framed`` by default; a frame may straddle USB packets),
and a bulk OUT endpoint on which the host writes the codec's acknowledgements.

Threads and the loop:

* the *reader* thread owns the device: it finds it, claims the interface, reads bulk IN
  with a short timeout (:data:`READ_TIMEOUT`), decodes every chunk and hands the batch of
  events to the loop with ``loop.call_soon_threadsafe``. When the device goes away
  (``ENODEV``, or silence beyond the codec's heartbeat timeout) it releases the old handle
  with :func:`usb.util.dispose_resources`, reports :class:`LinkDown`, and looks for the
  device again (the package's :class:`~baccarat.reconnect.Reconnector`, in the thread)
  after the reconnection backoff of :func:`~baccarat.drivers.source.reconnect_backoff`;
* the *writer* thread writes acknowledgements to bulk OUT, so that an acknowledgement never
  waits for a pending read;
* on the loop, the consumer iterates over the source; acknowledgements follow the rule of
  :mod:`baccarat.drivers.source`.

Queue policy (full queue): **backpressure, nothing dropped.** At most :data:`QUEUE_SIZE`
batches wait for the consumer. When that many wait, the reader thread stops reading until
the consumer catches up; the device's unacknowledged frames pile up on the device, which
stops sending new ones and retransmits later. The reader re-checks for a stop every
:data:`HANDOFF_POLL` seconds while it waits.

The source does not tell the device the table's open alarms:
:meth:`~baccarat.drivers.source.DeviceSource.tell_alarms` is a no-op here (the writer
thread carries acknowledgements only).

The decoder lives as long as the source, so it drops the duplicates a device retransmits
after a replug. Timeouts are module constants in seconds, read at run time, so tests
shrink them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import random
import threading
import time
from dataclasses import dataclass, fields
from typing import Any, Final

import usb.core
import usb.util
from pydantic import BaseModel, ConfigDict, Field

from baccarat.drivers.codec import get_codec
from baccarat.drivers.events import DeviceEvent, LinkDown, LinkUp, Rejected
from baccarat.drivers.source import Batch, DeviceSource, reconnect_backoff
from baccarat.errors import BaccaratError
from baccarat.reconnect import LinkState, Lost, Reconnector

_log = logging.getLogger(__name__)

DEFAULT_VENDOR_ID: Final = 0x1209
"""pid.codes' vendor id (https://pid.codes/1209/)."""
DEFAULT_PRODUCT_ID: Final = 0x0001
"""pid.codes' shared test PID (https://pid.codes/1209/0001/), for private testing only:
what the virtual shuffler answers to. Configure a real shuffler's own ids."""

READ_TIMEOUT = 0.1
"""Seconds one bulk IN read waits for data; also bounds how long :meth:`stop` waits."""
WRITE_TIMEOUT = 1.0
"""Seconds one bulk OUT write of acknowledgements may take."""
HANDOFF_POLL = 0.1
"""Seconds between checks for a stop while the queue is full."""
STOP_TIMEOUT = 5.0
"""Seconds a stop waits for the worker threads to finish."""
QUEUE_SIZE = 64
"""Batches (one per USB read, or a link event) waiting for the consumer at most."""
READ_PACKETS = 8
"""One bulk IN read asks for this many ``wMaxPacketSize`` packets."""


class UsbSettings(BaseModel):
    """Which USB device is the shuffler, and how it talks.

    The defaults find the virtual shuffler (pid.codes test ids 0x1209:0x0001); a real
    shuffler's vendor and product ids come from its maker.
    """

    model_config = ConfigDict(frozen=True)

    vendor_id: int = Field(DEFAULT_VENDOR_ID, ge=0, le=0xFFFF)
    product_id: int = Field(DEFAULT_PRODUCT_ID, ge=0, le=0xFFFF)
    serial_number: str | None = None
    """Match only the device with this serial number (when two share a host)."""
    interface: int = Field(0, ge=0)
    """``bInterfaceNumber`` of the interface with the bulk endpoints."""
    protocol: str = "framed"
    """Codec name (see :mod:`baccarat.drivers.codec`)."""
    heartbeat_timeout: float | None = Field(None, gt=0)
    """Seconds of silence that mean the link is down; None: the codec's own timeout."""
    max_reconnect_attempts: int | None = Field(None, ge=1)
    """Give up (state FAILED) after this many failed searches in a row; None: never."""


@dataclass(slots=True)
class UsbCounters:
    """Link-health counters; the decoder's (frames, CRC errors ...) are separate.

    :attr:`UsbSource.counters` returns both in one mapping.
    """

    bytes_in: int = 0
    bytes_out: int = 0
    transfers_in: int = 0
    events: int = 0
    rejected: int = 0
    reconnects: int = 0
    usb_errors: int = 0
    acks_dropped: int = 0
    """Acknowledgement writes skipped because no device was connected."""

    def as_dict(self) -> dict[str, int]:
        """The counters by name."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


class DeviceNotFoundError(BaccaratError, LookupError):
    """No device with the configured ids is on the bus."""


@dataclass(frozen=True, slots=True)
class _Link:
    """An open, claimed device and its endpoints."""

    device: Any  # usb.core.Device
    endpoint_in: int
    endpoint_out: int
    read_size: int

    @property
    def detail(self) -> str:
        """Which device, where: for LinkUp and the logs."""
        dev = self.device
        return f"USB {dev.idVendor:04x}:{dev.idProduct:04x} bus {dev.bus} address {dev.address}"


class UsbSource(DeviceSource):
    """Reads a USB shuffler's bulk IN stream, decodes it, acknowledges it, survives replugs.

    ``backend`` is a pyusb backend (``None``: pyusb picks libusb); the virtual shuffler's
    backend goes here in tests. Events are the codec's device events plus :class:`LinkUp`
    (device claimed) and :class:`LinkDown` (device lost: unplugged, I/O error, or silent
    past the codec's heartbeat timeout), in the order they happened.
    """

    def __init__(
        self,
        settings: UsbSettings | None = None,
        *,
        backend: Any = None,
        seed: int | None = None,
    ) -> None:
        self.settings = settings or UsbSettings()
        codec = get_codec(self.settings.protocol)
        super().__init__(codec.decoder())
        self._counters = UsbCounters()
        self._backend = backend
        self._silence_limit = self.settings.heartbeat_timeout or codec.heartbeat_timeout
        self._reconnector = Reconnector(
            self._attempt,
            backoff=reconnect_backoff(None if seed is None else random.Random(seed)),
            errors=(usb.core.USBError, DeviceNotFoundError),
            give_up_on=(usb.core.NoBackendError,),
            on_lost=self._on_lost, on_state=self._on_state,
            max_attempts=self.settings.max_reconnect_attempts,
        )
        self._connected_before = False
        self._quit = threading.Event()
        self._counter_lock = threading.Lock()
        self._link_lock = threading.Lock()
        self._link: _Link | None = None
        self._acks: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._permits = threading.BoundedSemaphore(QUEUE_SIZE)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._threads: list[tuple[threading.Thread, asyncio.Future[None]]] = []

    @property
    def counters(self) -> dict[str, int]:
        """Every counter in one mapping: the decoder's (frames, CRC errors ...) and the link's."""
        with self._counter_lock:
            return {**self.decoder.counters, **self._counters.as_dict()}

    # --- DeviceSource (on the loop) ----------------------------------------------------------

    async def _open(self) -> None:
        self._loop = asyncio.get_running_loop()
        self.state = LinkState.CONNECTING
        name = f"usb-{self.settings.vendor_id:04x}:{self.settings.product_id:04x}"
        self._spawn(f"{name}-in", self._run_reader)
        self._spawn(f"{name}-out", self._run_writer)

    async def _close(self) -> None:
        """Stop reading, release the device and join the threads."""
        self._quit.set()
        self._acks.put(None)
        try:
            async with asyncio.timeout(STOP_TIMEOUT):
                await asyncio.gather(*(done for _, done in self._threads))
        except TimeoutError:
            _log.error("USB worker threads did not stop within %.1f s", STOP_TIMEOUT)
        for thread, _ in self._threads:
            thread.join(timeout=0 if thread.is_alive() else None)

    def _write_ack(self, ack: bytes) -> None:
        self._acks.put(ack)

    def _taken(self) -> None:
        self._permits.release()

    def _spawn(self, name: str, target: Any) -> None:
        assert self._loop is not None
        done: asyncio.Future[None] = self._loop.create_future()
        thread = threading.Thread(target=self._run_thread, args=(target, done), name=name)
        self._threads.append((thread, done))
        thread.start()

    # --- worker threads ----------------------------------------------------------------------

    def _run_thread(self, target: Any, done: asyncio.Future[None]) -> None:
        """Run ``target``, then resolve ``done`` on the loop (so a stop never blocks it)."""
        try:
            target()
        except Exception:
            _log.exception("USB worker thread crashed")
        finally:
            assert self._loop is not None
            with contextlib.suppress(RuntimeError):  # the loop is already closed
                self._loop.call_soon_threadsafe(_resolve, done)

    def _run_reader(self) -> None:
        """Find the device, read it until it goes away, and again, until stopped."""
        self._reconnector.run_blocking(self._quit)

    def _attempt(self) -> str | None:
        """Find and claim the device, read it until it goes away (why) or a stop (None)."""
        link = self._open_device()
        if self._connected_before:
            self._count("reconnects")
        self._connected_before = True
        self._reconnector.connected()
        reason = self._pump(link)
        self._close_link(link)
        return reason

    def _on_state(self, state: LinkState) -> None:
        self.state = state

    def _on_lost(self, lost: Lost) -> None:
        """A link lost (LinkDown), or a search that failed (retried, or given up)."""
        if lost.was_up:
            _log.warning("USB link down: %s", lost.reason)
            self._post([*self.decoder.resync(), LinkDown(str(lost.reason))])
            return
        exc = lost.reason
        if isinstance(exc, usb.core.NoBackendError):
            self._give_up(f"no USB backend: {exc}")
            return
        if isinstance(exc, usb.core.USBError):
            self._count("usb_errors")
        if lost.delay is None:
            self._give_up(f"{exc} (after {lost.failures} tries)")
            return
        level = logging.WARNING if lost.failures == 1 else logging.DEBUG
        _log.log(level, "USB shuffler: %s; retrying in %.2f s", exc, lost.delay)

    def _give_up(self, reason: str) -> None:
        """Enter FAILED, say so and end the iteration, unless a stop ended the search."""
        if self._quit.is_set():
            return
        _log.error("USB shuffler: %s; giving up", reason)
        if self._post([LinkDown(f"{reason}; giving up")]):
            assert self._loop is not None
            with contextlib.suppress(RuntimeError):  # the loop is already closed
                self._loop.call_soon_threadsafe(self._end)

    def _open_device(self) -> _Link:
        """Find the device, configure it and claim its interface."""
        device = usb.core.find(
            idVendor=self.settings.vendor_id,
            idProduct=self.settings.product_id,
            backend=self._backend,
            custom_match=self._matches_serial,
        )
        if device is None:
            ids = f"{self.settings.vendor_id:04x}:{self.settings.product_id:04x}"
            raise DeviceNotFoundError(f"no USB device {ids}")
        try:
            return self._claim(device)
        except BaseException:
            usb.util.dispose_resources(device)
            raise

    def _matches_serial(self, device: Any) -> bool:
        wanted = self.settings.serial_number
        if wanted is None:
            return True
        try:
            return bool(device.serial_number == wanted)
        except (usb.core.USBError, ValueError):
            return False

    def _claim(self, device: Any) -> _Link:
        number = self.settings.interface
        with contextlib.suppress(NotImplementedError, usb.core.USBError):
            if device.is_kernel_driver_active(number):
                device.detach_kernel_driver(number)
        interface = _configuration(device)[(number, 0)]
        usb.util.claim_interface(device, number)
        endpoint_in = _bulk_endpoint(interface, usb.util.ENDPOINT_IN)
        endpoint_out = _bulk_endpoint(interface, usb.util.ENDPOINT_OUT)
        read_size = endpoint_in.wMaxPacketSize * READ_PACKETS
        return _Link(device, endpoint_in.bEndpointAddress, endpoint_out.bEndpointAddress, read_size)

    def _pump(self, link: _Link) -> str | None:
        """Read until the device goes away (return why) or the source stops (None)."""
        with self._link_lock:
            self._link = link
        _log.info("USB link up: %s", link.detail)
        self._post([LinkUp(link.detail)])
        last_data = time.monotonic()
        while not self._quit.is_set():
            try:
                chunk = link.device.read(link.endpoint_in, link.read_size, _ms(READ_TIMEOUT))
            except usb.core.USBTimeoutError:
                if self._silent_since(last_data):
                    return f"no data for {self._silence_limit} s (heartbeat missing)"
                continue
            except usb.core.USBError as exc:
                self._count("usb_errors")
                return f"USB error: {exc}"
            self._count("bytes_in", len(chunk))
            self._count("transfers_in")
            self._post(self.decoder.feed(bytes(chunk)), acknowledged=True)
            last_data = time.monotonic()  # after _post: a slow consumer is not silence
        return None

    def _silent_since(self, last_data: float) -> bool:
        limit = self._silence_limit
        return limit is not None and time.monotonic() - last_data > limit

    def _close_link(self, link: _Link) -> None:
        """Forget the link (after any write in progress) and release the handle."""
        with self._link_lock:
            self._link = None
            usb.util.dispose_resources(link.device)

    def _post(self, events: list[DeviceEvent], *, acknowledged: bool = False) -> bool:
        """Hand events to the loop; waits while the queue is full (False once stopped).

        ``acknowledged``: they come from the decoder, with the acknowledgements they earn.
        """
        batch = Batch.of(events, self.decoder) if acknowledged else Batch.unacknowledged(events)
        if not batch.items:
            return True
        with self._counter_lock:
            self._counters.events += len(events)
            self._counters.rejected += sum(isinstance(e, Rejected) for e in events)
        while not self._permits.acquire(timeout=HANDOFF_POLL):
            if self._quit.is_set():
                return False
        assert self._loop is not None
        try:
            self._loop.call_soon_threadsafe(self._deliver, batch)
        except RuntimeError:  # the loop is closed: nobody is listening any more
            self._permits.release()
            return False
        return True

    def _run_writer(self) -> None:
        """Write acknowledgements to bulk OUT until stopped."""
        while (data := self._acks.get()) is not None:
            self._write(data)

    def _write(self, data: bytes) -> None:
        with self._link_lock:
            link = self._link
            if link is None:
                self._count("acks_dropped")
                return
            try:
                written = link.device.write(link.endpoint_out, data, _ms(WRITE_TIMEOUT))
            except usb.core.USBError as exc:
                self._count("usb_errors")
                _log.debug("USB acknowledgement write failed: %s", exc)
                return
        self._count("bytes_out", int(written))

    def _count(self, name: str, amount: int = 1) -> None:
        with self._counter_lock:
            setattr(self._counters, name, getattr(self._counters, name) + amount)


def _configuration(device: Any) -> Any:
    """The active configuration, selecting the first one if the device has none yet.

    A configured device is left alone: setting the configuration again resets it.
    """
    try:
        return device.get_active_configuration()
    except usb.core.USBError:
        device.set_configuration()
        return device.get_active_configuration()


def _bulk_endpoint(interface: Any, direction: int) -> Any:
    """The interface's bulk endpoint in ``direction``; raise if it has none."""
    endpoint = usb.util.find_descriptor(
        interface,
        custom_match=lambda e: (
            usb.util.endpoint_direction(e.bEndpointAddress) == direction
            and usb.util.endpoint_type(e.bmAttributes) == usb.util.ENDPOINT_TYPE_BULK
        ),
    )
    if endpoint is None:
        side = "IN" if direction == usb.util.ENDPOINT_IN else "OUT"
        raise usb.core.USBError(f"interface has no bulk {side} endpoint")
    return endpoint


def _ms(seconds: float) -> int:
    """Seconds as pyusb's milliseconds; at least 1, since 0 would mean no timeout."""
    return max(1, round(seconds * 1000))


def _resolve(done: asyncio.Future[None]) -> None:
    if not done.done():
        done.set_result(None)
