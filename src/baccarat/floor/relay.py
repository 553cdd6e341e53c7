"""The relay: a table's (or a floor broker's) MQTT messages into the cluster's stream.

It subscribes to ``{prefix}/{table}/+`` (``+`` for every table of a floor broker) at QoS 1
with a persistent MQTT 5 session and manual acks, as the recorder does
(:mod:`baccarat.floor.recorder`), and publishes each message to JetStream on its subject
(:func:`baccarat.floor.cluster.subject`) with ``Nats-Msg-Id = {table}:{seq}``. The MQTT
message is acknowledged only once the stream has acknowledged it (stored on a majority
of the nodes). A node that dies mid-burst: the publishes waiting for it fail or time out
and are sent again (the client is already on another node), and the stream drops any
it had already stored by their id; a relay that dies: the broker delivers again what it
had not acknowledged, and the stream drops what it had (within its duplicate window;
after it, the recorder's store drops it by its key). So nothing is lost and nothing is
stored twice.

Bounds: at most :data:`RECEIVE_MAXIMUM` messages in hand (the MQTT receive maximum; the
broker keeps the rest in the session's queue), every publish retried with the package's
backoff (whatever the cluster answers: no leader yet, the stream full, no answer), the
first failure of a run logged as a warning; a body over the stream's largest
(:data:`~baccarat.floor.cluster.MAX_MSG_SIZE`) is logged as an error, counted and
acknowledged, as the stream would refuse it for ever. What is not a table's message (a topic of
another shape, or a table id that cannot be a subject) is acknowledged and counted, never
published: the cluster's accounts would refuse it anyway.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import logging
import signal
import sys
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TypeVar

import nats.errors
import nats.js.errors
from nats.js import JetStreamContext

from baccarat.backoff import Backoff
from baccarat.floor.cluster import (
    MAX_MSG_SIZE,
    ClusterAddress,
    ClusterError,
    connect,
    sequence_id,
    stream_name,
    subject,
)
from baccarat.floor.recorder import BrokerAddress
from baccarat.logs import Repeated
from baccarat.mqtt import BrokerRefusedError, LinkError, MqttClient, MqttSettings
from baccarat.reconnect import Lost, Reconnector

log = logging.getLogger(__name__)
_OVERSIZED: Final = Repeated(log)
"""Bodies too long for the stream: one line per table, then a count every ten seconds."""
T = TypeVar("T")

RECEIVE_MAXIMUM: Final = 1000
"""MQTT messages in hand at most (delivered, not yet acknowledged)."""
IN_FLIGHT: Final = 1000
"""Publishes awaiting the stream's ack at most (the MQTT receive maximum bounds it too)."""
PUBLISH_TIMEOUT: Final = 2.0
"""Seconds to wait for the stream's ack before sending the message again (at once if the
connection is lost meanwhile)."""
SESSION_EXPIRY: Final = 7 * 24 * 3600
RETRY_FIRST: Final = 0.05
RETRY_CAP: Final = 1.0


@dataclass
class RelayCounters:
    received: int = 0
    published: int = 0
    duplicates: int = 0
    """Published and found already in the stream (sent again after a failure)."""
    retries: int = 0
    skipped: int = 0
    """Acknowledged and not published: not a table's message, or no subject for it."""
    refused: int = 0
    """Over the stream's largest body: acknowledged, logged, not published."""
    by_table: collections.Counter[str] = field(default_factory=collections.Counter)


