"""An emulated USB bus behind a pyusb backend: the host's side of libusb, and devices on it.

The real USB driver (:mod:`baccarat.drivers.usb_source`) finds a device with
``usb.core.find(idVendor=..., idProduct=..., backend=backend)`` and then runs unchanged:
:class:`EmulatedUsbBackend` answers pyusb's :class:`usb.backend.IBackend` calls the way
libusb does: enumeration, handles, claims and transfers, with libusb's error codes and
``errno`` values (``ENODEV`` once a device is unplugged, ``ETIMEDOUT`` for a read that
found nothing in time). :class:`EmulatedUsbDevice` is one device on that bus: its
descriptors (one configuration, one vendor-specific interface, a bulk IN and a bulk OUT
endpoint of ``wMaxPacketSize`` 64), its IN FIFO cut into packets, and whether it is
plugged in. A :class:`UsbFunction` is the firmware behind its endpoints (the virtual
shuffler's is in :mod:`baccarat.sim_hardware.virtual_shuffler`).
"""

from __future__ import annotations

import array
import errno
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Final, Protocol

import usb.backend
import usb.core

TEST_VENDOR_ID: Final = 0x1209
"""pid.codes' vendor id (https://pid.codes/1209/)."""
TEST_PRODUCT_ID: Final = 0x0001
"""pid.codes' shared test PID (https://pid.codes/1209/0001/): private testing only, never
in a shipped product, so an emulated device cannot collide with a real one."""
MAX_PACKET_SIZE: Final = 64
"""``wMaxPacketSize`` of both bulk endpoints (full-speed bulk)."""
ENDPOINT_IN: Final = 0x81
ENDPOINT_OUT: Final = 0x01
INTERFACE_NUMBER: Final = 0
CONFIGURATION_VALUE: Final = 1

_LIBUSB_ERRORS: Final = {
    # libusb error code: (message, errno), as usb.backend.libusb1 reports them.
    -1: ("Input/output error", errno.EIO),
    -4: ("No such device (it may have been disconnected)", errno.ENODEV),
    -6: ("Resource busy", errno.EBUSY),
    -7: ("Operation timed out", errno.ETIMEDOUT),
    -8: ("Overflow", errno.EOVERFLOW),
    -9: ("Pipe error", errno.EPIPE),
}
_NO_DEVICE: Final = -4
_BUSY: Final = -6
_TIMEOUT: Final = -7
_OVERFLOW: Final = -8
_PIPE: Final = -9


def usb_error(code: int) -> usb.core.USBError:
    """The exception libusb's pyusb backend raises for libusb error ``code``."""
    message, errno_value = _LIBUSB_ERRORS[code]
    if code == _TIMEOUT:
        return usb.core.USBTimeoutError(message, code, errno_value)
    return usb.core.USBError(message, code, errno_value)


# --- descriptors -------------------------------------------------------------------------


class Descriptor(SimpleNamespace):
    """A USB descriptor: its fields, under their USB names, as attributes (what pyusb reads)."""


def device_descriptor(vendor_id: int, product_id: int, bus: int, address: int) -> Descriptor:
    """The device descriptor, plus the bus position fields pyusb reads with it."""
    return Descriptor(
        bLength=18,
        bDescriptorType=0x01,
        bcdUSB=0x0200,
        bDeviceClass=0x00,
        bDeviceSubClass=0x00,
        bDeviceProtocol=0x00,  # class per interface
        bMaxPacketSize0=64,
        idVendor=vendor_id,
        idProduct=product_id,
        bcdDevice=0x0100,
        iManufacturer=1,
        iProduct=2,
        iSerialNumber=3,
        bNumConfigurations=1,
        bus=bus,
        address=address,
        port_number=1,
        port_numbers=(1,),
        speed=2,  # libusb LIBUSB_SPEED_FULL
    )


CONFIGURATION_DESCRIPTOR: Final = Descriptor(
    bLength=9,
    bDescriptorType=0x02,
    wTotalLength=9 + 9 + 7 + 7,
    bNumInterfaces=1,
    bConfigurationValue=CONFIGURATION_VALUE,
    iConfiguration=0,
    bmAttributes=0xC0,  # self-powered: a pulled cable does not reset the firmware
    bMaxPower=50,
    extra_descriptors=[],
)
INTERFACE_DESCRIPTOR: Final = Descriptor(
    bLength=9,
    bDescriptorType=0x04,
    bInterfaceNumber=INTERFACE_NUMBER,
    bAlternateSetting=0,
    bNumEndpoints=2,
    bInterfaceClass=0xFF,
    bInterfaceSubClass=0x00,  # vendor-specific
    bInterfaceProtocol=0x00,
    iInterface=0,
    extra_descriptors=[],
)
ENDPOINT_DESCRIPTORS: Final = tuple(
    Descriptor(
        bLength=7,
        bDescriptorType=0x05,
        bEndpointAddress=address,
        bmAttributes=0x02,  # bulk
        wMaxPacketSize=MAX_PACKET_SIZE,
        bInterval=0,
        bRefresh=0,
        bSynchAddress=0,
        extra_descriptors=[],
    )
    for address in (ENDPOINT_IN, ENDPOINT_OUT)
)
"""Endpoint index 0 is bulk IN, index 1 bulk OUT."""


