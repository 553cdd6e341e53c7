"""The ``framed`` protocol: flag-delimited, byte-stuffed, CRC-checked, acknowledged frames.

The wire format, the frame types and the rules for both sides are specified in
``PROTOCOL.md`` next to this module; this module is the reference implementation:

* :class:`FramedDecoder` is the host side: bytes in, device events out, and the
  acknowledgements to write back (:meth:`FramedDecoder.pending_output`); duplicates are
  dropped by sequence number.
* :class:`FramedEncoder` turns events into frames with consecutive sequence numbers.
* :class:`FramedSender` is the device side's reliability (sans I/O, explicit clock):
  window, retransmission after a timeout, heartbeats, acknowledgements read back.

Hot path notes: a chunk is split on the flag byte with one ``bytes.split``, unstuffing is
two ``bytes.replace`` calls and only for frames that contain the escape byte, and the CRC
is ``binascii.crc_hqx`` (CRC-16/CCITT, polynomial 0x1021) checked by its zero residue.
"""

from __future__ import annotations

import binascii
import functools
import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from baccarat.cards import ALL_CARDS, Card
from baccarat.drivers.codec import Codec, NotCarriedError
from baccarat.drivers.events import (
    BUTTONS,
    REJECTED_SAMPLE_MAX,
    CardDrawn,
    CutCard,
    DealerButton,
    DeviceEvent,
    DeviceFault,
    Heartbeat,
    Rejected,
    ShoeInserted,
    ShoeRemoved,
    ShuffleDone,
    ShuffleStarted,
    UnreadableCard,
)

FLAG: Final = 0x7E
ESC: Final = 0x7D
ESC_XOR: Final = 0x20
_FLAG_BYTE: Final = b"\x7e"
_ESC_BYTE: Final = b"\x7d"

CRC_INIT: Final = 0xFFFF
"""CRC-16/CCITT-FALSE: polynomial 0x1021, init 0xFFFF, no reflection, no final xor."""
PROTOCOL_VERSION: Final = 1
MAX_PAYLOAD: Final = 64
_OVERHEAD: Final = 5  # length, sequence, type, CRC (2)
MAX_STUFFED: Final = 2 * (MAX_PAYLOAD + _OVERHEAD)
"""Longest frame body on the wire; a longer run without a flag is discarded."""

# Frame types (PROTOCOL.md, "Frame types").
HELLO: Final = 0x01
ACK: Final = 0x02
CARD: Final = 0x10
UNREADABLE: Final = 0x11
CUT_CARD: Final = 0x12
SHOE_INSERTED: Final = 0x20
SHOE_REMOVED: Final = 0x21
SHUFFLE_STARTED: Final = 0x22
SHUFFLE_DONE: Final = 0x23
BUTTON: Final = 0x30
FAULT: Final = 0x40
HEARTBEAT: Final = 0x50

# Timing (seconds), PROTOCOL.md "Timing". The device-side values are the simulator's.
ACK_DELAY_MAX: Final = 0.05
RETRANSMIT_TIMEOUT: Final = 0.5
HEARTBEAT_INTERVAL: Final = 1.0
HEARTBEAT_TIMEOUT: Final = 3.0
WINDOW: Final = 8
"""Most frames a device may have sent and not yet seen acknowledged (at most 127)."""

_EMPTY_FRAMES: Final[dict[type[DeviceEvent], int]] = {
    CutCard: CUT_CARD,
    ShoeInserted: SHOE_INSERTED,
    ShoeRemoved: SHOE_REMOVED,
    ShuffleStarted: SHUFFLE_STARTED,
    ShuffleDone: SHUFFLE_DONE,
    Heartbeat: HEARTBEAT,
}
_EMPTY_EVENTS: Final[dict[int, type[DeviceEvent]]] = {v: k for k, v in _EMPTY_FRAMES.items()}
_CARD_BY_PAYLOAD: Final[dict[bytes, Card]] = {
    bytes((card.rank, ord(card.suit))): card for card in ALL_CARDS
}
_BUTTON_CODES: Final = {name: code for code, name in enumerate(BUTTONS, start=1)}


