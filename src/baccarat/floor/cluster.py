"""The floor on a NATS JetStream cluster: subjects, the stream, and the recorder as its consumer.

The step up from one floor broker (docs/cluster.md). The tables are unchanged (MQTT 5 to
their broker); :mod:`baccarat.floor.relay` carries what they publish into the stream
:data:`STREAM` ("BACCARAT" for the prefix "baccarat"), replicated on three nodes (R3,
Raft), one subject per table and kind: ``baccarat/T07/card`` is ``baccarat.T07.card``
(:func:`subject`; a ``.`` in a table id, which the daemon allows, is ``~`` in the subject,
as a subject's tokens are split on dots). Every sequenced body goes in with
``Nats-Msg-Id = {table}:{seq}``, so the stream keeps it once however often the relay sends
it within :data:`DUPLICATE_WINDOW`.

The stream's limits (:func:`stream_config`): facts are kept :data:`MAX_AGE` (a day; after
it the recorder's database is the record, and the tables' journals behind it) and at most
``max_bytes`` (:data:`MAX_BYTES` by default) with ``discard: new``: a full stream refuses
new messages rather than dropping unrecorded ones; the relays then keep them unacknowledged
on the table brokers and say so. One body is at most :data:`MAX_MSG_SIZE`.

Current state without replaying history: the stream keeps every subject's last message
and answers "the last message on ``baccarat.T07.roads``" by direct get (``allow_direct``:
any replica answers, :func:`current`), so a console that starts, or moves to another node,
asks for each table's status, shoe, round, roads and alarms and then follows live.

:class:`ClusterRecorder` is :class:`baccarat.floor.recorder.Recorder` with a JetStream
source in place of its MQTT one: a durable pull consumer (:data:`CONSUMER`), explicit acks
sent only after the batch's database commit, as the MQTT source's PUBACKs. Two recorders
bound to the same durable consumer share its messages (each is delivered to one; one that
dies unacknowledged is delivered again after :data:`ACK_WAIT`), and the store keys every
message by ``(table, seq)``, so nothing is stored twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final

import nats
import nats.errors
import nats.js.errors
from nats.aio.client import Client as NatsClient
from nats.js import JetStreamContext, api

from baccarat.backoff import Backoff
from baccarat.errors import BaccaratError
from baccarat.floor.recorder import BrokerAddress, Delivery, Recorder
from baccarat.floor.store import Received, Store
from baccarat.reconnect import Lost, Reconnector

log = logging.getLogger(__name__)

MAX_AGE: Final = 24 * 3600.0
"""Seconds the stream keeps a message: a day, after which the recorder's database (and
behind it each table's journal) is the record."""
MAX_BYTES: Final = 100 * 1024**3
"""Bytes the stream keeps at most on each node (R3: every node has a copy), discard new:
a table publishes about 15 MB an hour (docs/benchmarks.md, floor traffic: 4.2 kB/s a table,
the roads bodies whole), so 28 hours of 200 tables, 11 hours of 600."""
MAX_MSG_SIZE: Final = 1024 * 1024
"""The largest body the stream takes (the servers' max_payload)."""
DUPLICATE_WINDOW: Final = 300.0
"""Seconds within which a ``Nats-Msg-Id`` seen again is dropped by the stream."""
REPLICAS: Final = 3
CONSUMER: Final = "recorder"
"""The recorder's durable consumer (every recorder of the floor binds it)."""
ACK_WAIT: Final = 4.0
"""Seconds a delivered message may wait for its ack before it is delivered again: also how
long messages sent to a recorder through a node that died on the way wait to come again
(the consumer counts them delivered). A batch commits well within it; one that does not
is delivered again and dropped by the store as duplicates."""
MAX_ACK_PENDING: Final = 5000
"""Messages delivered and not acknowledged at most (the consumer's backpressure)."""
FETCH: Final = 500
"""Messages asked for at a time (the recorder's batch); one batch waits while one is stored,
so a recorder holds at most two."""
FETCH_WAIT: Final = 1.0
"""Seconds a fetch waits for messages before it asks again."""
PLACE_EVERY: Final = 3.0
"""Seconds between checks that the consumer is led from the stream leader's node."""
RECONNECT_WAIT: Final = 0.05
"""Seconds between a client's attempts to reach another node (it tries them in turn)."""
_TOKEN: Final = re.compile(r"^[^\s.*>]+$")


