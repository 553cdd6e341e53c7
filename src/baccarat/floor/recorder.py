"""``baccarat record``: every message of every table on the floor broker, into a database.

The recorder subscribes to ``{prefix}/+/#`` at QoS 1 with a persistent MQTT 5 session (a
fixed client id, ``clean_start`` off, a session that outlives a week's outage), so the
broker keeps what the tables publish while the recorder is away, and gives it back when it
returns. It acknowledges a message to the broker only once the database has it: the
client's ``manual_ack`` (:mod:`baccarat.mqtt`), one PUBACK per message, in the order they
came, after the transaction that stored them has committed, and only on the connection
that delivered it. A recorder killed at any moment therefore loses nothing: what it had
not stored it had not acknowledged, and the broker delivers it again; what it had stored
and not yet acknowledged (killed, or the connection lost meanwhile) comes again and is
dropped as a duplicate by its ``(table, seq)`` key (:mod:`baccarat.floor.store`). A lost
broker is reconnected with the package's backoff (:data:`BROKER_RETRY_FIRST` to
:data:`BROKER_RETRY_CAP`), the first failure logged as a warning, repeats at debug level;
a connection that stays up but delivers nothing is found by the watchdog
(:mod:`baccarat.floor.watchdog`) and left the same way.

Every body is screened first (:mod:`baccarat.floor.screening`, on
:mod:`baccarat.floor.bodies`: its topic decides its type);
what must not be stored, and what the database refuses when it is tried alone (a batch it
refuses is stored again one message at a time), goes into the store's quarantine with the
reason and is acknowledged, so that no body can hold up the stream behind it. A database
that cannot be reached is retried with the package's backoff, reconnecting, with nothing
acknowledged meanwhile; the lag (messages waiting, the age of the oldest) is logged every
:data:`LAG_EVERY` seconds while it lasts, and ``--metrics-port`` serves it to Prometheus
with the counters (:mod:`baccarat.floor.metrics`).

The broker side of that promise: the floor broker must keep sessions across its own
restarts (mosquitto ``persistence true``), and allow enough queued messages per client
(``max_queued_messages``) for the longest outage the recorder should survive.

The client reads and writes its packets on the event loop; one task appends each message
to the deque the store takes its batches from. The database is written from one worker
thread, so the event loop never waits for a disk or a database server.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Final

from baccarat.backoff import Backoff
from baccarat.errors import BaccaratError
from baccarat.floor import watchdog
from baccarat.floor.bodies import shown
from baccarat.floor.derived import Arrivals
from baccarat.floor.screening import DeliveryScreen
from baccarat.floor.store import (
    AddResult,
    Quarantined,
    Received,
    Store,
    StoreError,
    StoreRefusedError,
    StoreUnavailableError,
)
from baccarat.mqtt import (
    BrokerRefusedError,
    LinkError,
    MqttClient,
    MqttSettings,
    PublishRefusedError,
)
from baccarat.reconnect import Lost, Reconnector

log = logging.getLogger(__name__)

SESSION_EXPIRY: Final = 7 * 24 * 3600
"""Seconds the broker keeps the recorder's session (and queues for it) while it is away."""
RECEIVE_MAXIMUM: Final = 1000
"""Messages the broker may have delivered to us unacknowledged: the backpressure."""
BATCH_MAX: Final = 500
"""Messages stored in one transaction at most."""
BATCH_MAX_BYTES: Final = 4 * 1024 * 1024
"""Bytes of bodies stored in one transaction at most (a batch holds one body more than
this only when that body alone is larger)."""
ARRIVED_MAX: Final = 2 * BATCH_MAX
ARRIVED_MAX_BYTES: Final = 2 * BATCH_MAX_BYTES
"""Messages, and bytes of them, received and waiting for a batch at most: the recorder
stops taking messages from the connection meanwhile, whose own bound then holds
(:data:`baccarat.mqtt.MAX_BUFFERED`: it stops reading its socket, and the broker keeps the
rest). Memory does not grow with what the broker sends."""
GATHER: Final = 0.05
"""Seconds to let a batch gather after its first message (unless BATCH_MAX are waiting):
one commit, with its fsync, for every message that comes in that time, not one for each;
a message waits at most this much more before it is acknowledged."""
RETRY_FIRST: Final = 0.5
RETRY_CAP: Final = 30.0
"""Seconds between attempts to reach a database that is unavailable (the package's one
backoff: doubling, jittered, capped)."""
BROKER_RETRY_FIRST: Final = 1.0
BROKER_RETRY_CAP: Final = 5.0
"""Seconds between attempts to reach the floor broker (the same backoff)."""
LAG_EVERY: Final = 10.0
"""Seconds between the log lines that say how far behind the recorder is."""
LAG_BEHIND: Final = 5.0
"""Seconds the oldest unacknowledged message may wait before the recorder says it is behind."""
FINDINGS_MAX: Final = 1000
"""The watch's findings kept for the broker at most; more are counted, not published."""
ANNOUNCE_AT_ONCE: Final = 100
"""Findings published at a time (the client keeps its own limit of messages in flight)."""
REFUSED: Final = "the database refused it"
"""How a quarantine reason starts when the database, not the screen, refused a message."""


