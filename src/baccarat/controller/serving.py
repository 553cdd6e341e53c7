"""The table's daemon running: its tasks, its start and its stop (``baccarat run``).

:class:`~baccarat.controller.table.Table` is what the table does with each input (the
journal, the engine, the outbox); :class:`TableRun` is its life as a process: the start's
recovery and the device opened, the tasks that publish, read the device, write the
positions and ping systemd, and the stop that drains the device and publishes what is
left; a journal that fails before the table serves is published as a fault and nothing
else runs. ``run_table`` is the daemon's entry point.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import signal
import sys
import time
from typing import Any, Final

from baccarat.chain import ChainError
from baccarat.controller import sdnotify
from baccarat.controller.config import Config
from baccarat.controller.device_inputs import open_device, watch_deaf
from baccarat.controller.faults import FAULT_EXIT, FAULT_TOPIC
from baccarat.controller.journal.reader import JournalError
from baccarat.controller.journal.writer import JournalLockedError
from baccarat.controller.metrics import serve_metrics
from baccarat.controller.outbox import OutMessage
from baccarat.controller.positions import CURSOR_INTERVAL, DEVICE_POSITION_INTERVAL
from baccarat.controller.publisher import status_payload
from baccarat.controller.seq_promise import retained_seq
from baccarat.controller.table import Table
from baccarat.drivers.codec import get_codec
from baccarat.drivers.source import DeviceSource

log = logging.getLogger("baccarat.daemon")

READY_TIMEOUT: Final = 5.0
"""Seconds to wait for the first device and broker attempts before READY=1."""
DEVICE_DRAIN_TIMEOUT: Final = 2.0
"""Seconds, on stop, to journal the events the device source has already read."""
DRAIN_TIMEOUT: Final = 3.0
"""Seconds, on stop, to publish what is still in the outbox."""
FAULT_REPORT_TIMEOUT: Final = 10.0
"""Seconds, after a journal fault, to reach the broker and hand it the fault, at most."""


class TableRun:
    """One run of a table's daemon: :meth:`serve` until stopped or a fault."""

    def __init__(self, table: Table) -> None:
        self.table = table

    async def serve(self, stop: asyncio.Event) -> None:
        """Run until ``stop`` is set or a fault; then publish what is left and say offline.

        A journal that cannot be opened or recovered is a fault too: the fault is then
        published (:meth:`_report_fault`) and nothing else runs.
        """
        table = self.table
        broker_seq = await retained_seq(
            table.config.broker, table.publisher.probe_client(), table.publisher.topic_base
        )
        try:
            table.recover(broker_seq)
        except JournalError as exc:
            table.seq_mark.close()
            table.journal.close()
            table.stop_on_fault(str(exc), locked=isinstance(exc, JournalLockedError))
            await self._report_fault(stop)
            return
        device = self._open_device()
        async with asyncio.TaskGroup() as group:
            publishing, others, reading = self._start_tasks(group, device)
            await _first(stop.wait(), table.fatal.wait())
            await self._stop_tasks(publishing, others, reading)
        self._write_positions()
        table.seq_mark.close()
        table.journal.close()

    def _open_device(self) -> DeviceSource | None:
        """After a good recovery: the device opened and told where to resume."""
        table = self.table
        # the journal is good: a fault a previous run left retained is over
        table.outbox.put(OutMessage(table.config.topic(FAULT_TOPIC), b"", retain=True))
        device = table.device = open_device(table.config.device)
        table.tell_device_alarms()  # those recovery left open, told once the port opens
        # What start-up made (modules, schemas, the replayed state) lives as long as the
        # process: keep the garbage collector's full passes off it, so that one of them
        # does not hold a card for milliseconds (docs/benchmarks.md, "What the kept speed-ups
        # are worth").
        gc.collect()
        gc.freeze()
        if device is None:
            table.device_tried.set()
        else:
            device.remember_sessions(table.device_sessions)
            if table.last_device_seq is not None:
                device.resume_after(table.last_device_seq, table.last_device_session,
                                    journal_lost=table.journal_loss is not None)
        return device

    def _start_tasks(
        self, group: asyncio.TaskGroup, device: DeviceSource | None
    ) -> tuple[list[asyncio.Task[None]], list[asyncio.Task[None]], asyncio.Task[None] | None]:
        """The table's tasks: those that publish, the others, and the device's reader."""
        table = self.table
        # the publisher and the cursor go on until what is left is published; the
        # others stop first (the device's reader once it has journaled what it read)
        publishing = [
            group.create_task(table.publisher.run(), name="publisher"),
            group.create_task(self._cursor_loop(), name="cursor"),
        ]
        others = [
            group.create_task(self._watchdog_loop(), name="watchdog"),
            group.create_task(self._ready(), name="ready"),
        ]
        if table.edge is not None:
            others.append(group.create_task(table.edge.run(), name="edge"))
        reading: asyncio.Task[None] | None = None
        if device is not None:
            reading = group.create_task(self._read_device(device), name="device")
            others.append(reading)
            quiet = table.device_log.watch_quiet(device, table.quiet_after)
            others.append(group.create_task(quiet, name="quiet"))
            if get_codec(table.config.device.protocol).resends_unacknowledged:
                deaf = watch_deaf(device, table.handle_own, table.now)
                others.append(group.create_task(deaf, name="deaf"))
        if table.metrics is not None:
            metrics = serve_metrics(table.metrics, table.config.metrics.host,
                                    table.config.metrics.port)
            others.append(group.create_task(metrics, name="metrics"))
        return publishing, others, reading

    async def _stop_tasks(
        self,
        publishing: list[asyncio.Task[None]],
        others: list[asyncio.Task[None]],
        reading: asyncio.Task[None] | None,
    ) -> None:
        """The device drained and closed, the others stopped, what is left published."""
        table = self.table
        log.info("stopping: closing the device")
        sdnotify.stopping(None if table.fault is None else f"journal fault: {table.fault}")
        if table.device is not None and reading is not None:
            await table.device.stop()  # the source ends after the events it has read:
            with contextlib.suppress(TimeoutError):  # a line shoe cannot send them again
                await asyncio.wait_for(asyncio.shield(reading), DEVICE_DRAIN_TIMEOUT)
        for task in others:
            task.cancel()
        await self._drain()
        table.publisher.stop()
        for task in publishing:
            task.cancel()
        log.info("stopping: waiting for the tasks")

    def _write_positions(self) -> None:
        """The cursor and the device's position written for the next start, if they can be."""
        table = self.table
        try:
            table.write_cursor()
            table.write_device_position()
        except OSError as exc:  # a hint only: a restart publishes more again, that is all
            level = logging.WARNING if table.fault is None else logging.DEBUG  # said already
            log.log(level, "cannot write %s: %s", table.positions.cursor_path,
                    exc.strerror or exc)

    async def _report_fault(self, stop: asyncio.Event) -> None:
        """The journal failed before the table served: publish the fault, boundedly.

        Only the broker link runs (and the watchdog): no device, and no command, since
        nothing can be recorded. ``stop`` (SIGTERM) cuts the wait short.
        """
        table = self.table
        table.publisher.take_no_commands()
        table.queue_fault()
        async with asyncio.TaskGroup() as group:
            tasks = [
                group.create_task(table.publisher.run(), name="publisher"),
                group.create_task(self._watchdog_loop(), name="watchdog"),
            ]
            await _first(self._wait_published(FAULT_REPORT_TIMEOUT), stop.wait())
            table.publisher.stop()
            for task in tasks:
                task.cancel()

    async def _read_device(self, device: DeviceSource) -> None:
        """Handle each device event; asking for the next one acknowledges it to the device.

        An input the journal cannot record ends the loop without asking for the next event,
        so the device is never told it was received; :meth:`handle` has already logged it
        and set :attr:`fatal`, which stops the daemon.
        """
        table = self.table
        async with device:
            try:
                async for event in device:
                    table.on_device_event(event)
            except JournalError:
                return

    async def _ready(self) -> None:
        """Say ``ready`` once the broker and the device have been tried (or after a while).

        The line names what the table still waits for (the device, the broker with its
        failed attempts and next try), and a later line says when all is reached.
        """
        table = self.table
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(READY_TIMEOUT):
                await table.publisher.first_attempt.wait()
                await table.device_tried.wait()
        sdnotify.ready(f"table {table.config.table}: serving")
        waiting = self.waiting_for()
        if not waiting:
            log.info("ready: table %s", table.config.table)
            return
        log.warning("ready: table %s, but waiting for %s", table.config.table,
                    " and ".join(waiting))
        while self.waiting_for():
            await table.publisher.connected.wait()
            await table.device_status.up.wait()
        log.info("ready: table %s: the device and the broker are reached", table.config.table)

    def waiting_for(self) -> list[str]:
        """What the table waits for: its device, its broker (with attempts and next try)."""
        table = self.table
        waiting = []
        if table.device_status.state == "waiting":
            waiting.append(f"the device {table.device_log.name}")
        publisher = table.publisher
        if not publisher.connected.is_set():
            where = f"the broker {table.config.broker.host}:{table.config.broker.port}"
            if publisher.attempts_failed:
                failed = publisher.attempts_failed
                where += f" ({failed} attempt{'s' if failed > 1 else ''} failed"
                if publisher.next_try is not None:
                    wait = max(publisher.next_try - time.monotonic(), 0.0)
                    where += f", next try in {wait:.1f} s"
                where += ")"
            waiting.append(where)
        return waiting

    async def _watchdog_loop(self) -> None:
        interval = sdnotify.watchdog_interval()
        if interval is None:
            return
        while True:  # pinged from the loop itself: a hung loop stops the pings
            sdnotify.watchdog_ping()
            await asyncio.sleep(interval)

    async def _cursor_loop(self) -> None:
        """Write the published cursor and (less often) the device position when they moved.

        A failed write is a fault.
        """
        table = self.table
        last = None
        last_handled = table.handled_device_seq
        since_device = 0.0
        while True:
            await asyncio.sleep(CURSOR_INTERVAL)
            table.check_clock()  # a clock stepped back while no input comes: an alarm too
            if table.outbox.acked_seq != last:
                last = table.outbox.acked_seq
                try:
                    table.write_cursor()
                except OSError as exc:
                    reason = f"cannot write {table.positions.cursor_path}: {exc.strerror or exc}"
                    table.stop_on_fault(reason)
                    return
            since_device += CURSOR_INTERVAL
            moved = table.handled_device_seq != last_handled
            if moved and since_device >= DEVICE_POSITION_INTERVAL:
                since_device = 0.0
                last_handled = table.handled_device_seq
                try:
                    table.write_device_position()
                except OSError as exc:
                    reason = f"cannot write {table.positions.device_path}: {exc.strerror or exc}"
                    table.stop_on_fault(reason)
                    return

    async def _drain(self) -> None:
        """Say offline (or the fault), and publish what is left, for a bounded time."""
        table = self.table
        if table.fault is None:
            offline = status_payload("offline", table.config.table, key=table.chain.public)
            table.outbox.put(OutMessage(table.publisher.status_topic, offline, retain=True))
            timeout = DRAIN_TIMEOUT
        else:
            table.queue_fault()
            timeout = FAULT_REPORT_TIMEOUT
        log.info("stopping: publishing what is left (at most %.0f s)", timeout)
        await self._wait_published(timeout)
        left = sum(1 for m in table.outbox if m.seq is not None)
        if left:
            log.warning("stopping: %d event(s) not yet published: they are journaled and will"
                        " be published at the next start", left)

    async def _wait_published(self, seconds: float) -> None:
        """Until the broker has acknowledged the outbox, at most ``seconds``."""
        table = self.table
        try:
            async with asyncio.timeout(seconds):
                await table.outbox.wait_empty()
        except TimeoutError:
            if table.fault is not None:
                log.warning("the broker did not take the fault within %.0f s", seconds)


async def _first(*waits: Any) -> None:
    """Until the first of these coroutines finishes; the others are cancelled."""
    tasks = [asyncio.ensure_future(w) for w in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()


async def run_table(config: Config) -> int:
    """Serve the table until SIGTERM or SIGINT; the exit status."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    try:
        table = Table(config)
    except ChainError as exc:  # a key that cannot be used: said plainly, no traceback
        log.critical("signing key: %s; the table does not start", exc)
        print(f"baccarat run: {exc}", file=sys.stderr)
        return 2
    await TableRun(table).serve(stop)
    return FAULT_EXIT if table.fault is not None else 0
