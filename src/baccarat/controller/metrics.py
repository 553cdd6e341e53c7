"""The table's metrics for Prometheus, on a loopback port (``[metrics] port``; off by default).

``GET /metrics`` on ``http://127.0.0.1:PORT`` answers in Prometheus' text format:

* the device link: ``baccarat_link_up`` (1 while the device talks), ``baccarat_link_state``
  (1 for the current state, by ``state``), the decoder's and the link's counters as
  ``baccarat_link_total{counter="frames_ok"}`` (bytes, frames, rejected bytes, CRC errors,
  duplicates, reconnects ...);
* the game: ``baccarat_cards_total`` (cards out of the shoe: burns and cards held aside
  included),
  ``baccarat_burned_total``, ``baccarat_results_total{winner=...}``,
  ``baccarat_void_rounds_total``, ``baccarat_alarms_total{kind=...}`` (raised) and
  ``baccarat_open_alarms{kind=...}`` (raised and not yet settled);
* the dealer's pace in the shoe in play (:mod:`baccarat.rules.pace`), labelled with its
  ``shoe``: ``baccarat_shoe_rounds`` (rounds ended), ``baccarat_shoe_seconds_per_round``
  and ``baccarat_shoe_rounds_per_hour`` (NaN until two rounds have ended);
* the journal: ``baccarat_journal_fdatasync_seconds`` (a histogram of each flush),
  ``baccarat_journal_last_record``;
* MQTT: ``baccarat_broker_connected``, ``baccarat_outbox_messages`` (waiting for the
  broker's acknowledgement), ``baccarat_outbox_dropped_total``,
  ``baccarat_published_total``, ``baccarat_broker_failures_total``,
  ``baccarat_commands_total``.

The game's figures are counted from the messages the engine produced since the daemon
started (the replay of the current shoe's journal file included), so they start again at
a restart, as Prometheus counters may. Everything is read on the event loop when the page
is asked for: no thread, nothing shared. The server (its connection cap and timeouts) is
:mod:`baccarat.metrics_http`, shared with the floor recorder.
"""

from __future__ import annotations

import math
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import Final, Protocol

from prometheus_client import CollectorRegistry, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from baccarat.controller.engine.inputs import DrawCard, Input
from baccarat.controller.journal.writer import Journal
from baccarat.controller.outbox import Outbox
from baccarat.controller.publisher import Publisher
from baccarat.drivers.source import DeviceSource
from baccarat.messages.bodies import (
    AlarmClearedMessage,
    AlarmMessage,
    CardMessage,
    Message,
    ResultMessage,
    VoidMessage,
)
from baccarat.metrics_http import serve_page
from baccarat.reconnect import LinkState
from baccarat.rules.pace import Pace, pace

FDATASYNC_BUCKETS: Final = (
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 5.0
)
"""Seconds, from a fast disk's flush to a failing one's; past 100 ms a card waits visibly
(docs/benchmarks.md, "The journal, the publisher and the table's input path", has the
flushes measured)."""


class MeasuredTable(Protocol):
    """What the metrics read of the table (:class:`baccarat.controller.table.Table`)."""

    device: DeviceSource | None
    journal: Journal
    publisher: Publisher
    outbox: Outbox


class MessageTally:
    """What the engine has taken and produced, counted from its inputs and messages."""

    def __init__(self) -> None:
        self.cards = 0
        self.burned = 0
        self.results: Counter[str] = Counter()
        self.void_rounds = 0
        self.alarms: Counter[str] = Counter()
        self.open_alarms: dict[int, str] = {}
        """Alarm id -> kind, for every alarm raised and not yet settled."""
        self.shoe: int | None = None
        """The shoe of the newest round that ended."""
        self.round_ends: dict[int, float] = {}
        """Round number -> when it ended (its first result or void), in that shoe."""

    def count(self, messages: Iterable[Message], inp: Input | None = None) -> None:
        """Add these messages, and the input they came of.

        Cards are counted as they come out of the shoe (the input), not as card messages:
        a card held aside by an alarm has none until it is burned, and a squeeze table's
        only once the round is revealed.
        """
        if isinstance(inp, DrawCard):
            self.cards += 1
        for message in messages:
            self._count(message)

    def _count(self, message: Message) -> None:
        if isinstance(message, CardMessage):
            self.burned += message.position == "burn"
        elif isinstance(message, ResultMessage):
            self.results[message.winner] += 1
            self._round_ended(message.shoe, message.round, message.ts)
        elif isinstance(message, VoidMessage):
            self.void_rounds += 1
            self._round_ended(message.shoe, message.round, message.ts)
        elif isinstance(message, AlarmMessage):
            self.alarms[message.kind] += 1
            if message.lasting:  # open until settled or its device recovers
                self.open_alarms[message.id] = message.kind
        elif isinstance(message, AlarmClearedMessage):
            self.open_alarms.pop(message.id, None)

    def _round_ended(self, shoe: int, number: int, ts: float | None) -> None:
        if shoe != self.shoe:
            self.shoe, self.round_ends = shoe, {}
        if ts is not None:
            self.round_ends.setdefault(number, ts)

    def pace(self) -> Pace | None:
        """The dealer's pace in the shoe of the newest round that ended, if it has one."""
        return pace(list(self.round_ends.values()))

    def open_by_kind(self) -> Counter[str]:
        """How many alarms of each kind are open."""
        return Counter(self.open_alarms.values())


