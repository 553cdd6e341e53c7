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

The broker is read with a clean MQTT session of its own (:mod:`baccarat.mqtt`), subscribing to
``{prefix}/+/{topic}`` for each retained topic, and taking what comes with the retain flag
until none has come for :data:`QUIET` seconds (at most :data:`WAIT_MAX`). Each body passes
the recorder's screen (:func:`baccarat.floor.bodies.screen`); one that does not is skipped.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from typing import Final

from baccarat.chain import split
from baccarat.errors import BaccaratError
from baccarat.floor.bodies import BodyRefusedError, screen
from baccarat.floor.store import TableTail
from baccarat.mqtt import ConnectRefusedError, MqttClient, MqttError, MqttSettings, Received

RETAINED_TOPICS: Final = ("shoe", "round", "alarms", "roads", "recall")
"""A table's retained topics whose bodies carry a ``seq``."""
QUIET: Final = 1.0
"""Seconds without a retained message after the subscription, then the broker has sent all."""
WAIT_MAX: Final = 30.0
"""Seconds the whole read may take."""
CONNECT_TIMEOUT: Final = 10.0


class BrokerReadError(BaccaratError, RuntimeError):
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
    client = MqttClient(MqttSettings(
        host, port, client_id=f"baccarat-history-check-{os.getpid()}", keepalive=30,
        username=username, password=password, connect_timeout=CONNECT_TIMEOUT,
    ))
    try:
        return asyncio.run(_read(client, prefix))
    except ConnectRefusedError as exc:
        raise BrokerReadError(f"the broker refused the check's login: {exc.name}") from None
    except MqttError as exc:
        raise BrokerReadError(f"cannot read the broker's retained messages: {exc}") from None
    except TimeoutError:
        raise BrokerReadError(f"the broker at {host}:{port} did not answer the check") from None


async def _read(client: MqttClient, prefix: str) -> dict[str, RetainedSeq]:
    newest: dict[str, RetainedSeq] = {}
    depth = prefix.count("/") + 1
    loop = asyncio.get_running_loop()
    async with client:
        async with asyncio.timeout(CONNECT_TIMEOUT):
            for topic in RETAINED_TOPICS:
                await client.subscribe(f"{prefix}/+/{topic}", qos=0)
        messages = aiter(client.messages())
        end = loop.time() + WAIT_MAX
        quiet = loop.time() + QUIET
        while (left := min(quiet, end) - loop.time()) > 0:
            try:
                async with asyncio.timeout(left):
                    message = await anext(messages)
            except TimeoutError:
                break
            if message.retain:  # not one published since: the recorder's to store
                quiet = loop.time() + QUIET
                _keep(newest, message, depth)
    return newest


def _keep(newest: dict[str, RetainedSeq], message: Received, depth: int) -> None:
    parts = message.topic.split("/")
    if len(parts) != depth + 2:
        return
    try:
        seq = screen(parts[-1], split(message.payload)[0]).body.get("seq")
    except BodyRefusedError:
        return
    table = parts[depth]
    if isinstance(seq, int) and (table not in newest or seq > newest[table].seq):
        newest[table] = RetainedSeq(table, seq, message.topic)


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
