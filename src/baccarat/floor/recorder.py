"""``baccarat record``: every message of every table on the floor broker, into a database.

The recorder subscribes to ``{prefix}/+/#`` at QoS 1 with a persistent MQTT 5 session (a
fixed client id, ``clean_start`` off, a session that outlives a week's outage), so the
broker keeps what the tables publish while the recorder is away, and gives it back when it
returns. It acknowledges a message to the broker only once the database has it: paho's
``manual_ack``, one PUBACK per message, in the order they came, after the transaction
that stored them has committed. A recorder killed at any moment therefore loses nothing:
what it had not stored it had not acknowledged, and the broker delivers it again; what it
had stored and not yet acknowledged comes again and is dropped as a duplicate by its
``(table, seq)`` key (:mod:`baccarat.floor.store`).

The broker side of that promise: the floor broker must keep sessions across its own
restarts (mosquitto ``persistence true``), and allow enough queued messages per client
(``max_queued_messages``) for the longest outage the recorder should survive.

paho runs its network loop in a thread of its own (``loop_start``). It appends each message
to a deque and wakes the event loop only when the loop is not already woken for earlier
ones (one ``call_soon_threadsafe`` per burst, not per message: a thousand a second each
cost a write to the loop's self-pipe and a read of it). The database is written from one
worker thread, so the event loop never waits for a disk or a database server.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.subscribeoptions import SubscribeOptions

from baccarat.floor.store import AddResult, Received, Store

log = logging.getLogger(__name__)

SESSION_EXPIRY: Final = 7 * 24 * 3600
"""Seconds the broker keeps the recorder's session (and queues for it) while it is away."""
RECEIVE_MAXIMUM: Final = 1000
"""Messages the broker may have delivered to us unacknowledged: the backpressure."""
BATCH_MAX: Final = 500
"""Messages stored in one transaction at most."""
GATHER: Final = 0.05
"""Seconds to let a batch gather after its first message (unless BATCH_MAX are waiting):
one commit, with its fsync, for every message that comes in that time, not one for each.
At a hundred tables (1,500 messages a second) this and the one wake-up per burst took the
recorder from 38 % to 28 % of a core (bench/README.md, "The floor"); the cost is at most
this much more before a message is acknowledged."""
RETRY_FIRST: Final = 0.5
RETRY_CAP: Final = 30.0
"""Seconds between attempts to store a batch the database refused (doubling, capped)."""


@dataclass
class RecorderCounters:
    """What the recorder has done since it started."""

    received: int = 0
    stored: int = 0
    duplicates: int = 0
    conflicts: int = 0
    statuses: int = 0
    bad: int = 0
    connects: int = 0
    store_failures: int = 0
    last_seq: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Delivery:
    """A message from paho's thread, with what acknowledging it needs."""

    topic: str
    payload: bytes
    mid: int
    qos: int
    received: float


@dataclass(frozen=True, slots=True)
class BrokerAddress:
    """Where the floor broker is and who the recorder is on it."""

    host: str = "127.0.0.1"
    port: int = 1883
    username: str | None = None
    password: str | None = None
    client_id: str = "baccarat-recorder"
    keepalive: int = 15