class Relay:
    """MQTT (a table broker or the floor broker) -> the cluster's stream, acking after it."""

    def __init__(self, broker: BrokerAddress, cluster: ClusterAddress, *,
                 prefix: str = "baccarat", table: str = "+") -> None:
        self.broker = broker
        self.cluster = cluster
        self.prefix = prefix
        self.table = table
        self.counters = RelayCounters()
        self.connected = asyncio.Event()
        self._stream = stream_name(prefix)
        self._arrived: collections.deque[tuple[MqttClient, object]] = collections.deque()
        self._wake = asyncio.Event()
        self._failing_since: float | None = None
        self._lost = asyncio.Event()
        """Set when the cluster connection is lost (then replaced): what waited for an ack
        through the dead node is sent again without waiting for PUBLISH_TIMEOUT."""

    async def run(self, stop: asyncio.Event) -> None:
        """Relay until ``stop`` is set."""
        async def disconnected() -> None:
            self._lost.set()  # every publish waiting for an ack is sent again at once
            self._lost = asyncio.Event()

        client = await connect(self.cluster, disconnected_cb=disconnected)
        js = client.jetstream(timeout=PUBLISH_TIMEOUT)
        tasks = [asyncio.create_task(self._listen(), name="relay-mqtt"),
                 asyncio.create_task(self._forward(js), name="relay-cluster")]
        stopping = asyncio.create_task(stop.wait())
        try:
            done, _ = await asyncio.wait([stopping, *tasks], return_when=asyncio.FIRST_COMPLETED)
            for task in done - {stopping}:
                task.result()  # a task of ours that ended raises here
        finally:
            for task in [stopping, *tasks]:
                task.cancel()
            await asyncio.gather(stopping, *tasks, return_exceptions=True)
            with contextlib.suppress(Exception):
                await client.close()

    async def _listen(self) -> None:
        """Connect, subscribe and take every message; reconnect with the backoff, for ever."""
        where = f"{self.broker.host}:{self.broker.port}"
        topic = f"{self.prefix}/{self.table}/+"

        async def attempt() -> None:
            try:
                async with MqttClient(MqttSettings(
                    self.broker.host, self.broker.port, client_id=self.broker.client_id,
                    keepalive=self.broker.keepalive, username=self.broker.username,
                    password=self.broker.password, clean_start=False,
                    session_expiry=SESSION_EXPIRY, receive_maximum=RECEIVE_MAXIMUM,
                    manual_ack=True,
                )) as mqtt:
                    link.connected()
                    try:
                        await mqtt.subscribe(topic, qos=1, retained="if_new")
                    except BrokerRefusedError as exc:
                        log.error("%s: relaying only what the session's earlier"  # noqa: TRY400
                                  " subscription gives", exc)
                    log.info("relaying %s from %s to stream %s", topic, where, self._stream)
                    self.connected.set()
                    async for message in mqtt.messages():
                        self._arrived.append((mqtt, message))
                        self._wake.set()
            finally:
                self.connected.clear()

        def lost(lost: Lost) -> None:
            if lost.first:
                log.warning("broker %s: %s (reconnecting)", where, lost.reason)

        link = Reconnector(attempt, backoff=Backoff(first=1.0, cap=5.0),
                           errors=(LinkError, OSError), on_lost=lost)
        await link.run()

    async def _forward(self, js: JetStreamContext) -> None:
        """Each message published as it comes, up to IN_FLIGHT awaiting their acks at once.

        Each is acknowledged to the broker when its own ack comes (PUBACKs need no order),
        so one waiting through an election holds up no other beyond the bound.
        """
        arrived = self._arrived
        room = asyncio.Semaphore(IN_FLIGHT)
        running: set[asyncio.Task[None]] = set()
        while True:
            if not arrived:
                self._wake.clear()
                await self._wake.wait()
                continue
            await room.acquire()
            mqtt, message = arrived.popleft()
            task = asyncio.create_task(self._relay(js, mqtt, message))
            running.add(task)

            def finished(done: asyncio.Task[None]) -> None:
                room.release()
                running.discard(done)
                _failed(done)

            task.add_done_callback(finished)

    async def _relay(self, js: JetStreamContext, mqtt: MqttClient, message: object) -> None:
        """Publish one message until the stream has it (or refuses it for good), then ack."""
        from baccarat.mqtt import Received

        assert isinstance(message, Received)
        self.counters.received += 1
        name = subject(message.topic, self.prefix)
        if name is None:
            self.counters.skipped += 1
            mqtt.ack(message.mid, message.qos)
            return
        table = message.topic.split("/")[-2]
        if len(message.payload) > MAX_MSG_SIZE:  # the stream would refuse it for ever
            self.counters.refused += 1
            _OVERSIZED.log(logging.ERROR, table,
                           "%s: a body of %d bytes, over the stream's %d: acknowledged, not"
                           " relayed", name, len(message.payload), MAX_MSG_SIZE)
            mqtt.ack(message.mid, message.qos)
            return
        msg_id = sequence_id(table, message.payload)
        headers = {"Nats-Msg-Id": msg_id} if msg_id is not None else None
        async def publish() -> Any:
            return await _unless(self._lost, js.publish(
                name, message.payload, timeout=PUBLISH_TIMEOUT, stream=self._stream,
                headers=headers,
            ))

        def refused(lost: Lost) -> None:
            self.counters.retries += 1
            if self._failing_since is None:
                self._failing_since = time.monotonic()
                log.warning("the cluster did not take %s: %s (sending again; nothing is"
                            " acknowledged to the broker until it does; a full stream"
                            " waits for its oldest to age out)", name, lost.reason)

        ack = await Reconnector(
            publish, backoff=Backoff(first=RETRY_FIRST, cap=RETRY_CAP),
            errors=(nats.errors.Error, nats.js.errors.Error), on_lost=refused,
        ).until_done()
        if self._failing_since is not None:
            log.warning("the cluster takes messages again after %.1f s",
                        time.monotonic() - self._failing_since)
            self._failing_since = None
        self.counters.published += 1
        self.counters.duplicates += bool(ack.duplicate)
        self.counters.by_table[table] += 1
        mqtt.ack(message.mid, message.qos)  # the broker's session, if it is still this one


