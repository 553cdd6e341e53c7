"""Device events: what a shoe, a shuffler or the link to them can tell the controller.

Every codec turns bytes into these and every simulator turns these into bytes. They are
immutable values (frozen, slotted dataclasses), so equal events compare equal and one
instance may be shared. ``seq`` is the device's sequence number of the frame that carried
the event when the wire protocol has one (``framed``: a frame accepted in sequence),
otherwise ``None``; ``session`` is the device's session that frame belongs to (``framed``:
the one its HELLO or its POSITION answer named), when the host knows it. Both are
keyword-only on every event; ``session`` takes no part in equality. ``str(event)`` is one line for a
person (``link up: /dev/ttyUSB0``, ``card QH (H12)``), without the sequence number.

Events about the link itself (:class:`LinkUp`, :class:`LinkDown`) come from the transport,
and :class:`Rejected` from a codec that threw bytes away: never from the device.
"""

from __future__ import annotations

import re
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
    session: int | None = field(default=None, kw_only=True, compare=False)

    def __str__(self) -> str:
        """What happened, in words: the class name spelled out (``shoe removed``)."""
        name = type(self).__name__
        return re.sub(r"(?<!^)(?=[A-Z])", " ", name).lower()


@dataclass(frozen=True, slots=True)
class CardDrawn(DeviceEvent):
    """A card came out of the shoe and was read."""

    card: Card

    def __str__(self) -> str:
        """``card QH (H12)``: the card and the code the shoe sent for it."""
        return f"card {self.card.code} ({self.card.shoe_code})"


@dataclass(frozen=True, slots=True)
class UnreadableCard(DeviceEvent):
    """A card came out of the shoe but the reader could not identify it."""

    raw: bytes

    def __str__(self) -> str:
        """``unreadable card [..]``: the bytes the reader sent, in hex."""
        return f"unreadable card [{self.raw.hex(' ')}]"


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

    def __str__(self) -> str:
        """``button open``."""
        return f"button {self.button}"


@dataclass(frozen=True, slots=True)
class DeviceFault(DeviceEvent):
    """The device reports a fault of its own (jam, sensor error, ...)."""

    code: int
    text: str

    def __str__(self) -> str:
        """``device fault 0x0012: jam``."""
        return f"device fault 0x{self.code:04X}: {self.text}"


@dataclass(frozen=True, slots=True)
class Heartbeat(DeviceEvent):
    """The device is alive and has nothing else to say."""


@dataclass(frozen=True, slots=True)
class Hello(DeviceEvent):
    """The device powered up or reset, and says so: its protocol ``version`` and ``session``.

    The session (16 bits) is new at every power-up (``framed``, PROTOCOL.md 6.4). The
    host records it like any event before it acknowledges the HELLO, so that after its
    own restart it knows a repeat of that HELLO from a new power-up.
    """

    version: int

    def __str__(self) -> str:
        """``hello: protocol version 2, session 0x1234``."""
        session = "unknown" if self.session is None else f"0x{self.session:04x}"
        return f"hello: protocol version {self.version}, session {session}"


@dataclass(frozen=True, slots=True)
class SessionUnknown(DeviceEvent):
    """After a restart the host cannot tell whether a HELLO is a repeat or a power-up.

    Its record names a frame but not the session of it (a journal written before sessions
    were recorded): the frames from the HELLO on are taken as a new session's, and events
    the host recorded before its restart may come a second time. ``detail`` says which
    frames; the pit checks the table.
    """

    detail: str

    def __str__(self) -> str:
        """``session unknown: DETAIL``."""
        return f"session unknown: {self.detail}"


@dataclass(frozen=True, slots=True)
class SessionReplayed(DeviceEvent):
    """Frames of an earlier session of the device came again: a replay, refused.

    ``replayed`` is the session their HELLO named, one the host has seen before (it keeps
    every session it has seen, PROTOCOL.md 6.4), while the device itself, asked, answers
    in another. Nothing of the replay is taken; ``detail`` says what came and what the
    host does.
    """

    replayed: int
    detail: str

    def __str__(self) -> str:
        """``session 0x1234 replayed: DETAIL``."""
        return f"session 0x{self.replayed:04x} replayed: {self.detail}"


@dataclass(frozen=True, slots=True)
class SessionReused(DeviceEvent):
    """The device powered up with a session id it had used before (PROTOCOL.md 6.4).

    A device must never reuse one; the host takes the power-up (the device answered in
    that session) and says so: ``detail`` names the session and how it was told.
    """

    reused: int
    detail: str

    def __str__(self) -> str:
        """``session 0x1234 reused: DETAIL``."""
        return f"session 0x{self.reused:04x} reused: {self.detail}"


@dataclass(frozen=True, slots=True)
class LinkUp(DeviceEvent):
    """The link to the device works (port open, and for ``framed`` frames arriving)."""

    detail: str

    def __str__(self) -> str:
        """``link up: DETAIL``."""
        return f"link up: {self.detail}"


@dataclass(frozen=True, slots=True)
class LinkDown(DeviceEvent):
    """The link to the device was lost; ``reason`` says how."""

    reason: str

    def __str__(self) -> str:
        """``link down: REASON``."""
        return f"link down: {self.reason}"


@dataclass(frozen=True, slots=True)
class Rejected(DeviceEvent):
    """Bytes a codec threw away because they were not a valid message.

    ``data`` holds the rejected bytes (at most :data:`REJECTED_SAMPLE_MAX` of them) and
    ``size`` how many there were (``len(data)`` if not given).
    """

    data: bytes
    reason: str
    size: int = -1

    def __post_init__(self) -> None:
        if self.size < 0:
            object.__setattr__(self, "size", len(self.data))  # frozen: set once, here

    @property
    def hex(self) -> str:
        """The rejected bytes in hex, space separated, for an alarm text."""
        return self.data.hex(" ")

    def __str__(self) -> str:
        """``rejected [7e 01]: REASON``."""
        return f"rejected [{self.hex}]: {self.reason}"


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