class RecorderFailedError(BaccaratError):
    """A task of the recorder ended with an error of ours: the recorder stops."""


@dataclass
class RecorderCounters:
    """What the recorder has done since it started."""

    received: int = 0
    stored: int = 0
    duplicates: int = 0
    conflicts: int = 0
    statuses: int = 0
    quarantined: int = 0
    """Messages kept in the quarantine table, for whatever reason."""
    quarantined_by: collections.Counter[str] = field(default_factory=collections.Counter)
    """The same, by the reason's class (:data:`baccarat.floor.bodies.CAUSES`)."""
    refused: int = 0
    """Of those, the ones the database refused (the screen had let them through)."""
    unrecorded: int = 0
    """Messages acknowledged and kept nowhere: their quarantine row was refused too."""
    connects: int = 0
    store_failures: int = 0
    """Attempts to store that found the database unavailable."""
    reconnects: int = 0
    pauses: int = 0
    """Times the connection stopped reading, the recorder behind (:data:`ARRIVED_MAX_BYTES`)."""
    findings_unpublished: int = 0
    """The watch's findings not published (too many waiting for the broker): in the store."""
    skipped: collections.Counter[str] = field(default_factory=collections.Counter)
    """Messages received and rightly kept nowhere, by reason (:data:`SKIPPED_REASONS`)."""
    last_seq: dict[str, int] = field(default_factory=dict)

    def accounted(self, waiting: int = 0) -> int:
        """Received messages accounted for: each received is exactly one of these.

        Stored, a duplicate, a conflict, a status, quarantined, kept nowhere, skipped (by
        reason), or ``waiting`` (received, its batch not yet committed).
        """
        return (self.stored + self.duplicates + self.conflicts + self.statuses
                + self.quarantined + self.unrecorded + sum(self.skipped.values()) + waiting)

    def account(self, waiting: int = 0) -> str:
        """``N received = S stored + D duplicate(s) + ...``: the line the log gives."""
        skipped = ", ".join(f"{n} {why}" for why, n in sorted(self.skipped.items()) if n)
        text = (
            f"{self.received} received = {self.stored} stored + {self.duplicates}"
            f" duplicate(s) + {self.conflicts} conflict(s) + {self.statuses} status(es) +"
            f" {self.quarantined} quarantined ({self.refused} refused by the database) +"
            f" {self.unrecorded} kept nowhere + {sum(self.skipped.values())} skipped"
            f" ({skipped or 'none'})"
        )
        if waiting:
            text += f" + {waiting} waiting"
        missing = self.received - self.accounted(waiting)
        if missing:
            text += f"; {missing} not accounted for (a bug: please report it)"
        return text


