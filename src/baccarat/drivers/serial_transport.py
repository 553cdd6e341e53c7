"""Serial transport: one open port as a pipe of bytes, on pyserial-asyncio-fast.

:func:`open_port` opens a device path (``/dev/ttyUSB0``, a pty, a udev symlink) or a
``socket://host:port`` URL (a shoe behind a terminal server, or a simulator) without
blocking the event loop: pyserial opens the port in the loop's executor. Bytes received
go to a callback; :attr:`SerialPort.lost` completes when the port goes away (unplug,
hang-up, peer closed) with the reason. :meth:`SerialPort.close` returns only once the
port is really closed, so it is safe to open the same device again right after.

Reconnection is not this module's business: see :mod:`baccarat.drivers.serial_source`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Final

import serial
import serial_asyncio_fast

from baccarat.errors import BaccaratError

log = logging.getLogger(__name__)

OPEN_TIMEOUT: Final = 5.0
"""Seconds an open may take before it counts as failed."""
CLOSE_TIMEOUT: Final = 2.0
"""Seconds to wait for a port to finish closing before giving up on it."""


class PortError(BaccaratError, OSError):
    """A port could not be opened (missing, busy, not a serial device, refused)."""


class PortOpenTimeoutError(PortError, TimeoutError):
    """Opening a port took longer than :data:`OPEN_TIMEOUT`."""


class _PortProtocol(asyncio.Protocol):
    """Hands received bytes to a callback and records why the connection ended."""

    def __init__(self, on_data: Callable[[bytes], None], lost: asyncio.Future[str]) -> None:
        self._on_data = on_data
        self._lost = lost

    def data_received(self, data: bytes) -> None:
        self._on_data(data)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self._lost.done():
            self._lost.set_result(_describe_loss(exc))


def _describe_loss(exc: Exception | None) -> str:
    if exc is None:
        return "port closed"
    text = str(exc) or type(exc).__name__
    if "readiness to read but returned no data" in text:
        return "device disconnected (hang-up)"
    return f"port lost: {text}"


class SerialPort:
    """An open serial port (or socket). Create with :func:`open_port`."""

    def __init__(
        self,
        url: str,
        transport: asyncio.BaseTransport,
        lost: asyncio.Future[str],
    ) -> None:
        self.url = url
        self._transport = transport
        self.lost = lost
        """Completes with a description when the port goes away (also after close())."""

    def write(self, data: bytes) -> None:
        """Queue ``data`` for sending; never blocks. Ignored once the port is closing."""
        if isinstance(self._transport, asyncio.WriteTransport):
            self._transport.write(data)

    def pause_reading(self) -> None:
        """Stop reading until :meth:`resume_reading` (backpressure)."""
        if isinstance(self._transport, asyncio.ReadTransport):
            self._transport.pause_reading()

    def resume_reading(self) -> None:
        """Read again after :meth:`pause_reading`."""
        if isinstance(self._transport, asyncio.ReadTransport):
            self._transport.resume_reading()

    @property
    def is_open(self) -> bool:
        """Whether the port is still open."""
        return not self.lost.done()

    async def close(self) -> None:
        """Close the port and wait until it is really closed. Idempotent."""
        if not self._transport.is_closing():
            self._transport.close()
        try:
            async with asyncio.timeout(CLOSE_TIMEOUT):
                await asyncio.shield(self.lost)
        except TimeoutError:
            log.warning("%s: port did not finish closing in %.1f s", self.url, CLOSE_TIMEOUT)
            abort = getattr(self._transport, "abort", None)
            if abort is not None:
                abort()


async def open_port(url: str, baud: int, on_data: Callable[[bytes], None]) -> SerialPort:
    """Open ``url`` (a device path or ``socket://host:port``) at ``baud``, 8N1.

    ``on_data`` is called on the event loop with every chunk received. Raises
    :class:`PortError` if the port cannot be opened.
    """
    loop = asyncio.get_running_loop()
    lost: asyncio.Future[str] = loop.create_future()
    try:
        async with asyncio.timeout(OPEN_TIMEOUT):
            transport, _ = await serial_asyncio_fast.create_serial_connection(
                loop, lambda: _PortProtocol(on_data, lost), url, baudrate=baud
            )
    except TimeoutError as exc:
        raise PortOpenTimeoutError(f"{url}: open took more than {OPEN_TIMEOUT} s") from exc
    except (serial.SerialException, OSError, ValueError) as exc:
        raise PortError(f"{url}: {exc}") from exc
    return SerialPort(url, transport, lost)
