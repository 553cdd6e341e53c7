"""systemd's notification protocol (sd_notify) in a few lines, without libsystemd.

A service started with ``Type=notify`` finds a datagram socket in ``$NOTIFY_SOCKET`` (a
path, or an abstract socket written with a leading ``@``) and sends it newline-separated
``KEY=value`` assignments: ``READY=1`` when it is serving, ``WATCHDOG=1`` at least once per
``WatchdogSec=``, ``STATUS=...`` for ``systemctl status``, ``STOPPING=1`` on the way out.

Every function here is a no-op (returning ``False``) when ``$NOTIFY_SOCKET`` is not set,
so the daemon calls them unconditionally. None of them raises: a socket error is logged
once as a warning (later ones at debug level) and reported by returning ``False``. The
socket is non-blocking, so a ping from the event loop can never stall it.
"""

from __future__ import annotations

import logging
import os
import socket

log = logging.getLogger(__name__)

_error_logged = False


def notify(**fields: object) -> bool:
    """Send ``KEY=value`` assignments to systemd; True if the datagram was sent.

    Keys are written as given (``notify(READY=1, STATUS="serving")``); values are turned
    into text, with any newline replaced by a space (a newline would end the assignment).
    """
    address = _socket_address()
    if address is None or not fields:
        return False
    lines = (f"{key}={str(value).replace(chr(10), ' ')}" for key, value in fields.items())
    message = "\n".join(lines).encode()
    return _send(address, message)


def ready(status: str | None = None) -> bool:
    """Tell systemd the service is up (``READY=1``), with an optional status line."""
    if status is None:
        return notify(READY=1)
    return notify(READY=1, STATUS=status)


def watchdog_ping() -> bool:
    """Tell systemd the service is alive (``WATCHDOG=1``); call every :func:`watchdog_interval`."""
    return notify(WATCHDOG=1)


def status(text: str) -> bool:
    """Set the free-form status line shown by ``systemctl status``."""
    return notify(STATUS=text)


def stopping(status: str | None = None) -> bool:
    """Tell systemd the service is shutting down (``STOPPING=1``)."""
    if status is None:
        return notify(STOPPING=1)
    return notify(STOPPING=1, STATUS=status)


def extend_timeout(seconds: float) -> bool:
    """Ask systemd for ``seconds`` more before it gives up on a start or a stop in progress."""
    return notify(EXTEND_TIMEOUT_USEC=max(1, round(seconds * 1_000_000)))


def watchdog_interval() -> float | None:
    """How often to call :func:`watchdog_ping`, in seconds; None if there is no watchdog.

    That is half of systemd's ``WatchdogSec=`` (from ``$WATCHDOG_USEC``), as sd_watchdog_enabled(3)
    recommends. None when notifications are off, when the variable is missing or not a
    positive integer, or when ``$WATCHDOG_PID`` names another process (a child that
    inherited the environment must not ping for its parent).
    """
    if _socket_address() is None:
        return None
    try:
        usec = int(os.environ.get("WATCHDOG_USEC", ""))
    except ValueError:
        return None
    if usec <= 0:
        return None
    pid = os.environ.get("WATCHDOG_PID")
    if pid is not None and pid.strip() != str(os.getpid()):
        return None
    return usec / 2_000_000


def _socket_address() -> str | bytes | None:
    """``$NOTIFY_SOCKET`` as a socket address: a path, or bytes for an abstract socket."""
    value = os.environ.get("NOTIFY_SOCKET")
    if not value:
        return None
    if value.startswith("@"):
        return b"\0" + value[1:].encode()
    return value


def _send(address: str | bytes, message: bytes) -> bool:
    global _error_logged  # noqa: PLW0603 - one warning per process, then quiet
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.setblocking(False)
            sock.sendto(message, address)
    except OSError as exc:
        level = logging.DEBUG if _error_logged else logging.WARNING
        _error_logged = True
        log.log(level, "sd_notify to %r failed: %s", _printable(address), exc)
        return False
    return True


def _printable(address: str | bytes) -> str:
    if isinstance(address, bytes):
        return "@" + address[1:].decode(errors="replace")
    return address
