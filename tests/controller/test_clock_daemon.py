"""The real daemon with a wrong clock: behind its journal at start, stepped back while running.

At start, the journal is laid down with times a day in the future (the daemon's own
Journal writer, as a previous run on a right clock would have left it): the daemon's
clock reads a day earlier than the newest record, as a table computer without RTC reads
after a boot. While it runs, the daemon's clock is stepped back an hour by libfaketime
(Debian's faketime package, preloaded into the daemon process only; its monotonic clock
is left real), the way NTP or an operator steps a system clock. In both cases the alarm
must come, and the journal must keep its times in order.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from baccarat.controller.engine.inputs import NewShoe
from baccarat.controller.journal.writer import Journal
from support.daemon import Daemon, Recorder
from support.mosquitto import Mosquitto

LIBFAKETIME = Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1")
WITHIN = 15.0
DAY = 86_400.0


def journal_times(daemon: Daemon) -> list[float]:
    out = subprocess.run(
        [sys.executable, "-m", "baccarat.cli", "journal", "show", str(daemon.journal_files()[-1]),
         "--json"],
        capture_output=True, text=True, check=True,
    ).stdout
    return [json.loads(line)["ts"] for line in out.splitlines()]


def clock_alarms(board: Recorder) -> list[dict[str, Any]]:
    return [b for b in board.bodies("alarm") if b.get("kind") == "clock_behind"]


async def test_a_clock_behind_the_journal_at_start_is_an_alarm_and_time_goes_on(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    daemon = Daemon(tmp_path, mosquitto)
    future = round(time.time() + DAY, 6)
    journal = Journal(daemon.journal)
    journal.open()
    journal.append(NewShoe(ts=future))
    journal.close()
    try:
        async with Recorder(mosquitto) as board:
            await asyncio.to_thread(daemon.start)
            await board.wait_for(lambda b: bool(clock_alarms(b)), WITHIN)
            async with mosquitto.client() as pit:
                await pit.publish("baccarat/T1/cmd/demo", b'{"on": true}', qos=1)
            await board.wait_for(
                lambda b: any(r.get("command") == "demo" for r in b.bodies("reply")), WITHIN
            )
    finally:
        assert daemon.stop() == 0
    (alarm,) = clock_alarms(board)
    assert "before the last recorded time" in alarm["text"]
    assert alarm["ts"] >= future
    times = journal_times(daemon)
    assert times == sorted(times)  # the clock alarm and the command come after the shoe
    assert len(times) >= 3
    assert "clock: the system clock reads" in daemon.log()


@pytest.mark.skipif(not LIBFAKETIME.exists(), reason="needs Debian's faketime package")
async def test_a_clock_stepped_back_while_running_is_an_alarm(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    offset = tmp_path / "faketime"
    offset.write_text("+0\n")
    daemon = Daemon(tmp_path, mosquitto, env={
        "LD_PRELOAD": str(LIBFAKETIME),
        "FAKETIME_TIMESTAMP_FILE": str(offset),
        "FAKETIME_NO_CACHE": "1",
        "FAKETIME_DONT_FAKE_MONOTONIC": "1",
    })
    try:
        async with Recorder(mosquitto) as board, mosquitto.client() as pit:
            await asyncio.to_thread(daemon.start)
            await pit.publish("baccarat/T1/cmd/demo", b'{"on": true}', qos=1)
            await board.wait_for(lambda b: bool(b.bodies("reply")), WITHIN)
            assert not clock_alarms(board)
            offset.write_text("-3600\n")  # NTP, or an operator, steps the clock back an hour
            await board.wait_for(lambda b: bool(clock_alarms(b)), WITHIN)
            await pit.publish("baccarat/T1/cmd/demo", b'{"on": false}', qos=1)
            await board.wait_for(lambda b: len(b.bodies("reply")) >= 2, WITHIN)
    finally:
        assert daemon.stop() == 0
    (alarm,) = clock_alarms(board)
    assert "3600 s before the last recorded time" in alarm["text"]
    times = journal_times(daemon)
    assert times == sorted(times)
    assert times[-1] > time.time() - 600  # not an hour back: the order was kept
    assert os.environ.get("LD_PRELOAD") is None  # only the daemon was fooled
