"""The ``framed`` protocol: flag-delimited, byte-stuffed, CRC-checked, acknowledged frames.

The wire format, the frame types and the rules for both sides are specified in
``PROTOCOL.md`` next to this module; this module is the reference implementation of the
frames and of the host's side:

* :class:`FramedDecoder` is the host side: bytes in, device events out, and the
  acknowledgements to write back (:meth:`FramedDecoder.pending_output`); duplicates are
  dropped by sequence number.
* :class:`FramedEncoder` turns events into frames with consecutive sequence numbers.

The device's side (window, retransmission, heartbeats) is
:mod:`baccarat.drivers.framed_device`.
"""

from __future__ import annotations

import binascii
from collections.abc import Callable
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

# The host's timing (seconds), PROTOCOL.md "Timing constants"; the device's is in
# baccarat.drivers.framed_device.
ACK_DELAY_MAX: Final = 0.05
HEARTBEAT_TIMEOUT: Final = 3.0

_EMPTY_FRAMES: Final[dict[type[DeviceEvent], int]] = {
    CutCard: CUT_CARD,
    ShoeInserted: SHOE_INSERTED,
    ShoeRemoved: SHOE_REMOVED,
    ShuffleStarted: SHUFFLE_STARTED,
    ShuffleDone: SHUFFLE_DONE,
    Heartbeat: HEARTBEAT,
}
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


def ack_frame(seq: int) -> bytes:
    """The acknowledgement the host sends for every frame up to and including ``seq``."""
    return encode_frame(seq, ACK)


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


def hello_payload(session: int) -> bytes:
    """Payload of a HELLO frame: protocol version and the device's 16-bit session id."""
    return bytes((PROTOCOL_VERSION,)) + (session & 0xFFFF).to_bytes(2, "big")


Piece = bytes | Rejected
"""What :meth:`FrameSplitter.split` returns: a valid frame body, or bytes it rejected."""


class FrameSplitter:
    """Cuts a byte stream into CRC-valid frame bodies; counts and reports everything else.

    Bytes are accounted exactly: every byte fed is part of a valid frame (its body and its
    two flags), still buffered, or counted in ``rejected_bytes`` and reported in a
    :class:`Rejected` event. At most :data:`MAX_STUFFED` bytes are buffered.
    """

    def __init__(self) -> None:
        self._partial = b""
        self._hunting = True
        self._flag_claimed = False  # the last flag closed a valid frame: not a rejected byte
        self.bytes_in = 0
        self.frames_ok = 0
        self.rejected_bytes = 0
        self.rejected_frames = 0
        self.crc_errors = 0
        self.malformed = 0

    def split(self, data: bytes) -> list[Piece]:
        """Feed ``data``; return the valid frame bodies and rejections, in stream order.

        A frame body is unstuffed and holds the header, the payload and the CRC; everything
        else is a :class:`Rejected` event.
        """
        out: list[Piece] = []
        self.bytes_in += len(data)
        if self._hunting:
            start = data.find(_FLAG_BYTE)
            if start < 0:
                self._reject(data, "no frame start flag", out)
                return out
            if start:
                self._reject(data[:start], "bytes before a frame start flag", out)
            self._hunting = False
            self._flag_claimed = False
            data = data[start + 1 :]
        *runs, tail = (self._partial + data).split(_FLAG_BYTE)
        crc = binascii.crc_hqx
        for run in runs:  # the common case first: a valid frame without escapes
            if run and ESC not in run and len(run) == run[0] + _OVERHEAD and not crc(run, CRC_INIT):
                self.frames_ok += 1
                self._flag_claimed = True
                out.append(run)
            elif run or not self._flag_claimed:
                self._judge(run, out)
            else:  # a flag right after a frame's closing flag: the next frame's opening one
                self._flag_claimed = False
        self._keep(tail, out)
        return out

    def resync(self) -> list[Piece]:
        """Drop a partial frame (the stream was interrupted) and start hunting for a flag."""
        out: list[Piece] = []
        if not self._hunting:
            lead = b"" if self._flag_claimed else _FLAG_BYTE
            if lead or self._partial:
                self._reject(lead + self._partial, "incomplete frame at interruption", out)
        self._partial = b""
        self._hunting = True
        return out

    def _judge(self, run: bytes, out: list[Piece]) -> None:
        """One run of bytes between two flags: a frame body, or rejected."""
        lead = b"" if self._flag_claimed else _FLAG_BYTE  # its opening flag, if not shared
        self._flag_claimed = False
        if not run:
            self._reject(lead, "flag byte with no frame", out)
            return
        body = unstuff(run) if ESC in run else run
        if (
            body is not None
            and len(body) >= _OVERHEAD
            and body[0] + _OVERHEAD == len(body)
            and not binascii.crc_hqx(body, CRC_INIT)
        ):
            self.frames_ok += 1
            self._flag_claimed = True
            out.append(body)
            return
        self._reject(lead + run, self._why_invalid(body), out)

    def _why_invalid(self, body: bytes | None) -> str:
        if body is None:
            self.malformed += 1
            return "escape byte 0x7D not followed by 0x5E or 0x5D"
        if len(body) < _OVERHEAD:
            self.malformed += 1
            return f"{len(body)} bytes between flags, a frame has at least {_OVERHEAD}"
        if binascii.crc_hqx(body, CRC_INIT):
            self.crc_errors += 1
            expected = crc16(body[:-2])
            received = int.from_bytes(body[-2:], "big")
            return f"CRC mismatch: expected 0x{expected:04X}, received 0x{received:04X}"
        self.malformed += 1
        return f"length byte says {body[0]} payload bytes, frame has {len(body) - _OVERHEAD}"

    def _keep(self, tail: bytes, out: list[Piece]) -> None:
        """Keep the unfinished tail, or reject it if it is longer than any frame."""
        if len(tail) <= MAX_STUFFED:
            self._partial = tail
            return
        lead = b"" if self._flag_claimed else _FLAG_BYTE
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