class ClusterError(BaccaratError):
    """The cluster refused or could not do what was asked; the text says which."""


# ---------------------------------------------------------------- subjects


def subject_prefix(prefix: str) -> str:
    """The MQTT topic prefix as subject tokens (``a/b`` is ``a.b``), or ClusterError."""
    tokens = prefix.split("/")
    if not all(_TOKEN.match(token) for token in tokens):
        raise ClusterError(f"topic prefix {prefix!r} cannot be NATS subject tokens")
    return ".".join(tokens)


def subject(topic: str, prefix: str = "baccarat") -> str | None:
    """The subject of a table's MQTT topic ``{prefix}/{table}/{kind}``, or None if it is not one.

    A ``.`` in the table id is ``~`` in its token (the daemon's ids never have a ``~``).
    """
    head = prefix + "/"
    if not topic.startswith(head):
        return None
    parts = topic[len(head):].split("/")
    if len(parts) != 2 or "~" in parts[0]:
        return None
    table, kind = parts[0].replace(".", "~"), parts[1]
    if not (_TOKEN.match(table) and _TOKEN.match(kind)):
        return None
    return f"{subject_prefix(prefix)}.{table}.{kind}"


def topic(subject_: str, prefix: str = "baccarat") -> str | None:
    """The MQTT topic a subject stands for (the inverse of :func:`subject`), or None."""
    head = subject_prefix(prefix) + "."
    if not subject_.startswith(head):
        return None
    parts = subject_[len(head):].split(".")
    if len(parts) != 2:
        return None
    return f"{prefix}/{parts[0].replace('~', '.')}/{parts[1]}"


def stream_name(prefix: str = "baccarat") -> str:
    """The stream of a prefix: its letters in capitals (``BACCARAT``)."""
    return "".join(c if c.isalnum() else "_" for c in prefix).upper()


STREAM: Final = stream_name()


def stream_config(prefix: str = "baccarat", *, replicas: int = REPLICAS,
                  max_bytes: int = MAX_BYTES, max_age: float = MAX_AGE) -> api.StreamConfig:
    """The stream: every table's subjects, R3, a week, ``max_bytes``, discard new."""
    return api.StreamConfig(
        name=stream_name(prefix),
        subjects=[f"{subject_prefix(prefix)}.*.*"],
        retention=api.RetentionPolicy.LIMITS,
        storage=api.StorageType.FILE,
        num_replicas=replicas,
        max_age=max_age,
        max_bytes=max_bytes,
        max_msg_size=MAX_MSG_SIZE,
        discard=api.DiscardPolicy.NEW,
        duplicate_window=DUPLICATE_WINDOW,
        allow_direct=True,
    )


def consumer_config() -> api.ConsumerConfig:
    return api.ConsumerConfig(
        durable_name=CONSUMER,
        deliver_policy=api.DeliverPolicy.ALL,
        ack_policy=api.AckPolicy.EXPLICIT,
        ack_wait=ACK_WAIT,
        max_ack_pending=MAX_ACK_PENDING,
        max_deliver=-1,
    )


# ---------------------------------------------------------------- connecting


@dataclass(frozen=True, slots=True)
class ClusterAddress:
    """The cluster's nodes and who we are on it."""

    servers: tuple[str, ...]
    user: str | None = None
    password: str | None = None
    name: str = "baccarat"