def _failed(task: asyncio.Task[None]) -> None:
    """A relaying task that failed (a fault of ours) is logged; its message is not acked."""
    if not task.cancelled() and task.exception() is not None:
        log.error("relaying a message failed", exc_info=task.exception())


async def _unless(lost: asyncio.Event, publish: Awaitable[T]) -> T:
    """The publish's ack, or ConnectionClosedError as soon as ``lost`` is set."""
    task = asyncio.ensure_future(publish)
    waiting = asyncio.create_task(lost.wait())
    try:
        await asyncio.wait([task, waiting], return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiting.cancel()
    if not task.done():
        task.cancel()
        with contextlib.suppress(BaseException):
            await task
        raise nats.errors.ConnectionClosedError
    return task.result()


def main(argv: list[str] | None = None) -> int:
    """``python -m baccarat.floor.relay``: one relay until SIGTERM."""
    parser = argparse.ArgumentParser(prog="relay", description=__doc__.split("\n")[0])
    parser.add_argument("--broker", default="127.0.0.1:1883", help="HOST:PORT of the MQTT broker")
    parser.add_argument("--username")
    parser.add_argument("--password")
    parser.add_argument("--client-id", default="baccarat-relay")
    parser.add_argument("--table", default="+", help="one table's id, or + for every table")
    parser.add_argument("--prefix", default="baccarat")
    parser.add_argument("--servers", required=True,
                        help="the cluster's nodes, comma-separated nats:// URLs")
    parser.add_argument("--user", help="the relay's account on the cluster")
    parser.add_argument("--nats-password", help="(visible to ps: prefer --nats-password-file)")
    parser.add_argument("--nats-password-file", type=Path,
                        help="a file holding the relay's cluster password")
    args = parser.parse_args(argv)
    if args.nats_password_file is not None:
        try:
            args.nats_password = args.nats_password_file.read_text(encoding="utf-8").strip()
        except OSError as exc:
            print(f"relay: {args.nats_password_file}: {exc.strerror}", file=sys.stderr)
            return 2
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    host, _, port = args.broker.rpartition(":")
    relay = Relay(
        BrokerAddress(host, int(port), args.username, args.password, args.client_id),
        ClusterAddress(tuple(args.servers.split(",")), args.user, args.nats_password,
                       f"relay-{args.table}"),
        prefix=args.prefix, table=args.table,
    )

    async def run() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await relay.run(stop)

    try:
        asyncio.run(run())
    except ClusterError as exc:  # systemd starts it again (Restart=always)
        print(f"relay: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