# --- the device ----------------------------------------------------------------------------


class UsbFunction(Protocol):
    """Firmware behind a device's bulk endpoints. Called with the device's lock held."""

    def take_in(self, now: float) -> bytes:
        """Bytes the firmware puts into the (empty) IN FIFO now; may be empty."""
        ...

    def next_wakeup(self, now: float) -> float | None:
        """When the firmware will next have bytes without hearing from the host, or ``None``."""
        ...

    def receive_out(self, data: bytes, now: float) -> None:
        """Handle bytes the host wrote to the OUT endpoint."""
        ...

    def unplugged(self) -> None:
        """The cable was pulled: bytes in flight are gone."""
        ...


class EmulatedUsbDevice:
    """One emulated device: descriptors, plug state, and the IN FIFO fed by its firmware.

    ``packet_size`` (at most ``wMaxPacketSize``) is how many bytes the firmware puts in one
    IN packet; smaller values split frames across more packets.
    """

    def __init__(
        self,
        function: UsbFunction,
        *,
        vendor_id: int = TEST_VENDOR_ID,
        product_id: int = TEST_PRODUCT_ID,
        strings: tuple[str, str, str] = ("baccarat project", "Virtual shuffler", "VS-0001"),
        packet_size: int = MAX_PACKET_SIZE,
    ) -> None:
        if not 1 <= packet_size <= MAX_PACKET_SIZE:
            raise ValueError(f"packet_size {packet_size} not in 1..{MAX_PACKET_SIZE}")
        self.function = function
        self.vendor_id = vendor_id
        self.product_id = product_id
        self.strings = strings
        self.packet_size = packet_size
        self.lock = threading.Condition()
        self.attached = True
        self.generation = 1
        """Bumped at each plug-in: handles from an earlier plug-in see ``ENODEV``."""
        self.address = 1
        self.configuration = 0
        self.claimed_by: dict[int, object] = {}
        self._in_fifo = bytearray()
        self.bytes_in = 0
        self.bytes_out = 0

    def descriptor(self, bus: int) -> Descriptor:
        """The device descriptor as enumerated on ``bus``."""
        return device_descriptor(self.vendor_id, self.product_id, bus, self.address)

    def detach(self) -> None:
        """Pull the cable: transfers fail with ``ENODEV`` and the device leaves the bus."""
        with self.lock:
            if not self.attached:
                return
            self.attached = False
            self._in_fifo.clear()
            self.claimed_by.clear()
            self.configuration = 0
            self.function.unplugged()
            self.lock.notify_all()

    def attach(self) -> None:
        """Plug the cable back in: the device enumerates again, at a new address."""
        with self.lock:
            if self.attached:
                return
            self.attached = True
            self.generation += 1
            self.address += 1
            self.lock.notify_all()

    def check_alive(self, generation: int) -> None:
        """Raise ``ENODEV`` unless the device is plugged in since ``generation``."""
        if not self.attached or generation != self.generation:
            raise usb_error(_NO_DEVICE)

    def read_in(self, generation: int, size: int, timeout: float | None) -> bytes:
        """One bulk IN transfer of at most ``size`` bytes; ``timeout`` None waits for ever."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self.lock:
            while True:
                self.check_alive(generation)
                now = time.monotonic()
                if not self._in_fifo:  # the firmware refills only an empty endpoint buffer
                    self._in_fifo += self.function.take_in(now)
                if self._in_fifo:
                    return self._take_transfer(size)
                if deadline is not None and now >= deadline:
                    raise usb_error(_TIMEOUT)
                self.lock.wait(self._wait_time(now, deadline))

    def write_out(self, generation: int, data: bytes) -> int:
        """One bulk OUT transfer; the firmware sees the bytes at once."""
        with self.lock:
            self.check_alive(generation)
            self.bytes_out += len(data)
            self.function.receive_out(data, time.monotonic())
            self.lock.notify_all()
            return len(data)

    def _wait_time(self, now: float, deadline: float | None) -> float | None:
        times = [t for t in (deadline, self.function.next_wakeup(now)) if t is not None]
        return max(0.0, min(times) - now) if times else None

    def _take_transfer(self, size: int) -> bytes:
        """Packets up to ``size`` bytes; a short packet (< wMaxPacketSize) ends the transfer."""
        available, count = len(self._in_fifo), 0
        while count < available:
            step = min(self.packet_size, available - count)
            if count + step > size:
                break
            count += step
            if step < MAX_PACKET_SIZE:
                break
        if count == 0:
            raise usb_error(_OVERFLOW)
        chunk = bytes(self._in_fifo[:count])
        del self._in_fifo[:count]
        self.bytes_in += count
        return chunk


# --- the pyusb backend ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DeviceId:
    """What :meth:`EmulatedUsbBackend.enumerate_devices` yields: a device at one plug-in."""

    device: EmulatedUsbDevice
    generation: int
    bus: int


@dataclass(slots=True, eq=False)
class DeviceHandle:
    """What :meth:`EmulatedUsbBackend.open_device` returns."""

    device: EmulatedUsbDevice
    generation: int
    claimed: set[int] = field(default_factory=set)


def _timeout_seconds(timeout_ms: int) -> float | None:
    """The seconds of libusb's timeout in milliseconds (0: no limit)."""
    return None if timeout_ms == 0 else timeout_ms / 1000


