"""The position files beside the journal: how far the broker acknowledged, where the device is.

Both are hints, written atomically and without fsync (a crash may leave them a few
seconds behind), on a disk others can write: what they say is believed only where it
cannot lose a card.

* ``published``: the ``seq`` of the last message the broker acknowledged. After a crash the
  messages past it are published again; subscribers drop the ones they had by ``seq``.
* ``device-position``: the device frame the controller handled last, heartbeats included,
  and the newest frame the journal held then. Heartbeats are acknowledged and not
  journaled, so after minutes of them the journal's newest frame number has come round
  again (there are 256): a restart must resume after the frame acknowledged last, not the
  one recorded last (PROTOCOL.md 6.6).
"""

from __future__ import annotations

import contextlib
import logging
import os
from pathlib import Path
from typing import Final

log = logging.getLogger("baccarat.daemon")

CURSOR_FILE: Final = "published"
DEVICE_FILE: Final = "device-position"
CURSOR_INTERVAL: Final = 2.0
"""Seconds between writes of the published cursor: after a crash, the messages of at most
these last seconds are published again (docs/benchmarks.md, "The floor", for its cost)."""
DEVICE_POSITION_INTERVAL: Final = 10.0
"""Seconds between writes of ``device-position`` while running (and at stop). The frames it
lags behind are heartbeats (cards are in the journal, which is newer then); it must lag
less than half the frame numbers' circle (128 heartbeats)."""


class PositionFiles:
    """``published`` and ``device-position`` in the journal's folder."""

    def __init__(self, folder: Path) -> None:
        self.cursor_path = folder / CURSOR_FILE
        self.device_path = folder / DEVICE_FILE

    def read_cursor(self) -> int:
        """The ``seq`` of the last message the broker acknowledged (0: none yet, or unknown)."""
        try:
            text = self.cursor_path.read_text(encoding="ascii").strip()
        except FileNotFoundError:
            return 0
        except (OSError, UnicodeDecodeError) as exc:
            log.warning("cannot read %s (%s): publishing all the journal holds",
                        self.cursor_path, exc)
            return 0
        if not text.isdigit():
            log.warning("%s holds %r, not a seq: publishing all the journal holds",
                        self.cursor_path, text[:40])
            return 0
        return int(text)

    def write_cursor(self, acked: int | None) -> None:
        """Remember ``acked``, the last message the broker acknowledged (if any).

        Raise ``OSError`` if the file cannot be written (its folder is the journal's: the
        disk is full, read-only or failing).
        """
        if acked is not None:
            replace_file(self.cursor_path, f"{acked}\n")

    def write_device_position(self, handled: int | None, recorded: int | None) -> None:
        """Remember the device frame ``handled`` last and the newest ``recorded`` then.

        ``OSError`` if it cannot be written.
        """
        if handled is not None:
            then = "-" if recorded is None else str(recorded)
            replace_file(self.device_path, f"{handled} {then}\n")

    def resume_point(self, recorded: int | None) -> int | None:
        """The frame after which the device resumes; ``recorded``: the journal's newest.

        Resuming after ``recorded`` loses nothing unless that number has come round
        (PROTOCOL.md 6.6); the frame handled last is taken instead only when the file was
        written with the journal as it is and names a frame behind ``recorded`` on the
        circle (128 frames past it or more: heartbeats only). A frame 1 to 127 past it is
        never taken: a false one would acknowledge the device's cards in flight unseen,
        and a true one gains nothing.
        """
        try:
            text = self.device_path.read_text(encoding="ascii").split()
        except FileNotFoundError:
            return recorded
        except (OSError, UnicodeDecodeError) as exc:
            log.warning("cannot read %s (%s): resuming after the journal's newest frame",
                        self.device_path, exc)
            return recorded
        if (
            len(text) != 2 or not text[0].isdigit() or int(text[0]) > 255
            or not (text[1] == "-" or text[1].isdigit())
        ):
            log.warning("%s holds %r, not a device position: resuming after the journal's"
                        " newest frame", self.device_path, " ".join(text)[:40])
            return recorded
        then = None if text[1] == "-" else int(text[1])
        handled = int(text[0])
        if recorded is None or then != recorded:
            return recorded  # no frame to come round, or one recorded after it: newer
        if not behind(handled, recorded):
            if handled != recorded:
                log.info("%s names frame %d, %d after the journal's newest %d: resuming"
                         " after the journal's", self.device_path, handled,
                         (handled - recorded) & 0xFF, recorded)
            return recorded
        return handled


def behind(seq: int, reference: int) -> bool:
    """Whether frame ``seq`` is 128 to 255 frames past ``reference`` (modulo 256): behind it."""
    return (seq - reference) & 0xFF >= 128


def replace_file(path: Path, text: str) -> None:
    """Write ``path`` whole or not at all (a file beside it, renamed over it; no fsync)."""
    tmp = path.with_suffix(".tmp")
    try:
        tmp.write_text(text, encoding="ascii")
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise
