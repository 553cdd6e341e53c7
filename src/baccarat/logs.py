"""How the daemon's log lines look: for journald, for a file or a terminal, or as JSON.

``text`` (the default) adapts to where standard error goes:

* to journald (systemd sets ``JOURNAL_STREAM`` to the device and inode of the stream it
  gave the unit): ``<6>INFO baccarat.daemon: ready: table T1``. The ``<N>`` prefix is the
  syslog priority, which journald takes as the line's level (``journalctl -p warning``)
  and strips; journald adds the time itself;
* anywhere else: ``2026-12-01T18:06:36.123Z INFO baccarat.daemon: ready: table T1``, the
  time in UTC to the millisecond, so that a log file reads on its own.

``json``: one object per line, ``{"ts": "2026-12-01T18:06:36.123456Z", "level": "INFO",
"logger": "baccarat.daemon", "message": "ready: table T1"}``, with ``"exception"`` (the
traceback as text) when there is one, for a log shipper.
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import os
import resource
import sys
import time
from collections.abc import Callable, Hashable
from typing import Any, Final, Literal, TextIO

LogFormat = Literal["text", "json"]
FORMATS: Final = ("text", "json")

_SYSLOG_PRIORITY: Final = {
    logging.CRITICAL: 2,
    logging.ERROR: 3,
    logging.WARNING: 4,
    logging.INFO: 6,
    logging.DEBUG: 7,
}


def syslog_priority(levelno: int) -> int:
    """The syslog priority (0 emergency .. 7 debug) of a logging level."""
    for level, priority in sorted(_SYSLOG_PRIORITY.items(), reverse=True):
        if levelno >= level:
            return priority
    return 7


def utc_timestamp(created: float, digits: int = 3) -> str:
    """``created`` (Unix seconds) as ISO 8601 in UTC with ``digits`` decimals and a Z."""
    whole = int(created)
    fraction = f"{created - whole:.{digits}f}"[1:] if digits else ""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + fraction + "Z"


class JournaldFormatter(logging.Formatter):
    """``<priority>LEVEL logger: message``: journald reads the level, adds the time."""

    def __init__(self) -> None:
        super().__init__("%(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        """Every physical line gets the prefix, so a traceback keeps its level."""
        prefix = f"<{syslog_priority(record.levelno)}>"
        return "\n".join(prefix + line for line in super().format(record).splitlines())


class TimestampFormatter(logging.Formatter):
    """``2026-12-01T18:06:36.123Z LEVEL logger: message``."""

    def __init__(self) -> None:
        super().__init__("%(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        """The line with its UTC time in front."""
        return f"{utc_timestamp(record.created)} {super().format(record)}"


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line."""

    def format(self, record: logging.LogRecord) -> str:
        """``ts``, ``level``, ``logger``, ``message`` and, if any, ``exception``."""
        body: dict[str, object] = {
            "ts": utc_timestamp(record.created, 6),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            body["exception"] = self.formatException(record.exc_info)
        return json.dumps(body, ensure_ascii=False)


def goes_to_journald(stream: TextIO) -> bool:
    """True if ``stream`` is the one systemd connected to journald (``JOURNAL_STREAM``)."""
    expected = os.environ.get("JOURNAL_STREAM", "")
    device, _, inode = expected.partition(":")
    try:
        status = os.fstat(stream.fileno())
    except (OSError, ValueError):
        return False
    return bool(inode) and f"{status.st_dev}:{status.st_ino}" == f"{device}:{inode}"


def formatter_for(log_format: LogFormat, stream: TextIO) -> logging.Formatter:
    """The formatter for this format and destination."""
    if log_format == "json":
        return JsonFormatter()
    return JournaldFormatter() if goes_to_journald(stream) else TimestampFormatter()


def configure(level: str, log_format: LogFormat = "text", stream: TextIO | None = None) -> None:
    """Send the root logger's records at ``level`` and above to ``stream`` (stderr)."""
    stream = stream or sys.stderr
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter_for(log_format, stream))
    logging.basicConfig(level=level.upper(), handlers=[handler], force=True)


# --- lines that come in floods ------------------------------------------------------------

REPEAT_WINDOW: Final = 10.0
"""Seconds a repeated line is counted, not written, after it was written."""
REPEAT_KEYS: Final = 1000
"""Different repeated lines followed at once at most (the oldest is told and forgotten)."""


