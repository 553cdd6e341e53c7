"""``baccarat record --metrics-port``: the lag and the counters, scraped from the real process.

A real mosquitto, ``baccarat record`` as a process, and a private PostgreSQL cluster that is
stopped in the middle: while it is away the endpoint says messages wait, the oldest ages,
the database is down; once it is back everything is stored once and nothing waits. The
broker watchdog (on a 2 s timeout here) takes the database's absence for no broker stall.
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from floor.test_recorder import (
    FLOOR_BROKER,
    RecorderProcess,
    RestartablePostgres,
    card_body,
    stored_by_table,
)
from support.mosquitto import Mosquitto
from support.postgres import _free_port

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(port: int) -> Samples:
    """Every sample of the page, by name and labels."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as answer:
        assert answer.status == 200
        text = answer.read().decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples[(f"baccarat_recorder_{name}", tuple(sorted(labels.items())))]


async def scraped(port: int) -> Samples:
    return await asyncio.to_thread(scrape, port)


async def eventually(port: int, check: Any, within: float = 30.0) -> Samples:
    """Scrape until ``check(samples)`` holds."""
    deadline = time.monotonic() + within
    while True:
        samples = await scraped(port)
        if check(samples):
            return samples
        assert time.monotonic() < deadline, samples
        await asyncio.sleep(0.3)


@pytest.mark.slow
@pytest.mark.timeout(180)
async def test_the_lag_is_scraped_through_a_postgresql_outage(
    tmp_path: Path, mosquitto_factory: Any
) -> None:
    broker: Mosquitto = mosquitto_factory(persistence=True, extra_config=FLOOR_BROKER)
    cluster = RestartablePostgres().start()
    try:
        db = cluster.new_database()
        port = _free_port()
        recorder = RecorderProcess(tmp_path, broker, db)
        recorder.argv += ["--metrics-port", str(port), "--stall-timeout", "2"]
        recorder.start()
        try:
            async with broker.client() as table:
                while not stored_by_table(db):  # the recorder has subscribed
                    await table.publish("baccarat/T1/card", json.dumps(card_body(1)), qos=1)
                    await asyncio.sleep(0.2)
                samples = await eventually(port, lambda s: value(s, "stored_total") >= 1)
                assert value(samples, "database_up") == 1
                assert value(samples, "waiting_messages") == 0
                assert value(samples, "oldest_waiting_seconds") == 0
                assert value(samples, "broker_connected") == 1
                for cause in ("topic", "size", "encoding", "shape", "database"):
                    assert value(samples, "quarantined_total", cause=cause) == 0

                await table.publish("baccarat/T1/card", b"not json", qos=1)
                await table.publish("baccarat/T1/gadget", json.dumps(card_body(99)), qos=1)
                await eventually(
                    port, lambda s: value(s, "quarantined_total", cause="encoding") == 1
                    and value(s, "quarantined_total", cause="topic") == 1,
                )

                await asyncio.to_thread(cluster.stop)
                for seq in range(2, 51):
                    await table.publish("baccarat/T1/card", json.dumps(card_body(seq)), qos=1)
                down = await eventually(
                    port, lambda s: value(s, "database_up") == 0
                    and value(s, "waiting_messages") == 49,
                )
                assert value(down, "oldest_waiting_seconds") > 0
                await asyncio.sleep(2.0)
                later = await scraped(port)
                assert value(later, "database_up") == 0
                assert value(later, "waiting_messages") == 49  # nothing acknowledged
                assert (
                    value(later, "oldest_waiting_seconds")
                    >= value(down, "oldest_waiting_seconds") + 1.5
                )
                assert value(later, "stored_total") == value(down, "stored_total")

                await asyncio.to_thread(cluster.restart)
                back = await eventually(
                    port, lambda s: value(s, "database_up") == 1
                    and value(s, "waiting_messages") == 0, within=60.0,
                )
                assert value(back, "oldest_waiting_seconds") == 0
                assert value(back, "stored_total") == 50
                assert value(back, "database_reconnects_total") >= 1
                assert value(back, "store_failures_total") >= 1
                assert value(back, "quarantined_total", cause="encoding") == 1
                assert value(back, "broker_stalls_total") == 0  # a database away is no stall
        finally:
            code = recorder.stop()
        assert sorted(stored_by_table(db)["T1"]) == list(range(1, 51))
        assert code == 0
        assert "Traceback" not in recorder.log()
        assert "recorder metrics on http://127.0.0.1:" in recorder.log()
    finally:
        cluster.close()
