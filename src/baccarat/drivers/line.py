r"""The ``line`` protocol of low-cost scanning shoes: one card code per line, 9600 8N1.

A card code is a suit letter (``A`` spades, ``H`` hearts, ``C`` clubs, ``D`` diamonds) and
a two-digit rank ``01``..``13``, ended by ``\n`` or ``\r\n``: ``A01\r\n`` is the ace of
spades. There is no checksum, so the decoder accepts exactly these 52 codes (upper case)
and rejects, counts and reports anything else, with its bytes. A bit flipped inside a code
that gives another valid code (``H07`` -> ``H05``) cannot be seen: ``framed`` can.

Noise never costs the card line after it. The decoder starts again at every line end, and
a line that ends with a card code after other bytes (noise that came before the card, with
no line end of its own) gives the card; the bytes before it are reported. A line longer
than :data:`LINE_MAX` bytes is reported and dropped as it comes, all but its last
:data:`CODE_MAX` bytes, which may still be the start of a card code: the decoder never
buffers more than :data:`LINE_MAX` bytes. Every byte fed is a card's, reported in exactly
one :class:`~baccarat.drivers.events.Rejected` (its ``size``), or still buffered. The
protocol carries cards only.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from baccarat.cards import ALL_CARDS, SHOE_SUIT_LETTERS
from baccarat.drivers.codec import Codec, NotCarriedError
from baccarat.drivers.events import REJECTED_SAMPLE_MAX, CardDrawn, DeviceEvent, Rejected

LINE_MAX: Final = 32
"""Longest line kept while waiting for its line end; the head of a longer one is dropped."""
CODE_MAX: Final = 4
r"""Bytes of the longest card code before its ``\n``: ``A01\r``."""

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
    if len(text) > 3 and text[:3] in _CARD_EVENTS:
        extra = len(text) - 3
        return f"the card code {text[:3].decode()} and {extra} more byte(s): a card may be lost"
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


def card_at_end(line: bytes) -> int:
    r"""How many bytes at the end of ``line`` (without its ``\n``) are a card code: 0, 3 or 4."""
    for size in (CODE_MAX, CODE_MAX - 1):
        if len(line) >= size and line[-size:] in _CARD_EVENTS:
            return size
    return 0


class LineDecoder:
    """Incremental decoder of the ``line`` protocol. Never raises; buffers at most a line."""

    def __init__(self) -> None:
        self._partial = b""  # the line so far, or the last CODE_MAX bytes of an overlong one
        self._overlong = False  # the current line's head was dropped
        self._dropped = 0  # bytes rejected and not yet reported
        self._dropped_sample = b""
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
        """Bytes of an unfinished line held until its line end comes."""
        return len(self._partial)

    def feed(self, data: bytes) -> list[DeviceEvent]:
        """Consume ``data``; return the cards of the lines it completes, and rejections."""
        self.bytes_in += len(data)
        lines = (self._partial + data if self._partial else data).split(b"\n")
        tail = lines.pop()
        events: list[DeviceEvent] = []
        for line in lines:
            event = _CARD_EVENTS.get(line)
            if event is not None and not self._overlong:
                events.append(event)
                self.frames_ok += 1
            else:
                self._odd_line(line, events)
        self._keep(tail, events)
        return events

    def acknowledgement(self, event: DeviceEvent) -> bytes:
        """The line protocol has no acknowledgements: always ``b""``."""
        return b""

    def pending_output(self) -> bytes:
        """The line protocol has no acknowledgements: always ``b""``."""
        return b""

    def resume_after(
        self, seq: int, session: int | None = None, *, journal_lost: bool = False
    ) -> None:
        """The line protocol has no sequence numbers: nothing to resume."""

    def remember_sessions(self, sessions: Iterable[int]) -> None:
        """The line protocol has no sessions: nothing to remember."""

    def resync(self) -> list[DeviceEvent]:
        """Drop a partial line (the stream was interrupted) and report it."""
        events: list[DeviceEvent] = []
        if self._partial:
            self._drop(self._partial)
            self._report("incomplete line when the stream was interrupted", events)
        self._partial = b""
        self._overlong = False
        return events

    def _odd_line(self, line: bytes, events: list[DeviceEvent]) -> None:
        r"""A line (without its ``\n``) that is not just a card code: noise, then maybe one."""
        overlong, self._overlong = self._overlong, False
        size = card_at_end(line)
        if size:
            card = _CARD_EVENTS[line[-size:]]
            self._drop(line[:-size])
            self._report(f"bytes before the card code {card.card.shoe_code} on its line", events)
            events.append(card)
            self.frames_ok += 1
            return
        self._drop(line + b"\n")
        if overlong:
            self._report(f"line longer than {LINE_MAX} bytes, not a card code", events)
        else:
            self._report("not a card code: " + why_not_card(line), events)

    def _keep(self, tail: bytes, events: list[DeviceEvent]) -> None:
        """Hold the unfinished line; drop and report the head of an overlong one."""
        if len(tail) <= LINE_MAX:
            self._partial = tail
            return
        if not self._overlong:
            self._overlong = True
            self.overlong_lines += 1
        self._drop(tail[:-CODE_MAX])
        self._partial = tail[-CODE_MAX:]
        self._report(f"line longer than {LINE_MAX} bytes, no line end yet", events)

    def _drop(self, data: bytes) -> None:
        """Count ``data`` as rejected; it is reported by the next :meth:`_report`."""
        self._dropped += len(data)
        self.rejected_bytes += len(data)
        if len(self._dropped_sample) < REJECTED_SAMPLE_MAX:
            self._dropped_sample += data[: REJECTED_SAMPLE_MAX - len(self._dropped_sample)]

    def _report(self, reason: str, events: list[DeviceEvent]) -> None:
        """One :class:`Rejected` for the bytes dropped since the last report, if any."""
        if self._dropped:
            self.rejected_frames += 1
            events.append(Rejected(self._dropped_sample, reason, size=self._dropped))
            self._dropped, self._dropped_sample = 0, b""


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