def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE of ``data`` (``crc16(b"123456789") == 0x29B1``)."""
    return binascii.crc_hqx(data, CRC_INIT)


def stuff(body: bytes) -> bytes:
    """Escape the flag and escape bytes of a frame body (0x7E -> 7D 5E, 0x7D -> 7D 5D)."""
    if ESC in body:
        body = body.replace(b"\x7d", b"\x7d\x5d")
    if FLAG in body:
        body = body.replace(b"\x7e", b"\x7d\x5e")
    return body


def unstuff(stuffed: bytes) -> bytes | None:
    """Undo :func:`stuff`; ``None`` if an escape byte is not followed by 0x5E or 0x5D."""
    escapes = stuffed.count(b"\x7d")
    flags = stuffed.count(b"\x7d\x5e")
    escs = stuffed.count(b"\x7d\x5d")
    if escapes != flags + escs:
        return None
    return stuffed.replace(b"\x7d\x5e", b"\x7e").replace(b"\x7d\x5d", b"\x7d")


def encode_frame(seq: int, frame_type: int, payload: bytes = b"") -> bytes:
    """One complete frame on the wire: flag, stuffed body with CRC, flag."""
    if len(payload) > MAX_PAYLOAD:
        raise ValueError(f"payload of {len(payload)} bytes, at most {MAX_PAYLOAD}")
    body = bytes((len(payload), seq & 0xFF, frame_type)) + payload
    body += crc16(body).to_bytes(2, "big")
    return _FLAG_BYTE + stuff(body) + _FLAG_BYTE


_ACK_FRAMES: Final[tuple[bytes, ...]] = tuple(encode_frame(s, ACK) for s in range(256))


def ack_frame(seq: int) -> bytes:
    """The acknowledgement the host sends for every frame up to and including ``seq``."""
    return _ACK_FRAMES[seq & 0xFF]


def event_frame_parts(event: DeviceEvent) -> tuple[int, bytes]:
    """The frame type and payload that carry ``event``; raise :class:`NotCarriedError`."""
    frame_type = _EMPTY_FRAMES.get(type(event))
    if frame_type is not None:
        return frame_type, b""
    if isinstance(event, CardDrawn):
        return CARD, bytes((event.card.rank, ord(event.card.suit)))
    if isinstance(event, UnreadableCard):
        return UNREADABLE, event.raw[:MAX_PAYLOAD]
    if isinstance(event, DealerButton):
        return BUTTON, bytes((_BUTTON_CODES[event.button],))
    if isinstance(event, DeviceFault):
        text = event.text.encode("utf-8")[: MAX_PAYLOAD - 2]
        return FAULT, (event.code & 0xFFFF).to_bytes(2, "big") + text
    raise NotCarriedError("framed", event)


@functools.cache
def known_frames() -> dict[bytes, DeviceEvent]:
    """Every valid frame of a small value space, as it is on the wire between its flags,
    with its event: cards, dealer buttons and payload-less events, with every sequence
    number (about 16,600 frames, built once per process in a few tens of milliseconds).

    A run of bytes found here is byte-identical to a valid frame, so the decoder skips the
    CRC and the parsing for it: the decoder's fast path.
    """
    events: list[DeviceEvent] = [CardDrawn(card) for card in ALL_CARDS]
    events += [DealerButton(button) for button in BUTTONS]
    events += [event_type() for event_type in _EMPTY_FRAMES]
    table: dict[bytes, DeviceEvent] = {}
    for event in events:
        frame_type, payload = event_frame_parts(event)
        fields = {f: getattr(event, f) for f in event.__dataclass_fields__ if f != "seq"}
        for seq in range(256):
            table[encode_frame(seq, frame_type, payload)[1:-1]] = type(event)(**fields, seq=seq)
    return table


def hello_payload(session: int) -> bytes:
    """Payload of a HELLO frame: protocol version and the device's 16-bit session id."""
    return bytes((PROTOCOL_VERSION,)) + (session & 0xFFFF).to_bytes(2, "big")


