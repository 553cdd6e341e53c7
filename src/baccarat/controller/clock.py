"""The time an input arrived: wall-clock seconds that never go backwards.

A table computer without a real-time clock boots with a wrong time (1970, or the time
``fake-hwclock`` saved at the last shutdown) until NTP sets it; an operator or NTP may also
step the clock back while the daemon runs. The journal's times, the recall and every
message's ``ts`` would then go backwards, silently. :class:`TableClock` prevents both:

* it starts from a *floor*, the time of the journal's newest record; a clock that reads
  earlier at the start is a step back;
* while it runs, the monotonic clock says how much time really passed; a wall clock that
  reads more than :data:`STEP_TOLERANCE` earlier than the last time given out plus that is
  a step back.

After a step back the times given out go on from the last one at the monotonic clock's
pace, until the wall clock is ahead again (NTP catching up, or a step forward), so the
journal stays in order. Each step back is reported once, for an alarm; a step forward is
not an error (it is what NTP does at a boot without RTC) and is taken as it comes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final

STEP_TOLERANCE: Final = 1.0
"""Seconds the wall clock may read behind the expected time before it counts as a step
back (NTP slews small errors; a step is seconds to years)."""


def _iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


class TableClock:
    """Times for inputs, in Unix seconds to the microsecond, never decreasing."""

    def __init__(
        self,
        floor: float | None = None,
        *,
        wall: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        """A clock that gives nothing earlier than ``floor`` (the journal's newest time)."""
        self._wall = wall
        self._monotonic = monotonic
        self._last: float | None = floor
        self._last_at = monotonic()
        self._behind = False

    def read(self) -> tuple[float, str | None]:
        """The time now, and the text of a step back if this reading found one."""
        wall = self._wall()
        mono = self._monotonic()
        if self._last is None:
            self._last, self._last_at = round(wall, 6), mono
            return self._last, None
        expected = self._last + (mono - self._last_at)
        step = None
        if wall < expected - STEP_TOLERANCE:
            if not self._behind:
                step = self._describe(wall, expected)
            self._behind = True
            ts = expected
        else:
            self._behind = False
            ts = max(wall, self._last)
        self._last, self._last_at = round(ts, 6), mono
        return self._last, step

    @property
    def behind(self) -> bool:
        """True while the wall clock reads earlier than the times given out."""
        return self._behind

    @staticmethod
    def _describe(wall: float, expected: float) -> str:
        return (
            f"the system clock reads {_iso(wall)}, {expected - wall:.0f} s before the last"
            f" recorded time: a step back, or no RTC and no NTP yet; input times go on from"
            f" {_iso(expected)} until the clock is right again"
        )
