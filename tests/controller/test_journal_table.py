"""A daemon given another table's journal folder refuses it.

The real daemon process and a real mosquitto: table T04 records a shoe; a daemon
configured as T05 and pointed at T04's folder by mistake replayed T04's inputs and
published T04's state as T05's. It stops with the journal fault instead (exit status 3,
said on T05's topics), and T04's journal is left as it was.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from baccarat.controller.faults import FAULT_EXIT
from support.daemon import Daemon, Recorder
from support.mosquitto import Mosquitto

WITHIN = 15.0
"""Seconds any one step may take before the test fails."""


async def test_a_daemon_given_another_tables_journal_refuses_to_start(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    t04 = Daemon(tmp_path, mosquitto, table="T04")
    try:
        async with Recorder(mosquitto, table="T04") as board, mosquitto.client() as pit:
            await asyncio.to_thread(t04.start)
            await pit.publish("baccarat/T04/cmd/shoe", b"{}", qos=1)
            await board.wait_for(lambda b: bool(b.bodies("shoe")), WITHIN)
            assert await asyncio.to_thread(t04.stop) == 0
    finally:
        t04.close()
    recorded = {path: path.read_bytes() for path in t04.journal_files()}

    t05 = Daemon(tmp_path, mosquitto, table="T05")  # the same folder, by mistake
    try:
        async with Recorder(mosquitto, table="T05") as board:
            await asyncio.to_thread(t05.start, wait_ready=False)
            exit_status = await asyncio.to_thread(t05.wait, WITHIN + 10)
            log = t05.log()
            await board.wait_for(lambda b: bool(b.bodies("fault")), WITHIN)
    finally:
        t05.close()
    assert exit_status == FAULT_EXIT, log
    (line,) = [line for line in log.splitlines() if "CRITICAL" in line]
    assert "belongs to table T04" in line
    assert "not to T05" in line
    assert "Traceback" not in log
    (fault,) = [b for t, b in board.received if t.endswith("/alarm") and b["type"] == "fault"]
    assert "belongs to table T04" in fault["text"]
    assert board.bodies("shoe") == []  # nothing of T04's published as T05's
    assert {s["state"] for s in board.bodies("status")} == {"offline"}
    assert {path: path.read_bytes() for path in t05.journal_files()} == recorded