class EmulatedUsbBackend(usb.backend.IBackend):  # type: ignore[misc]
    """A pyusb backend whose bus holds emulated devices. Pass it as ``backend=`` to pyusb."""

    def __init__(self, *devices: EmulatedUsbDevice, bus: int = 1) -> None:
        self.devices = list(devices)
        self.bus = bus
        self._handles: set[DeviceHandle] = set()
        self._handles_lock = threading.Lock()

    @property
    def open_handle_count(self) -> int:
        """Handles opened and not yet closed, whichever plug-in they belong to."""
        with self._handles_lock:
            return len(self._handles)

    def enumerate_devices(self) -> Iterator[DeviceId]:
        """The devices plugged in now."""
        for device in self.devices:
            with device.lock:
                if device.attached:
                    yield DeviceId(device, device.generation, self.bus)

    def get_parent(self, dev: DeviceId) -> None:
        """Every device hangs off the root hub."""

    def get_device_descriptor(self, dev: DeviceId) -> Descriptor:
        """The device descriptor."""
        return dev.device.descriptor(dev.bus)

    def get_configuration_descriptor(self, dev: DeviceId, config: int) -> Descriptor:
        """The one configuration descriptor (``config`` is its index, 0)."""
        _check_index(config, 1)
        return CONFIGURATION_DESCRIPTOR

    def get_interface_descriptor(
        self, dev: DeviceId, intf: int, alt: int, config: int
    ) -> Descriptor:
        """The one interface descriptor."""
        _check_index(config, 1)
        _check_index(intf, 1)
        _check_index(alt, 1)
        return INTERFACE_DESCRIPTOR

    def get_endpoint_descriptor(
        self, dev: DeviceId, ep: int, intf: int, alt: int, config: int
    ) -> Descriptor:
        """Endpoint ``ep``: 0 is bulk IN, 1 is bulk OUT."""
        self.get_interface_descriptor(dev, intf, alt, config)
        _check_index(ep, len(ENDPOINT_DESCRIPTORS))
        return ENDPOINT_DESCRIPTORS[ep]

    def open_device(self, dev: DeviceId) -> DeviceHandle:
        """Open the device; ``ENODEV`` if it was unplugged since it was enumerated."""
        with dev.device.lock:
            dev.device.check_alive(dev.generation)
        handle = DeviceHandle(dev.device, dev.generation)
        with self._handles_lock:
            self._handles.add(handle)
        return handle

    def close_device(self, dev_handle: DeviceHandle) -> None:
        """Close the handle; never fails, as with libusb."""
        with dev_handle.device.lock:
            _release_all(dev_handle)
        with self._handles_lock:
            self._handles.discard(dev_handle)

    def set_configuration(self, dev_handle: DeviceHandle, config_value: int) -> None:
        """Select configuration 1 (or 0, unconfigured)."""
        device = dev_handle.device
        with device.lock:
            device.check_alive(dev_handle.generation)
            if config_value not in (0, CONFIGURATION_VALUE):
                raise usb_error(_PIPE)
            device.configuration = config_value

    def get_configuration(self, dev_handle: DeviceHandle) -> int:
        """The active ``bConfigurationValue``; 0 until the host sets one."""
        device = dev_handle.device
        with device.lock:
            device.check_alive(dev_handle.generation)
            return device.configuration

    def set_interface_altsetting(
        self, dev_handle: DeviceHandle, intf: int, altsetting: int
    ) -> None:
        """Only alternate setting 0 exists."""
        with dev_handle.device.lock:
            dev_handle.device.check_alive(dev_handle.generation)
        if intf != INTERFACE_NUMBER or altsetting != 0:
            raise usb_error(_PIPE)

    def claim_interface(self, dev_handle: DeviceHandle, intf: int) -> None:
        """Claim the interface; ``EBUSY`` if another open handle holds it."""
        device = dev_handle.device
        with device.lock:
            device.check_alive(dev_handle.generation)
            holder = device.claimed_by.get(intf)
            if holder is not None and holder is not dev_handle:
                raise usb_error(_BUSY)
            device.claimed_by[intf] = dev_handle
            dev_handle.claimed.add(intf)

    def release_interface(self, dev_handle: DeviceHandle, intf: int) -> None:
        """Release the interface; ``ENODEV`` once the device is gone (pyusb ignores it)."""
        device = dev_handle.device
        with device.lock:
            dev_handle.claimed.discard(intf)
            if device.claimed_by.get(intf) is dev_handle:
                del device.claimed_by[intf]
            device.check_alive(dev_handle.generation)

    def bulk_write(
        self, dev_handle: DeviceHandle, ep: int, intf: int, data: array.array[int], timeout: int
    ) -> int:
        """Write to the bulk OUT endpoint; returns the byte count."""
        _check_endpoint(ep, ENDPOINT_OUT)
        _check_claimed(dev_handle, intf)
        return dev_handle.device.write_out(dev_handle.generation, data.tobytes())

    def bulk_read(
        self, dev_handle: DeviceHandle, ep: int, intf: int, buff: array.array[int], timeout: int
    ) -> int:
        """Read the bulk IN endpoint into ``buff``, waiting up to ``timeout`` ms for data."""
        _check_endpoint(ep, ENDPOINT_IN)
        _check_claimed(dev_handle, intf)
        size = len(buff) * buff.itemsize
        chunk = dev_handle.device.read_in(dev_handle.generation, size, _timeout_seconds(timeout))
        memoryview(buff).cast("B")[: len(chunk)] = chunk
        return len(chunk)

    def ctrl_transfer(  # noqa: PLR0917 (pyusb's signature)
        self,
        dev_handle: DeviceHandle,
        bmRequestType: int,  # noqa: N803 (pyusb's parameter names)
        bRequest: int,  # noqa: N803
        wValue: int,  # noqa: N803
        wIndex: int,  # noqa: N803
        data: array.array[int],
        timeout: int,
    ) -> int:
        """Standard GET_DESCRIPTOR for strings; every other request stalls (``EPIPE``)."""
        device = dev_handle.device
        with device.lock:
            device.check_alive(dev_handle.generation)
        descriptor_type, index = wValue >> 8, wValue & 0xFF
        if (bmRequestType, bRequest, descriptor_type) != (0x80, 0x06, 0x03):
            raise usb_error(_PIPE)
        reply = _string_descriptor(device.strings, index)[: len(data)]
        data[: len(reply)] = array.array("B", reply)
        return len(reply)

    def clear_halt(self, dev_handle: DeviceHandle, ep: int) -> None:
        """Endpoints never halt here."""
        with dev_handle.device.lock:
            dev_handle.device.check_alive(dev_handle.generation)

    def reset_device(self, dev_handle: DeviceHandle) -> None:
        """A bus reset: the IN FIFO survives (the firmware keeps its state), claims do not."""
        with dev_handle.device.lock:
            dev_handle.device.check_alive(dev_handle.generation)
            _release_all(dev_handle)

    def is_kernel_driver_active(self, dev_handle: DeviceHandle, intf: int) -> bool:
        """No kernel driver binds a vendor-specific interface."""
        return False

    def detach_kernel_driver(self, dev_handle: DeviceHandle, intf: int) -> None:
        """Nothing to detach."""

    def attach_kernel_driver(self, dev_handle: DeviceHandle, intf: int) -> None:
        """Nothing to attach."""


