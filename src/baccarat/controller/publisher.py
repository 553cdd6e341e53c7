"""The publisher: the table's MQTT connection, with an outbox that loses nothing.

Every message the engine produces goes into the :class:`Outbox` in order and stays there
until the broker has acknowledged it (QoS 1). While the broker is away the outbox fills;
when it is back, the publisher sends what is waiting, oldest first, then goes on. After a
reconnection the unacknowledged messages are sent again, so a subscriber may see a message
twice; it drops the second by its ``seq``.

The connection carries a last will (``status`` = offline, retained); ``status`` = online is
published, retained, on every connect. Operator commands arrive on ``cmd/+`` and are handed
to a callback. Reconnection uses a jittered, capped, doubling delay that starts over after
every successful connection; the first failure is logged as a warning, repeats at debug.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import json
import logging
import random
import socket
import ssl
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import aiomqtt
import paho.mqtt.client as mqtt

from baccarat.controller.config import BrokerConfig

if TYPE_CHECKING:
    from paho.mqtt.client import SocketLike

log = logging.getLogger(__name__)

RECONNECT_DELAY_MIN: Final = 0.2
"""Seconds before the first reconnection attempt."""
RECONNECT_DELAY_MAX: Final = 5.0
"""Cap of the doubling reconnection delay, in seconds (before jitter)."""
RECONNECT_JITTER: Final = 0.5
"""Each delay is scaled by a random factor in [1 - jitter, 1]."""
PUBLISH_TIMEOUT: Final = 10.0
"""Seconds to wait for a PUBACK before the connection is taken as lost."""
MAX_INFLIGHT: Final = 64
"""Messages sent and not yet acknowledged, at most."""
OUTBOX_LIMIT: Final = 500_000
"""Messages the outbox holds at most; past it the oldest is dropped and counted (they
remain in the journal). At about 1,500 messages a shoe this is days of broker outage."""

CommandHandler = Callable[[str, bytes, str | None], Awaitable[None]]
"""Called with the command's name, its body and the MQTT 5 response topic (or None)."""


@dataclass(slots=True)
class OutMessage:
    """One message to publish; ``payload`` is bytes, or a function that makes them.

    A function is called when the message is sent, not when it is queued: a large body
    (the roads) then costs nothing to the card queued before it. Not changed once queued
    (not frozen only because a frozen dataclass costs three times as much to build).
    """

    topic: str
    payload: bytes | Callable[[], bytes]
    retain: bool = False
    qos: int = 1
    seq: int | None = None

    def body(self) -> bytes:
        """The bytes to publish."""
        payload = self.payload
        return payload if isinstance(payload, bytes) else payload()


@dataclass(slots=True)
class _Entry:
    message: OutMessage
    acked: bool = False


