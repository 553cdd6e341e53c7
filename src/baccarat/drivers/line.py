r"""The ``line`` protocol of low-cost scanning shoes: one card code per line, 9600 8N1.

A card code is a suit letter (``A`` spades, ``H`` hearts, ``C`` clubs, ``D`` diamonds) and
a two-digit rank ``01``..``13``, ended by ``\n`` or ``\r\n``: ``A01\r\n`` is the ace of
spades. There is no checksum, so the decoder accepts exactly these 52 codes (upper case)
and rejects, counts and reports anything else, with its bytes. A line longer than
:data:`LINE_MAX` bytes is reported once and then discarded up to its newline, so the
decoder never buffers more than :data:`LINE_MAX` bytes. The protocol carries cards only.
"""

from __future__ import annotations

from typing import Final

from baccarat.cards import ALL_CARDS, SHOE_SUIT_LETTERS
from baccarat.drivers.codec import Codec, NotCarriedError
from baccarat.drivers.events import REJECTED_SAMPLE_MAX, CardDrawn, DeviceEvent, Rejected

LINE_MAX: Final = 32
"""Longest line kept while waiting for its newline; longer lines are discarded."""

_CARD_EVENTS: Final[dict[bytes, CardDrawn]] = {}
for _card in ALL_CARDS:
    _event = CardDrawn(_card)
    _CARD_EVENTS[_card.shoe_code.encode()] = _event
    _CARD_EVENTS[_card.shoe_code.encode() + b"\r"] = _event


def why_not_card(line: bytes) -> str:
    r"""Why ``line`` (without its ``\n``) is not a scanning-shoe card code."""
    text = line.removesuffix(b"\r")
    if not text:
        return "empty line"
    if not text.isascii():
        return "not ASCII text"
    if len(text) != 3:
        return f"{len(text)} characters, a card code has 3 (suit letter and two digits)"
    suit, rank = text[:1].decode(), text[1:].decode()
    if suit not in SHOE_SUIT_LETTERS:
        return f"unknown suit letter {suit!r}, expected one of A H C D"
    if not rank.isdigit():
        return f"rank {rank!r} is not two digits"
    return f"rank {rank} out of range 01..13"


class LineDecoder:
    """Incremental decoder of the ``line`` protocol. Never raises; buffers at most a line."""

    def __init__(self) -> None:
        self._partial = b""
        self._discarding = False
        self.bytes_in = 0
        self.frames_ok = 0
        self.rejected_bytes = 0
        self.rejected_frames = 0
        self.overlong_lines = 0

    @property
    def counters(self) -> dict[str, int]:
        """Health counters of this decoder."""
        return {
            "bytes_in": self.bytes_in,
            "frames_ok": self.frames_ok,
            "rejected_bytes": self.rejected_bytes,
            "rejected_frames": self.rejected_frames,
            "overlong_lines": self.overlong_lines,
        }

    @property
    def buffered(self) -> int:
        """Bytes of an unfinished line held until its newline comes."""
        return len(self._partial)

    def feed(self, data: bytes) -> list[DeviceEvent]:
        """Consume ``data``; return the cards of the lines it completes, and rejections."""
        self.bytes_in += len(data)
        lines = (self._partial + data if self._partial else data).split(b"\n")
        tail = lines.pop()
        events: list[DeviceEvent] = []
        for line in lines:
            event = _CARD_EVENTS.get(line)
            if event is not None and not self._discarding:
                events.append(event)
                self.frames_ok += 1
            else:
                self._reject_line(line, events)
        self._keep(tail, events)
        return events

    def acknowledgement(self, event: DeviceEvent) -> bytes:
        """The line protocol has no acknowledgements: always ``b""``."""
        return b""

    def pending_output(self) -> bytes:
        """The line protocol has no acknowledgements: always ``b""``."""
        return b""

    def resume_after(self, seq: int) -> None:
        """The line protocol has no sequence numbers: nothing to resume."""

    def resync(self) -> list[DeviceEvent]:
        """Drop a partial line (the stream was interrupted) and report it."""
        events: list[DeviceEvent] = []
        if self._partial:
            self._reject(self._partial, "incomplete line when the stream was interrupted", events)
        self._partial = b""
        self._discarding = False
        return events

    def _reject_line(self, line: bytes, events: list[DeviceEvent]) -> None:
        if self._discarding:
            self.rejected_bytes += len(line) + 1
            self._discarding = False
            return
        self._reject(line + b"\n", "not a card code: " + why_not_card(line), events)

    def _keep(self, tail: bytes, events: list[DeviceEvent]) -> None:
        if self._discarding:
            self.rejected_bytes += len(tail)
            self._partial = b""
        elif len(tail) > LINE_MAX:
            self.overlong_lines += 1
            self._reject(tail, f"line longer than {LINE_MAX} bytes, discarded", events)
            self._partial = b""
            self._discarding = True
        else:
            self._partial = tail

    def _reject(self, data: bytes, reason: str, events: list[DeviceEvent]) -> None:
        self.rejected_bytes += len(data)
        self.rejected_frames += 1
        events.append(Rejected(data[:REJECTED_SAMPLE_MAX], reason))


class LineEncoder:
    """Encoder of the ``line`` protocol (cards only), for the simulators."""

    def __init__(self, line_ending: bytes = b"\r\n") -> None:
        self.line_ending = line_ending

    def encode(self, event: DeviceEvent) -> bytes:
        r"""``A01\r\n`` for the ace of spades; raise :class:`NotCarriedError` for anything else."""
        if not isinstance(event, CardDrawn):
            raise NotCarriedError("line", event)
        return event.card.shoe_code.encode() + self.line_ending


CODEC: Final = Codec(
    name="line",
    carries=frozenset({CardDrawn}),
    decoder=LineDecoder,
    encoder=LineEncoder,
    heartbeat_timeout=None,
)
