"""The ``framed`` protocol's wire: frame layout, types, CRC-16, byte stuffing, the splitter.

PROTOCOL.md, sections 2-5: what both sides put on the wire and how a byte stream is cut
back into frames (:class:`FrameSplitter`). The host's side (sequence placing, events,
acknowledgements) is :mod:`baccarat.drivers.framed`; the device's side is
:mod:`baccarat.drivers.framed_device`.
"""

from __future__ import annotations

import binascii
from dataclasses import dataclass
from typing import Final

from baccarat.drivers.events import REJECTED_SAMPLE_MAX, Rejected

FLAG: Final = 0x7E
ESC: Final = 0x7D
ESC_XOR: Final = 0x20
_FLAG_BYTE: Final = b"\x7e"
_ESC_BYTE: Final = b"\x7d"

CRC_INIT: Final = 0xFFFF
"""CRC-16/CCITT-FALSE: polynomial 0x1021, init 0xFFFF, no reflection, no final xor."""
PROTOCOL_VERSION: Final = 2
MAX_PAYLOAD: Final = 64
_OVERHEAD: Final = 5  # length, sequence, type, CRC (2)
MAX_STUFFED: Final = 2 * (MAX_PAYLOAD + _OVERHEAD)
"""Longest frame body on the wire; a longer run without a flag is discarded."""

# Frame types (PROTOCOL.md, "Frame types").
HELLO: Final = 0x01
ACK: Final = 0x02
QUERY: Final = 0x03
POSITION: Final = 0x04
ALARM: Final = 0x05
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


# The ALARM frame (PROTOCOL.md, 6.9): STATE (1 byte), ID (4 bytes), KIND (1..59 bytes).
ALARM_CLEARED: Final = 0
ALARM_OPEN: Final = 1
ALARM_HEAD: Final = 5
"""STATE and ID: the bytes of an ALARM payload before its KIND."""
ALARM_KIND_MAX: Final = MAX_PAYLOAD - ALARM_HEAD


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


def query_frame(nonce: int) -> bytes:
    """The host's question "which frame is your oldest unacknowledged?" (6.6)."""
    return encode_frame(nonce, QUERY)


@dataclass(frozen=True, slots=True)
class AlarmNotice:
    """What one ALARM frame says: alarm ``alarm_id`` of ``kind`` is open, or cleared."""

    alarm_id: int
    kind: str
    open: bool


def alarm_payload(notice: AlarmNotice) -> bytes:
    """Payload of an ALARM frame; ``ValueError`` for a kind that is not 1..59 printable ASCII."""
    kind = notice.kind.encode("utf-8")
    if not 1 <= len(kind) <= ALARM_KIND_MAX or not _printable(kind):
        raise ValueError(f"alarm kind {notice.kind!r}: 1..{ALARM_KIND_MAX} printable ASCII")
    if not 0 <= notice.alarm_id <= 0xFFFFFFFF:
        raise ValueError(f"alarm id {notice.alarm_id}: 0..2^32-1")
    state = ALARM_OPEN if notice.open else ALARM_CLEARED
    return bytes((state,)) + notice.alarm_id.to_bytes(4, "big") + kind


def alarm_frame(notice: AlarmNotice) -> bytes:
    """The host's ALARM frame for ``notice``: SEQ 0, not acknowledged (6.9)."""
    return encode_frame(0, ALARM, alarm_payload(notice))


def parse_alarm(payload: bytes) -> AlarmNotice | None:
    """The notice an ALARM payload carries; ``None`` if it is malformed (the device ignores it).

    Malformed: shorter than STATE, ID and one KIND byte; STATE neither 0 nor 1; a KIND
    byte outside printable ASCII (0x20..0x7E).
    """
    if len(payload) <= ALARM_HEAD or payload[0] not in (ALARM_CLEARED, ALARM_OPEN):
        return None
    kind = payload[ALARM_HEAD:]
    if not _printable(kind):
        return None
    alarm_id = int.from_bytes(payload[1:ALARM_HEAD], "big")
    return AlarmNotice(alarm_id, kind.decode("ascii"), payload[0] == ALARM_OPEN)


def _printable(data: bytes) -> bool:
    return all(0x20 <= byte <= 0x7E for byte in data)


def wire_kind(kind: str) -> str:
    """``kind`` as an ALARM frame can carry it: printable ASCII (others ``?``), 1..59 long."""
    text = "".join(c if " " <= c <= "~" else "?" for c in kind)[:ALARM_KIND_MAX]
    return text or "?"


def position_payload(oldest: int, next_seq: int, session: int) -> bytes:
    """Payload of a POSITION frame: the device's answer to a QUERY."""
    return bytes((oldest & 0xFF, next_seq & 0xFF)) + (session & 0xFFFF).to_bytes(2, "big")


def position_frame(nonce: int, oldest: int, next_seq: int, session: int) -> bytes:
    """The device's answer to QUERY ``nonce``: not acknowledged, not retransmitted."""
    return encode_frame(nonce, POSITION, position_payload(oldest, next_seq, session))


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