def _unreadable_event(payload: bytes, seq: int) -> DeviceEvent:
    return UnreadableCard(payload, seq=seq)


def _button_event(payload: bytes, seq: int) -> DeviceEvent:
    if len(payload) == 1 and 1 <= payload[0] <= len(BUTTONS):
        return DealerButton(BUTTONS[payload[0] - 1], seq=seq)
    return Rejected(payload, f"unknown dealer button code {payload.hex(' ') or 'none'}", seq=seq)


def _fault_event(payload: bytes, seq: int) -> DeviceEvent:
    if len(payload) < 2:
        return Rejected(payload, "fault frame shorter than its 2-byte code", seq=seq)
    text = payload[2:].decode("utf-8", errors="replace")
    return DeviceFault(int.from_bytes(payload[:2], "big"), text, seq=seq)


def _empty_event(event_type: type[DeviceEvent]) -> Callable[[bytes, int], DeviceEvent]:
    """The builder of a frame type without payload."""

    def build(payload: bytes, seq: int) -> DeviceEvent:
        if payload:
            frame_type = _EMPTY_FRAMES[event_type]
            return Rejected(payload, f"frame type 0x{frame_type:02X} has no payload", seq=seq)
        return event_type(seq=seq)

    return build


_EVENT_BUILDERS: Final[dict[int, Callable[[bytes, int], DeviceEvent]]] = {
    CARD: _card_event,
    UNREADABLE: _unreadable_event,
    BUTTON: _button_event,
    FAULT: _fault_event,
} | {frame_type: _empty_event(event_type) for event_type, frame_type in _EMPTY_FRAMES.items()}
"""Frame type -> the function making its event from the payload and sequence number."""


def frame_event(frame_type: int, payload: bytes, seq: int) -> DeviceEvent:
    """The device event a frame carries (a :class:`Rejected` if it carries none)."""
    build = _EVENT_BUILDERS.get(frame_type)
    if build is None:
        return Rejected(payload, f"unknown frame type 0x{frame_type:02X}", seq=seq)
    return build(payload, seq)


_ANY_SEQ: Final = -1  # no frame accepted yet: the first one sets the sequence


