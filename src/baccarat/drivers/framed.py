"""The ``framed`` protocol: flag-delimited, byte-stuffed, CRC-checked, acknowledged frames.

The wire format, the frame types and the rules for both sides are specified in
``PROTOCOL.md`` next to this module; this module is the reference implementation of the
host's side, on the wire of :mod:`baccarat.drivers.framed_wire` (frame layout, types, CRC,
stuffing and the splitter) and the frames' events of :mod:`baccarat.drivers.framed_events`:

* :class:`FramedDecoder` is the host side: bytes in, device events out, and the
  acknowledgements to write back (:meth:`FramedDecoder.pending_output`); duplicates are
  dropped by sequence number.
* :class:`FramedEncoder` turns events into frames with consecutive sequence numbers.
* :class:`AlarmTeller` is what the host tells the device of the table's open alarms.

The device's side (window, retransmission, heartbeats) is
:mod:`baccarat.drivers.framed_device`.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Final

from baccarat.drivers.codec import Codec
from baccarat.drivers.events import (
    CardDrawn,
    CutCard,
    DealerButton,
    DeviceEvent,
    DeviceFault,
    Heartbeat,
    Rejected,
    SequenceGap,
    SessionReplayed,
    SessionReused,
    SessionUnknown,
    ShoeInserted,
    ShoeRemoved,
    ShuffleDone,
    ShuffleStarted,
    UnreadableCard,
)
from baccarat.drivers.framed_events import HELLO_SIZE, event_frame_parts, frame_event
from baccarat.drivers.framed_wire import (
    ACK,
    ALARM,
    HELLO,
    POSITION,
    QUERY,
    AlarmNotice,
    FrameSplitter,
    ack_frame,
    alarm_frame,
    encode_frame,
    hello_payload,
    query_frame,
    wire_kind,
)

log = logging.getLogger(__name__)

# The host's timing (seconds), PROTOCOL.md "Timing constants"; the device's is in
# baccarat.drivers.framed_device.
ACK_DELAY_MAX: Final = 0.05
HEARTBEAT_TIMEOUT: Final = 3.0
ALARM_REFRESH: Final = 1.0
"""Seconds between the host's repeats of the open frame of each open alarm (6.9)."""

# Placing the device's sequence (PROTOCOL.md, 6.6 and 6.7).
POSITION_SIZE: Final = 4
"""A POSITION payload: oldest unacknowledged, next sequence number, session (2 bytes)."""
STUCK_SIGHTINGS: Final = 2
"""Times one frame ahead of the expected one comes, without it, before the host asks."""
QUERIES_BEFORE_V1: Final = 2
"""Queries left unanswered before the host follows the retransmissions (a version-1 device)."""
ANSWER_TIMEOUT: Final = 2.0
"""Seconds since the first QUERY after which an unanswered device is taken for version 1."""
V1_SIGHTINGS: Final = 2
"""Times a version-1 device must repeat the first of its frames before the host goes on there."""
V1_PATIENCE: Final = 6
"""Times a version-1 device may repeat a run that starts before the frame recorded last,
without that frame (lost on the wire), before the host stops waiting for it."""
_HOST_FRAMES: Final = frozenset({ACK, QUERY, ALARM})
_GOES_ON: Final = frozenset({"stuck", "replay", "hello_again"})
"""Placings of a host that knows the frame it expects: the device goes on from there."""

# Sessions remembered (PROTOCOL.md 6.4).
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