class _Window:
    __slots__ = ("args", "count", "level", "msg", "start")

    def __init__(self, start: float) -> None:
        self.start = start
        self.count = 0
        self.level = logging.NOTSET
        self.msg = ""
        self.args: tuple[object, ...] = ()


class Repeated:
    """A log line that can come thousands of times a second, written once with a count.

    ``key`` says which lines are the same (an error's kind, a peer). The first is written;
    those that come within :data:`REPEAT_WINDOW` seconds of it are counted, and once the
    window is over the last of them is written with the count: ``... (412 more in the last
    10 s)``. A flood is one line every ten seconds, the one an engineer needs still in view.
    """

    def __init__(
        self, logger: logging.Logger, window: float = REPEAT_WINDOW, keys: int = REPEAT_KEYS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.logger = logger
        self.window = window
        self.keys = keys
        self.clock = clock
        self._windows: dict[Hashable, _Window] = {}
        self._checked = 0.0
        self.suppressed = 0
        """Lines counted and not written, since the start."""

    def log(
        self, level: int, key: Hashable, msg: str, *args: object,
        exc_info: BaseException | None = None,
    ) -> bool:
        """Write the line, or count it if the same ``key`` was written within the window.

        Returns whether it was written. ``exc_info`` (a traceback) only on a written line.
        """
        now = self.clock()
        if now - self._checked >= 1.0:
            self.flush(now)
        window = self._windows.get(key)
        if window is not None and now - window.start < self.window:
            window.count += 1
            window.level, window.msg, window.args = level, msg, args
            self.suppressed += 1
            return False
        if window is not None:
            self._tell(self._windows.pop(key), now)
        if len(self._windows) >= self.keys:
            oldest = next(iter(self._windows))
            self._tell(self._windows.pop(oldest), now)
        self.logger.log(level, msg, *args, exc_info=exc_info)
        self._windows[key] = _Window(now)
        return True

    def flush(self, now: float | None = None) -> None:
        """Write the counts of the windows that are over (``log`` does, once a second)."""
        now = self.clock() if now is None else now
        self._checked = now
        over = [key for key, w in self._windows.items() if now - w.start >= self.window]
        for key in over:
            self._tell(self._windows.pop(key), now)

    def _tell(self, window: _Window, now: float) -> None:
        if window.count:
            self.logger.log(window.level, window.msg + " (%d more in the last %.0f s)",
                            *window.args, window.count, max(now - window.start, 1.0))


EXPECTED_ERRNOS: Final[dict[int, str]] = {
    errno.EMFILE: "too many open files",
    errno.ENFILE: "too many open files in the system",
    errno.ENOBUFS: "no buffer space",
    errno.ENOMEM: "out of memory for a socket",
    errno.ECONNRESET: "connection reset by the peer",
    errno.ECONNABORTED: "connection aborted",
    errno.EPIPE: "the peer closed the connection",
    errno.ETIMEDOUT: "connection timed out",
}
"""OS errors a server meets under load or from its clients: a warning with the cause, not
a traceback (nothing in the program is wrong)."""


def expected_os_error(exc: BaseException | None) -> str | None:
    """The cause of an OS error a server expects (:data:`EXPECTED_ERRNOS`), or None.

    Too many open files also names the process's limit and where it is set.
    """
    if not isinstance(exc, OSError) or exc.errno not in EXPECTED_ERRNOS:
        return None
    cause = EXPECTED_ERRNOS[exc.errno]
    if exc.errno == errno.EMFILE:
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        cause += (f": this process may have {soft} (ulimit -n, or LimitNOFILE= in its"
                  " systemd unit); new connections wait until some close")
    return cause


def quiet_os_errors(
    loop: asyncio.AbstractEventLoop, logger: logging.Logger, repeated: Repeated | None = None
) -> Repeated:
    """Make the loop log an expected OS error as one warning with its cause, repeats counted.

    An ``accept()`` out of file descriptors or a client's reset is not a traceback each.
    Any other error goes to the loop's default handler as before.
    """
    repeated = repeated or Repeated(logger)

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        cause = expected_os_error(exc)
        if cause is None:
            loop.default_exception_handler(context)
            return
        what = str(context.get("message", "socket error"))
        key = (what, getattr(exc, "errno", None))
        repeated.log(logging.WARNING, key, "%s: %s", what, cause)

    loop.set_exception_handler(handler)
    return repeated