class FramedDecoder:
    """Host side of the ``framed`` protocol: events out, acknowledgements to write back.

    Keeps the next expected sequence number across :meth:`resync` (a reconnection), so a
    frame the device retransmits after an unplug is dropped as a duplicate. A HELLO with a
    new session id (the device restarted) resets the expected sequence number.
    """

    def __init__(self) -> None:
        self._splitter = FrameSplitter()
        self._expected = _ANY_SEQ
        self._resuming = False  # after resume_after(), until a frame is accepted
        self._earliest_ahead: int | None = None  # while resuming: the earliest seen ahead
        self._session: int | None = None
        self._ack_due = False
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

    def feed(self, data: bytes) -> list[DeviceEvent]:
        """Consume ``data``; return the events of the new frames and rejections, in order."""
        events: list[DeviceEvent] = []
        for body in self._splitter.split(data):
            if isinstance(body, Rejected):
                events.append(body)
                continue
            seq, frame_type, payload = body[1], body[2], body[3:-2]
            if frame_type == ACK:  # not a frame of the sequence: no seq, no acknowledgement
                self.unexpected_frames += 1
                events.append(Rejected(body, f"ACK frame (seq {seq}) sent by the device"))
                continue
            if frame_type == HELLO:
                self._hello(payload, seq)
            if self._in_sequence(seq) and frame_type != HELLO:
                events.append(frame_event(frame_type, payload, seq))
        return events

    def acknowledgement(self, event: DeviceEvent) -> bytes:
        """The ACK of the frame that carried ``event``.

        Every event with a ``seq`` came in a frame accepted in sequence; events without one
        (rejected bytes) have none.
        """
        return b"" if event.seq is None else ack_frame(event.seq)

    def pending_output(self) -> bytes:
        """The acknowledgement owed for the frames fed so far (one cumulative ACK), or b''."""
        if not self._ack_due or self._expected == _ANY_SEQ:
            return b""
        self._ack_due = False
        self.acks_out += 1
        return ack_frame(self._expected - 1)  # the last frame accepted

    def resume_after(self, seq: int) -> None:
        """The host restarted: frame ``seq`` and those before it are already recorded.

        The device resends what was not acknowledged; the frames up to ``seq`` are now
        acknowledged and dropped as duplicates instead of being delivered a second time.
        The frames after ``seq`` that the host acknowledged before it stopped but did not
        record (heartbeats, events it ignores) do not come again, so the device may resume
        further ahead: frame ``seq + 1`` is accepted at once, a frame further ahead once it
        comes a second time with no earlier one between (PROTOCOL.md, 6.6). A HELLO (the
        device restarted too) starts over as usual.
        """
        self._expected = (seq + 1) & 0xFF
        self._resuming = True
        self._earliest_ahead = None

    def resync(self) -> list[DeviceEvent]:
        """Drop a partial frame; keep the sequence state (the device may retransmit)."""
        return [piece for piece in self._splitter.resync() if isinstance(piece, Rejected)]

    def _in_sequence(self, seq: int) -> bool:
        """Accept ``seq`` if it is the next expected one; count duplicates and gaps."""
        self._ack_due = True
        expected = self._expected
        if expected in (_ANY_SEQ, seq) or self._resumes_at(seq):
            self._expected = (seq + 1) & 0xFF
            self._resuming = False
            return True
        if (seq - expected) & 0xFF >= 128:
            self.duplicates += 1
        else:
            self.out_of_order += 1
        return False

    def _resumes_at(self, seq: int) -> bool:
        """After a host restart: whether the device resumes at ``seq``, past a gap.

        The device's retransmissions start with its oldest unacknowledged frame, so the
        earliest frame seen ahead, seen a second time with no earlier one between, is
        where it resumes. A frame ahead seen once is dropped (it comes again).
        """
        if not self._resuming or (seq - self._expected) & 0xFF >= 128:
            return False
        earliest = self._earliest_ahead
        if earliest == seq:
            return True
        if earliest is None or (seq - self._expected) & 0xFF < (earliest - self._expected) & 0xFF:
            self._earliest_ahead = seq
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