class AlarmTeller:
    """The host's side of ALARM frames, without I/O: what to write, and when (6.9).

    :meth:`tell` takes the table's open alarms as they are now and returns the frames of
    what changed (an open frame for each new alarm, a cleared frame for each one gone);
    :meth:`refresh`, called on a timer, repeats the open frame of every open alarm not
    sent for :data:`ALARM_REFRESH` seconds, so a lost open frame is repaired and the
    device's lease does not run out while the alarm lasts.
    """

    def __init__(self, refresh: float = ALARM_REFRESH) -> None:
        self.refresh_interval = refresh
        self._open: dict[int, tuple[str, float]] = {}  # id -> kind, when last sent
        self.frames_out = 0

    @property
    def open(self) -> dict[int, str]:
        """The alarms the device was told are open: id -> kind."""
        return {alarm_id: kind for alarm_id, (kind, _) in self._open.items()}

    def tell(self, alarms: Iterable[tuple[int, str]], now: float) -> bytes:
        """The frames for the change from the alarms told before to ``alarms`` (id, kind)."""
        wanted = {alarm_id & 0xFFFFFFFF: wire_kind(kind) for alarm_id, kind in alarms}
        out = b""
        for alarm_id, (kind, _) in list(self._open.items()):
            if wanted.get(alarm_id) != kind:
                del self._open[alarm_id]
                out += self._frame(AlarmNotice(alarm_id, kind, open=False))
        for alarm_id, kind in wanted.items():
            if alarm_id not in self._open:
                out += self._send_open(alarm_id, kind, now)
        return out

    def refresh(self, now: float, *, every: bool = False) -> bytes:
        """The open frames due again at ``now`` (``every``: all of them, e.g. on a new link)."""
        out = b""
        for alarm_id, (kind, sent_at) in sorted(self._open.items()):
            if every or now - sent_at >= self.refresh_interval:
                out += self._send_open(alarm_id, kind, now)
        return out

    def _send_open(self, alarm_id: int, kind: str, now: float) -> bytes:
        self._open[alarm_id] = (kind, now)
        return self._frame(AlarmNotice(alarm_id, kind, open=True))

    def _frame(self, notice: AlarmNotice) -> bytes:
        self.frames_out += 1
        return alarm_frame(notice)


def _behind(seq: int, reference: int) -> bool:
    """Whether ``seq`` comes before ``reference`` (up to 128 before it, modulo 256)."""
    return (seq - reference) & 0xFF >= 128


def _unacknowledged(seq: int, oldest: int, next_seq: int) -> bool:
    """Whether ``seq`` is in the device's range of frames not acknowledged, oldest..next-1."""
    return (seq - oldest) & 0xFF < (next_seq - oldest) & 0xFF


def _run_holds(held: dict[int, tuple[int, bytes]], start: int, seq: int) -> bool:
    """Whether the run of consecutive frames held from ``start`` includes frame ``seq``."""
    frame = start
    for _ in range(128):
        if frame not in held:
            return False
        if frame == seq:
            return True
        frame = (frame + 1) & 0xFF
    return False


def _span(first: int, last: int) -> str:
    """Frames ``first`` to ``last`` (modulo 256), as a text."""
    count = (last - first) & 0xFF
    return f"frame {first}" if count == 0 else f"frames {first}..{last} ({count + 1})"


@dataclass(slots=True)
class _Placing:
    """The host does not know where the device's sequence stands: it asks (6.6, 6.7).

    ``reason``: ``"start"`` (a host with no record), ``"restart"`` (the host recorded
    ``recorded`` last, a frame of the device's session ``session``, ``None`` if the record
    does not say), ``"stuck"`` (frames ahead of ``expected`` keep coming without it),
    ``"hello_again"`` (a HELLO of the device's session out of order: a repeat whose ACK
    was lost, or a power-up that reused the session; ``recorded`` is the frame taken last)
    or ``"replay"`` (a HELLO of an earlier session: ``replayed``).
    """

    reason: str
    recorded: int | None = None
    session: int | None = None
    expected: int | None = None
    journal_lost: bool = False
    """The host's journal lost records: frames acknowledged after ``recorded`` were lost."""
    first_query: int | None = None
    first_query_at: float = 0.0
    queries: int = 0
    held: dict[int, tuple[int, bytes]] = field(default_factory=dict)
    sightings: Counter[int] = field(default_factory=Counter)
    replayed: int | None = None
    """A HELLO came of this session, one seen before and not the device's: asked, the device
    says whether it is in it (it powered up reusing it) or not (a replay)."""
    hello: int = 0
    """The sequence number of the HELLO that made the host ask (``hello_again``, ``replay``)."""
    window: tuple[int, int] | None = None
    """A replay confirmed: the device's own frames in flight (oldest, next), as it answered."""
    start: int = 0
    """A replay confirmed: the frame the host goes on at, once the replay has stopped."""
    ack: int | None = None
    quiet_since: float = 0.0

    def asked(self, nonce: int) -> bool:
        """Whether ``nonce`` is one of the queries sent since this placing began."""
        first = self.first_query
        return first is not None and (nonce - first) & 0xFF < self.queries