async def connect(address: ClusterAddress, **callbacks: Any) -> NatsClient:
    """A client that knows every node and moves to another within :data:`RECONNECT_WAIT`.

    It never gives up reconnecting; what it publishes meanwhile waits in its bounded
    buffer (nats-py's 2 MiB) or fails, which the caller retries.
    """
    async def error(exc: Exception) -> None:
        log.warning("cluster (%s): %s", address.name, exc)

    async def disconnected() -> None:
        log.info("cluster (%s): disconnected; trying the other nodes", address.name)

    async def reconnected() -> None:
        log.info("cluster (%s): connected to %s", address.name, client.connected_url)

    options: dict[str, Any] = {
        "servers": list(address.servers), "name": address.name,
        "reconnect_time_wait": RECONNECT_WAIT, "max_reconnect_attempts": -1,
        "connect_timeout": 1, "ping_interval": 2, "max_outstanding_pings": 2,
        "allow_reconnect": True, "dont_randomize": False,
        "error_cb": error, "disconnected_cb": disconnected, "reconnected_cb": reconnected,
    }
    options.update(callbacks)
    if address.user is not None:
        options.update(user=address.user, password=address.password)
    try:
        client = await nats.connect(**options)
    except (nats.errors.Error, OSError) as exc:
        raise ClusterError(f"cannot reach the cluster at {', '.join(address.servers)}:"
                           f" {exc}") from None
    return client


async def ensure_stream(js: JetStreamContext, config: api.StreamConfig,
                        within: float = 30.0) -> api.StreamInfo:
    """The stream, made if it does not exist (retried while the cluster elects leaders)."""
    deadline = time.monotonic() + within
    while True:
        try:
            try:
                return await js.stream_info(str(config.name))
            except nats.js.errors.NotFoundError:
                return await js.add_stream(config)
        except (nats.errors.TimeoutError, nats.js.errors.ServiceUnavailableError,
                nats.js.errors.ServerError) as exc:
            if time.monotonic() > deadline:
                raise ClusterError(f"cannot make the stream {config.name}: {exc}") from None
            await asyncio.sleep(0.5)


async def current(js: JetStreamContext, table: str, kinds: tuple[str, ...],
                  prefix: str = "baccarat") -> dict[str, bytes]:
    """The last body of each of a table's ``kinds`` that the stream has (direct get)."""
    out: dict[str, bytes] = {}
    for kind in kinds:
        name = subject(f"{prefix}/{table}/{kind}", prefix)
        if name is None:
            raise ClusterError(f"no subject for table {table!r}, {kind!r}")
        with contextlib.suppress(nats.js.errors.NotFoundError):
            message = await js.get_last_msg(stream_name(prefix), name, direct=True)
            out[kind] = bytes(message.data or b"")
    return out


# ---------------------------------------------------------------- the recorder