Piece = bytes | Rejected
"""What :meth:`FrameSplitter.split` yields: a valid frame body, or bytes it rejected."""


class FrameSplitter:
    """Cuts a byte stream into CRC-valid frame bodies; counts and reports everything else.

    Bytes are accounted exactly: every byte fed is part of a valid frame (its body and its
    two flags), still buffered, or counted in ``rejected_bytes`` and reported in a
    :class:`Rejected` event. At most :data:`MAX_STUFFED` bytes are buffered.
    """

    def __init__(self) -> None:
        self._partial = b""
        self._hunting = True
        self.flag_claimed = False
        """Whether the last flag seen closed a valid frame (then it is not a rejected byte)."""
        self.bytes_in = 0
        self.frames_ok = 0
        self.rejected_bytes = 0
        self.rejected_frames = 0
        self.crc_errors = 0
        self.malformed = 0

    def split(self, data: bytes) -> list[Piece]:
        """Feed ``data``; return, in stream order, valid frame bodies (unstuffed: header,
        payload, CRC) and :class:`Rejected` events for everything else."""
        out: list[Piece] = []
        segments, tail = self.cut(data, out)
        self._segments(segments, out)
        self.keep(tail, out)
        return out

    def cut(self, data: bytes, out: list[Piece]) -> tuple[list[bytes], bytes]:
        """First half of :meth:`split`: the complete runs between flags, and the tail.

        A caller with its own fast loop judges each run (:meth:`judge` for the hard ones)
        and then hands the tail to :meth:`keep`.
        """
        self.bytes_in += len(data)
        if self._hunting:
            start = data.find(_FLAG_BYTE)
            if start < 0:
                self._reject(data, "no frame start flag", out)
                return [], b""
            if start:
                self._reject(data[:start], "bytes before a frame start flag", out)
            self._hunting = False
            self.flag_claimed = False
            buffer = data[start + 1 :]
        else:
            buffer = self._partial + data if self._partial else data
        segments = buffer.split(_FLAG_BYTE)
        tail = segments.pop()
        return segments, tail

    def _segments(self, segments: list[bytes], out: list[Piece]) -> None:
        """Judge each run of bytes between two flags; the common case stays in this loop."""
        claimed = self.flag_claimed
        crc = binascii.crc_hqx
        fast = 0
        for seg in segments:
            if seg:
                if len(seg) == seg[0] + _OVERHEAD and not crc(seg, CRC_INIT) and 0x7D not in seg:
                    out.append(seg)
                    claimed = True
                    fast += 1
                    continue
            elif claimed:
                claimed = False
                continue
            claimed = self.judge(seg, claimed, out)
        self.flag_claimed = claimed
        self.frames_ok += fast

    def resync(self) -> list[Piece]:
        """Drop a partial frame (the stream was interrupted) and start hunting for a flag."""
        out: list[Piece] = []
        if not self._hunting:
            lead = b"" if self.flag_claimed else _FLAG_BYTE
            if lead or self._partial:
                self._reject(lead + self._partial, "incomplete frame at interruption", out)
        self._partial = b""
        self._hunting = True
        return out

    def judge(self, seg: bytes, claimed: bool, out: list[Piece]) -> bool:
        """The slow path: one run between flags, stuffed or invalid; appends to ``out``.

        ``claimed`` says whether the opening flag belongs to the frame before; returns
        whether the closing flag belongs to this one (it was a valid frame).
        """
        self.flag_claimed = claimed
        self._segment(seg, out)
        return self.flag_claimed

    def _segment(self, seg: bytes, out: list[Piece]) -> None:
        lead = b"" if self.flag_claimed else _FLAG_BYTE
        self.flag_claimed = False
        if not seg:
            if lead:
                self._reject(lead, "flag byte with no frame", out)
            return
        body = seg if 0x7D not in seg else unstuff(seg)
        if body is not None and len(body) >= _OVERHEAD and not binascii.crc_hqx(body, CRC_INIT):
            if body[0] + _OVERHEAD == len(body):
                self.frames_ok += 1
                self.flag_claimed = True
                out.append(body)
                return
            reason = f"length byte says {body[0]} payload bytes, frame has {len(body) - 5}"
            self.malformed += 1
        else:
            reason = self._why_invalid(body)
        self._reject(lead + seg, reason, out)

    def _why_invalid(self, body: bytes | None) -> str:
        if body is None:
            self.malformed += 1
            return "escape byte 0x7D not followed by 0x5E or 0x5D"
        if len(body) < _OVERHEAD:
            self.malformed += 1
            return f"{len(body)} bytes between flags, a frame has at least {_OVERHEAD}"
        self.crc_errors += 1
        expected = crc16(body[:-2])
        received = int.from_bytes(body[-2:], "big")
        return f"CRC mismatch: expected 0x{expected:04X}, received 0x{received:04X}"

    def keep(self, tail: bytes, out: list[Piece]) -> None:
        """Last half of :meth:`split`: keep the unfinished tail, or reject it if too long."""
        if len(tail) <= MAX_STUFFED:
            self._partial = tail
            return
        lead = b"" if self.flag_claimed else _FLAG_BYTE
        self._reject(lead + tail, f"more than {MAX_STUFFED} bytes without a flag", out)
        self._partial = b""
        self._hunting = True

    def _reject(self, data: bytes, reason: str, out: list[Piece]) -> None:
        self.rejected_bytes += len(data)
        self.rejected_frames += 1
        out.append(Rejected(data[:REJECTED_SAMPLE_MAX], reason))

    def counters(self) -> dict[str, int]:
        """Counters of the byte stream."""
        return {
            "bytes_in": self.bytes_in,
            "frames_ok": self.frames_ok,
            "rejected_bytes": self.rejected_bytes,
            "rejected_frames": self.rejected_frames,
            "crc_errors": self.crc_errors,
            "malformed": self.malformed,
        }