class Recorder:
    """The floor recorder: broker -> database, acknowledging only what is stored."""

    def __init__(self, broker: BrokerAddress, store: Store, *, prefix: str = "baccarat") -> None:
        self.broker = broker
        self.store = store
        self.prefix = prefix
        self.counters = RecorderCounters()
        self.connected = asyncio.Event()
        self._arrived: collections.deque[Delivery] = collections.deque()
        """Filled by paho's thread, emptied by the event loop (deque ends are thread-safe)."""
        self._wake = asyncio.Event()
        self._woken = False
        """Set by paho's thread when it has asked the loop to set ``_wake``; cleared by the
        loop before it empties ``_arrived``, so no message is left without a wake-up."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client = self._make_client()

    def _make_client(self) -> mqtt.Client:
        client = mqtt.Client(
            CallbackAPIVersion.VERSION2,
            client_id=self.broker.client_id,
            protocol=mqtt.MQTTv5,
            manual_ack=True,
        )
        if self.broker.username is not None:
            client.username_pw_set(self.broker.username, self.broker.password)
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_message = self._on_message
        client.reconnect_delay_set(1, 5)
        return client

    async def run(self, stop: asyncio.Event) -> None:
        """Record until ``stop`` is set; what was stored is acknowledged, the rest is not."""
        self._loop = asyncio.get_running_loop()
        properties = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]
        properties.SessionExpiryInterval = SESSION_EXPIRY
        properties.ReceiveMaximum = RECEIVE_MAXIMUM
        self._client.connect_async(
            self.broker.host, self.broker.port, self.broker.keepalive,
            clean_start=False, properties=properties,
        )
        self._client.loop_start()
        consumer = asyncio.create_task(self._consume(), name="recorder-store")
        try:
            await stop.wait()
        finally:
            consumer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await consumer
            self._client.disconnect()
            await asyncio.to_thread(self._client.loop_stop)

    # ------------------------------------------------------------ paho's thread

    def _on_connect(
        self, client: mqtt.Client, _userdata: Any, flags: Any, reason: Any, _props: Any
    ) -> None:
        if reason.is_failure:
            log.warning("floor broker %s:%d refused the recorder: %s",
                        self.broker.host, self.broker.port, reason)
            return
        self.counters.connects += 1
        options = SubscribeOptions(qos=1, retainHandling=SubscribeOptions.RETAIN_SEND_IF_NEW_SUB)
        client.subscribe(f"{self.prefix}/+/#", options=options)
        log.info("recording %s/+/# from %s:%d (session %s)", self.prefix, self.broker.host,
                 self.broker.port, "resumed" if flags.session_present else "new")
        self._call(self.connected.set)

    def _on_disconnect(
        self, _client: mqtt.Client, _userdata: Any, _flags: Any, reason: Any, _props: Any
    ) -> None:
        self._call(self.connected.clear)
        if reason.is_failure:
            log.warning("lost the floor broker: %s (reconnecting)", reason)

    def _on_message(self, _client: mqtt.Client, _userdata: Any, message: mqtt.MQTTMessage) -> None:
        delivery = Delivery(
            message.topic, bytes(message.payload), message.mid, message.qos, time.time()
        )
        self._arrived.append(delivery)
        if not self._woken:
            self._woken = True
            self._call(self._wake.set)

    def _call(self, function: Callable[..., None], *args: Any) -> None:
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(function, *args)

    # ------------------------------------------------------------ the event loop

    async def _consume(self) -> None:
        arrived = self._arrived
        while True:
            if not arrived:
                await self._wake.wait()
                self._wake.clear()
                self._woken = False  # before taking: what comes after it wakes us again
            if len(arrived) < BATCH_MAX:
                await asyncio.sleep(GATHER)
            batch: list[Delivery] = []
            while arrived and len(batch) < BATCH_MAX:
                batch.append(arrived.popleft())
            if not batch:
                continue
            await self._store(batch)
            for delivery in batch:
                if delivery.qos > 0:
                    self._client.ack(delivery.mid, delivery.qos)

    async def _store(self, batch: list[Delivery]) -> None:
        """Store the batch, retrying until the database takes it."""
        parsed = [p for p in (self._parse(d) for d in batch) if p is not None]
        delay = RETRY_FIRST
        while True:
            try:
                result = await asyncio.to_thread(self.store.add, parsed)
            except Exception as exc:  # any database error: keep the batch, try again
                self.counters.store_failures += 1
                if self.counters.store_failures == 1 or delay >= RETRY_CAP:
                    log.error(  # noqa: TRY400 - one line; the database's text says why
                        "cannot store %d message(s): %s (retrying)", len(parsed), exc
                    )
                await asyncio.sleep(delay)
                delay = min(delay * 2, RETRY_CAP)
                continue
            self._count(result, parsed)
            return

    def _parse(self, delivery: Delivery) -> Received | None:
        self.counters.received += 1
        parts = delivery.topic.split("/")
        prefix_parts = self.prefix.count("/") + 1
        if len(parts) < prefix_parts + 2:
            return self._bad(delivery, "topic has no table and subtopic")
        table = parts[prefix_parts]
        if parts[prefix_parts + 1] == "cmd" or not delivery.payload:
            return None  # operator commands (their effect is in the table's messages); a
            # retained message cleared (the table's fault topic once the fault is over)
        try:
            text = delivery.payload.decode("utf-8")
            body = json.loads(text)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            return self._bad(delivery, f"not JSON: {exc}")
        if not isinstance(body, dict):
            return self._bad(delivery, "not a JSON object")
        return Received(table, delivery.topic, body, text, delivery.received)

    def _bad(self, delivery: Delivery, why: str) -> Received | None:
        """Count and log a message that cannot be recorded; ``None``, to drop it."""
        self.counters.bad += 1
        log.warning("message on %s not recorded: %s: %r", delivery.topic, why,
                    delivery.payload[:64])
        return None

    def _count(self, result: AddResult, parsed: list[Received]) -> None:
        counters = self.counters
        counters.stored += result.stored
        counters.duplicates += result.duplicates
        counters.statuses += result.statuses
        if result.conflicts:
            counters.conflicts += result.conflicts
            log.error("%d message(s) reuse a (table, seq) with another body: kept in"
                      " the conflicts table (a table's journal started over?)", result.conflicts)
        for message in parsed:
            seq = message.seq
            if seq is None:
                continue
            last = counters.last_seq.get(message.table)
            if last is not None and seq > last + 1:
                log.warning("table %s: seq %d after %d: %d message(s) not (yet) received",
                            message.table, seq, last, seq - last - 1)
            if last is None or seq > last:
                counters.last_seq[message.table] = seq
