"""Which ``framed`` frame carries which device event, both ways (PROTOCOL.md, section 5).

:func:`frame_event` is the host's side (a frame's type and payload -> the event, a
:class:`~baccarat.drivers.events.Rejected` when the payload is not one the type can
carry); :func:`event_frame_parts` the device's (an event -> the frame type and payload).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from baccarat.cards import ALL_CARDS, Card
from baccarat.drivers.codec import NotCarriedError
from baccarat.drivers.events import (
    BUTTONS,
    CardDrawn,
    CutCard,
    DealerButton,
    DeviceEvent,
    DeviceFault,
    Heartbeat,
    Hello,
    Rejected,
    ShoeInserted,
    ShoeRemoved,
    ShuffleDone,
    ShuffleStarted,
    UnreadableCard,
)
from baccarat.drivers.framed_wire import (
    BUTTON,
    CARD,
    CUT_CARD,
    FAULT,
    HEARTBEAT,
    HELLO,
    MAX_PAYLOAD,
    SHOE_INSERTED,
    SHOE_REMOVED,
    SHUFFLE_DONE,
    SHUFFLE_STARTED,
    UNREADABLE,
)

HELLO_SIZE: Final = 3
"""A HELLO payload: protocol version (1 byte), session (2 bytes)."""

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
Builder = Callable[[bytes, int, int | None], DeviceEvent]
"""Makes a frame's event from its payload, sequence number and session."""


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


def _card_event(payload: bytes, seq: int, session: int | None) -> DeviceEvent:
    card = _CARD_BY_PAYLOAD.get(payload)
    if card is None:
        return UnreadableCard(payload, seq=seq, session=session)
    return CardDrawn(card, seq=seq, session=session)


def _unreadable_event(payload: bytes, seq: int, session: int | None) -> DeviceEvent:
    return UnreadableCard(payload, seq=seq, session=session)


def _button_event(payload: bytes, seq: int, session: int | None) -> DeviceEvent:
    if len(payload) == 1 and 1 <= payload[0] <= len(BUTTONS):
        return DealerButton(BUTTONS[payload[0] - 1], seq=seq, session=session)
    why = f"unknown dealer button code {payload.hex(' ') or 'none'}"
    return Rejected(payload, why, seq=seq, session=session)


def _fault_event(payload: bytes, seq: int, session: int | None) -> DeviceEvent:
    if len(payload) < 2:
        why = "fault frame shorter than its 2-byte code"
        return Rejected(payload, why, seq=seq, session=session)
    text = payload[2:].decode("utf-8", errors="replace")
    return DeviceFault(int.from_bytes(payload[:2], "big"), text, seq=seq, session=session)


def _empty_event(event_type: type[DeviceEvent]) -> Builder:
    """The builder of a frame type without payload."""

    def build(payload: bytes, seq: int, session: int | None) -> DeviceEvent:
        if payload:
            frame_type = _EMPTY_FRAMES[event_type]
            why = f"frame type 0x{frame_type:02X} has no payload"
            return Rejected(payload, why, seq=seq, session=session)
        return event_type(seq=seq, session=session)

    return build


def _hello_event(payload: bytes, seq: int, session: int | None) -> DeviceEvent:
    """A HELLO's event carries the session the HELLO announces, not ``session``."""
    if len(payload) != HELLO_SIZE:
        why = f"HELLO payload of {len(payload)} byte(s), not {HELLO_SIZE}"
        return Rejected(payload, why, seq=seq, session=session)
    return Hello(payload[0], seq=seq, session=int.from_bytes(payload[1:3], "big"))


_EVENT_BUILDERS: Final[dict[int, Builder]] = {
    HELLO: _hello_event,
    CARD: _card_event,
    UNREADABLE: _unreadable_event,
    BUTTON: _button_event,
    FAULT: _fault_event,
} | {frame_type: _empty_event(event_type) for event_type, frame_type in _EMPTY_FRAMES.items()}
"""Frame type -> the function making its event from the payload, sequence number and session."""


def frame_event(
    frame_type: int, payload: bytes, seq: int, session: int | None = None
) -> DeviceEvent:
    """The device event a frame carries (a :class:`Rejected` if it carries none).

    ``session``: the device's session the frame belongs to, if known (a HELLO's own).
    """
    build = _EVENT_BUILDERS.get(frame_type)
    if build is None:
        return Rejected(payload, f"unknown frame type 0x{frame_type:02X}", seq=seq, session=session)
    return build(payload, seq, session)
