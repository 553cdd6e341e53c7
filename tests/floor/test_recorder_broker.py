"""``baccarat record`` and its broker: started before the broker, it waits with the backoff.

A real mosquitto (a floor broker: persistence, a whole queue per session) that is not
running yet when ``baccarat record`` starts as a process: the recorder says so once, tries
again with the package's backoff, and records what a table publishes once the broker is up.
Then the broker is stopped and started again under it, with messages published while the
recorder reconnects: every one is stored once.

And a broker that stops delivering to the recorder's session while the link looks well
(a proxy between them drops the broker's PUBLISH packets and passes the rest, pings
included): the recorder's watchdog says so, counts it in its metrics and reconnects, and
every message published meanwhile is stored once, from the session's queue. A quiet floor
(no table publishing) first, longer than the watchdog's timeout, raises nothing.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from baccarat.floor.recorder import BrokerAddress, Recorder, RecorderFailedError
from baccarat.floor.store import open_store
from floor.test_recorder import (
    FLOOR_BROKER,
    RecorderProcess,
    card_body,
    recording,
    stored_by_table,
)
from floor.test_recorder_metrics import scraped, value
from support.mosquitto import Mosquitto
from support.mqtt_proxy import MqttProxy
from support.postgres import _free_port

WITHIN = 60.0
"""Seconds a condition may take, however loaded the machine."""


async def eventually(check: Any, what: str, within: float = WITHIN) -> None:
    deadline = time.monotonic() + within
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


STALL_TIMEOUT = 5.0
"""The recorder's --stall-timeout in the watchdog test (60 s by default)."""
STALL_LINE = "nothing delivered for"


@pytest.mark.timeout(300)
async def test_a_broker_that_stops_delivering_is_left_by_the_watchdog_and_nothing_is_lost(
    tmp_path: Path, mosquitto_factory: Any
) -> None:
    broker: Mosquitto = mosquitto_factory(persistence=True, extra_config=FLOOR_BROKER)
    proxy = await MqttProxy(broker.host, broker.port).start()
    db = str(tmp_path / "floor.db")
    metrics = _free_port()
    recorder = RecorderProcess(tmp_path, broker, db)
    recorder.argv[recorder.argv.index("--broker") + 1] = f"127.0.0.1:{proxy.port}"
    recorder.argv += ["--stall-timeout", str(STALL_TIMEOUT), "--metrics-port", str(metrics)]
    recorder.start()
    try:
        await recording(broker, db)  # subscribed, through the proxy
        await asyncio.sleep(3 * STALL_TIMEOUT)  # a quiet floor: the probes come back
        assert STALL_LINE not in recorder.log()
        proxy.stall()  # from now on the broker's deliveries on this connection are lost
        async with broker.client() as table:
            for seq in range(1, 21):
                await table.publish("baccarat/T1/card", json.dumps(card_body(seq)), qos=1)
        await eventually(lambda: len(stored_by_table(db).get("T1", {})) == 20, "not all stored",
                         within=120.0)
        samples = await scraped(metrics)
    finally:
        code = recorder.stop()
        await proxy.close()
    log = recorder.log()
    assert code == 0, log
    assert "Traceback" not in log
    assert proxy.dropped > 0  # the connection did stall: the broker delivered into the void
    assert log.count(STALL_LINE) == 1, log
    assert value(samples, "broker_stalls_total") == 1.0
    assert proxy.connections == 2  # the stalled connection, then the new one
    assert "(session resumed)" in log
    assert sorted(stored_by_table(db)["T1"]) == list(range(1, 21))


async def test_a_failing_task_ends_the_recorder_with_its_error(
    tmp_path: Path, mosquitto_factory: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Not a recorder left running without the task that stores (it would store nothing)."""
    broker: Mosquitto = mosquitto_factory(persistence=True, extra_config=FLOOR_BROKER)

    async def broken_watch(received: list[Any]) -> list[tuple[str, bytes]]:
        raise RuntimeError("a fault of ours in the shuffle check")

    store = open_store(str(tmp_path / "floor.db"))
    recorder = Recorder(BrokerAddress(port=broker.port), store, watch=broken_watch)
    stop = asyncio.Event()
    try:
        running = asyncio.create_task(recorder.run(stop))
        await asyncio.wait_for(recorder.connected.wait(), WITHIN)
        async with broker.client() as table:
            await table.publish("baccarat/T1/card", json.dumps(card_body(1)), qos=1)
        with pytest.raises(RecorderFailedError, match="recorder-store") as failed:
            await asyncio.wait_for(running, WITHIN)
    finally:
        stop.set()
        store.close()
    assert isinstance(failed.value.__cause__, RuntimeError)
    assert "the recorder's task recorder-store ended" in caplog.text


@pytest.mark.parametrize("queued", [1_000_000, 0])
async def test_a_broker_that_refuses_the_probe_says_so_and_the_recorder_records(
    tmp_path: Path, mosquitto_factory: Any, queued: int
) -> None:
    """An ACL without the probe's grant: an error that names it, no watchdog, no stall.

    With a bounded queue (floor.conf's) mosquitto refuses the probe in its PUBACK; with
    ``max_queued_messages 0`` it closes the connection instead (mosquitto 2.0.11), twice,
    and the recorder goes on without the watchdog rather than reconnecting for ever.
    """
    acl = ("user baccarat-recorder\ntopic read baccarat/#\n"
           "user table\ntopic write baccarat/#\n")
    broker: Mosquitto = mosquitto_factory(
        persistence=True, anonymous=False, acl=acl,
        extra_config=f"max_queued_messages {queued}\nmax_inflight_messages 100\n",
        users={"baccarat-recorder": "r-secret", "table": "t-secret"},
    )
    (tmp_path / "password").write_text("r-secret\n")
    db = str(tmp_path / "floor.db")
    recorder = RecorderProcess(tmp_path, broker, db)
    recorder.argv += ["--username", "baccarat-recorder", "--password-file",
                      str(tmp_path / "password"), "--stall-timeout", "2"]
    recorder.start()
    said = "no broker watchdog on this connection" if queued else "no broker watchdog from now on"
    try:
        await eventually(lambda: said in recorder.log(), "the refusal unsaid")
        async with broker.client(username="table", password="t-secret") as table:
            for seq in range(1, 6):
                await table.publish("baccarat/T1/card", json.dumps(card_body(seq)), qos=1)
        await eventually(lambda: len(stored_by_table(db).get("T1", {})) == 5, "not stored")
        await asyncio.sleep(3 * 2.0)  # longer than the timeout: no probe, so no stall
    finally:
        code = recorder.stop()
    log = recorder.log()
    assert code == 0, log
    assert "baccarat/floor/probe" in log  # the error names the topic the ACL must grant
    assert log.count("no broker watchdog") == 1, log
    assert log.count("recording baccarat/+/# from") == (1 if queued else 3), log
    assert STALL_LINE not in log
