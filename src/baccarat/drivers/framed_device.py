"""The device's side of ``framed``: window, retransmission, heartbeats (PROTOCOL.md, 6).

:class:`FramedSender` is what a shoe's or a shuffler's firmware does to deliver its events
reliably, without I/O: the caller supplies the clock, writes the frames it returns and
hands it the bytes the host writes back. The virtual shoe and the virtual shuffler run
it; a vendor may read it as the reference for the firmware.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass
from typing import Final

from baccarat.drivers.events import DeviceEvent
from baccarat.drivers.framed import FramedEncoder
from baccarat.drivers.framed_events import event_frame_parts
from baccarat.drivers.framed_wire import (
    ACK,
    ALARM,
    HEARTBEAT,
    HELLO,
    QUERY,
    FrameSplitter,
    hello_payload,
    parse_alarm,
    position_frame,
)

# The device's timing (seconds), PROTOCOL.md "Timing constants".
RETRANSMIT_TIMEOUT: Final = 0.5
HEARTBEAT_INTERVAL: Final = 1.0
WINDOW: Final = 8
"""Most frames a device may have sent and not yet seen acknowledged (at most 127)."""
ANSWERS_MAX: Final = 4
"""QUERYs waiting for their answer at most; a host that asks faster gets the newest."""
ALARM_LEASE: Final = 3.5
"""Seconds a device holds an alarm open after its last open frame, without a cleared one."""


@dataclass(slots=True)
class _InFlight:
    seq: int
    frame: bytes
    sent_at: float


class FramedSender:
    """Device-side reliability of ``framed``, without I/O: the caller supplies the clock.

    Events are queued without bound (the device's memory); at most ``window`` frames are
    in flight. If the oldest frame in flight is not acknowledged ``retransmit_timeout``
    seconds after it was sent, every frame in flight is sent again, in order (go-back-N).
    When nothing has been sent for ``heartbeat_interval`` seconds a HEARTBEAT is queued.
    A frame gets its sequence number when it is first sent; a QUERY from the host is
    answered with a POSITION (the oldest frame not acknowledged, the next number) before
    anything else (PROTOCOL.md, 6.6). An ALARM from the host opens or clears an alarm; an
    open one lapses ``alarm_lease`` seconds after its last open frame (6.9):
    :meth:`open_alarms` says which are open at a given time, for the shoe's display.

    Loop: write every frame :meth:`next_frame` returns; when it returns ``None``, wait for
    more events, for bytes from the host (:meth:`receive`) or until :meth:`next_deadline`.
    """

    def __init__(
        self,
        *,
        window: int = WINDOW,
        retransmit_timeout: float = RETRANSMIT_TIMEOUT,
        heartbeat_interval: float | None = HEARTBEAT_INTERVAL,
        session: int | None = None,
        alarm_lease: float = ALARM_LEASE,
    ) -> None:
        if not 1 <= window <= 127:
            raise ValueError("window must be 1..127")
        self.window = window
        self.retransmit_timeout = retransmit_timeout
        self.heartbeat_interval = heartbeat_interval
        self.session = random.getrandbits(16) if session is None else session & 0xFFFF
        self._encoder = FramedEncoder()
        self._queue: deque[tuple[int, bytes]] = deque()  # frame type, payload: no seq yet
        self._queue.append((HELLO, hello_payload(self.session)))
        self._answers: deque[int] = deque(maxlen=ANSWERS_MAX)  # the QUERYs' nonces
        self._in_flight: deque[_InFlight] = deque()
        self._cursor = 0  # frames in flight before this index were sent this round
        self._last_sent: float | None = None
        self._splitter = FrameSplitter()
        self.alarm_lease = alarm_lease
        self._alarms: dict[int, tuple[str, float]] = {}  # id -> kind, lease ends at
        self._now = 0.0  # the latest time the caller gave
        self.frames_sent = 0
        self.retransmissions = 0
        self.acks_in = 0
        self.stale_acks = 0
        self.queries_in = 0
        self.forgotten = 0
        self.alarms_in = 0
        self.bad_alarms = 0

    @property
    def idle(self) -> bool:
        """Nothing queued and nothing waiting for an acknowledgement."""
        return not self._queue and not self._in_flight

    @property
    def queued(self) -> int:
        """Frames waiting for room in the window."""
        return len(self._queue)

    @property
    def in_flight(self) -> int:
        """Frames sent and not yet acknowledged."""
        return len(self._in_flight)

    @property
    def unacknowledged(self) -> list[int]:
        """The sequence numbers of the frames in flight, oldest first."""
        return [entry.seq for entry in self._in_flight]

    @property
    def oldest_unacknowledged(self) -> int:
        """The sequence number of the oldest frame in flight, or the next one if none is."""
        return self._in_flight[0].seq if self._in_flight else self._encoder.next_seq

    def queue(self, event: DeviceEvent) -> None:
        """Queue ``event`` for sending; raise :class:`NotCarriedError` if no frame carries it."""
        self._queue.append(event_frame_parts(event))

    def forget(self, count: int) -> int:
        """A fault, for tests: lose the ``count`` oldest frames in flight unacknowledged.

        The device goes on as if the host had acknowledged them (a firmware bug, a memory
        fault). Returns how many it lost.
        """
        lost = min(count, len(self._in_flight))
        for _ in range(lost):
            self._in_flight.popleft()
        self._cursor = max(0, self._cursor - lost)
        self.forgotten += lost
        return lost

    def next_frame(self, now: float) -> bytes | None:
        """The next frame to write at time ``now`` (answers, retransmissions, new), or ``None``."""
        self._now = max(self._now, now)
        if self._answers:  # as things stand when it is sent
            nonce = self._answers.popleft()
            return position_frame(nonce, self.oldest_unacknowledged, self._encoder.next_seq,
                                  self.session)
        in_flight = self._in_flight
        if (
            in_flight
            and self._cursor >= len(in_flight)
            and now - in_flight[0].sent_at >= self.retransmit_timeout
        ):
            self._cursor = 0
        if self._cursor < len(in_flight):
            entry = in_flight[self._cursor]
            self._cursor += 1
            entry.sent_at = now
            self.retransmissions += 1
            return self._sent(entry.frame, now)
        if len(in_flight) >= self.window:
            return None
        taken = self._take(now)
        if taken is None:
            return None
        seq, frame = taken
        in_flight.append(_InFlight(seq, frame, now))
        self._cursor = len(in_flight)
        self.frames_sent += 1
        return self._sent(frame, now)

    def next_deadline(self) -> float | None:
        """When :meth:`next_frame` may next have something without new input, or ``None``."""
        deadlines: list[float] = []
        if self._answers:
            return float("-inf")  # at once
        if self._in_flight:
            deadlines.append(self._in_flight[0].sent_at + self.retransmit_timeout)
        elif self.heartbeat_interval is not None and self._last_sent is not None:
            deadlines.append(self._last_sent + self.heartbeat_interval)
        return min(deadlines, default=None)

    @property
    def answers_due(self) -> int:
        """POSITION answers waiting to be written."""
        return len(self._answers)

    def receive(self, data: bytes, now: float | None = None) -> int:
        """Read bytes from the host, arrived at ``now``; return how many frames ACKs released.

        A QUERY queues its answer (:attr:`answers_due`); an ALARM opens (with its lease
        from ``now``) or clears an alarm, and a malformed one is ignored and counted
        (``bad_alarms``); other host frames are ignored. ``now`` matters only to ALARM
        frames; without it, the latest time given to this sender is taken.
        """
        if now is not None:
            self._now = max(self._now, now)
        released = 0
        for body in self._splitter.split(data):
            if not isinstance(body, bytes):
                continue
            if body[2] == ACK:
                self.acks_in += 1
                released += self._release(body[1])
            elif body[2] == QUERY:
                self.queries_in += 1
                self._answers.append(body[1])
            elif body[2] == ALARM:
                self._alarm(body[3:-2], self._now if now is None else now)
        return released

    def open_alarms(self, now: float) -> dict[int, str]:
        """The alarms open at ``now`` (id -> kind): told open, not cleared, lease running."""
        self._now = max(self._now, now)
        for alarm_id in [a for a, (_, until) in self._alarms.items() if until <= now]:
            del self._alarms[alarm_id]
        return {alarm_id: kind for alarm_id, (kind, _) in self._alarms.items()}

    def alarm_deadline(self) -> float | None:
        """When the first open alarm's lease runs out, or ``None`` if none is open."""
        return min((until for _, until in self._alarms.values()), default=None)

    def _alarm(self, payload: bytes, now: float) -> None:
        notice = parse_alarm(payload)
        if notice is None:
            self.bad_alarms += 1
            return
        self.alarms_in += 1
        if notice.open:
            self._alarms[notice.alarm_id] = (notice.kind, now + self.alarm_lease)
        else:
            self._alarms.pop(notice.alarm_id, None)

    def _release(self, acked: int) -> int:
        for index, entry in enumerate(self._in_flight):
            if entry.seq == acked:
                for _ in range(index + 1):
                    self._in_flight.popleft()
                self._cursor = max(0, self._cursor - index - 1)
                return index + 1
        self.stale_acks += 1
        return 0

    def _take(self, now: float) -> tuple[int, bytes] | None:
        if self._queue:
            frame_type, payload = self._queue.popleft()
        elif self._heartbeat_due(now):
            frame_type, payload = HEARTBEAT, b""
        else:
            return None
        seq = self._encoder.next_seq
        return seq, self._encoder.frame(frame_type, payload)

    def _heartbeat_due(self, now: float) -> bool:
        interval, last = self.heartbeat_interval, self._last_sent
        return interval is not None and last is not None and now - last >= interval

    def _sent(self, frame: bytes, now: float) -> bytes:
        self._last_sent = now
        return frame

    @property
    def counters(self) -> dict[str, int]:
        """Sender counters."""
        return {
            "frames_sent": self.frames_sent,
            "retransmissions": self.retransmissions,
            "acks_in": self.acks_in,
            "stale_acks": self.stale_acks,
            "queries_in": self.queries_in,
            "forgotten": self.forgotten,
            "alarms_in": self.alarms_in,
            "bad_alarms": self.bad_alarms,
            "queued": len(self._queue),
            "in_flight": len(self._in_flight),
        }
