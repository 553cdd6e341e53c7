"""The floor recorder's screen of one delivery: to store, to quarantine, or to leave.

Its topic first (``{prefix}/{table}/{kind}``; operator commands, the recorder's own
findings and probes, and a cleared retained body are left alone), then its body by the
topic's type (:mod:`baccarat.floor.bodies`), the chain member kept beside the body
(:func:`baccarat.chain.split`). What must not be stored is quarantined with the reason,
logged once per topic and cause (then counted). :class:`DeliveryScreen` is what
:class:`baccarat.floor.recorder.Recorder` calls for each message of a batch.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Final, Protocol

from baccarat.chain import split
from baccarat.floor import watchdog
from baccarat.floor.bodies import CLEARED_TOPICS, IGNORED_TOPICS, BodyRefusedError, screen, shown
from baccarat.floor.records import Quarantined, Received
from baccarat.floor.shuffle import TOPIC as SURVEILLANCE_TOPIC
from baccarat.logs import Repeated

log = logging.getLogger("baccarat.floor.recorder")  # the recorder's log, as before the split

_QUARANTINED: Final = Repeated(log)
"""Quarantined messages: one line per topic and cause, then a count every ten seconds."""
MAX_TABLE: Final = 64
"""The longest table name (the daemon's table ids are at most 64 characters)."""


class Delivered(Protocol):
    """What the screen reads of a delivery (:class:`baccarat.floor.recorder.Delivery`)."""

    @property
    def topic(self) -> str: ...
    @property
    def payload(self) -> bytes: ...
    @property
    def received(self) -> float:
        """When it came (epoch seconds)."""


class DeliveryScreen:
    """The recorder's screen: each delivery of ``{prefix}/+/#`` to a message or a quarantine.

    It counts the deliveries it quarantined, for its log lines (the database's refusals are
    the recorder's); ``skip`` is told of each delivery rightly kept nowhere, with why
    (the recorder's ``SKIPPED_REASONS``).
    """

    def __init__(self, prefix: str, skip: Callable[[str], None] = lambda _reason: None) -> None:
        self.prefix = prefix
        self._skip = skip
        self._screened_out = 0

    def __call__(self, delivery: Delivered) -> Received | Quarantined | None:
        """The delivery screened: a message to store, one to quarantine, or None (a command)."""
        parts = delivery.topic.split("/")
        prefix_parts = self.prefix.count("/") + 1
        if len(parts) >= prefix_parts + 2 and parts[prefix_parts + 1] in IGNORED_TOPICS:
            self._skip("command")  # their effect is in the table's own messages
            return None
        if len(parts) != prefix_parts + 2 or not parts[prefix_parts]:
            return self._bad(delivery, "topic is not {prefix}/{table}/{kind}", "topic")
        table, kind = parts[prefix_parts], parts[prefix_parts + 1]
        if f"{table}/{kind}" in (SURVEILLANCE_TOPIC, watchdog.TOPIC):
            self._skip("own finding or probe")  # kept by the check; probes
            return None
        if len(table) > MAX_TABLE:
            return self._bad(delivery, f"table name of {len(table)} characters", "topic")
        if not delivery.payload and kind in CLEARED_TOPICS:
            self._skip("cleared retained body")  # the table's fault, once it is over
            return None
        body, seal = split(delivery.payload)  # the chain member, kept beside the body
        try:
            screened = screen(kind, body)
        except BodyRefusedError as exc:
            if not delivery.payload:
                return self._bad(delivery, "empty body", "encoding")
            return self._bad(delivery, str(exc), exc.cause)
        if not screened.sequenced and kind != "status":
            self._skip("not sequenced")  # the pit's limits, a fault, a reply
            return None
        return Received(table, delivery.topic, screened.body, screened.text, delivery.received,
                        seal=seal)

    def _bad(self, delivery: Delivered, why: str, cause: str) -> Quarantined:
        """Log a message that must not be recorded; it goes into quarantine."""
        self._screened_out += 1
        _QUARANTINED.log(logging.WARNING, (delivery.topic, cause),
                         "message on %s quarantined (%d so far): %s: %s", shown(delivery.topic),
                         self._screened_out, why, shown(delivery.payload[:64], 64))
        return Quarantined(delivery.topic, delivery.payload, why, delivery.received, cause)