def _card_event(payload: bytes, seq: int) -> DeviceEvent:
    card = _CARD_BY_PAYLOAD.get(payload)
    if card is None:
        return UnreadableCard(payload, seq=seq)
    return CardDrawn(card, seq=seq)


def _button_event(payload: bytes, seq: int) -> DeviceEvent:
    if len(payload) == 1 and 1 <= payload[0] <= len(BUTTONS):
        return DealerButton(BUTTONS[payload[0] - 1], seq=seq)
    return Rejected(payload, f"unknown dealer button code {payload.hex(' ') or 'none'}", seq=seq)


def _fault_event(payload: bytes, seq: int) -> DeviceEvent:
    if len(payload) < 2:
        return Rejected(payload, "fault frame shorter than its 2-byte code", seq=seq)
    text = payload[2:].decode("utf-8", errors="replace")
    return DeviceFault(int.from_bytes(payload[:2], "big"), text, seq=seq)


def _unreadable_event(payload: bytes, seq: int) -> DeviceEvent:
    return UnreadableCard(payload, seq=seq)


_PAYLOAD_EVENTS: Final[dict[int, Callable[[bytes, int], DeviceEvent]]] = {
    CARD: _card_event,
    UNREADABLE: _unreadable_event,
    BUTTON: _button_event,
    FAULT: _fault_event,
}


def frame_event(frame_type: int, payload: bytes, seq: int) -> DeviceEvent:
    """The device event a frame carries (a :class:`Rejected` if it carries none)."""
    empty = _EMPTY_EVENTS.get(frame_type)
    if empty is not None:
        if payload:
            return Rejected(payload, f"frame type 0x{frame_type:02X} has no payload", seq=seq)
        return empty(seq=seq)
    build = _PAYLOAD_EVENTS.get(frame_type)
    if build is None:
        return Rejected(payload, f"unknown frame type 0x{frame_type:02X}", seq=seq)
    return build(payload, seq)


