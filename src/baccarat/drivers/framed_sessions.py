"""The device's sessions as the framed host knows them (PROTOCOL.md 6.4).

:class:`DeviceSessions` is the session bookkeeping that
:class:`baccarat.drivers.framed.FramedDecoder` delegates to: the sessions remembered
(:class:`SeenSessions`, the newest :data:`SESSIONS_KEPT`), a replay of an earlier session
told and refused (its frames kept out until it has been quiet for :data:`REPLAY_QUIET`), a
reused session id named, and a HELLO after a restart whose record has no session said. The
decoder places the sequence (:mod:`baccarat.drivers.framed_placing`); this module says what
the sessions mean.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Final

from baccarat.drivers.events import DeviceEvent, SessionReplayed, SessionReused, SessionUnknown
from baccarat.drivers.framed_events import HELLO_SIZE
from baccarat.drivers.framed_placing import Placing, behind

log = logging.getLogger("baccarat.drivers.framed")  # the codec's log, as before the split

SESSIONS_KEPT: Final = 1024
"""Device sessions the host remembers, the newest; older ones are forgotten. A device
counts its sessions (a 16-bit boot counter): it comes back to a session only after 65,536
power-ups, long after the host forgot it, and a replay of any of its last 1,024 is told."""
REPLAY_QUIET: Final = 1.5
"""Seconds without a frame of a replay (three retransmission timeouts) before the host,
which refused the replay, takes the device's own frames again."""
REPLAY_NOTICE_EVERY: Final = 60.0
"""Seconds between two alarms for replays of one session; the ones between are counted."""


class SeenSessions:
    """The device sessions a host has seen, oldest first, at most ``limit`` (the newest)."""

    def __init__(self, limit: int = SESSIONS_KEPT) -> None:
        self.limit = limit
        self._seen: dict[int, None] = {}

    def add(self, session: int) -> None:
        """Note ``session`` as the newest seen; forget the oldest beyond the limit."""
        self._seen.pop(session, None)
        self._seen[session] = None
        while len(self._seen) > self.limit:
            del self._seen[next(iter(self._seen))]

    def __contains__(self, session: object) -> bool:
        return session in self._seen

    def __len__(self) -> int:
        return len(self._seen)

    @property
    def newest(self) -> int | None:
        """The session seen last, or ``None``."""
        return next(reversed(self._seen), None)

    def as_list(self) -> list[int]:
        """The sessions, oldest first."""
        return list(self._seen)