class ClusterRecorder(Recorder):
    """The recorder with the cluster's durable consumer as its source.

    The store, the screening, the batches and the de-duplication are the recorder's; only
    where the messages come from and how they are acknowledged differ: each delivery's
    ack is the JetStream ack, sent after the batch that holds it is committed. The
    shuffle watch's findings stay in the store (no broker to announce them on) and the
    MQTT watchdog is off (a fetch that times out is the cluster's heartbeat).
    """

    def __init__(self, cluster: ClusterAddress, store: Store, *, prefix: str = "baccarat",
                 watch: Callable[[list[Received]], Awaitable[list[tuple[str, bytes]]]]
                 | None = None,
                 stream_max_bytes: int = MAX_BYTES, replicas: int = REPLICAS) -> None:
        super().__init__(BrokerAddress(client_id=cluster.name), store, prefix=prefix,
                         watch=watch, stall_timeout=0)
        self.cluster = cluster
        self.stream = stream_config(prefix, replicas=replicas, max_bytes=stream_max_bytes)
        self.fetch_failures = 0
        self.findings_kept = 0
        self.stepdowns = 0
        """Times the consumer was asked to move its leader to the stream leader's node."""
        """The shuffle watch's findings: in the store, not announced."""

    async def _listen(self) -> None:
        """Bind the durable consumer and fetch for ever; every failure is waited out.

        A cluster that cannot be reached at all at the start is tried again with the
        package's backoff (its first failure a warning), as the MQTT source does.
        """
        def lost(lost: Lost) -> None:
            if lost.first:
                log.warning("%s (trying again)", lost.reason)

        client = await Reconnector(
            connect, backoff=Backoff(first=1.0, cap=5.0), errors=(ClusterError,), on_lost=lost,
        ).until_done(self.cluster)
        follow: asyncio.Task[None] | None = None
        try:
            js = client.jetstream(timeout=5)
            await ensure_stream(js, self.stream)
            subscription = await self._bind(js)
            self.counters.connects += 1
            self.connected.set()
            log.info("recording stream %s (consumer %s) from %s", self.stream.name, CONSUMER,
                     client.connected_url)
            follow = asyncio.create_task(self._follow_leader(client, js), name="recorder-leader")
            failing = False
            while True:
                if follow.done():  # it ends only by a fault of ours: the recorder stops
                    follow.result()
                    raise RuntimeError("the consumer's placement task ended")
                if len(self._arrived) >= FETCH or not self.database_up:
                    await asyncio.sleep(0.01)  # the next batch in hand: no more until it goes
                    continue
                try:
                    messages = await subscription.fetch(FETCH, timeout=FETCH_WAIT)
                except (nats.errors.TimeoutError, TimeoutError):
                    continue  # nothing new: ask again
                except (nats.errors.Error, nats.js.errors.Error) as exc:
                    self.fetch_failures += 1
                    if not failing:
                        log.warning("fetching from the cluster: %s (retrying)", exc)
                    failing = True
                    await asyncio.sleep(0.05)
                    continue
                failing = False
                now = time.time()
                for message in messages:
                    self._arrived.append(self._delivery(message, now))
                self._wake.set()
        finally:
            self.connected.clear()
            if follow is not None:
                follow.cancel()
            with contextlib.suppress(Exception):
                await client.close()

    async def _follow_leader(self, client: NatsClient, js: JetStreamContext) -> None:
        """Keep the consumer's Raft leader on the stream leader's node.

        Each has its own leader, elected 4-9 s after its node dies (nats-server 2.9): on two
        nodes, two of three deaths would stall the record; on one node, one of three. Every
        :data:`PLACE_EVERY` seconds, a consumer led elsewhere is asked to step down (a new
        leader in a fraction of a second, a random one: it may take a few turns).
        """
        stream = str(self.stream.name)
        while True:
            await asyncio.sleep(PLACE_EVERY)
            try:
                stream_leader = (await js.stream_info(stream)).cluster
                consumer_leader = (await js.consumer_info(stream, CONSUMER)).cluster
                if stream_leader is None or consumer_leader is None:
                    continue
                if stream_leader.leader and consumer_leader.leader not in (
                    None, stream_leader.leader,
                ):
                    log.debug("consumer %s led by %s, the stream by %s: stepping down",
                              CONSUMER, consumer_leader.leader, stream_leader.leader)
                    await client.request(
                        f"$JS.API.CONSUMER.LEADER.STEPDOWN.{stream}.{CONSUMER}", b"", timeout=2,
                    )
                    self.stepdowns += 1
            except (nats.errors.Error, nats.js.errors.Error, TimeoutError) as exc:
                log.debug("placing the consumer's leader: %s", exc)

    async def record(self, batch: list[Delivery]) -> None:
        """The recorder's, the watch's findings left in the store (no broker to tell)."""
        await super().record(batch)
        self.findings_kept += len(self._findings)
        self._findings.clear()

    async def _bind(self, js: JetStreamContext) -> JetStreamContext.PullSubscription:
        deadline = time.monotonic() + 30
        while True:
            try:
                return await js.pull_subscribe(
                    f"{subject_prefix(self.prefix)}.*.*", durable=CONSUMER,
                    stream=str(self.stream.name), config=consumer_config(),
                    pending_msgs_limit=2 * MAX_ACK_PENDING,
                )
            except (nats.errors.TimeoutError, nats.js.errors.Error) as exc:
                if time.monotonic() > deadline:
                    raise ClusterError(f"cannot bind the consumer {CONSUMER}: {exc}") from None
                await asyncio.sleep(0.5)

    def _delivery(self, message: Any, now: float) -> Delivery:
        name = topic(message.subject, self.prefix) or message.subject
        return Delivery(name, bytes(message.data or b""), 0, 1, now, None, False,
                        acknowledge=message.ack)


def sequence_id(table: str, payload: bytes) -> str | None:
    """``{table}:{seq}`` of a body with an integer ``seq``, else None (its Nats-Msg-Id)."""
    if b'"seq"' not in payload:
        return None
    try:
        body = json.loads(payload)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    seq = body.get("seq") if isinstance(body, dict) else None
    if not isinstance(seq, int) or isinstance(seq, bool):
        return None
    return f"{table}:{seq}"
