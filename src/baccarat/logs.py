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

import json
import logging
import os
import sys
import time
from typing import Final, Literal, TextIO

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
