"""The recorder's metrics for Prometheus (``baccarat record --metrics-port N``; off by default).

``GET /metrics`` on ``http://127.0.0.1:N`` (``--metrics-host`` to listen elsewhere), served
by the daemon's small server (:mod:`baccarat.metrics_http`: a capped number of connections,
each for a few seconds at most), answers:

* ``baccarat_recorder_received_total``, ``baccarat_recorder_stored_total`` (new messages
  committed), ``baccarat_recorder_duplicates_total``, ``baccarat_recorder_conflicts_total``;
* ``baccarat_recorder_quarantined_total{cause=...}``: bodies kept in the quarantine table,
  by the reason's class (``topic``, ``size``, ``encoding``, ``shape``, ``database``:
  :data:`baccarat.floor.bodies.CAUSES`);
* ``baccarat_recorder_statuses_total`` (retained statuses kept),
  ``baccarat_recorder_unrecorded_total`` (kept nowhere: their quarantine row refused too)
  and ``baccarat_recorder_skipped_total{reason=...}`` (rightly kept nowhere:
  :data:`baccarat.floor.recorder.SKIPPED_REASONS`): with the quarantined, every received
  message is one of these (``RecorderCounters.accounted``);
* ``baccarat_recorder_waiting_messages``: received from the broker, not yet committed (so
  not yet acknowledged), and ``baccarat_recorder_oldest_waiting_seconds``, the age of the
  oldest of them (0 when none waits): the lag;
* ``baccarat_recorder_database_up`` (0 from the first write that found the database
  unavailable until one passes again), ``baccarat_recorder_database_reconnects_total``,
  ``baccarat_recorder_store_failures_total`` (writes that found it unavailable);
* ``baccarat_recorder_broker_connected``, and ``baccarat_recorder_broker_stalls_total``:
  connections the watchdog found delivering nothing and left
  (:mod:`baccarat.floor.watchdog`).

The counters start again at a restart, as Prometheus counters may. Everything is read on
the event loop when the page is asked for.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from baccarat.floor.bodies import CAUSES
from baccarat.floor.recorder import SKIPPED_REASONS, Recorder


class RecorderMetrics:
    """The registry of the recorder's metrics, read from the live recorder when scraped."""

    def __init__(self, recorder: Recorder) -> None:
        self.registry = CollectorRegistry()
        self.registry.register(_RecorderCollector(recorder))

    def page(self) -> bytes:
        """The metrics in Prometheus' text format."""
        return generate_latest(self.registry)


class _RecorderCollector(Collector):
    def __init__(self, recorder: Recorder) -> None:
        self._recorder = recorder

    def collect(self) -> Iterator[Metric]:
        recorder = self._recorder
        counters = recorder.counters
        for name, text, value in (
            ("received", "Messages received from the broker.", counters.received),
            ("stored", "New messages committed to the database.", counters.stored),
            ("duplicates", "Messages stored before, received again.", counters.duplicates),
            ("conflicts", "Messages reusing a (table, seq) with another body.",
             counters.conflicts),
            ("statuses", "Retained statuses kept (no seq).", counters.statuses),
            ("unrecorded", "Messages kept nowhere: their quarantine row was refused too.",
             counters.unrecorded),
            ("database_reconnects", "Connections to the database made again.",
             counters.reconnects),
            ("store_failures", "Writes that found the database unavailable.",
             counters.store_failures),
            ("broker_stalls", "Broker connections that delivered nothing, the recorder's"
             " probe due back, and were left (the watchdog).", recorder.broker_stalls),
            ("pauses", "Times the recorder stopped reading the broker, behind with what it"
             " had received (its bound).", counters.pauses),
        ):
            yield CounterMetricFamily(f"baccarat_recorder_{name}", text, value=value)
        quarantined = CounterMetricFamily(
            "baccarat_recorder_quarantined", "Bodies kept in the quarantine table, by cause.",
            labels=["cause"],
        )
        for cause in sorted(set(CAUSES) | set(counters.quarantined_by)):
            quarantined.add_metric([cause], float(counters.quarantined_by.get(cause, 0)))
        yield quarantined
        skipped = CounterMetricFamily(
            "baccarat_recorder_skipped", "Messages rightly kept nowhere, by reason.",
            labels=["reason"],
        )
        for reason in sorted(set(SKIPPED_REASONS) | set(counters.skipped)):
            skipped.add_metric([reason], float(counters.skipped.get(reason, 0)))
        yield skipped
        waiting, age = recorder.lag()
        yield GaugeMetricFamily(
            "baccarat_recorder_waiting_messages",
            "Messages received and not yet committed (nor acknowledged).", value=waiting,
        )
        yield GaugeMetricFamily(
            "baccarat_recorder_oldest_waiting_seconds",
            "Age of the oldest message not yet committed (0 when none waits).", value=age,
        )
        yield GaugeMetricFamily(
            "baccarat_recorder_database_up", "1 while the database takes what is stored.",
            value=float(recorder.database_up),
        )
        yield GaugeMetricFamily(
            "baccarat_recorder_broker_connected", "1 while connected to the floor broker.",
            value=float(recorder.connected.is_set()),
        )