_ANY_SEQ: Final = -1  # no frame accepted yet: the first one sets the sequence


class FramedDecoder:
    """Host side of the ``framed`` protocol: events out, acknowledgements to write back.

    Keeps the next expected sequence number across :meth:`resync` (a reconnection), so a
    frame the device retransmits after an unplug is dropped as a duplicate. A HELLO with a
    new session id (the device restarted) resets the expected sequence number.

    ``use_known_frames=False`` turns the fast path (:func:`known_frames`) off, so every
    frame is validated and parsed; the results are the same, only slower.
    """

    def __init__(self, *, use_known_frames: bool = True) -> None:
        self._splitter = FrameSplitter()
        self._expected = _ANY_SEQ
        self._last_accepted: int | None = None
        self._session: int | None = None
        self._ack_due = False
        self._known_frames = known_frames() if use_known_frames else {}
        self.duplicates = 0
        self.out_of_order = 0
        self.hellos = 0
        self.acks_out = 0
        self.unexpected_frames = 0

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
        )
        return counters

    @property
    def rejected_bytes(self) -> int:
        """Bytes thrown away so far."""
        return self._splitter.rejected_bytes

    def feed(self, data: bytes) -> list[DeviceEvent]:
        """Consume ``data``; return the events of the new frames and rejections, in order."""
        splitter = self._splitter
        pieces: list[Piece] = []
        segments, tail = splitter.cut(data, pieces)
        events: list[DeviceEvent] = [p for p in pieces if isinstance(p, Rejected)]
        claimed = splitter.flag_claimed
        expected = self._expected
        known = self._known_frames
        fast = 0
        for seg in segments:
            event = known.get(seg)
            if event is not None and event.seq == expected:
                # the common case: a frame already validated once, and next in sequence
                events.append(event)
                expected = (expected + 1) & 0xFF
                claimed = True
                fast += 1
            elif not seg and claimed:
                claimed = False
            else:
                self._expected = expected
                claimed = self._judge(seg, claimed, events)
                expected = self._expected
        splitter.flag_claimed = claimed
        self._expected = expected
        if fast:
            splitter.frames_ok += fast
            self._last_accepted = (expected - 1) & 0xFF
            self._ack_due = True
        pieces.clear()
        splitter.keep(tail, pieces)
        events.extend(p for p in pieces if isinstance(p, Rejected))
        return events

    def _judge(self, seg: bytes, claimed: bool, events: list[DeviceEvent]) -> bool:
        """The general case of :meth:`feed`: validation, HELLO, ACK, duplicates, gaps."""
        pieces: list[Piece] = []
        claimed = self._splitter.judge(seg, claimed, pieces)
        for body in pieces:
            if isinstance(body, Rejected):
                events.append(body)
                continue
            seq = body[1]
            frame_type = body[2]
            if frame_type == ACK:
                self.unexpected_frames += 1
                events.append(Rejected(body, "ACK frame sent by the device", seq=seq))
                continue
            if frame_type == HELLO:
                self._hello(body[3:-2], seq)
            if self._in_sequence(seq) and frame_type != HELLO:
                events.append(frame_event(frame_type, body[3:-2], seq))
        return claimed

    def pending_output(self) -> bytes:
        """The acknowledgement owed for the frames fed so far (one cumulative ACK), or b''."""
        if not self._ack_due or self._last_accepted is None:
            return b""
        self._ack_due = False
        self.acks_out += 1
        return _ACK_FRAMES[self._last_accepted]

    def resume_after(self, seq: int) -> None:
        """The host restarted: frame ``seq`` and those before it are already recorded.

        The device resends what was not acknowledged; those frames are now acknowledged
        and dropped as duplicates instead of being delivered a second time. A HELLO (the
        device restarted too) starts over as usual.
        """
        self._last_accepted = seq & 0xFF
        self._expected = (seq + 1) & 0xFF

    def resync(self) -> list[DeviceEvent]:
        """Drop a partial frame; keep the sequence state (the device may retransmit)."""
        return [piece for piece in self._splitter.resync() if isinstance(piece, Rejected)]

    def _in_sequence(self, seq: int) -> bool:
        """Accept ``seq`` if it is the next expected one; count duplicates and gaps."""
        self._ack_due = True
        expected = self._expected
        if expected in (_ANY_SEQ, seq):
            self._expected = (seq + 1) & 0xFF
            self._last_accepted = seq
            return True
        if (seq - expected) & 0xFF >= 128:
            self.duplicates += 1
        else:
            self.out_of_order += 1
        return False

    def _hello(self, payload: bytes, seq: int) -> None:
        if len(payload) != 3:
            return
        session = int.from_bytes(payload[1:3], "big")
        if session != self._session:
            self.hellos += 1
            self._session = session
            self._expected = seq