class TableMetrics:
    """The registry of one table's metrics, read from the live table when scraped."""

    def __init__(self, table: MeasuredTable) -> None:
        self.registry = CollectorRegistry()
        self.tally = MessageTally()
        self.fdatasync = Histogram(
            "baccarat_journal_fdatasync_seconds",
            "Time of each fdatasync of a journal record.",
            buckets=FDATASYNC_BUCKETS,
            registry=self.registry,
        )
        self.registry.register(_TableCollector(table, self.tally))

    def timed_datasync(self, fd: int) -> None:
        """``os.fdatasync``, timed into the histogram."""
        started = time.perf_counter()
        try:
            os.fdatasync(fd)
        finally:
            self.fdatasync.observe(time.perf_counter() - started)

    def page(self) -> bytes:
        """The metrics in Prometheus' text format."""
        return generate_latest(self.registry)


class _TableCollector(Collector):
    def __init__(self, table: MeasuredTable, tally: MessageTally) -> None:
        self._table = table
        self._tally = tally

    def collect(self) -> Iterator[Metric]:
        yield from self._link()
        yield from self._game()
        yield from self._broker()

    def _link(self) -> Iterator[Metric]:
        device = self._table.device
        state = device.state if device is not None else LinkState.IDLE
        yield GaugeMetricFamily(
            "baccarat_link_up", "1 while the device is connected and talking.",
            value=float(state is LinkState.UP),
        )
        states = GaugeMetricFamily(
            "baccarat_link_state", "The device link's state (1 for the current one).",
            labels=["state"],
        )
        for each in LinkState:
            states.add_metric([each.value], float(each is state))
        yield states
        counters = CounterMetricFamily(
            "baccarat_link", "The device link's and decoder's counters.", labels=["counter"]
        )
        for name, value in sorted((device.counters if device is not None else {}).items()):
            counters.add_metric([name], float(value))
        yield counters

    def _game(self) -> Iterator[Metric]:
        tally = self._tally
        yield CounterMetricFamily(
            "baccarat_cards",
            "Cards out of the shoe, burn cards and cards held aside included.", value=tally.cards
        )
        yield CounterMetricFamily("baccarat_burned", "Cards burned.", value=tally.burned)
        yield _labelled(CounterMetricFamily, "baccarat_results", "Results published.",
                        "winner", tally.results, always=("banker", "player", "tie"))
        yield CounterMetricFamily(
            "baccarat_void_rounds", "Rounds made void (Art. 10).", value=tally.void_rounds
        )
        yield _labelled(CounterMetricFamily, "baccarat_alarms", "Alarms raised.",
                        "kind", tally.alarms)
        yield _labelled(GaugeMetricFamily, "baccarat_open_alarms",
                        "Alarms raised and not yet settled.", "kind", tally.open_by_kind())
        yield from self._pace()
        yield GaugeMetricFamily(
            "baccarat_journal_last_record", "The number of the journal's newest record.",
            value=self._table.journal.next_record - 1,
        )

    def _pace(self) -> Iterator[Metric]:
        tally = self._tally
        found = tally.pace()
        shoe = [str(tally.shoe if tally.shoe is not None else "")]
        figures = (
            ("baccarat_shoe_rounds", "Rounds ended (result or void) in the shoe.",
             float(len(tally.round_ends))),
            ("baccarat_shoe_seconds_per_round",
             "Mean seconds from one round's end to the next's in the shoe (NaN: fewer than"
             " two rounds ended).", found.seconds_per_round if found else math.nan),
            ("baccarat_shoe_rounds_per_hour", "Rounds an hour at the shoe's pace.",
             found.rounds_per_hour if found else math.nan),
        )
        for name, documentation, value in figures:
            metric = GaugeMetricFamily(name, documentation, labels=["shoe"])
            metric.add_metric(shoe, value)
            yield metric

    def _broker(self) -> Iterator[Metric]:
        publisher, outbox = self._table.publisher, self._table.outbox
        counters = publisher.counters
        yield GaugeMetricFamily(
            "baccarat_broker_connected", "1 while connected to the MQTT broker.",
            value=float(publisher.connected.is_set()),
        )
        yield GaugeMetricFamily(
            "baccarat_outbox_messages",
            "Messages waiting for the broker's acknowledgement.", value=len(outbox),
        )
        yield CounterMetricFamily(
            "baccarat_outbox_dropped", "Messages dropped because the outbox was full.",
            value=outbox.dropped,
        )
        yield CounterMetricFamily(
            "baccarat_published", "Messages the broker acknowledged.", value=counters.published
        )
        yield CounterMetricFamily(
            "baccarat_broker_failures", "Failed or lost broker connections.",
            value=counters.failures,
        )
        yield CounterMetricFamily(
            "baccarat_commands", "Operator commands received.", value=counters.commands
        )


def _labelled(
    family: Callable[..., CounterMetricFamily | GaugeMetricFamily],
    name: str,
    documentation: str,
    label: str,
    values: Counter[str],
    *,
    always: Iterable[str] = (),
) -> Metric:
    metric = family(name, documentation, labels=[label])
    for key in sorted(set(values) | set(always)):
        metric.add_metric([key], float(values.get(key, 0)))
    return metric


async def serve_metrics(metrics: TableMetrics, host: str, port: int) -> None:
    """Answer ``GET /metrics`` on ``host:port`` until cancelled (:mod:`baccarat.metrics_http`).

    A port that cannot be had is logged as an error and the table goes on without metrics:
    they are never a reason to stop dealing. At most ``MAX_CONNECTIONS`` are served at
    once, each for ``REQUEST_TIMEOUT`` at most.
    """
    await serve_page(metrics.page, host, port)
