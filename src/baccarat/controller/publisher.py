"""The publisher: the table's MQTT connection, with an outbox that loses nothing.

Every message the engine produces goes into the outbox (:mod:`baccarat.controller.outbox`)
in order and stays there until the broker has acknowledged it (QoS 1). While the broker
is away the outbox fills; when it is back, the publisher sends what is waiting, oldest
first, then goes on. After a reconnection the unacknowledged messages are sent again, so
a subscriber may see a message twice; it drops the second by its ``seq``.

One sender task takes the outbox in order and keeps up to :data:`MAX_INFLIGHT` publishes
in flight, each ``await client.publish(...)`` in a task of its own; a message is
acknowledged when its publish returns. The client (:mod:`baccarat.mqtt`)
hands a publish to the connection in the first step of its task, so they leave in the
order the tasks were made: outbox order (tests/controller/test_publisher_outbox.py).

A message the broker refuses (an MQTT 5 PUBACK reason code >= 0x80, such as 0x87 Not
authorized by the ACL) is kept: the window stops, the refused message is sent again alone
with the backoff, and the engine's messages behind it wait, except alarms, which go on so
that the refusal is seen (as do status and command replies, which are not the engine's).
Once it passes, the rest follows in order. The refusal is logged once (again when another
topic or reason code is refused) and reported through ``on_refusal`` (the table raises a
``publish_refused`` alarm, cleared when it passes).
Under MQTT 3.1.1 a broker cannot refuse a publish: it drops it and acknowledges it.

The connection speaks MQTT 5 (3.1.1 if ``broker.mqtt_version`` says so) and carries a last
will (``status`` = offline, retained); ``status`` = online is published, retained, on every
connect. Operator commands arrive on ``cmd/+`` and are handed to a callback with their
MQTT 5 response topic, if they have one.
Reconnection waits :class:`~baccarat.backoff.Backoff` delays; the first failure is logged
as a warning, repeats at debug level.
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import random
import ssl
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Final

from baccarat import __version__
from baccarat.backoff import Backoff
from baccarat.controller.config import BrokerConfig
from baccarat.controller.outbox import Entry, Outbox, OutMessage
from baccarat.mqtt import (
    BrokerRefusedError,
    LinkError,
    MqttClient,
    MqttSettings,
    PublishRefusedError,
    Will,
)
from baccarat.reconnect import LinkState, Reconnector

log = logging.getLogger(__name__)

QOS: Final = 1
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

REFUSALS_REMEMBERED: Final = 64
"""Refused (topic, reason code) pairs logged once each; past that, each is logged."""

CommandHandler = Callable[[str, bytes, str | None, bool], Awaitable[None]]
"""Called with the command's name, its body, the MQTT 5 response topic (or None) and
whether the broker sent it as a retained message."""

RefusalHandler = Callable[[str | None], None]
"""Called with what the broker refuses when a refusal starts, and ``None`` when it ends."""


@dataclass
class PublisherCounters:
    """Health of the broker link."""

    published: int = 0
    in_flight: int = 0
    """Messages handed to the connection and not yet acknowledged."""
    connects: int = 0
    failures: int = 0
    commands: int = 0
    refused: int = 0
    """Publishes the broker refused (each attempt counts)."""
    last_error: str = ""
    since: dict[str, float] = field(default_factory=dict)


def status_payload(state: str, table: str, **extra: object) -> bytes:
    """The retained ``status`` body: online or offline, and the controller's version."""
    body = {
        "schema": 1,
        "type": "status",
        "state": state,
        "table": table,
        "version": __version__,
        **extra,
    }
    return json.dumps(body).encode()


class RefusalHold:
    """A message the broker refused, which holds the table's messages behind it.

    ``entry`` is the refused message, until it passes; ``reported`` whether the refusal was
    reported (``on_refusal``) and has not ended; ``passed`` is set when the message passes
    (the sender waits on it); ``scanned`` is ``Outbox.puts`` when the urgent messages
    behind it were last looked at; ``logged`` the (topic, reason code) pairs logged once.
    """

    def __init__(self) -> None:
        self.entry: Entry | None = None
        self.reported = False
        self.passed: asyncio.Event | None = None
        self.scanned = 0
        self.logged: set[tuple[str, int]] = set()

    @property
    def holding(self) -> bool:
        """A refused message is being sent alone again: the others wait."""
        return self.passed is not None

    def first_log(self, key: tuple[str, int]) -> bool:
        """Whether this refusal (topic, reason code) is to be logged: once each, mostly."""
        if key in self.logged:
            return False
        if len(self.logged) < REFUSALS_REMEMBERED:
            self.logged.add(key)
        return True

    def release(self) -> None:
        """The refused message passed: the messages behind it go on."""
        passed, self.passed = self.passed, None
        if passed is not None:
            passed.set()

    def end(self) -> None:
        """The refusal is over: forget it."""
        self.entry = None
        self.reported = False
        self.logged.clear()


