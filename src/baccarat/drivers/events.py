"""Device events: what a shoe, a shuffler or the link to them can tell the controller.

Every codec turns bytes into these and every simulator turns these into bytes. They are
immutable values (frozen, slotted dataclasses), so equal events compare equal and one
instance may be shared. ``seq`` is the device's sequence number of the frame that carried
the event when the wire protocol has one (``framed``: a frame accepted in sequence),
otherwise ``None``; it is keyword-only on every event.

Events about the link itself (:class:`LinkUp`, :class:`LinkDown`) come from the transport,
and :class:`Rejected` from a codec that threw bytes away: never from the device.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal

from baccarat.cards import Card

Button = Literal[
    "open", "reveal", "void", "burn", "declare_banker", "declare_player", "declare_tie"
]
BUTTONS: Final[tuple[Button, ...]] = (
    "open",
    "reveal",
    "void",
    "burn",
    "declare_banker",
    "declare_player",
    "declare_tie",
)
"""The dealer buttons a shoe may have, in the order of their ``framed`` codes (1..7)."""


@dataclass(frozen=True, slots=True)
class DeviceEvent:
    """Base of every device event."""

    seq: int | None = field(default=None, kw_only=True, compare=True)


@dataclass(frozen=True, slots=True)
class CardDrawn(DeviceEvent):
    """A card came out of the shoe and was read."""

    card: Card


@dataclass(frozen=True, slots=True)
class UnreadableCard(DeviceEvent):
    """A card came out of the shoe but the reader could not identify it."""

    raw: bytes


@dataclass(frozen=True, slots=True)
class CutCard(DeviceEvent):
    """The cut card came out of the shoe (Art. 3.1)."""


@dataclass(frozen=True, slots=True)
class ShoeInserted(DeviceEvent):
    """A shoe (or a shoe's card holder) was put in place."""


@dataclass(frozen=True, slots=True)
class ShoeRemoved(DeviceEvent):
    """The shoe was taken away."""


@dataclass(frozen=True, slots=True)
class ShuffleStarted(DeviceEvent):
    """The shuffler started shuffling."""


@dataclass(frozen=True, slots=True)
class ShuffleDone(DeviceEvent):
    """The shuffler finished shuffling; the cards are ready."""


@dataclass(frozen=True, slots=True)
class DealerButton(DeviceEvent):
    """The dealer pressed a button on the device; ``button`` is one of :data:`BUTTONS`."""

    button: Button


@dataclass(frozen=True, slots=True)
class DeviceFault(DeviceEvent):
    """The device reports a fault of its own (jam, sensor error, ...)."""

    code: int
    text: str


@dataclass(frozen=True, slots=True)
class Heartbeat(DeviceEvent):
    """The device is alive and has nothing else to say."""


@dataclass(frozen=True, slots=True)
class LinkUp(DeviceEvent):
    """The link to the device works (port open, and for ``framed`` frames arriving)."""

    detail: str


@dataclass(frozen=True, slots=True)
class LinkDown(DeviceEvent):
    """The link to the device was lost; ``reason`` says how."""

    reason: str


@dataclass(frozen=True, slots=True)
class Rejected(DeviceEvent):
    """Bytes a codec threw away because they were not a valid message.

    ``data`` holds the rejected bytes (at most :data:`REJECTED_SAMPLE_MAX` of them; the
    exact count is in the decoder's ``rejected_bytes`` counter).
    """

    data: bytes
    reason: str

    @property
    def hex(self) -> str:
        """The rejected bytes in hex, space separated, for an alarm text."""
        return self.data.hex(" ")


REJECTED_SAMPLE_MAX: Final = 64
"""How many of the rejected bytes a :class:`Rejected` event carries at most."""


@dataclass(frozen=True, slots=True)
class SequenceGap(DeviceEvent):
    """Frames the host expected will not come: the device went on at ``resumed``.

    ``expected`` is the first frame missing (``framed`` sequence numbers); ``detail`` says
    how many and why. Events they carried may be lost: the pit checks the table.
    """

    expected: int
    resumed: int
    detail: str
