"""Serial transport: one open port as a pipe of bytes, read from its first byte.

:func:`open_port` opens a device path (``/dev/ttyUSB0``, a pty, a udev symlink) or a
``socket://host:port`` URL (a shoe behind a terminal server, or a simulator) without
blocking the event loop. Bytes received go to a callback once :meth:`SerialPort.start` is
called, beginning with those that were already waiting in the port's buffer when it was
opened: cards a shoe sent while the controller was down are read, not thrown away.
:attr:`SerialPort.lost` completes when the port goes away (unplug, hang-up, peer closed)
with the reason. :meth:`SerialPort.close` returns only once the port is really closed,
so it is safe to open the same device again right after.

A device path is opened with the standard library (``os.open``, ``termios``: raw, 8N1, no
flow control, set with ``TCSANOW``, which keeps what is buffered) and read and written
through asyncio's pipe transports. It is not opened with pyserial, because pyserial's
POSIX ``Serial.open()`` always flushes the input buffer (``tcflush(TCIFLUSH)``) and has no
option not to (pyserial issue 249). URLs (``socket://`` and the others pyserial knows)
go through pyserial-asyncio-fast, which does not open a ``socket://`` port with pyserial
and so flushes nothing either.

Reconnection is not this module's business: see :mod:`baccarat.drivers.serial_source`.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import termios
from collections.abc import Callable
from typing import BinaryIO, Final

import serial
import serial_asyncio_fast

from baccarat.errors import BaccaratError

log = logging.getLogger(__name__)

OPEN_TIMEOUT: Final = 5.0
"""Seconds an open may take before it counts as failed."""
CLOSE_TIMEOUT: Final = 2.0
"""Seconds to wait for a port to finish closing before giving up on it."""
HANG_UP: Final = "device disconnected (hang-up)"


class PortError(BaccaratError, OSError):
    """A port could not be opened (missing, busy, not a serial device, refused)."""


class PortOpenTimeoutError(PortError, TimeoutError):
    """Opening a port took longer than :data:`OPEN_TIMEOUT`."""


class _PortProtocol(asyncio.Protocol):
    """Hands received bytes to a callback (once started) and records why the port ended."""

    def __init__(self, on_data: Callable[[bytes], None], lost: asyncio.Future[str]) -> None:
        self._on_data = on_data
        self._lost = lost
        self._held: list[bytes] | None = []  # received before start()
        self._hung_up = False

    def start(self) -> None:
        held, self._held = self._held, None
        for data in held or ():
            self._on_data(data)

    def data_received(self, data: bytes) -> None:
        if self._held is not None:
            self._held.append(data)
        else:
            self._on_data(data)

    def eof_received(self) -> None:
        self._hung_up = True  # a terminal reads end-of-file only once it is hung up

    def connection_lost(self, exc: Exception | None) -> None:
        if not self._lost.done():
            self._lost.set_result(HANG_UP if self._hung_up else _describe_loss(exc))


class _WriteSide(asyncio.BaseProtocol):
    """The writing half of a device: a write error means the port is gone."""

    def __init__(self, lost: asyncio.Future[str], closed: asyncio.Future[None]) -> None:
        self._lost = lost
        self._closed = closed

    def connection_lost(self, exc: Exception | None) -> None:
        if exc is not None and not self._lost.done():
            self._lost.set_result(_describe_loss(exc))
        if not self._closed.done():
            self._closed.set_result(None)


def _describe_loss(exc: Exception | None) -> str:
    if exc is None:
        return "port closed"
    if isinstance(exc, OSError) and exc.errno == errno.EIO:
        return HANG_UP
    text = str(exc) or type(exc).__name__
    if "readiness to read but returned no data" in text:
        return HANG_UP
    return f"port lost: {text}"


class SerialPort:
    """An open serial port (or socket). Create with :func:`open_port`."""

    def __init__(
        self,
        url: str,
        protocol: _PortProtocol,
        reader: asyncio.ReadTransport,
        writer: asyncio.WriteTransport,
        lost: asyncio.Future[str],
        *,
        writer_closed: asyncio.Future[None] | None = None,
    ) -> None:
        self.url = url
        self._protocol = protocol
        self._reader = reader
        self._writer = writer
        self._writer_closed = writer_closed
        self.lost = lost
        """Completes with a description when the port goes away (also after close())."""

    def start(self) -> None:
        """Hand what was received so far, then every chunk as it comes, to ``on_data``."""
        self._protocol.start()

    def write(self, data: bytes) -> None:
        """Queue ``data`` for sending; never blocks. Ignored once the port is closing."""
        if not self._writer.is_closing():
            self._writer.write(data)

    def pause_reading(self) -> None:
        """Stop reading until :meth:`resume_reading` (backpressure)."""
        self._reader.pause_reading()

    def resume_reading(self) -> None:
        """Read again after :meth:`pause_reading`."""
        self._reader.resume_reading()

    @property
    def is_open(self) -> bool:
        """Whether the port is still open."""
        return not self.lost.done()

    async def close(self) -> None:
        """Close the port and wait until it is really closed. Idempotent."""
        for transport in (self._writer, self._reader):
            if not transport.is_closing():
                transport.close()
        closed = [self.lost] + ([self._writer_closed] if self._writer_closed else [])
        try:
            async with asyncio.timeout(CLOSE_TIMEOUT):
                await asyncio.shield(asyncio.gather(*closed))
        except TimeoutError:
            log.warning("%s: port did not finish closing in %.1f s", self.url, CLOSE_TIMEOUT)
            for transport in (self._writer, self._reader):
                abort = getattr(transport, "abort", None)
                if abort is not None:
                    abort()


async def open_port(url: str, baud: int, on_data: Callable[[bytes], None]) -> SerialPort:
    """Open ``url`` (a device path or ``socket://host:port``) at ``baud``, 8N1.

    ``on_data`` is called on the event loop with every chunk received, from
    :meth:`SerialPort.start` on. Raises :class:`PortError` if the port cannot be opened.
    """
    try:
        async with asyncio.timeout(OPEN_TIMEOUT):
            if "://" in url:
                return await _open_url(url, baud, on_data)
            return await _open_device(url, baud, on_data)
    except TimeoutError as exc:
        raise PortOpenTimeoutError(f"{url}: open took more than {OPEN_TIMEOUT} s") from exc
    except (serial.SerialException, OSError, ValueError) as exc:
        if isinstance(exc, PortError):
            raise
        raise PortError(f"{url}: {exc}") from exc


async def _open_url(url: str, baud: int, on_data: Callable[[bytes], None]) -> SerialPort:
    loop = asyncio.get_running_loop()
    lost: asyncio.Future[str] = loop.create_future()
    protocol = _PortProtocol(on_data, lost)
    transport, _ = await serial_asyncio_fast.create_serial_connection(
        loop, lambda: protocol, url, baudrate=baud
    )
    return SerialPort(url, protocol, transport, transport, lost)


async def _open_device(path: str, baud: int, on_data: Callable[[bytes], None]) -> SerialPort:
    """Open a terminal device, keeping what its input buffer holds."""
    loop = asyncio.get_running_loop()
    reading, writing = _ends(await loop.run_in_executor(None, _open_terminal, path, baud))
    lost: asyncio.Future[str] = loop.create_future()
    writer_closed: asyncio.Future[None] = loop.create_future()
    protocol = _PortProtocol(on_data, lost)
    try:
        writer, _ = await loop.connect_write_pipe(lambda: _WriteSide(lost, writer_closed), writing)
    except BaseException:
        reading.close()
        writing.close()
        raise
    try:
        reader, _ = await loop.connect_read_pipe(lambda: protocol, reading)
    except BaseException:
        reading.close()
        writer.close()
        raise
    return SerialPort(path, protocol, reader, writer, lost, writer_closed=writer_closed)


def _ends(fd: int) -> tuple[BinaryIO, BinaryIO]:
    """Unbuffered files to read and to write ``fd`` (a copy of it), for the pipe transports.

    Each transport closes its own file.
    """
    try:
        write_fd = os.dup(fd)
    except OSError:
        os.close(fd)
        raise
    return open(fd, "rb", buffering=0), open(write_fd, "wb", buffering=0)


def _open_terminal(path: str, baud: int) -> int:
    """A descriptor of the terminal ``path`` set to raw 8N1 at ``baud``; nothing flushed."""
    speed = getattr(termios, f"B{baud}", None)
    if not isinstance(speed, int):
        raise PortError(f"{path}: {baud} baud is not a speed the terminal driver knows")
    fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
    if not os.isatty(fd):
        os.close(fd)
        raise PortError(f"{path}: not a serial port (not a terminal device)")
    try:
        _set_raw(fd, speed)
    except termios.error as exc:  # not an OSError: the terminal went away meanwhile, or EINVAL
        os.close(fd)
        raise PortError(f"{path}: cannot set {baud} baud 8N1: {exc.args[-1]}") from exc
    except BaseException:
        os.close(fd)
        raise
    return fd


def _set_raw(fd: int, speed: int) -> None:
    """Raw bytes, 8N1, no flow control, modem lines ignored; applied now (``TCSANOW``).

    ``TCSANOW`` changes the settings without discarding input (``TCSAFLUSH``, which
    ``tty.setraw`` uses by default, would throw the waiting cards away).
    """
    iflag, oflag, cflag, lflag, _, _, cc = termios.tcgetattr(fd)
    iflag &= ~(
        termios.IGNBRK | termios.BRKINT | termios.PARMRK | termios.ISTRIP | termios.INLCR
        | termios.IGNCR | termios.ICRNL | termios.IXON | termios.IXOFF | termios.IXANY
        | termios.INPCK
    )
    oflag &= ~termios.OPOST
    lflag &= ~(termios.ECHO | termios.ECHONL | termios.ICANON | termios.ISIG | termios.IEXTEN)
    cflag &= ~(termios.CSIZE | termios.PARENB | termios.CSTOPB | termios.CRTSCTS)
    cflag |= termios.CS8 | termios.CREAD | termios.CLOCAL
    cc[termios.VMIN] = 1
    cc[termios.VTIME] = 0
    termios.tcsetattr(fd, termios.TCSANOW, [iflag, oflag, cflag, lflag, speed, speed, cc])