class Publisher:
    """Keeps the table connected to its broker and drains the outbox into it.

    The table drives it through methods: :meth:`stop` before it cancels :meth:`run`,
    :meth:`say_on_connect`, :meth:`refusal_left_open` and :meth:`take_no_commands`.
    """

    def __init__(
        self,
        broker: BrokerConfig,
        *,
        topic_base: str,
        table: str,
        outbox: Outbox,
        on_command: CommandHandler | None = None,
        on_refusal: RefusalHandler | None = None,
        rng: random.Random | None = None,
        key: str | None = None,
    ) -> None:
        """``key``: the table's public key, published with every status (docs/record.md)."""
        self.broker = broker
        self.topic_base = topic_base
        self.table = table
        self.outbox = outbox
        self.on_command = on_command
        self.on_refusal = on_refusal
        self.counters = PublisherCounters()
        self.first_attempt = asyncio.Event()
        self.connected = asyncio.Event()
        self.first_connect = asyncio.Event()
        """Set at the first connection of the process, and never cleared."""
        self.attempts_failed = 0
        """Attempts in a row that could not reach the broker (0 once connected)."""
        self.next_try: float | None = None
        """When (monotonic) the next attempt is made, while waiting for the broker."""
        self._extra: dict[str, object] = {} if key is None else {"key": key}
        self._status_on_connect: bytes | None = status_payload("online", table, **self._extra)
        self._stopping = False
        self.rng = rng or random.Random()
        self.backoff = Backoff(RECONNECT_DELAY_MIN, RECONNECT_DELAY_MAX, RECONNECT_JITTER, self.rng)
        self._link = Reconnector(
            self._attempt, backoff=self.backoff, errors=(LinkError, OSError, ExceptionGroup),
            on_lost=lambda lost: self._failed(lost.reason, lost.outage - 1, lost.delay),
        )
        self.refusal = RefusalHold()
        self._idle = asyncio.Event()  # nothing in flight
        self._idle.set()

    @property
    def state(self) -> LinkState:
        """Where the broker link is (connecting, up, waiting)."""
        return self._link.state

    @property
    def status_topic(self) -> str:
        """Where the retained online/offline status goes."""
        return f"{self.topic_base}/status"

    def stop(self) -> None:
        """The daemon stops: call before cancelling :meth:`run`.

        A lost connection and the cancellation can meet in the session's task group, which
        then raises the connection's error instead of ``CancelledError``: this keeps the
        reconnection loop from swallowing the shutdown, and the session from leaving
        without its clean DISCONNECT (which would let the broker publish the will).
        """
        self._stopping = True

    def say_on_connect(self, status: bytes | None) -> None:
        """The retained status published on every connect (a fault's; ``None``: none)."""
        self._status_on_connect = status

    def refusal_left_open(self) -> None:
        """The journal left a ``publish_refused`` alarm open: the next message that passes ends it.

        It ends through ``on_refusal``, as a refusal seen by this process would.
        """
        self.refusal.reported = True

    def take_no_commands(self) -> None:
        """Subscribe to no command (nothing can be recorded: the table is in fault)."""
        self.on_command = None

    async def run(self) -> None:
        """Connect, serve, and reconnect for ever (until cancelled)."""
        await self._link.run()

    async def _attempt(self) -> None:
        """One connection, until it is lost (the reconnector's attempt).

        Each connection is a task of its own, so that what its task group does to its
        task's cancellation count stays there (Python 3.11's TaskGroup can leave the
        parent's raised as a child fails when the connection drops).
        """
        session = asyncio.create_task(self._session(), name="mqtt-session")
        try:
            await session  # cancelling run() cancels the session with it
        except (LinkError, OSError, ExceptionGroup) as exc:
            if self._stopping:  # the daemon is stopping: do not reconnect
                self._failed(exc, self.backoff.failures)
                raise asyncio.CancelledError from exc
            raise
        finally:
            self.connected.clear()
            self.first_attempt.set()

    def _failed(self, exc: BaseException | str, before: int, delay: float | None = None) -> None:
        """Count and log a failure; ``before``: the failures of this outage before it.

        ``delay``: seconds to the next try. The first failure is a warning; the next ones,
        while the table has never reached the broker (a start with no broker), are told
        at info with their count and next try at attempts 2-5 and every 10th, so that the
        log says it is still waiting without a line a second; after that, debug.
        """
        text = exc if isinstance(exc, str) else _describe(exc)
        self.counters.failures += 1
        self.counters.last_error = text
        self.attempts_failed = before + 1
        self.next_try = None if delay is None else time.monotonic() + delay
        where = f"broker {self.broker.host}:{self.broker.port}"
        retry = "" if delay is None else f"; next try in {delay:.1f} s"
        if before == 0:
            log.warning("%s: %s%s", where, text, retry)
        elif not self.first_connect.is_set() and (before < 5 or (before + 1) % 10 == 0):
            log.info("waiting for %s: %d attempts failed (last: %s)%s", where, before + 1,
                     text, retry)
        else:
            log.debug("broker still unreachable (%d): %s", before, text)

    def probe_client(self) -> MqttClient:
        """A connection like the publisher's, without a will and under another client id.

        For a look at what the broker holds for the table at a start
        (:func:`~baccarat.controller.seq_promise.retained_seq`).
        """
        return self._client(probe=True)

    def _client(self, *, probe: bool = False) -> MqttClient:
        broker = self.broker
        will = Will(self.status_topic, status_payload("offline", self.table, **self._extra), QOS,
                    retain=True)
        client_id = broker.client_id or f"baccarat-{self.table}"
        return MqttClient(MqttSettings(
            broker.host,
            broker.port,
            client_id=f"{client_id}-start" if probe else client_id,
            version=broker.mqtt_version,
            keepalive=broker.keepalive,
            will=None if probe else will,
            username=broker.username,
            password=broker.resolved_password(),
            tls_context=_tls_context(broker) if broker.tls else None,
            max_inflight=MAX_INFLIGHT,
            connect_timeout=PUBLISH_TIMEOUT,
        ))

    async def _session(self) -> None:
        async with self._client() as client:
            try:
                await self._serve(client)
            except BaseException:
                if not self._stopping:  # a failure, not the daemon's stop: let the will
                    client.abandon()  # say offline (a clean DISCONNECT would drop it)
                raise

    async def _serve(self, client: MqttClient) -> None:
        """One connection: say online, subscribe, send the outbox and take commands."""
        self._link.connected()
        self.counters.connects += 1
        self.counters.since["connected"] = time.time()
        if self._status_on_connect is not None:
            await self._publish_status(client, self._status_on_connect)
        if self.on_command is not None:
            await self._subscribe(client, f"{self.topic_base}/cmd/+")
            await self._subscribe(client, f"{self.topic_base}/cmd/+/+")
        self.refusal.passed = None
        self._idle.set()
        self.outbox.rewind()
        self.connected.set()
        self.first_attempt.set()
        self.first_connect.set()
        self.attempts_failed, self.next_try = 0, None
        log.info("connected to broker %s:%d", self.broker.host, self.broker.port)
        async with asyncio.TaskGroup() as group:
            group.create_task(self._send(client, group), name="mqtt-send")
            group.create_task(self._receive(client), name="mqtt-receive")

    async def _publish_status(self, client: MqttClient, status: bytes) -> None:
        try:
            await client.publish(self.status_topic, status, qos=QOS, retain=True)
        except BrokerRefusedError as exc:  # the table goes on; the boards cannot see it online
            log.error("%s: the table's status cannot be published", exc)  # noqa: TRY400

    async def _subscribe(self, client: MqttClient, topic: str) -> None:
        try:
            await client.subscribe(topic, qos=QOS)
        except BrokerRefusedError as exc:  # the table goes on publishing; commands cannot come
            log.error("%s: operator commands cannot arrive", exc)  # noqa: TRY400

    async def _send(self, client: MqttClient, group: asyncio.TaskGroup) -> None:
        """Publish the outbox in order, at most MAX_INFLIGHT unacknowledged at a time."""
        window = asyncio.Semaphore(MAX_INFLIGHT)
        while True:
            await window.acquire()
            entry = await self.outbox.next_unsent()
            if self.refusal.passed is not None:  # a refused message holds the window
                window.release()
                await self.refusal.passed.wait()  # it rewound the outbox: this entry comes
                continue  # again
            group.create_task(self._publish(client, entry, window), name="mqtt-publish")

    async def _publish(self, client: MqttClient, entry: Entry, window: asyncio.Semaphore) -> None:
        """One message in the window; a refused one holds the window until it passes."""
        try:
            await self._deliver(client, entry)
        except PublishRefusedError as exc:
            window.release()
            kept = self._refused(exc, entry)
            if kept and not self.refusal.holding:  # the first: the others come after it
                await self._retry_alone(client, entry)
            return
        window.release()

    async def _deliver(self, client: MqttClient, entry: Entry) -> None:
        """Send one message and wait for its PUBACK; acknowledge it in the outbox.

        Raises :class:`PublishRefusedError` if the broker refused it, ``LinkError`` if it
        did not answer in time or the connection was lost.
        """
        message = entry.message
        self.counters.in_flight += 1
        self._idle.clear()
        try:
            async with asyncio.timeout(PUBLISH_TIMEOUT):
                await client.publish(message.topic, message.payload, qos=QOS, retain=message.retain)
        except TimeoutError:
            raise LinkError(f"no PUBACK within {PUBLISH_TIMEOUT:.0f} s") from None
        finally:
            self.counters.in_flight -= 1
            if self.counters.in_flight == 0:
                self._idle.set()
        self.outbox.ack(entry)
        self.counters.published += 1
        if self.refusal.reported and message.seq is not None and self.refusal.entry in (
            None, entry,
        ):
            self._passed()

    async def _retry_alone(self, client: MqttClient, entry: Entry) -> None:
        """Hold the window; send the refused message alone, with the backoff, until it passes.

        Alarms, status and replies behind it are sent meanwhile (:meth:`_passes_refusals`).
        Then the outbox is rewound so that the messages behind it follow in order (those
        already acknowledged are skipped).
        """
        self.refusal.passed = asyncio.Event()
        self.refusal.scanned = self.outbox.puts - len(self.outbox)  # all that waits behind it
        backoff = Backoff(RECONNECT_DELAY_MIN, RECONNECT_DELAY_MAX, RECONNECT_JITTER, self.rng)
        await self._idle.wait()  # the messages in flight have their answers
        while True:
            await self._send_urgent(client, entry)
            await asyncio.sleep(backoff.next_delay())
            try:
                await self._deliver(client, entry)
            except PublishRefusedError as exc:
                self._refused(exc, entry)
                continue
            break
        self.outbox.rewind()
        self.refusal.release()

    async def _send_urgent(self, client: MqttClient, refused: Entry) -> None:
        """Send the alarms, status and replies queued since the last call, in order.

        Each message is looked at once in a hold (a long outbox is not scanned again at
        every retry); an alarm refused too waits with the others.
        """
        fresh = self.outbox.puts - self.refusal.scanned
        self.refusal.scanned = self.outbox.puts
        for entry in self.outbox.newest(fresh):
            if entry is not refused and not entry.acked and self._passes_refusals(entry.message):
                try:
                    await self._deliver(client, entry)
                except PublishRefusedError as exc:
                    self._refused(exc, entry)

    def _passes_refusals(self, message: OutMessage) -> bool:
        """Urgent messages (alarms), and those that are not the engine's (status, replies)."""
        return message.seq is None or message.urgent

    def _refused(self, exc: PublishRefusedError, entry: Entry) -> bool:
        """Count a refusal, log it once per topic and code; whether the message is kept.

        An engine message is kept and the first refusal reported. A status or a reply is
        dropped: it is nobody's record, and a reply to a response topic the table may not
        write must not hold the table's messages.
        """
        self.counters.refused += 1
        kept = entry.message.seq is not None
        if self.refusal.first_log((exc.topic, exc.code)):
            fate = "the message is kept and sent again until it passes" if kept else "dropped"
            log.error("%s: %s", exc, fate)
        if not kept:
            self.outbox.ack(entry)  # done with: it leaves the outbox
            return False
        if self.refusal.entry is None:
            self.refusal.entry = entry
        if not self.refusal.reported:
            self.refusal.reported = True
            if self.on_refusal is not None:
                self.on_refusal(f"the broker refuses to publish on {exc.topic} "
                                f"(reason code 0x{exc.code:02X}): messages are kept")
        return True

    def _passed(self) -> None:
        """The refused message passed (or, after a restart, the first one): end the report."""
        if self.refusal.entry is not None:
            topic = self.refusal.entry.message.topic
            log.warning("the broker accepts %s again: publishing resumes", topic)
        self.refusal.end()
        if self.on_refusal is not None:
            self.on_refusal(None)

    async def _receive(self, client: MqttClient) -> None:
        """Hand each command to the callback; ``LinkError`` when the connection is lost."""
        async for message in client.messages():
            name = message.topic.removeprefix(f"{self.topic_base}/cmd/")
            self.counters.commands += 1
            if self.on_command is not None:
                await self.on_command(name, message.payload, message.response_topic,
                                      message.retain)


def _tls_context(broker: BrokerConfig) -> ssl.SSLContext:
    context = ssl.create_default_context(
        cafile=str(broker.ca_file) if broker.ca_file else None
    )
    if broker.cert_file is not None and broker.key_file is not None:
        context.load_cert_chain(str(broker.cert_file), str(broker.key_file))
    return context


def _describe(exc: BaseException) -> str:
    """One line for an error; a group's errors each once, with how many times it came."""
    if isinstance(exc, BaseExceptionGroup):
        counted = collections.Counter(_describe(e) for e in exc.exceptions)
        return "; ".join(text if n == 1 else f"{text} ({n} times)" for text, n in counted.items())
    return f"{type(exc).__name__}: {exc}"