SKIPPED_REASONS: Final = (
    "command", "own finding or probe", "cleared retained body", "not sequenced",
)
"""Why a received message is rightly kept nowhere: an operator command (its effect is in
the table's messages), the recorder's own finding or watchdog probe, a retained body
cleared, or a body without seq that is not a status (the pit's limits, a fault, a reply)."""


@dataclass(frozen=True, slots=True)
class Delivery:
    """A message from the broker, with what acknowledging it needs."""

    topic: str
    payload: bytes
    mid: int
    qos: int
    received: float
    connection: MqttClient | None = field(default=None, compare=False, repr=False)
    """The connection that delivered it, the only one that may acknowledge it."""
    probe: bool = False
    """The watchdog's probe: acknowledged in its turn, but no table's message (no lag)."""
    acknowledge: Callable[[], Awaitable[None]] | None = field(
        default=None, compare=False, repr=False
    )
    """Another source's ack (the cluster's, :mod:`baccarat.floor.cluster`), sent after the
    batch's commit like a PUBACK."""


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

    def __init__(
        self, broker: BrokerAddress, store: Store, *, prefix: str = "baccarat",
        watch: Callable[[list[Received]], Awaitable[list[tuple[str, bytes]]]] | None = None,
        stall_timeout: float = watchdog.TIMEOUT,
    ) -> None:
        """The recorder; ``watch`` says what to publish in its own name after a batch.

        Given what was stored (the shuffle check, :mod:`baccarat.floor.shuffle`).
        ``stall_timeout``: seconds of silence, with its probe due back, after which a broker
        connection is left as stalled (:mod:`baccarat.floor.watchdog`; 0: no watchdog).
        """
        self.broker = broker
        self.store = store
        self.prefix = prefix
        self.watch = watch
        self.counters = RecorderCounters()
        self.arrivals = Arrivals()
        """Each table's derived views, made as its messages come: which to keep as places."""
        self.connected = asyncio.Event()
        self._arrived: collections.deque[Delivery] = collections.deque()
        """Received, not yet taken into a batch."""
        self._arrived_bytes = 0
        self._wake = asyncio.Event()
        """Set when a message arrives; cleared before the store takes from ``_arrived``."""
        self._room = asyncio.Event()
        """Set when the store took from ``_arrived``: the listener may take more."""
        self._pending: list[Delivery] = []
        """The batch being stored: received, not yet acknowledged."""
        self._findings: collections.deque[tuple[str, bytes]] = collections.deque()
        """What ``watch`` said to publish, until the broker took it (its PUBACK)."""
        self._findings_ready = asyncio.Event()
        self._overflowing = False
        self._database = Reconnector(
            self._store_once, backoff=Backoff(first=RETRY_FIRST, cap=RETRY_CAP),
            errors=(StoreUnavailableError,), on_lost=self._database_lost,
        )
        self._reopen = False  # the database was lost: open it again before the next add
        self._unavailable_since: float | None = None
        self._screen = DeliveryScreen(prefix, self._skip)
        self.watchdog = None if stall_timeout <= 0 else watchdog.BrokerWatchdog(
            prefix, broker.client_id, stall_timeout, self._can_receive,
        )

    async def run(self, stop: asyncio.Event) -> None:
        """Record until ``stop`` is set; what was stored is acknowledged, the rest is not.

        A task of the recorder that fails (a fault of ours) ends it with that error, logged,
        rather than leaving it running without the task.
        """
        tasks = [
            asyncio.create_task(self._consume(), name="recorder-store"),
            asyncio.create_task(self._report_lag(), name="recorder-lag"),
            asyncio.create_task(self._listen(), name="recorder-broker"),
        ]
        stopping = asyncio.create_task(stop.wait(), name="recorder-stop")
        try:
            done, _ = await asyncio.wait([stopping, *tasks], return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in [stopping, *tasks]:  # nothing more acknowledged, then a DISCONNECT
                task.cancel()
            await asyncio.gather(stopping, *tasks, return_exceptions=True)  # said below
        for task in done - {stopping}:
            log.critical("the recorder's task %s ended", task.get_name(),
                         exc_info=task.exception())
            raise RecorderFailedError(f"the recorder's task {task.get_name()} ended"
                                      ) from task.exception()

    @property
    def broker_stalls(self) -> int:
        """Broker connections the watchdog found stalled and left."""
        return 0 if self.watchdog is None else self.watchdog.stalls

    def _can_receive(self) -> bool:
        """Whether the broker has no reason to hold back: all received is stored and acked.

        While a batch is stored (or waits for the database) the broker may rightly wait
        for PUBACKs (the receive maximum, or its own limit of messages in flight).
        """
        return self.database_up and not self._pending and not self._arrived

    # ------------------------------------------------------------ the broker

    def _client(self) -> MqttClient:
        broker = self.broker
        return MqttClient(MqttSettings(
            broker.host, broker.port, client_id=broker.client_id, keepalive=broker.keepalive,
            username=broker.username, password=broker.password,
            clean_start=False, session_expiry=SESSION_EXPIRY, receive_maximum=RECEIVE_MAXIMUM,
            manual_ack=True,
        ))

    async def _listen(self) -> None:
        """Connect, subscribe and take every message; reconnect with the backoff, for ever."""
        where = f"{self.broker.host}:{self.broker.port}"

        async def attempt() -> None:
            try:
                async with self._client() as client:
                    link.connected()
                    await self._subscribe(client)
                    await self._take(client, where)
            finally:
                self.connected.clear()

        def lost(lost: Lost) -> None:
            if lost.first:
                log.warning("floor broker %s: %s (reconnecting)", where, lost.reason)
            else:
                log.debug("floor broker %s still unreachable: %s", where, lost.reason)

        link = Reconnector(
            attempt, backoff=Backoff(first=BROKER_RETRY_FIRST, cap=BROKER_RETRY_CAP),
            errors=(LinkError, OSError), on_lost=lost,
        )
        await link.run()

    async def _take(self, client: MqttClient, where: str) -> None:
        """Every message of this connection into ``_arrived``; its findings and probes out."""
        helpers = [asyncio.create_task(self._announce(client), name="recorder-findings")]
        if self.watchdog is not None:
            helpers.append(asyncio.create_task(self.watchdog.watch(client, where),
                                               name="recorder-watchdog"))
        for helper in helpers:  # one that fails ends the connection, and raises below
            helper.add_done_callback(lambda task: _failed(task, client))
        pauses_before = self.counters.pauses
        try:
            async for message in client.messages():
                probe = self.watchdog is not None and self.watchdog.heard(
                    message.topic, message.payload
                )
                while (len(self._arrived) >= ARRIVED_MAX
                       or self._arrived_bytes >= ARRIVED_MAX_BYTES):
                    self._room.clear()  # the store is behind: wait for it, not the memory
                    await self._room.wait()
                self._arrived.append(Delivery(
                    message.topic, message.payload, message.mid, message.qos, time.time(),
                    client, probe,
                ))
                self._arrived_bytes += len(message.payload)
                self._wake.set()
                self.counters.pauses = pauses_before + client.pauses
        finally:
            for helper in helpers:
                helper.cancel()
                with contextlib.suppress(asyncio.CancelledError, LinkError):
                    await helper

    async def _subscribe(self, client: MqttClient) -> None:
        self.counters.connects += 1
        topic = f"{self.prefix}/+/#"
        try:
            await client.subscribe(topic, qos=1, retained="if_new")
        except BrokerRefusedError as exc:  # the session's earlier subscription may still deliver
            log.error("%s: the recorder receives only what an earlier subscription of its"  # noqa: TRY400
                      " session still gives", exc)
        log.info("recording %s from %s:%d (session %s)", topic, self.broker.host,
                 self.broker.port, "resumed" if client.session_present else "new")
        self.connected.set()

    async def _announce(self, client: MqttClient) -> None:
        """Publish the watch's findings on this connection, each kept until its PUBACK.

        Up to :data:`ANNOUNCE_AT_ONCE` at a time; what a lost connection did not take
        waits for the next one.
        """
        findings = self._findings
        while True:
            while findings:
                batch = [findings.popleft() for _ in range(min(ANNOUNCE_AT_ONCE, len(findings)))]
                results = await asyncio.gather(
                    *(client.publish(topic, payload, qos=1) for topic, payload in batch),
                    return_exceptions=True,
                )
                unsent = [item for item, result in zip(batch, results, strict=True)
                          if isinstance(result, LinkError)]
                for result in results:
                    if isinstance(result, PublishRefusedError):
                        log.error("%s (the finding is in the store)", result)
                findings.extendleft(reversed(unsent))
                if unsent:
                    return  # the connection is lost: the listener reconnects
            self._overflowing = False
            self._findings_ready.clear()
            await self._findings_ready.wait()

    # ------------------------------------------------------------ the store

    async def _consume(self) -> None:
        arrived = self._arrived
        while True:
            if not arrived:
                await self._wake.wait()
            self._wake.clear()  # before taking: what comes after it wakes us again
            if len(arrived) < BATCH_MAX:
                await asyncio.sleep(GATHER)
            batch = self._pending
            size = 0
            while arrived and len(batch) < BATCH_MAX and size < BATCH_MAX_BYTES:
                delivery = arrived.popleft()
                batch.append(delivery)
                size += len(delivery.payload)
            self._arrived_bytes -= size
            self._room.set()
            if not batch:
                continue
            await self.record(batch)
            others = []
            for delivery in batch:
                if delivery.connection is not None:
                    delivery.connection.ack(delivery.mid, delivery.qos)
                elif delivery.acknowledge is not None:
                    others.append(delivery.acknowledge())
            batch.clear()
            if others:  # an ack that fails is delivered again, and dropped as a duplicate
                for failed in await asyncio.gather(*others, return_exceptions=True):
                    if isinstance(failed, Exception):
                        log.debug("an ack was not sent: %s", failed)

    async def record(self, batch: list[Delivery]) -> None:
        """Store or quarantine every message of the batch, waiting for the database."""
        received: list[Received] = []
        quarantine: list[Quarantined] = []
        for delivery in batch:
            self.counters.received += 1
            item = self._screen(delivery)
            if isinstance(item, Received):
                received.append(item)
            elif isinstance(item, Quarantined):
                quarantine.append(item)
        for table in self.arrivals.unseen(received):  # its views, as the store has them
            await asyncio.to_thread(self.arrivals.resume, self.store, table)
        await self._add(self.arrivals.mark(received), quarantine)
        if self.watch is not None:
            findings = await self.watch(received)
            if len(self._findings) + len(findings) > FINDINGS_MAX:
                if not self._overflowing:  # once until the broker has taken them all
                    log.error("findings not published: the floor broker has not taken the"
                              " %d before them (they are in the store)", len(self._findings))
                self._overflowing = True
                self.counters.findings_unpublished += len(findings)
                findings = []
            self._findings.extend(findings)
            if findings:
                self._findings_ready.set()

    async def _add(self, received: list[Received], quarantine: list[Quarantined]) -> None:
        """Add them, one by one if the database refuses the lot.

        What the database refuses alone is quarantined with the database's reason.
        """
        try:
            await self._attempt(received, quarantine)
            return
        except StoreRefusedError as exc:
            if len(received) <= 1:
                if not received:  # quarantine rows are made safe for any database
                    self._lost(quarantine, exc)
                    return
                refused = _quarantined(received[0], f"{REFUSED}: {exc}")
                self.arrivals.lost(received[0])
                await self._add([], [*quarantine, refused])
                return
        for message in received:
            await self._add([self.arrivals.recheck(message)], [])
        if quarantine:
            await self._add([], quarantine)

    async def _attempt(self, received: list[Received], quarantine: list[Quarantined]) -> None:
        """One add, retried while the database is unavailable (reconnecting with backoff).

        StoreRefusedError if the database refuses the data.
        """
        await self._database.until_done(received, quarantine)

    async def _store_once(self, received: list[Received], quarantine: list[Quarantined]) -> None:
        if self._reopen:  # after the backoff's delay: open the database again
            self._reopen = False
            try:
                await asyncio.to_thread(self.store.reconnect)
            except StoreError as again:
                log.debug("cannot reconnect to the database: %s", again)
            else:
                self.counters.reconnects += 1
        result = await asyncio.to_thread(self.store.add, received, quarantine)
        if self._unavailable_since is not None:
            log.warning("the database is back after %.0f s; storing again",
                        time.monotonic() - self._unavailable_since)
            self._unavailable_since = None
            self._database.connected()
        self._count(result, received, quarantine)

    def _database_lost(self, lost: Lost) -> None:
        """An add the database could not take: the batch stays unacked, and is tried again."""
        self.counters.store_failures += 1
        self._reopen = True
        if self._unavailable_since is None:
            self._unavailable_since = time.monotonic()
            log.error("cannot store: %s (reconnecting; nothing is acknowledged until it is"
                      " stored)", lost.reason)
        else:
            log.debug("still cannot store: %s", lost.reason)

    def _lost(self, quarantine: list[Quarantined], exc: StoreError) -> None:
        self.counters.unrecorded += len(quarantine)
        for item in quarantine:
            log.error("message on %s kept nowhere: the database refused its quarantine row"
                      " (%s); it was quarantined for: %s", shown(item.topic), exc, item.reason)

    @property
    def database_up(self) -> bool:
        """False from the first add that found the database unavailable to the next that passed."""
        return self._unavailable_since is None

    def lag(self) -> tuple[int, float]:
        """Messages received and not yet acknowledged, and the age of the oldest (seconds).

        The watchdog's probes are not counted: they wait in their turn, but are no table's.
        """
        waiting = [d for d in itertools.chain(self._pending, self._arrived) if not d.probe]
        if not waiting:
            return 0, 0.0
        return len(waiting), max(0.0, time.time() - waiting[0].received)

    async def _report_lag(self) -> None:
        """Every LAG_EVERY seconds while behind, a log line with the lag; one when caught up."""
        behind = False
        while True:
            await asyncio.sleep(LAG_EVERY)
            waiting, age = self.lag()
            if age >= LAG_BEHIND:
                behind = True
                why = " (the database is unavailable)" if self._unavailable_since else ""
                log.warning("behind: %d message(s) waiting, the oldest received %.0f s ago%s;"
                            " the broker keeps the rest of the session's queue",
                            waiting, age, why)
            elif behind:
                behind = False
                log.info("caught up: the oldest message not yet stored is %.1f s old (under"
                         " %.0f s); %d in the batch being stored", age, LAG_BEHIND, waiting)

    def _skip(self, reason: str) -> None:
        """Count a message rightly kept nowhere, by ``reason`` (:data:`SKIPPED_REASONS`)."""
        self.counters.skipped[reason] += 1

    def _count(
        self, result: AddResult, parsed: list[Received], quarantine: list[Quarantined]
    ) -> None:
        counters = self.counters
        counters.quarantined += result.quarantined
        counters.quarantined_by.update(q.cause for q in quarantine)
        counters.refused += sum(1 for q in quarantine if q.reason.startswith(REFUSED))
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


def _failed(task: asyncio.Task[None], client: MqttClient) -> None:
    """A connection's helper that failed (a fault of ours) ends the connection."""
    if not task.cancelled() and not isinstance(task.exception(), LinkError | None):
        client.drop(f"the recorder's {task.get_name()} failed")


def _quarantined(message: Received, reason: str) -> Quarantined:
    return Quarantined(
        message.topic, message.payload.encode(), reason, message.received, "database"
    )