def _check_index(index: int, count: int) -> None:
    if not 0 <= index < count:
        raise IndexError(f"descriptor index {index} out of range 0..{count - 1}")


def _check_endpoint(ep: int, expected: int) -> None:
    if ep != expected:
        raise usb_error(_PIPE)


def _check_claimed(dev_handle: DeviceHandle, intf: int) -> None:
    with dev_handle.device.lock:
        dev_handle.device.check_alive(dev_handle.generation)
        if intf not in dev_handle.claimed:
            raise usb_error(_BUSY)


def _release_all(dev_handle: DeviceHandle) -> None:
    """Drop the handle's claims; called with the device's lock held."""
    claimed_by = dev_handle.device.claimed_by
    for intf in dev_handle.claimed:
        if claimed_by.get(intf) is dev_handle:
            del claimed_by[intf]
    dev_handle.claimed.clear()


def _string_descriptor(strings: tuple[str, ...], index: int) -> bytes:
    """String descriptor ``index``: 0 lists the language ids (US English only)."""
    if index == 0:
        body = (0x0409).to_bytes(2, "little")
    elif index <= len(strings):
        body = strings[index - 1].encode("utf-16-le")
    else:
        raise usb_error(_PIPE)
    return bytes([2 + len(body), 0x03]) + body