class Outbox:
    """Messages in publication order, kept until acknowledged."""

    def __init__(self, limit: int = OUTBOX_LIMIT) -> None:
        self._entries: deque[_Entry] = deque()
        self._sent = 0  # entries at the front already handed to the connection
        self._puts = 0  # messages ever put (for mark and withdraw)
        self._limit = limit
        self._waiting = asyncio.Event()
        self._empty = asyncio.Event()
        self._empty.set()
        self.dropped = 0
        self.on_put: Callable[[], None] | None = None
        """Called after each :meth:`put` (the connected publisher hands messages over)."""
        self.acked_seq: int | None = None
        """The ``seq`` of the newest message the broker has, all before it included."""

    def __len__(self) -> int:
        return len(self._entries)

    def put(self, message: OutMessage) -> None:
        """Queue a message behind the others."""
        if len(self._entries) >= self._limit:
            self._entries.popleft()
            self._sent = max(0, self._sent - 1)
            self.dropped += 1
            if self.dropped == 1 or self.dropped % 1000 == 0:
                log.error("outbox full: %d oldest message(s) dropped (see journal)", self.dropped)
        self._entries.append(_Entry(message))
        self._puts += 1
        self._empty.clear()
        if self.on_put is not None:
            self.on_put()
        if self._sent < len(self._entries):  # not all handed over: wake the send loop
            self._waiting.set()

    def mark(self) -> int:
        """A mark for :meth:`withdraw`: how many messages were ever put."""
        return self._puts

    def withdraw(self, mark: int) -> int:
        """Take back the messages put since ``mark`` (not sent: see ``Publisher.hold``).

        Returns how many were taken back.
        """
        count = min(self._puts - mark, len(self._entries))
        for _ in range(count):
            self._entries.pop()
        self._puts = mark
        self._sent = min(self._sent, len(self._entries))
        if not self._entries:
            self._empty.set()
        return count

    def next_is_made(self) -> bool:
        """True if the oldest message not yet handed over has its bytes (not a function)."""
        return self._sent < len(self._entries) and isinstance(
            self._entries[self._sent].message.payload, bytes
        )

    def next_unsent(self) -> _Entry | None:
        """The oldest message not yet handed to the connection; marks it sent."""
        if self._sent >= len(self._entries):
            self._waiting.clear()
            return None
        entry = self._entries[self._sent]
        self._sent += 1
        return entry

    async def wait(self) -> None:
        """Until a message is put."""
        await self._waiting.wait()

    async def wait_empty(self) -> None:
        """Until the broker has acknowledged everything."""
        await self._empty.wait()

    def ack(self, entry: _Entry) -> None:
        """The broker has the message; forget every acknowledged one at the front."""
        entry.acked = True
        while self._entries and self._entries[0].acked:
            done = self._entries.popleft()
            self._sent -= 1
            if done.message.seq is not None:
                self.acked_seq = done.message.seq
        if not self._entries:
            self._empty.set()

    def wake(self) -> None:
        """Wake whoever waits in :meth:`wait` (the publisher has news)."""
        self._waiting.set()

    def rewind(self) -> None:
        """A new connection: everything unacknowledged is to be sent again."""
        self._sent = 0
        if self._entries:
            self._waiting.set()


class PublisherState(enum.Enum):
    """Where the connection is."""

    CONNECTING = "connecting"
    CONNECTED = "connected"
    WAITING = "waiting"  # between attempts
    STOPPED = "stopped"


@dataclass
class PublisherCounters:
    """Health of the broker link."""

    published: int = 0
    connects: int = 0
    failures: int = 0
    commands: int = 0
    last_error: str = ""
    since: dict[str, float] = field(default_factory=dict)


def status_payload(state: str, table: str, **extra: object) -> bytes:
    """The retained ``status`` body: online or offline."""
    return json.dumps({"schema": 1, "type": "status", "state": state, "table": table, **extra})\
        .encode()


