"""What the broker still holds of each table: the ``seq`` of its retained engine messages.

``baccarat history --check --broker HOST`` compares it with the database. Every engine
message has a ``seq``, up by one per message of a table, and a table's ``shoe``, ``round``,
``alarms``, ``roads`` and ``recall`` are retained: the broker holds the newest of each. So
if the broker's newest retained ``seq`` of a table is above the newest the database holds
for it, messages up to that ``seq`` are not in the database: its tail is missing (lost, or
still on its way to a recorder that is behind). A table that has been idle has nothing
newer retained than what was stored, and is not reported; nor is one whose retained state
the database holds, however long ago its status last said online.

What it cannot see: messages after the table's newest retained one (a ``card`` or
``result`` not yet followed by a ``round`` or ``recall``), and a table whose retained
topics were cleared.

The broker is read with a clean MQTT session of its own, subscribing to
``{prefix}/+/{topic}`` for each retained topic, and taking what comes with the retain flag
until none has come for :data:`QUIET` seconds (at most :data:`WAIT_MAX`). Each body passes
the recorder's screen (:func:`baccarat.floor.bodies.screen`); one that does not is skipped.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from typing import Any, Final

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from baccarat.floor.bodies import Refused, screen
from baccarat.floor.store import TableTail

RETAINED_TOPICS: Final = ("shoe", "round", "alarms", "roads", "recall")
"""A table's retained topics whose bodies carry a ``seq``."""
QUIET: Final = 1.0
"""Seconds without a retained message after the subscription, then the broker has sent all."""
WAIT_MAX: Final = 30.0
"""Seconds the whole read may take."""
CONNECT_TIMEOUT: Final = 10.0


class BrokerReadError(RuntimeError):
    """The broker could not be read; the text says why."""


@dataclass(frozen=True, slots=True)
class RetainedSeq:
    """A table's newest retained engine message on the broker."""

    table: str
    seq: int
    topic: str


def read_retained(
    host: str,
    port: int,
    *,
    prefix: str = "baccarat",
    username: str | None = None,
    password: str | None = None,
) -> dict[str, RetainedSeq]:
    """Each table's newest retained ``seq`` on the broker, by table (blocking)."""
    newest: dict[str, RetainedSeq] = {}
    subscribed = threading.Event()
    failed: list[str] = []
    last = [time.monotonic()]
    depth = prefix.count("/") + 1

    def on_connect(client: mqtt.Client, _u: Any, _f: Any, reason: Any, _p: Any) -> None:
        if reason.is_failure:
            failed.append(f"the broker refused the check's login: {reason}")
            return
        client.subscribe([(f"{prefix}/+/{topic}", 0) for topic in RETAINED_TOPICS])

    def on_subscribe(_c: mqtt.Client, _u: Any, _m: Any, _r: Any, _p: Any) -> None:
        last[0] = time.monotonic()
        subscribed.set()

    def on_message(_c: mqtt.Client, _u: Any, message: mqtt.MQTTMessage) -> None:
        if not message.retain:
            return  # published since: the table is live, the recorder's to store
        last[0] = time.monotonic()
        parts = message.topic.split("/")
        if len(parts) != depth + 2:
            return
        try:
            seq = screen(parts[-1], bytes(message.payload)).body.get("seq")
        except Refused:
            return
        table = parts[depth]
        if isinstance(seq, int) and (table not in newest or seq > newest[table].seq):
            newest[table] = RetainedSeq(table, seq, message.topic)

    client = mqtt.Client(
        CallbackAPIVersion.VERSION2, client_id=f"baccarat-history-check-{os.getpid()}",
        protocol=mqtt.MQTTv5,
    )
    if username is not None:
        client.username_pw_set(username, password)
    client.on_connect = on_connect
    client.on_subscribe = on_subscribe
    client.on_message = on_message
    try:
        client.connect(host, port, keepalive=30, clean_start=True)
    except OSError as exc:
        raise BrokerReadError(f"cannot reach the broker at {host}:{port}: {exc}") from None
    client.loop_start()
    try:
        if not subscribed.wait(CONNECT_TIMEOUT) or failed:
            raise BrokerReadError(failed[0] if failed else
                                  f"the broker at {host}:{port} did not answer the check")
        started = time.monotonic()
        while time.monotonic() - last[0] < QUIET and time.monotonic() - started < WAIT_MAX:
            time.sleep(0.1)
    finally:
        client.disconnect()
        client.loop_stop()
    return newest


def missing_tails(tails: list[TableTail], retained: dict[str, RetainedSeq]) -> list[str]:
    """A line for each table whose newest retained ``seq`` is above the database's newest."""
    stored = {tail.table: tail.last_seq for tail in tails}
    found = []
    for table in sorted(retained):
        held = retained[table]
        newest = stored.get(table)
        if newest is not None and newest >= held.seq:
            continue
        kept = "nothing" if newest is None else f"seq {newest}"
        first = 1 if newest is None else newest + 1
        run = f"{first}" if first == held.seq else f"{first}-{held.seq}"
        found.append(
            f"{table}: tail missing: the broker holds {held.topic} seq {held.seq}, the"
            f" database {kept}: seq {run} not recorded (lost, or the recorder is behind)"
        )
    return found
