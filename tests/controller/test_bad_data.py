"""The ``bad_data`` alarm: every rejected byte counted once, rate-limited on the monotonic clock.

A real :class:`~baccarat.controller.table.Table` with a real journal in a temporary folder;
the rate limit's clock is passed in (a counter the test moves), since the machine's clocks
cannot be stepped by a test. The wall clock is not read for the rate limit at all, so an
NTP step of it (an hour back) can neither silence the alarm nor hurry it.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from baccarat.controller.config import Config, JournalConfig
from baccarat.controller.device_inputs import BAD_DATA_INTERVAL, BadDataSummary
from baccarat.controller.table import Table
from baccarat.drivers.events import REJECTED_SAMPLE_MAX, Rejected


class SteppedClock:
    """A monotonic clock that moves only when the test says so."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def make_table(folder: Path, clock: SteppedClock) -> Table:
    config = Config(table="T1", journal=JournalConfig(folder=str(folder)))
    table = Table(config)
    table.recover()
    table.bad_data = BadDataSummary(clock)
    return table


def bad_data_texts(table: Table) -> list[str]:
    texts = []
    for message in table.outbox:
        body = json.loads(message.payload)
        if body.get("type") == "alarm" and body["kind"] == "bad_data":
            texts.append(body["text"])
    return texts


def noise(size: int) -> Rejected:
    data = bytes(range(256)) * (size // 256 + 1)
    return Rejected(data[: min(size, REJECTED_SAMPLE_MAX)], "not a card code", size=size)


async def test_each_alarm_counts_every_byte_rejected_since_the_last(tmp_path: Path) -> None:
    clock = SteppedClock()
    table = make_table(tmp_path / "journal", clock)
    try:
        table.on_device_event(noise(1000))  # more bytes than the event's sample holds
        assert bad_data_texts(table) == [
            "1000 byte(s) rejected (not a card code): "
            "00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f ..."
        ]
        table.on_device_event(noise(300))
        table.on_device_event(noise(5))
        assert len(bad_data_texts(table)) == 1  # within the interval: summed, not yet told
        clock.now += BAD_DATA_INTERVAL
        table.on_device_event(noise(7))
        second = bad_data_texts(table)[1]
        assert second.startswith("312 byte(s) rejected (3 pieces, first not a card code)")
    finally:
        table.journal.close()


async def test_the_summed_alarm_comes_when_the_interval_is_over(tmp_path: Path) -> None:
    clock = SteppedClock()
    table = make_table(tmp_path / "journal", clock)
    try:
        table.on_device_event(noise(10))
        clock.now += 0.2
        table.on_device_event(noise(20))  # due in 0.8 s of the monotonic clock
        await asyncio.sleep(BAD_DATA_INTERVAL + 0.5)  # the loop's timer: monotonic too
        assert [t.split(" (")[0] for t in bad_data_texts(table)] == [
            "10 byte(s) rejected", "20 byte(s) rejected"
        ]
    finally:
        table.journal.close()


def test_the_rate_limit_reads_only_the_monotonic_clock_it_is_given() -> None:
    """What an hour's step of the wall clock would do to a limit on it, done to this clock."""
    clock = SteppedClock()
    summary = BadDataSummary(clock)
    assert summary.add(noise(1)) <= 0  # the first one is told at once
    assert summary.take() is not None
    clock.now += BAD_DATA_INTERVAL
    assert summary.add(noise(1)) <= 0  # an interval later: told at once, whatever the date
    assert summary.take() == "1 byte(s) rejected (not a card code): 00"
    assert 0 < summary.add(noise(1)) <= BAD_DATA_INTERVAL  # at once again: waits, never longer