class DeviceSessions:
    """The device's sessions, for one decoder: the current one, those seen, and the alarms.

    ``current``: the session of the frames the decoder takes now (``None``: not known);
    ``hello_taken``: a HELLO of the current session was taken (a second one in order is a
    power-up that reused it). The counters are the decoder's (``FramedDecoder.counters``).
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.current: int | None = None
        self.seen = SeenSessions()
        """Every session of the device the host has seen (the newest :data:`SESSIONS_KEPT`)."""
        self.hello_taken = False
        self._replay_noticed: dict[int, float] = {}  # replayed session -> its last alarm
        self.hellos = 0
        self.replays = 0
        self.replayed_frames = 0
        self.sessions_reused = 0

    def judge_hello(
        self, placing: Placing, session: int, window: tuple[int, int],
        events: list[DeviceEvent],
    ) -> None:
        """The device answered after a HELLO of an earlier session: a replay, or a reuse."""
        replayed, placing.replayed = placing.replayed, None
        assert replayed is not None
        if session == replayed:  # the device is in it: it powered up and reused it
            if replayed != self.seen.newest:
                self.reused(placing.hello, "seen before, at an earlier power-up", events,
                             session=replayed)
            self.hello_taken = False
            placing.reason, placing.recorded, placing.expected = "start", None, None
            return
        placing.window = window  # the device is elsewhere: the HELLO was a replay
        self.replayed(replayed, placing.hello, session, events)

    def replayed(
        self, replayed: int, hello: int, device: int | None, events: list[DeviceEvent]
    ) -> None:
        """Frames of an earlier session came again: say so (an alarm), once a minute at most.

        ``device``: the session the device answered in; ``None``: it does not answer (a
        version-1 device), and the host cannot tell a replay from a power-up.
        """
        self.replays += 1
        now = self._clock()
        self._replay_noticed = {
            s: at for s, at in self._replay_noticed.items() if now - at < REPLAY_NOTICE_EVERY
        }
        if replayed in self._replay_noticed:
            log.info("framed: session 0x%04x replayed again (alarm raised within %.0f s)",
                     replayed, REPLAY_NOTICE_EVERY)
            return
        self._replay_noticed[replayed] = now
        came = f"HELLO of session 0x{replayed:04x} (frame {hello}), a session"
        if device is None:
            detail = (
                f"{came} seen before, and the device does not answer QUERY (protocol version "
                "1): a replay of an earlier session's frames cannot be told from a power-up "
                "that reused its session; the host follows the retransmissions as for any such "
                "device and may take the replay's frames: check the table"
            )
        else:
            detail = (
                f"{came} seen before, while the device answers in session 0x{device:04x}: an "
                "earlier session's frames sent again (a replay), refused, none of them taken; "
                f"the device's own frames are taken once the replay has been quiet for "
                f"{REPLAY_QUIET:g} s. Find what sends them between the device and the controller"
            )
        log.warning("framed: %s", detail)
        events.append(SessionReplayed(replayed, detail))

    def reused(
        self, seq: int, how: str, events: list[DeviceEvent], *, session: int | None = None
    ) -> None:
        """The device powered up with a session it had used: a power-up, and an alarm."""
        session = self.current if session is None else session
        assert session is not None
        self.sessions_reused += 1
        detail = (
            f"the device sent HELLO (frame {seq}) of session 0x{session:04x}, {how}: it "
            "powered up and reused its session id, which a device must never do (PROTOCOL.md "
            f"6.4: a counter kept across power-ups); its frames from {seq} on are taken as a "
            "new power-up's. Have the device's firmware fixed: a replay of its earlier "
            "session could not be told from it"
        )
        log.warning("framed: %s", detail)
        events.append(SessionReused(session, detail))

    def guard(self, placing: Placing, seq: int, frame: tuple[int, bytes]) -> bool:
        """A frame while a refused replay may go on: keep the device's, drop the rest.

        Only the frames the device has in flight (its answer: ``start`` .. ``next - 1``)
        are kept, one copy each; a second copy that differs drops both (the device's comes
        again, a replay's does not), and any other frame (behind: the replay; ahead: the
        device's new frame, or the replay) restarts the quiet time and asks the device again.
        ``True``: ask the device again (a QUERY is due).
        """
        assert placing.window is not None
        next_seq = placing.window[1]
        now = self._clock()
        if (seq - placing.start) & 0xFF < (next_seq - placing.start) & 0xFF:
            kept = placing.held.get(seq)
            if kept is None:
                placing.held[seq] = frame
            elif kept != frame:
                del placing.held[seq]
                self.replayed_frames += 1
                placing.quiet_since = now
            return False
        ask = not behind(seq, placing.start)
        if not ask:
            self.replayed_frames += 1
        placing.quiet_since = now
        return ask

    def replay_over(self, placing: Placing | None) -> bool:
        """After a refused replay: whether to go on, quiet long enough and the device's held.

        ``True``: the replay is over (``placing.window`` is cleared); the decoder goes on at
        ``placing.start``.
        """
        if placing is None or placing.window is None:
            return False
        if self._clock() - placing.quiet_since < REPLAY_QUIET:
            return False
        count = (placing.window[1] - placing.start) & 0xFF
        if any((placing.start + i) & 0xFF not in placing.held for i in range(count)):
            return False  # the device sends them again
        log.info("framed: the replay is over (%d frame(s) of it dropped); going on at frame %d",
                 self.replayed_frames, placing.start)
        placing.window = None
        return True

    def unknown(self, placing: Placing | None, seq: int, events: list[DeviceEvent]) -> None:
        """A HELLO after a restart whose record has no session: a repeat, or a power-up?

        The frames from the HELLO on are taken as a new session's (a power-up is the
        likelier), and said: if the HELLO is a repeat, events recorded before the restart
        come again.
        """
        if placing is None or placing.reason != "restart" or placing.session is not None:
            return
        assert placing.recorded is not None
        detail = (
            f"the device sent HELLO (frame {seq}) after the controller restarted, and the "
            f"record names frame {placing.recorded} but not its session: frames from {seq} "
            "on are taken as a new session; if the device did not restart, events up to "
            f"frame {placing.recorded} are taken twice: check the table"
        )
        log.warning("framed: %s", detail)
        events.append(SessionUnknown(detail))

    def new_session(self, payload: bytes) -> bool:
        """Whether a HELLO announces a session not seen before (the device restarted)."""
        if len(payload) != HELLO_SIZE:
            return False
        session = int.from_bytes(payload[1:3], "big")
        if session == self.current:
            return False
        self.hellos += 1
        self.current = session
        self.seen.add(session)
        self.hello_taken = False
        return True
