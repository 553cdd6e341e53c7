"""The codec interface and the registry of codecs by name.

A codec is the framing of one wire protocol: a :class:`Decoder` for the host side (bytes
in, :class:`~baccarat.drivers.events.DeviceEvent` out, any chunking, never raises) and an
:class:`Encoder` for the simulators (event in, bytes out).

Adding a shoe vendor is one new module defining ``CODEC: Codec`` and one line in
:data:`CODEC_MODULES`::

    from baccarat.drivers.codec import get_codec
    codec = get_codec("framed")
    decoder = codec.decoder()
    for event in decoder.feed(chunk):
        record(event)
        transport.write(decoder.acknowledgement(event))   # b"" if the protocol has none
    transport.write(decoder.pending_output())   # for frames that gave no event
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Final, Protocol

from baccarat.drivers.events import DeviceEvent
from baccarat.errors import BaccaratError

CODEC_MODULES: Final[dict[str, str]] = {
    "line": "baccarat.drivers.line",
    "framed": "baccarat.drivers.framed",
}
"""Codec name -> module that defines ``CODEC``. Modules are imported on first use."""


class Decoder(Protocol):
    """Host side of a wire protocol: incremental, tolerant of any bytes."""

    def feed(self, data: bytes) -> list[DeviceEvent]:
        """Consume a chunk of bytes (any size, any split) and return the events completed.

        Never raises: bytes that are not a valid message become
        :class:`~baccarat.drivers.events.Rejected` events and are counted.
        """
        ...

    def acknowledgement(self, event: DeviceEvent) -> bytes:
        """The bytes telling the device it may forget ``event`` and everything before it.

        ``event`` is one this decoder returned; the host writes these bytes once it has
        recorded the event. ``b""`` if the protocol has no acknowledgements.
        """
        ...

    def pending_output(self) -> bytes:
        """The acknowledgement owed for every frame fed so far, or ``b""``.

        It covers frames that gave no event (duplicates, HELLO), which the host
        acknowledges once it has recorded every event returned before; a protocol may add
        a question to the device (``framed``: a QUERY while it places the sequence).
        """
        ...

    def resume_after(
        self, seq: int, session: int | None = None, *, journal_lost: bool = False
    ) -> None:
        """Frames up to device sequence number ``seq`` were recorded before a host restart.

        ``session``: the device's session of frame ``seq``, if the record says. A protocol
        with sequence numbers acknowledges and drops the device's retransmissions of them;
        one without does nothing. ``journal_lost``: the journal lost records made before
        the restart, so frames acknowledged after ``seq`` were inputs lost, not heartbeats.
        """
        ...

    def remember_sessions(self, sessions: Iterable[int]) -> None:
        """The device sessions the host recorded before, oldest first (PROTOCOL.md 6.4).

        A protocol with sessions refuses a replay of an earlier one; one without does
        nothing.
        """
        ...

    def resync(self) -> list[DeviceEvent]:
        """Drop any partial message because the byte stream was interrupted.

        Keeps what must survive a reconnection (such as the last sequence number seen), and
        reports and counts the dropped bytes.
        """
        ...

    @property
    def counters(self) -> Mapping[str, int]:
        """Health counters: at least ``bytes_in``, ``frames_ok``, ``rejected_bytes``."""
        ...


class AlarmTeller(Protocol):
    """Host side of a protocol that can tell the device which alarms are open.

    Without I/O: it returns the bytes to write. ``framed`` has one (the ALARM frame);
    ``line`` has no way back to the device, and no teller.
    """

    def tell(self, alarms: Iterable[tuple[int, str]], now: float) -> bytes:
        """The bytes for the change from the alarms told before to ``alarms`` (id, kind)."""
        ...

    def refresh(self, now: float, *, every: bool = False) -> bytes:
        """The bytes due again at ``now`` (``every``: all of them, for a new link)."""
        ...


class Encoder(Protocol):
    """Device side of a wire protocol, used by the simulators."""

    def encode(self, event: DeviceEvent) -> bytes:
        """The bytes a device sends for ``event``; raise :class:`NotCarriedError` if it can't."""
        ...


class CodecError(BaccaratError, ValueError):
    """Base of the codec errors (never raised by a decoder)."""


class NotCarriedError(CodecError):
    """The protocol has no way to carry this event."""

    def __init__(self, codec: str, event: DeviceEvent) -> None:
        self.codec = codec
        self.event = event
        super().__init__(f"the {codec} protocol cannot carry {type(event).__name__}")


class UnknownCodecError(CodecError, LookupError):
    """No codec of that name is registered."""

    def __init__(self, name: str) -> None:
        self.name = name
        known = ", ".join(sorted(CODEC_MODULES))
        super().__init__(f"unknown protocol {name!r}; known: {known}")


@dataclass(frozen=True, slots=True)
class Codec:
    """One wire protocol: its name, what it can carry, and factories for both sides.

    ``heartbeat_timeout`` is the silence (seconds) after which the host may declare the
    link down, or ``None`` when the protocol has no heartbeat. ``alarm_teller`` makes the
    host's side of telling the device the table's open alarms, or is ``None`` when the
    protocol cannot (:attr:`tells_alarms`). ``resends_unacknowledged``: the device keeps
    what it sent until the host acknowledges it and sends it again (nothing is lost while
    the host is down; a device that keeps resending and sends nothing new does not hear the
    host).
    """

    name: str
    carries: frozenset[type[DeviceEvent]]
    decoder: Callable[[], Decoder]
    encoder: Callable[[], Encoder]
    heartbeat_timeout: float | None = None
    alarm_teller: Callable[[], AlarmTeller] | None = None
    resends_unacknowledged: bool = False

    @property
    def tells_alarms(self) -> bool:
        """Whether the host can tell the device which alarms are open."""
        return self.alarm_teller is not None

    def can_carry(self, event: DeviceEvent) -> bool:
        """Whether this protocol has a message for ``event``."""
        return type(event) in self.carries


def codec_names() -> list[str]:
    """The names of the registered codecs, sorted."""
    return sorted(CODEC_MODULES)


def get_codec(name: str) -> Codec:
    """The codec registered as ``name``; raise :class:`UnknownCodecError` otherwise."""
    module_name = CODEC_MODULES.get(name)
    if module_name is None:
        raise UnknownCodecError(name)
    codec = importlib.import_module(module_name).CODEC
    if not isinstance(codec, Codec):
        raise TypeError(f"{module_name}.CODEC is not a Codec")
    return codec