class Publisher:
    """Keeps the table connected to its broker and drains the outbox into it."""

    def __init__(
        self,
        broker: BrokerConfig,
        *,
        topic_base: str,
        table: str,
        outbox: Outbox,
        on_command: CommandHandler | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.broker = broker
        self.topic_base = topic_base
        self.table = table
        self.outbox = outbox
        self.on_command = on_command
        self.state = PublisherState.CONNECTING
        self.counters = PublisherCounters()
        self.first_attempt = asyncio.Event()
        self.connected = asyncio.Event()
        self.stopping = False
        """Set by the daemon before it cancels :meth:`run`: a lost connection and the
        cancellation can meet in the session's task group, which then raises the
        connection's error instead of ``CancelledError``; this flag keeps the
        reconnection loop from swallowing the shutdown."""
        self._rng = rng or random.Random()
        self._writer: EagerWriter | None = None
        self._sender: _Sender | None = None

    @property
    def status_topic(self) -> str:
        """Where the retained online/offline status goes."""
        return f"{self.topic_base}/status"

    async def run(self) -> None:
        """Connect, serve, and reconnect for ever (until cancelled)."""
        failures = 0
        while True:
            self.state = PublisherState.CONNECTING
            try:
                await self._session()
            except (aiomqtt.MqttError, OSError, ExceptionGroup) as exc:
                failures = self._failed(exc, failures)
                if self.stopping:  # the daemon is stopping: do not reconnect
                    raise asyncio.CancelledError from exc
                _forget_cancel_requests()
            finally:
                self.connected.clear()
                self.first_attempt.set()
            self.state = PublisherState.WAITING
            await asyncio.sleep(self._delay(failures))

    def _failed(self, exc: BaseException, failures: int) -> int:
        if self.state is PublisherState.CONNECTED:
            failures = 0  # it worked until now: start the backoff over
        text = _describe(exc)
        self.counters.failures += 1
        self.counters.last_error = text
        if failures == 0:
            log.warning("broker %s:%d: %s", self.broker.host, self.broker.port, text)
        else:
            log.debug("broker still unreachable (%d): %s", failures, text)
        return failures + 1

    def _delay(self, failures: int) -> float:
        base: float = min(RECONNECT_DELAY_MAX, RECONNECT_DELAY_MIN * 2.0 ** max(0, failures - 1))
        return base * (1.0 - RECONNECT_JITTER * self._rng.random())

    def _client(self) -> aiomqtt.Client:
        broker = self.broker
        will = aiomqtt.Will(
            self.status_topic, status_payload("offline", self.table), qos=1, retain=True
        )
        client = aiomqtt.Client(
            broker.host,
            broker.port,
            username=broker.username,
            password=broker.resolved_password(),
            identifier=broker.client_id or f"baccarat-{self.table}",
            keepalive=broker.keepalive,
            will=will,
            tls_context=_tls_context(broker) if broker.tls else None,
            timeout=PUBLISH_TIMEOUT,
            max_inflight_messages=MAX_INFLIGHT,
            # A card must not wait behind the previous round's 40 kB roads body for the
            # broker's delayed ACK (Nagle): 40 ms, measured by bench/latency.py.
            socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
        )
        client.pending_calls_threshold = MAX_INFLIGHT + 16  # the window bounds them
        return client

    async def _session(self) -> None:
        async with self._client() as client:
            self._writer = send_eagerly(client)
            self.state = PublisherState.CONNECTED
            self.counters.connects += 1
            self.counters.since["connected"] = time.time()
            await client.publish(
                self.status_topic, status_payload("online", self.table), qos=1, retain=True
            )
            if self.on_command is not None:
                await client.subscribe(f"{self.topic_base}/cmd/+", qos=1)
            self.outbox.rewind()
            self.connected.set()
            self.first_attempt.set()
            log.info("connected to broker %s:%d", self.broker.host, self.broker.port)
            try:
                async with asyncio.TaskGroup() as group:
                    group.create_task(self._send(client), name="mqtt-send")
                    group.create_task(self._receive(client), name="mqtt-receive")
            finally:
                self._writer = None

    def hold(self) -> None:
        """Nothing reaches the broker until :meth:`release` (in the same turn of the loop).

        Messages put in the outbox meanwhile are handed to the connection (their packets
        made) but not written: the daemon holds while the journal's fdatasync of the
        input they come from runs. A message whose body is still to be made (a function:
        the large ones) and those behind it wait in the outbox until the release.
        """
        if self._writer is not None:
            self._writer.hold()
        if self._sender is not None:
            self._sender.held = True

    def release(self) -> None:
        """Write what :meth:`hold` kept back, then hand over what waited behind it."""
        if self._writer is not None:
            self._writer.release()
        if self._sender is not None:
            self._sender.held = False
            self._sender.drain()

    def abandon(self, reason: str) -> None:
        """Drop the connection without writing what is held (the session fails; the
        publisher connects again and sends what the outbox still has)."""
        if self._writer is not None:
            log.error("dropping the broker connection unflushed: %s", reason)
            self._writer.abort()

    async def _send(self, client: aiomqtt.Client) -> None:
        """Hand the outbox to the connection, oldest first, as fast as it comes.

        Each message is published the moment it is put (the daemon puts it once its input
        is in the journal), straight into paho's ``publish``, so that it is on the socket
        before the input's handler returns (see :func:`send_eagerly`); this loop takes
        what waited for a connection, and fails the session when the broker stops
        acknowledging.
        """
        sender = self._sender = _Sender(client, self.outbox, self.counters)
        self.outbox.on_put = sender.drain
        try:
            while True:
                sender.drain()
                sender.check()
                # A full window waits for a PUBACK, an open one for the next message; each
                # wait returns at once if that already happened, so yield a turn as well.
                wake = self.outbox.wait() if sender.room.is_set() else sender.room.wait()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(1.0):
                        await wake
                await asyncio.sleep(0)
        finally:
            self.outbox.on_put = None
            self._sender = None
            sender.close()

    async def _receive(self, client: aiomqtt.Client) -> None:
        async for message in client.messages:
            name = str(message.topic).rsplit("/", 1)[-1]
            payload = message.payload
            body = payload if isinstance(payload, bytes) else str(payload or "").encode()
            response = getattr(message.properties, "ResponseTopic", None)
            self.counters.commands += 1
            if self.on_command is not None:
                await self.on_command(name, body, response)


class _Sender:
    """Publishes outbox entries through the paho client under aiomqtt; takes their PUBACKs.

    aiomqtt's own ``publish`` is a coroutine: each message would need a task of its own and
    a turn of the loop before it even reaches paho. A card cannot wait for that, so entries
    go to paho's ``publish`` directly (it only queues, or with :func:`send_eagerly` writes,
    and never blocks), and the PUBACKs come back through paho's ``on_publish``, chained to
    aiomqtt's own handler so that aiomqtt's publishes (the status) still complete. At most
    MAX_INFLIGHT are unacknowledged; the rest wait in the outbox.
    """

    def __init__(self, client: aiomqtt.Client, outbox: Outbox, counters: PublisherCounters):
        self.outbox = outbox
        self.counters = counters
        self.paho = client._client  # the paho client aiomqtt wraps, as in send_eagerly
        self.pending: dict[int, tuple[_Entry, float]] = {}  # mid -> (entry, sent at)
        self.failure: str | None = None
        self.room = asyncio.Event()
        """Set while fewer than MAX_INFLIGHT messages wait for their PUBACK."""
        self.room.set()
        self.held = False
        """Set by ``Publisher.hold``: hand over only messages whose bytes are made."""
        self._theirs = self.paho.on_publish
        self.paho.on_publish = self._on_publish

    def drain(self) -> None:
        """Publish the entries not yet handed to the connection, MAX_INFLIGHT at most."""
        if self.failure is not None:
            return
        paho, pending, now = self.paho, self.pending, time.monotonic()
        while True:
            if len(pending) >= MAX_INFLIGHT:
                self.room.clear()
                return
            if self.held and not self.outbox.next_is_made():
                return
            entry = self.outbox.next_unsent()
            if entry is None:
                return
            message = entry.message
            try:  # called from the daemon's input handler: nothing may escape from here
                info = paho.publish(message.topic, message.body(), message.qos, message.retain)
                refused = None if info.rc == mqtt.MQTT_ERR_SUCCESS else mqtt.error_string(info.rc)
            except Exception as exc:  # reported as the session's failure
                refused = f"{type(exc).__name__}: {exc}"
            if refused is not None:
                self.failure = f"publish of seq {message.seq} refused: {refused}"
                self.room.set()  # wake the send loop, which fails the session;
                self.outbox.wake()  # a reconnection sends it again
                return
            pending[info.mid] = (entry, now)

    def _on_publish(self, client: mqtt.Client, userdata: Any, mid: int, *rest: Any) -> None:
        if self._theirs is not None:
            self._theirs(client, userdata, mid, *rest)
        found = self.pending.pop(mid, None)
        if found is not None:
            self.outbox.ack(found[0])
            self.counters.published += 1
            self.room.set()  # the send loop publishes what waited behind a full window

    def check(self) -> None:
        """Raise ``MqttError`` if a publish failed or a PUBACK is overdue."""
        if self.failure is not None:
            raise aiomqtt.MqttError(self.failure)
        if self.pending:
            _, sent_at = next(iter(self.pending.values()))
            if time.monotonic() - sent_at > PUBLISH_TIMEOUT:
                raise aiomqtt.MqttError(f"no PUBACK within {PUBLISH_TIMEOUT:.0f} s")

    def close(self) -> None:
        """The session is over: what is not acknowledged is sent again on the next one."""
        self.paho.on_publish = self._theirs
        self.pending.clear()


def send_eagerly(client: aiomqtt.Client) -> EagerWriter:
    """Make a publish reach the socket in the same turn of the event loop as the call.

    aiomqtt 2 runs paho-mqtt on the asyncio loop: when paho queues a packet it asks for
    the socket to be watched for writing, and aiomqtt does that through
    ``call_soon_threadsafe(add_writer)``, because paho may also call from the thread that
    connects. A packet then waits two turns of the loop and a wake-up of its self-pipe
    before it is written: some 350 us on a small table computer, as much as the journal's
    fdatasync (bench/latency.py). Here, on the loop's own thread, paho's public
    ``loop_write()`` is called at once instead; whatever the socket does not take
    (a full send buffer), and every call from another thread, goes the usual way.
    Errors too go the usual way: aiomqtt's own callback writes again and, if the
    connection is gone, fails the session as it always does.

    The returned :class:`EagerWriter` can also hold the writes back for a moment (while
    the journal's fdatasync of the input they come from is still running).

    ``client._client`` (the paho client aiomqtt wraps) is the one private name used; a
    test (tests/daemon/test_publisher_eager.py) fails if aiomqtt stops having it.
    """
    return EagerWriter(client)


class EagerWriter:
    """paho's writes on the loop thread, done at once, or held back until :meth:`release`.

    While held, packets that paho queues stay in paho's own queue: nothing reaches the
    socket, since aiomqtt's path writes only in a later turn of the loop, and the holder
    releases in the same turn. :meth:`abort` is for when what is held must never be sent
    (its input's record could not be made durable): the connection is shut down, so that
    neither this writer nor aiomqtt's can send another byte on it.
    """

    def __init__(self, client: aiomqtt.Client) -> None:
        self._paho = client._client  # see send_eagerly
        self._usual = self._paho.on_socket_register_write
        self._thread = threading.get_ident()
        self._held = False
        self._deferred = False
        self.aborted = False
        if self._usual is not None:
            self._paho.on_socket_register_write = self._register_write

    def _register_write(self, paho: mqtt.Client, userdata: Any, sock: SocketLike) -> None:
        assert self._usual is not None
        if threading.get_ident() != self._thread:
            self._usual(paho, userdata, sock)
        elif self._held or self.aborted:
            self._deferred = True  # paho keeps the packet; release() writes it
        else:
            self._write_now(paho, userdata, sock)

    def _write_now(self, paho: mqtt.Client, userdata: Any, sock: SocketLike) -> None:
        assert self._usual is not None
        try:
            paho.loop_write()
        except Exception:  # aiomqtt's callback meets it again, and reports it
            self._usual(paho, userdata, sock)
            return
        if paho.want_write():
            self._usual(paho, userdata, sock)

    def hold(self) -> None:
        """Keep what paho queues from now on off the socket until :meth:`release`."""
        self._held = True

    def release(self) -> None:
        """Write what was held (unless aborted), and write at once again from now on."""
        self._held = False
        if self._deferred and not self.aborted:
            self._deferred = False
            sock = self._paho.socket()
            if sock is not None:
                self._write_now(self._paho, self._paho.user_data_get(), sock)

    def abort(self) -> None:
        """Never send what is held: shut the connection down (the session then fails)."""
        self.aborted = True
        sock = self._paho.socket()
        shutdown = getattr(sock, "shutdown", None)  # a socket, or an ssl one (SocketLike)
        if shutdown is not None:
            with contextlib.suppress(OSError):
                shutdown(socket.SHUT_RDWR)


def _forget_cancel_requests() -> None:
    """Clear cancel requests a failed session's task group left on this task.

    Python 3.11's TaskGroup can leave the parent's cancellation count raised when a child
    fails as the connection drops; a later ``asyncio.timeout`` in the reconnection loop
    would then misread its own expiry. Only :attr:`Publisher.stopping` ends the loop.
    """
    task = asyncio.current_task()
    while task is not None and task.cancelling():
        task.uncancel()


def _tls_context(broker: BrokerConfig) -> ssl.SSLContext:
    context = ssl.create_default_context(
        cafile=str(broker.ca_file) if broker.ca_file else None
    )
    if broker.cert_file is not None and broker.key_file is not None:
        context.load_cert_chain(str(broker.cert_file), str(broker.key_file))
    return context


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(e) for e in exc.exceptions)
    return f"{type(exc).__name__}: {exc}"
