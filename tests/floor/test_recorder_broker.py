"""``baccarat record`` and its broker: started before the broker, it waits with the backoff.

A real mosquitto (a floor broker: persistence, a whole queue per session) that is not
running yet when ``baccarat record`` starts as a process: the recorder says so once, tries
again with the package's backoff, and records what a table publishes once the broker is up.
Then the broker is stopped and started again under it, with messages published while the
recorder reconnects: every one is stored once.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from floor.test_recorder import FLOOR_BROKER, RecorderProcess, card_body, stored_by_table
from support.mosquitto import Mosquitto

WITHIN = 60.0
"""Seconds a condition may take, however loaded the machine."""


async def eventually(check: Any, what: str) -> None:
    deadline = time.monotonic() + WITHIN
    while not check():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.2)


async def test_a_recorder_started_before_its_broker_waits_and_then_records(
    tmp_path: Path, mosquitto_factory: Any
) -> None:
    broker: Mosquitto = mosquitto_factory(persistence=True, extra_config=FLOOR_BROKER)
    await asyncio.to_thread(broker.stop)
    db = str(tmp_path / "floor.db")
    recorder = RecorderProcess(tmp_path, broker, db).start()
    where = f"floor broker 127.0.0.1:{broker.port}: "
    try:
        await eventually(lambda: where in recorder.log(), "no word of the missing broker")
        await asyncio.sleep(3.0)  # more attempts, with the backoff (1 to 5 s)
        await asyncio.to_thread(broker.start)
        async with broker.client() as table:
            seq = 0
            while not stored_by_table(db):  # the recorder has subscribed, and stores
                seq += 1
                await table.publish("baccarat/T1/card", json.dumps(card_body(seq)), qos=1)
                await asyncio.sleep(0.2)
        first = min(stored_by_table(db)["T1"])  # those before it came before the session
        await asyncio.to_thread(broker.stop)  # and the broker goes away under it
        await eventually(lambda: recorder.log().count(where) >= 2, "the loss unsaid")
        await asyncio.to_thread(broker.start)
        async with broker.client() as table:  # queued in the recorder's session
            for n in range(seq + 1, seq + 21):
                await table.publish("baccarat/T1/card", json.dumps(card_body(n)), qos=1)
        last = seq + 20
        await eventually(lambda: last in stored_by_table(db).get("T1", {}), "not all stored")
    finally:
        code = recorder.stop()
    log = recorder.log()
    assert code == 0, log
    assert "Traceback" not in log
    assert sorted(stored_by_table(db)["T1"]) == list(range(first, last + 1))
    assert log.count(where) == 2, log  # once for each outage; the repeats at debug level
    assert log.count("recording baccarat/+/# from") == 2  # connected twice
    assert "(session resumed)" in log  # the second time, its session with the queue