class FramedEncoder:
    """Device side: events to frames with consecutive sequence numbers (0, 1, ... 255, 0)."""

    def __init__(self, first_seq: int = 0) -> None:
        self.next_seq = first_seq & 0xFF

    def encode(self, event: DeviceEvent) -> bytes:
        """The frame for ``event`` with the next sequence number (``event.seq`` is ignored)."""
        frame_type, payload = event_frame_parts(event)
        return self._frame(frame_type, payload)

    def hello(self, session: int) -> bytes:
        """A HELLO frame announcing ``session`` (send one after every power-up)."""
        return self._frame(HELLO, hello_payload(session))

    def _frame(self, frame_type: int, payload: bytes) -> bytes:
        seq = self.next_seq
        self.next_seq = (seq + 1) & 0xFF
        return encode_frame(seq, frame_type, payload)


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
    ) -> None:
        if not 1 <= window <= 127:
            raise ValueError("window must be 1..127")
        self.window = window
        self.retransmit_timeout = retransmit_timeout
        self.heartbeat_interval = heartbeat_interval
        self.session = random.getrandbits(16) if session is None else session & 0xFFFF
        self._encoder = FramedEncoder()
        self._queue: deque[tuple[int, bytes]] = deque()
        self._queue.append((self._encoder.next_seq, self._encoder.hello(self.session)))
        self._in_flight: deque[_InFlight] = deque()
        self._cursor = 0  # frames in flight before this index were sent this round
        self._last_sent: float | None = None
        self._splitter = FrameSplitter()
        self.frames_sent = 0
        self.retransmissions = 0
        self.acks_in = 0
        self.stale_acks = 0

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

    def queue(self, event: DeviceEvent) -> None:
        """Queue ``event`` for sending; raise :class:`NotCarriedError` if no frame carries it."""
        seq = self._encoder.next_seq
        self._queue.append((seq, self._encoder.encode(event)))

    def next_frame(self, now: float) -> bytes | None:
        """The next frame to write at time ``now`` (retransmissions first), or ``None``."""
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
        if self._in_flight:
            deadlines.append(self._in_flight[0].sent_at + self.retransmit_timeout)
        elif self.heartbeat_interval is not None and self._last_sent is not None:
            deadlines.append(self._last_sent + self.heartbeat_interval)
        return min(deadlines, default=None)

    def receive(self, data: bytes) -> int:
        """Read bytes from the host; return how many frames its ACKs released."""
        released = 0
        for body in self._splitter.split(data):
            if isinstance(body, bytes) and body[2] == ACK:
                self.acks_in += 1
                released += self._release(body[1])
        return released

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
            return self._queue.popleft()
        interval = self.heartbeat_interval
        last = self._last_sent
        if interval is not None and last is not None and now - last >= interval:
            seq = self._encoder.next_seq
            return seq, self._encoder.encode(Heartbeat())
        return None

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
            "queued": len(self._queue),
            "in_flight": len(self._in_flight),
        }


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
)
