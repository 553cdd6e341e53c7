"""The ``framed`` protocol: flag-delimited, byte-stuffed, CRC-checked, acknowledged frames.

The wire format, the frame types and the rules for both sides are specified in
``PROTOCOL.md`` next to this module; this module is the reference implementation of the
host's side, on the wire of :mod:`baccarat.drivers.framed_wire` (frame layout, types, CRC,
stuffing and the splitter) and the frames' events of :mod:`baccarat.drivers.framed_events`:

* :class:`FramedDecoder` is the host side: bytes in, device events out, and the
  acknowledgements to write back (:meth:`FramedDecoder.pending_output`); duplicates are
  dropped by sequence number. It places the device's sequence with
  :mod:`baccarat.drivers.framed_placing` and keeps the device's sessions (6.4: a replay
  refused, a reused id named) in :mod:`baccarat.drivers.framed_sessions`.
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
    ShoeInserted,
    ShoeRemoved,
    ShuffleDone,
    ShuffleStarted,
    UnreadableCard,
)
from baccarat.drivers.framed_events import HELLO_SIZE, event_frame_parts, frame_event
from baccarat.drivers.framed_placing import (
    Placing,
    behind,
    by_retransmissions,
    span,
    unacknowledged,
)
from baccarat.drivers.framed_sessions import DeviceSessions
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
_HOST_FRAMES: Final = frozenset({ACK, QUERY, ALARM})
_GOES_ON: Final = frozenset({"stuck", "replay", "hello_again"})
"""Placings of a host that knows the frame it expects: the device goes on from there."""

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
        self._placing: Placing | None = Placing("start") if expected is None else None
        self._ackable: int | None = None  # the last frame this host may acknowledge
        self.sessions = DeviceSessions(clock)
        """The device's sessions: the current one, those seen, replays and reuses (6.4)."""
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

    @property
    def counters(self) -> dict[str, int]:
        """Health counters: the byte stream's and the sequence's."""
        counters = self._splitter.counters()
        counters.update(
            duplicates=self.duplicates,
            out_of_order=self.out_of_order,
            hellos=self.sessions.hellos,
            acks_out=self.acks_out,
            unexpected_frames=self.unexpected_frames,
            queries_out=self.queries_out,
            positions_in=self.positions_in,
            sequence_gaps=self.gaps,
            replays=self.sessions.replays,
            replayed_frames=self.sessions.replayed_frames,
            sessions_reused=self.sessions.sessions_reused,
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
                if frame_type == HELLO and self.sessions.new_session(payload):
                    self.sessions.unknown(self._placing, seq, events)
                    self._placing = None  # what was held belongs to the old session
                    self._place(seq, events)
                self._frame(seq, frame_type, payload, events)
        placing = self._placing
        if self.sessions.replay_over(placing):
            assert placing is not None
            self._place(placing.start, events, recorded=placing.ack)
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
        self._placing = Placing(
            "restart", recorded=seq & 0xFF, session=session, expected=(seq + 1) & 0xFF,
            journal_lost=journal_lost,
        )
        if session is not None:
            self.sessions.seen.add(session)
        self.sessions.current = session
        self._ackable = None

    def remember_sessions(self, sessions: Iterable[int]) -> None:
        """The device sessions the host saw before (its record), oldest first.

        A HELLO of one of them that is not the device's session now is a replay, or a
        power-up that reused it; the device is asked which (PROTOCOL.md 6.4).
        """
        for session in sessions:
            self.sessions.seen.add(session & 0xFFFF)

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
        elif behind(seq, self._expected):
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
            if self.sessions.hello_taken:  # in order, so no repeat: a power-up in the same session
                self.sessions.reused(seq, "in order after the frames taken in that session", events)
            self.sessions.hello_taken = True
        events.append(frame_event(frame_type, payload, seq, self.sessions.current))

    def _ahead(self, seq: int, frame_type: int, payload: bytes, events: list[DeviceEvent]) -> None:
        """A frame ahead of the expected one: dropped, for it comes again.

        If the device repeats frames ahead without the expected one, it is asked.
        """
        self._sightings[seq] += 1
        if self._sightings[seq] >= STUCK_SIGHTINGS:
            self._placing = Placing("stuck", expected=self._expected)
            self._sightings.clear()
            self._hold(seq, frame_type, payload, events)

    # -- placing the sequence -----------------------------------------------------------

    def _hold(self, seq: int, frame_type: int, payload: bytes, events: list[DeviceEvent]) -> None:
        """While placing: keep the frame, ask the device, or follow its retransmissions."""
        placing = self._placing
        assert placing is not None
        if placing.window is not None:
            if self.sessions.guard(placing, seq, (frame_type, payload)):
                self._query_due = True
            return
        placing.sightings[seq] += 1
        placing.held[seq] = (frame_type, payload)
        if placing.reason == "hello_again" and behind(seq, self._expected):
            self.duplicates += 1  # the window again with its HELLO: a deaf shoe's, or a reset's
        if placing.reason == "stuck" and seq == placing.expected and placing.replayed is None:
            self._place(seq, events)  # the frame that was missing came after all
            return
        self._query_due = True
        if self._unanswered(placing):
            if placing.replayed is not None:  # it cannot be asked: taken as a power-up
                replayed, placing.replayed = placing.replayed, None
                self.sessions.replayed(replayed, placing.hello, None, events)
            self._place_by_retransmissions(placing, events)

    def _unanswered(self, placing: Placing) -> bool:
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
            if session == self.sessions.current:
                placing.window = (oldest, next_seq)
            return
        if placing.replayed is not None:
            self.sessions.judge_hello(placing, session, (oldest, next_seq), events)
        self.sessions.current = session
        self.sessions.seen.add(session)
        recorded, expected = placing.recorded, placing.expected
        if recorded is not None and placing.session not in (None, session):
            log.info(
                "framed: the device is in session 0x%04x, not 0x%04x of the frame recorded "
                "last: it restarted since; resuming at its oldest unacknowledged frame %d",
                session, placing.session, oldest,
            )
            self._place(oldest, events)
        elif recorded is not None and unacknowledged(recorded, oldest, next_seq):
            self._place((recorded + 1) & 0xFF, events, recorded=recorded)
        elif placing.reason == "hello_again" and unacknowledged(placing.hello, oldest, next_seq):
            # its HELLO is in flight and the frames taken after it are not: it reset
            how = "out of order, and the device has it in flight but not the frames taken"
            self.sessions.reused(placing.hello, f"{how} after it up to {recorded}", events)
            self.sessions.hello_taken = False
            self._place(oldest, events)
        elif placing.reason in _GOES_ON and expected is not None and not behind(expected, oldest):
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

    def _place_by_retransmissions(self, placing: Placing, events: list[DeviceEvent]) -> None:
        """A device that does not answer (version 1): follow what it sends again.

        Where it resumes is :func:`~baccarat.drivers.framed_placing.by_retransmissions`'s;
        frames that may have been lost on the way there are a :class:`SequenceGap`.
        """
        found = by_retransmissions(placing)
        if found is None:
            return
        start, recorded, lost = found
        if lost is not None and placing.expected is not None:
            self._gap(placing.expected, start, lost, events)
        self._place(start, events, recorded=recorded)

    def _place(self, seq: int, events: list[DeviceEvent], *, recorded: int | None = None) -> None:
        """Go on at frame ``seq``: take the frames held from there, in order.

        ``recorded``: the last frame recorded before a restart, which the device still has;
        the host acknowledges it, so the device forgets the duplicates up to it.
        """
        if self._placing is not None and self._placing.window is not None:
            # a replay refused: go on at ``seq`` once it is over (``DeviceSessions.replay_over``)
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
        (``DeviceSessions.judge_hello``, :meth:`_position`). ``False``: an ordinary frame.
        """
        if len(payload) != HELLO_SIZE:
            return False
        session = int.from_bytes(payload[1:3], "big")
        placing = self._placing
        if placing is not None and placing.reason == "restart" and placing.session is None:
            return False  # a record without sessions: repeat or power-up, said (6.4)
        if session != self.sessions.current and session in self.sessions.seen:
            if placing is not None and (placing.replayed is not None or placing.window):
                self.sessions.replayed_frames += 1  # asked already: the replay goes on
                if placing.window is not None:
                    placing.quiet_since = self._clock()
                return True
            if placing is None:
                placing = self._placing = Placing(
                    "replay", recorded=self._ackable, session=self.sessions.current,
                    expected=self._expected,
                )
            placing.replayed, placing.hello = session, seq
            self._hold(seq, HELLO, payload, events)
            return True
        if session == self.sessions.current and placing is None and seq != self._expected:
            self._placing = Placing(
                "hello_again", recorded=self._ackable, session=session, expected=self._expected,
                hello=seq,
            )
            self._hold(seq, HELLO, payload, events)
            return True
        return False

    def _gap(self, expected: int, resumed: int, why: str, events: list[DeviceEvent]) -> None:
        """Frames ``expected`` .. ``resumed - 1`` will not come: say so (an alarm)."""
        self.gaps += 1
        lost = span(expected, (resumed - 1) & 0xFF)
        detail = f"{lost} not received and not coming ({why}); resumed at frame {resumed}"
        log.warning("framed: %s", detail)
        events.append(SequenceGap(expected, resumed, detail))

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