class FramedDecoder:
    """Host side of the ``framed`` protocol: events out, acknowledgements to write back.

    Until it knows where the device's sequence stands the decoder *places* it: it takes no
    frame and acknowledges none, holds what comes, and asks the device with a QUERY
    (:meth:`pending_output`); the POSITION answer says which frame is the oldest the device
    has not seen acknowledged, and the decoder goes on from there (PROTOCOL.md, 6.6). A
    device that does not answer (protocol version 1) is placed by its retransmissions:
    the start of the run of frames it repeats. A decoder starts so (a host with no
    record), after :meth:`resume_after` (a restarted host), and when frames ahead of the
    expected one keep coming without it (the device went on without it). A frame the host
    expected that the device will not send is a :class:`SequenceGap` event, never a stall.

    Keeps the sequence across :meth:`resync` (a reconnection), so a frame the device
    retransmits after an unplug is dropped as a duplicate. A HELLO with a new session id
    (the device restarted) places the sequence at the HELLO; a HELLO taken is a
    :class:`Hello` event, to be recorded before it is acknowledged, and every event carries
    the session of its frame, so that a restarted host given the session of its last record
    (:meth:`resume_after`) knows a repeat of that session's HELLO from a new power-up.
    """

    def __init__(
        self, *, expected: int | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        """``expected``: the device's next sequence number, if known (tests); else ask.

        ``clock``: seconds, for :data:`ANSWER_TIMEOUT` (tests give their own).
        """
        self._clock = clock
        self._splitter = FrameSplitter()
        self._expected = 0 if expected is None else expected & 0xFF
        self._placing: _Placing | None = _Placing("start") if expected is None else None
        self._ackable: int | None = None  # the last frame this host may acknowledge
        self._session: int | None = None
        self.sessions = SeenSessions()
        """Every session of the device the host has seen (the newest :data:`SESSIONS_KEPT`)."""
        self._hello_taken = False  # a HELLO of the current session was taken
        self._replay_noticed: dict[int, float] = {}  # replayed session -> its last alarm
        self._ack_due = False
        self._query_due = False
        self._nonce = 0
        self._sightings: Counter[int] = Counter()
        self.duplicates = 0
        self.out_of_order = 0
        self.hellos = 0
        self.acks_out = 0
        self.unexpected_frames = 0
        self.queries_out = 0
        self.positions_in = 0
        self.gaps = 0
        self.replays = 0
        self.replayed_frames = 0
        self.sessions_reused = 0

    @property
    def counters(self) -> dict[str, int]:
        """Health counters: the byte stream's and the sequence's."""
        counters = self._splitter.counters()
        counters.update(
            duplicates=self.duplicates,
            out_of_order=self.out_of_order,
            hellos=self.hellos,
            acks_out=self.acks_out,
            unexpected_frames=self.unexpected_frames,
            queries_out=self.queries_out,
            positions_in=self.positions_in,
            sequence_gaps=self.gaps,
            replays=self.replays,
            replayed_frames=self.replayed_frames,
            sessions_reused=self.sessions_reused,
        )
        return counters

    @property
    def placed(self) -> bool:
        """Whether the decoder knows which frame comes next (it takes frames)."""
        return self._placing is None

    def feed(self, data: bytes) -> list[DeviceEvent]:
        """Consume ``data``; return the events of the new frames and rejections, in order."""
        events: list[DeviceEvent] = []
        for body in self._splitter.split(data):
            if isinstance(body, Rejected):
                events.append(body)
                continue
            seq, frame_type, payload = body[1], body[2], body[3:-2]
            if frame_type == POSITION:  # the device's answer: no seq, no acknowledgement
                self._position(seq, payload, events)
            elif frame_type in _HOST_FRAMES:
                self.unexpected_frames += 1
                why = f"host frame 0x{frame_type:02X} (seq {seq}) sent by the device"
                events.append(Rejected(body, why))
            elif frame_type == HELLO and self._hello_held(seq, payload, events):
                continue  # a HELLO of a session seen before: the device is asked
            else:
                if frame_type == HELLO and self._new_session(payload):
                    self._session_unknown(seq, events)
                    self._placing = None  # what was held belongs to the old session
                    self._place(seq, events)
                self._frame(seq, frame_type, payload, events)
        self._replay_over(events)
        return events

    def acknowledgement(self, event: DeviceEvent) -> bytes:
        """The ACK of the frame that carried ``event``.

        Every event with a ``seq`` came in a frame accepted in sequence; events without one
        (rejected bytes, a sequence gap) have none.
        """
        return b"" if event.seq is None else ack_frame(event.seq)

    def pending_output(self) -> bytes:
        """What the host owes the device for the frames fed so far, or b''.

        One cumulative ACK of the last frame taken, and while the decoder places the
        sequence, a QUERY. Never an ACK of a frame the host did not take in order (or, after
        a restart, of the last one it recorded, once the device said it still has it).
        """
        out = b""
        if self._ack_due and self._ackable is not None:
            self.acks_out += 1
            out += ack_frame(self._ackable)
        self._ack_due = False
        placing = self._placing
        if self._query_due and placing is not None:
            if placing.first_query is None:
                placing.first_query = self._nonce
                placing.first_query_at = self._clock()
            out += query_frame(self._nonce)
            self._nonce = (self._nonce + 1) & 0xFF
            placing.queries += 1
            self.queries_out += 1
        self._query_due = False
        return out

    def resume_after(
        self, seq: int, session: int | None = None, *, journal_lost: bool = False
    ) -> None:
        """The host restarted: frame ``seq`` and those before it are already recorded.

        ``session``: the device's session that frame belongs to (``None``: the record does
        not say). The decoder asks the device where it stands (PROTOCOL.md, 6.6): if it
        is still in that session and has frame ``seq`` unacknowledged, the frames up to
        ``seq`` are acknowledged and dropped as duplicates; otherwise the device resumes at
        its oldest unacknowledged frame (the frames between were acknowledged by the host
        before it stopped, with nothing to record: heartbeats). A HELLO of ``session`` is
        one of those frames, not a new power-up (6.4). ``journal_lost``: the host's journal
        lost records it had flushed, so the frames between may have been inputs: they are
        said lost (a :class:`SequenceGap`), never heartbeats.
        """
        session = None if session is None else session & 0xFFFF
        self._placing = _Placing(
            "restart", recorded=seq & 0xFF, session=session, expected=(seq + 1) & 0xFF,
            journal_lost=journal_lost,
        )
        if session is not None:
            self.sessions.add(session)
        self._session = session
        self._ackable = None

    def remember_sessions(self, sessions: Iterable[int]) -> None:
        """The device sessions the host saw before (its record), oldest first.

        A HELLO of one of them that is not the device's session now is a replay, or a
        power-up that reused it; the device is asked which (PROTOCOL.md 6.4).
        """
        for session in sessions:
            self.sessions.add(session & 0xFFFF)

    def resync(self) -> list[DeviceEvent]:
        """Drop a partial frame; keep the sequence state (the device may retransmit)."""
        return [piece for piece in self._splitter.resync() if isinstance(piece, Rejected)]

    # -- a placed sequence ------------------------------------------------------------

    def _frame(self, seq: int, frame_type: int, payload: bytes, events: list[DeviceEvent]) -> None:
        """A frame of the device's sequence: take it, drop it, or hold it while placing."""
        if self._placing is not None:
            self._hold(seq, frame_type, payload, events)
            return
        self._ack_due = True
        if seq == self._expected:
            self._take(seq, frame_type, payload, events)
        elif _behind(seq, self._expected):
            self.duplicates += 1
        else:
            self.out_of_order += 1
            self._ahead(seq, frame_type, payload, events)

    def _take(self, seq: int, frame_type: int, payload: bytes, events: list[DeviceEvent]) -> None:
        self._expected = (seq + 1) & 0xFF
        self._ackable = seq
        self._ack_due = True
        if self._sightings:
            self._sightings.clear()
        if frame_type == HELLO and len(payload) == HELLO_SIZE:
            if self._hello_taken:  # in order, so no repeat: a power-up in the same session
                self._reused(seq, "in order after the frames taken in that session", events)
            self._hello_taken = True
        events.append(frame_event(frame_type, payload, seq, self._session))

    def _ahead(self, seq: int, frame_type: int, payload: bytes, events: list[DeviceEvent]) -> None:
        """A frame ahead of the expected one: dropped, for it comes again.

        If the device repeats frames ahead without the expected one, it is asked.
        """
        self._sightings[seq] += 1
        if self._sightings[seq] >= STUCK_SIGHTINGS:
            self._placing = _Placing("stuck", expected=self._expected)
            self._sightings.clear()
            self._hold(seq, frame_type, payload, events)

    # -- placing the sequence -----------------------------------------------------------

    def _hold(self, seq: int, frame_type: int, payload: bytes, events: list[DeviceEvent]) -> None:
        """While placing: keep the frame, ask the device, or follow its retransmissions."""
        placing = self._placing
        assert placing is not None
        if placing.window is not None:
            self._guard(placing, seq, (frame_type, payload))
            return
        placing.sightings[seq] += 1
        placing.held[seq] = (frame_type, payload)
        if placing.reason == "hello_again" and _behind(seq, self._expected):
            self.duplicates += 1  # the window again with its HELLO: a deaf shoe's, or a reset's
        if placing.reason == "stuck" and seq == placing.expected and placing.replayed is None:
            self._place(seq, events)  # the frame that was missing came after all
            return
        self._query_due = True
        if self._unanswered(placing):
            if placing.replayed is not None:  # it cannot be asked: taken as a power-up
                replayed, placing.replayed = placing.replayed, None
                self._replayed(replayed, placing.hello, None, events)
            self._place_by_retransmissions(placing, events)

    def _unanswered(self, placing: _Placing) -> bool:
        """Whether the device left the queries unanswered long enough to be version 1."""
        waited = self._clock() - placing.first_query_at
        return placing.queries >= QUERIES_BEFORE_V1 and waited >= ANSWER_TIMEOUT

    def _position(self, nonce: int, payload: bytes, events: list[DeviceEvent]) -> None:
        """The device's answer to a QUERY: its oldest unacknowledged and its next frame."""
        placing = self._placing
        if placing is None or len(payload) != POSITION_SIZE or not placing.asked(nonce):
            self.unexpected_frames += 1  # late, or an answer to nobody: nothing to place
            return
        self.positions_in += 1
        oldest, next_seq = payload[0], payload[1]
        session = int.from_bytes(payload[2:4], "big")
        if placing.window is not None:  # a replay refused: where the device's own frames are
            if session == self._session:
                placing.window = (oldest, next_seq)
            return
        if placing.replayed is not None:
            self._judge_hello(placing, session, (oldest, next_seq), events)
        self._session = session
        self.sessions.add(session)
        recorded, expected = placing.recorded, placing.expected
        if recorded is not None and placing.session not in (None, session):
            log.info(
                "framed: the device is in session 0x%04x, not 0x%04x of the frame recorded "
                "last: it restarted since; resuming at its oldest unacknowledged frame %d",
                session, placing.session, oldest,
            )
            self._place(oldest, events)
        elif recorded is not None and _unacknowledged(recorded, oldest, next_seq):
            self._place((recorded + 1) & 0xFF, events, recorded=recorded)
        elif placing.reason == "hello_again" and _unacknowledged(placing.hello, oldest, next_seq):
            # its HELLO is in flight and the frames taken after it are not: it reset
            how = "out of order, and the device has it in flight but not the frames taken"
            self._reused(placing.hello, f"{how} after it up to {recorded}", events)
            self._hello_taken = False
            self._place(oldest, events)
        elif placing.reason in _GOES_ON and expected is not None and not _behind(expected, oldest):
            self._place(expected, events)  # the device still has it: it comes again
        elif placing.reason in _GOES_ON and expected is not None:
            self._gap(expected, oldest, "the device went on without them", events)
            self._place(oldest, events)
        elif placing.journal_lost and expected is not None and oldest != expected:
            why = ("acknowledged before the restart, and the journal lost the records that "
                   "held them: inputs lost, not heartbeats")
            self._gap(expected, oldest, why, events)
            self._place(oldest, events)
        else:
            if expected is not None and oldest != expected:
                log.info(
                    "framed: the device resumes at frame %d; frames %d..%d were acknowledged "
                    "before the restart with nothing to record (heartbeats)",
                    oldest, expected, (oldest - 1) & 0xFF,
                )
            self._place(oldest, events)

    def _place_by_retransmissions(self, placing: _Placing, events: list[DeviceEvent]) -> None:
        """A device that does not answer (version 1): follow what it sends again.

        The device repeats its frames in flight oldest first, so the start of a run of
        frames seen at least :data:`V1_SIGHTINGS` times is where it resumes. A run that
        starts before the frame recorded last holds that frame too (the host's ACKs were
        lost): the host goes on after it once it has come (:data:`V1_PATIENCE`). When the
        start is not the frame expected, frames may have been lost: a :class:`SequenceGap`.
        """
        held, sightings = placing.held, placing.sightings
        recorded, expected = placing.recorded, placing.expected
        if recorded is not None and recorded in held and sightings[recorded] >= V1_SIGHTINGS:
            self._place((recorded + 1) & 0xFF, events, recorded=recorded)
            return
        starts = [s for s in held if (s - 1) & 0xFF not in held and sightings[s] >= V1_SIGHTINGS]
        if not starts:
            return
        start = max(starts, key=lambda s: sightings[s])
        log.info("framed: no answer to QUERY: following the retransmissions from frame %d "
                 "(a device of protocol version 1)", start)
        if recorded is not None and _run_holds(held, start, recorded):
            # the device sends the frame recorded last in that run, which a lossy wire let
            # through fewer times: it still has it, and the frames before it are duplicates
            self._place((recorded + 1) & 0xFF, events, recorded=recorded)
            return
        if (
            recorded is not None and expected is not None and _behind(start, expected)
            and sightings[start] < V1_PATIENCE
        ):
            return  # it has the frame recorded last in flight too: that comes again
        if expected is not None and start != expected:
            why = (
                "the device went on without them" if placing.reason == "stuck"
                else "acknowledged before the restart, and the journal lost the records "
                "that held them: inputs lost" if placing.journal_lost
                else "a device of protocol version 1 cannot say whether they were heartbeats"
            )
            self._gap(expected, start, why, events)
        self._place(start, events)

    def _place(self, seq: int, events: list[DeviceEvent], *, recorded: int | None = None) -> None:
        """Go on at frame ``seq``: take the frames held from there, in order.

        ``recorded``: the last frame recorded before a restart, which the device still has;
        the host acknowledges it, so the device forgets the duplicates up to it.
        """
        if self._placing is not None and self._placing.window is not None:
            # a replay refused: go on at ``seq`` once it is over (:meth:`_replay_over`)
            self._placing.start, self._placing.ack = seq & 0xFF, recorded
            self._placing.held.clear()
            self._placing.quiet_since = self._clock()
            self._query_due = False
            return
        placing, self._placing = self._placing, None
        self._expected = seq & 0xFF
        self._sightings = Counter()
        self._query_due = False
        if recorded is not None:
            self._ackable = recorded
            self._ack_due = True
        held = placing.held if placing is not None else {}
        while self._expected in held:
            frame_type, payload = held.pop(self._expected)
            self._take(self._expected, frame_type, payload, events)

    # -- sessions seen before: a replay, a repeat, a session reused (6.4) ----------------

    def _hello_held(self, seq: int, payload: bytes, events: list[DeviceEvent]) -> bool:
        """A HELLO of a session seen before, not an ordinary frame: held, the device asked.

        Of an earlier session (not the device's now): a replay of recorded frames, or a
        power-up that reused that session; out of order in the device's session: a repeat
        whose ACK was lost, or a power-up that reused it. The device's POSITION tells
        (:meth:`_judge_hello`, :meth:`_position`). ``False``: an ordinary frame.
        """
        if len(payload) != HELLO_SIZE:
            return False
        session = int.from_bytes(payload[1:3], "big")
        placing = self._placing
        if placing is not None and placing.reason == "restart" and placing.session is None:
            return False  # a record without sessions: repeat or power-up, said (6.4)
        if session != self._session and session in self.sessions:
            if placing is not None and (placing.replayed is not None or placing.window):
                self.replayed_frames += 1  # asked already: the replay goes on
                if placing.window is not None:
                    placing.quiet_since = self._clock()
                return True
            if placing is None:
                placing = self._placing = _Placing(
                    "replay", recorded=self._ackable, session=self._session,
                    expected=self._expected,
                )
            placing.replayed, placing.hello = session, seq
            self._hold(seq, HELLO, payload, events)
            return True
        if session == self._session and placing is None and seq != self._expected:
            self._placing = _Placing(
                "hello_again", recorded=self._ackable, session=session, expected=self._expected,
                hello=seq,
            )
            self._hold(seq, HELLO, payload, events)
            return True
        return False

    def _judge_hello(
        self, placing: _Placing, session: int, window: tuple[int, int],
        events: list[DeviceEvent],
    ) -> None:
        """The device answered after a HELLO of an earlier session: a replay, or a reuse."""
        replayed, placing.replayed = placing.replayed, None
        assert replayed is not None
        if session == replayed:  # the device is in it: it powered up and reused it
            if replayed != self.sessions.newest:
                self._reused(placing.hello, "seen before, at an earlier power-up", events,
                             session=replayed)
            self._hello_taken = False
            placing.reason, placing.recorded, placing.expected = "start", None, None
            return
        placing.window = window  # the device is elsewhere: the HELLO was a replay
        self._replayed(replayed, placing.hello, session, events)

    def _replayed(
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

    def _reused(
        self, seq: int, how: str, events: list[DeviceEvent], *, session: int | None = None
    ) -> None:
        """The device powered up with a session it had used: a power-up, and an alarm."""
        session = self._session if session is None else session
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

    def _guard(self, placing: _Placing, seq: int, frame: tuple[int, bytes]) -> None:
        """A frame while a refused replay may go on: keep the device's, drop the rest.

        Only the frames the device has in flight (its answer: ``start`` .. ``next - 1``)
        are kept, one copy each; a second copy that differs drops both (the device's comes
        again, a replay's does not), and any other frame (behind: the replay; ahead: the
        device's new frame, or the replay) restarts the quiet time and asks the device again.
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
            return
        if _behind(seq, placing.start):
            self.replayed_frames += 1
        else:
            self._query_due = True
        placing.quiet_since = now

    def _replay_over(self, events: list[DeviceEvent]) -> None:
        """After a refused replay: go on once it has been quiet and the device's frames held."""
        placing = self._placing
        if placing is None or placing.window is None:
            return
        if self._clock() - placing.quiet_since < REPLAY_QUIET:
            return
        count = (placing.window[1] - placing.start) & 0xFF
        if any((placing.start + i) & 0xFF not in placing.held for i in range(count)):
            return  # the device sends them again
        log.info("framed: the replay is over (%d frame(s) of it dropped); going on at frame %d",
                 self.replayed_frames, placing.start)
        placing.window = None
        self._place(placing.start, events, recorded=placing.ack)

    def _gap(self, expected: int, resumed: int, why: str, events: list[DeviceEvent]) -> None:
        """Frames ``expected`` .. ``resumed - 1`` will not come: say so (an alarm)."""
        self.gaps += 1
        lost = _span(expected, (resumed - 1) & 0xFF)
        detail = f"{lost} not received and not coming ({why}); resumed at frame {resumed}"
        log.warning("framed: %s", detail)
        events.append(SequenceGap(expected, resumed, detail))

    def _session_unknown(self, seq: int, events: list[DeviceEvent]) -> None:
        """A HELLO after a restart whose record has no session: a repeat, or a power-up?

        The frames from the HELLO on are taken as a new session's (a power-up is the
        likelier), and said: if the HELLO is a repeat, events recorded before the restart
        come again.
        """
        placing = self._placing
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

    def _new_session(self, payload: bytes) -> bool:
        """Whether a HELLO announces a session not seen before (the device restarted)."""
        if len(payload) != HELLO_SIZE:
            return False
        session = int.from_bytes(payload[1:3], "big")
        if session == self._session:
            return False
        self.hellos += 1
        self._session = session
        self.sessions.add(session)
        self._hello_taken = False
        return True


class FramedEncoder:
    """Device side: events to frames with consecutive sequence numbers (0, 1, ... 255, 0)."""

    def __init__(self, first_seq: int = 0) -> None:
        self.next_seq = first_seq & 0xFF

    def encode(self, event: DeviceEvent) -> bytes:
        """The frame for ``event`` with the next sequence number (``event.seq`` is ignored)."""
        frame_type, payload = event_frame_parts(event)
        return self.frame(frame_type, payload)

    def hello(self, session: int) -> bytes:
        """A HELLO frame announcing ``session`` (send one after every power-up)."""
        return self.frame(HELLO, hello_payload(session))

    def frame(self, frame_type: int, payload: bytes) -> bytes:
        """A frame of ``frame_type`` with the next sequence number."""
        seq = self.next_seq
        self.next_seq = (seq + 1) & 0xFF
        return encode_frame(seq, frame_type, payload)


CODEC: Final = Codec(
    name="framed",
    carries=frozenset(
        {
            CardDrawn,
            UnreadableCard,
            CutCard,
            ShoeInserted,
            ShoeRemoved,
            ShuffleStarted,
            ShuffleDone,
            DealerButton,
            DeviceFault,
            Heartbeat,
        }
    ),
    decoder=FramedDecoder,
    encoder=FramedEncoder,
    heartbeat_timeout=HEARTBEAT_TIMEOUT,
    resends_unacknowledged=True,
    alarm_teller=AlarmTeller,
)
