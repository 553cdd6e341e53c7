"""The emulated USB bus answers pyusb the way libusb does."""

from __future__ import annotations

import errno
import threading
import time

import pytest
import usb.core
import usb.util

from baccarat.sim_hardware.usb_bus import (
    ENDPOINT_IN,
    ENDPOINT_OUT,
    EmulatedUsbBackend,
    EmulatedUsbDevice,
)
from baccarat.sim_hardware.virtual_shuffler import VIRTUAL_SHUFFLER_PID, VIRTUAL_SHUFFLER_VID


class Loopback:
    """Firmware that sends a preset byte string and echoes whatever the host writes."""

    def __init__(self, data: bytes = b"") -> None:
        self.pending = bytearray(data)
        self.unplug_count = 0

    def take_in(self, now: float) -> bytes:
        data = bytes(self.pending)
        self.pending.clear()
        return data

    def next_wakeup(self, now: float) -> float | None:
        return None

    def receive_out(self, data: bytes, now: float) -> None:
        self.pending += data

    def unplugged(self) -> None:
        self.unplug_count += 1


def plug(data: bytes = b"", **options: int) -> tuple[EmulatedUsbDevice, EmulatedUsbBackend]:
    device = EmulatedUsbDevice(Loopback(data), **options)
    return device, EmulatedUsbBackend(device)


def claimed(backend: EmulatedUsbBackend) -> usb.core.Device:
    found = usb.core.find(
        idVendor=VIRTUAL_SHUFFLER_VID, idProduct=VIRTUAL_SHUFFLER_PID, backend=backend
    )
    assert found is not None
    found.set_configuration()
    usb.util.claim_interface(found, 0)
    return found


def test_pyusb_finds_the_device_and_reads_its_descriptors() -> None:
    _, backend = plug()
    found = usb.core.find(idVendor=0x1209, idProduct=0x0001, backend=backend)
    assert found is not None
    assert (found.manufacturer, found.product, found.serial_number) == (
        "baccarat project",
        "Virtual shuffler",
        "VS-0001",
    )
    found.set_configuration()
    interface = found.get_active_configuration()[(0, 0)]
    assert interface.bInterfaceClass == 0xFF
    endpoints = {(e.bEndpointAddress, e.bmAttributes, e.wMaxPacketSize) for e in interface}
    assert endpoints == {(ENDPOINT_IN, 2, 64), (ENDPOINT_OUT, 2, 64)}
    assert usb.core.find(idVendor=0x1209, idProduct=0x0002, backend=backend) is None
    usb.util.dispose_resources(found)


def test_a_read_returns_whole_packets_and_stops_at_a_short_one() -> None:
    _, backend = plug(bytes(range(150)))
    found = claimed(backend)
    assert bytes(found.read(ENDPOINT_IN, 64, 100)) == bytes(range(64))
    assert bytes(found.read(ENDPOINT_IN, 512, 100)) == bytes(range(64, 150))
    usb.util.dispose_resources(found)


def test_a_small_packet_size_splits_the_stream_further() -> None:
    _, backend = plug(bytes(range(30)), packet_size=7)
    found = claimed(backend)
    sizes = [len(found.read(ENDPOINT_IN, 64, 100)) for _ in range(5)]
    assert sizes == [7, 7, 7, 7, 2]  # each packet is short, so each ends its transfer
    usb.util.dispose_resources(found)


def test_a_buffer_smaller_than_the_packet_overflows() -> None:
    _, backend = plug(bytes(64))
    found = claimed(backend)
    with pytest.raises(usb.core.USBError) as caught:
        found.read(ENDPOINT_IN, 10, 100)
    assert caught.value.errno == errno.EOVERFLOW
    usb.util.dispose_resources(found)


def test_an_empty_endpoint_times_out_after_the_timeout() -> None:
    _, backend = plug()
    found = claimed(backend)
    started = time.monotonic()
    with pytest.raises(usb.core.USBTimeoutError) as caught:
        found.read(ENDPOINT_IN, 64, 50)
    assert 0.04 < time.monotonic() - started < 1.0
    assert caught.value.errno == errno.ETIMEDOUT
    usb.util.dispose_resources(found)


def test_a_write_reaches_the_firmware_and_wakes_a_waiting_read() -> None:
    _, backend = plug()
    found = claimed(backend)
    writer = threading.Timer(0.05, found.write, (ENDPOINT_OUT, b"ack", 100))
    writer.start()
    assert bytes(found.read(ENDPOINT_IN, 64, 2000)) == b"ack"
    writer.join()
    usb.util.dispose_resources(found)


def test_detach_fails_transfers_with_enodev_and_hides_the_device() -> None:
    device, backend = plug()
    found = claimed(backend)
    device.detach()
    for transfer in (
        lambda: found.read(ENDPOINT_IN, 64, 50),
        lambda: found.write(ENDPOINT_OUT, b"x", 50),
    ):
        with pytest.raises(usb.core.USBError) as caught:
            transfer()
        assert caught.value.errno == errno.ENODEV
    assert usb.core.find(idVendor=VIRTUAL_SHUFFLER_VID, backend=backend) is None
    usb.util.dispose_resources(found)
    assert backend.open_handle_count == 0


def test_detach_wakes_a_read_that_is_waiting() -> None:
    device, backend = plug()
    found = claimed(backend)
    unplug = threading.Timer(0.05, device.detach)
    unplug.start()
    with pytest.raises(usb.core.USBError) as caught:
        found.read(ENDPOINT_IN, 64, 5000)
    assert caught.value.errno == errno.ENODEV
    unplug.join()
    usb.util.dispose_resources(found)


def test_reattach_enumerates_at_a_new_address_and_old_handles_stay_dead() -> None:
    device, backend = plug()
    old = claimed(backend)
    device.detach()
    device.attach()
    with pytest.raises(usb.core.USBError) as caught:
        old.read(ENDPOINT_IN, 64, 50)
    assert caught.value.errno == errno.ENODEV
    usb.util.dispose_resources(old)
    new = claimed(backend)
    assert new.address == old.address + 1
    new.write(ENDPOINT_OUT, b"again", 100)
    assert bytes(new.read(ENDPOINT_IN, 64, 100)) == b"again"
    usb.util.dispose_resources(new)
    assert backend.open_handle_count == 0


def test_a_claimed_interface_is_busy_for_another_handle() -> None:
    _, backend = plug()
    first = claimed(backend)
    with pytest.raises(usb.core.USBError) as caught:
        claimed(backend)
    assert caught.value.errno == errno.EBUSY
    usb.util.dispose_resources(first)
    second = claimed(backend)
    usb.util.dispose_resources(second)


def test_reading_without_set_configuration_fails_as_with_libusb() -> None:
    _, backend = plug(b"x")
    found = usb.core.find(idVendor=VIRTUAL_SHUFFLER_VID, backend=backend)
    with pytest.raises(usb.core.USBError, match="Configuration not set"):
        found.read(ENDPOINT_IN, 64, 50)
    usb.util.dispose_resources(found)
