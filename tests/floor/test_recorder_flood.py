"""A flood of garbage on every topic the recorder reads: its memory and database stay bounded.

``baccarat record`` as a process, a real mosquitto run as a floor broker, a table's valid
messages among 64 kB garbage bodies on each of that table's topics (issue 32's repro, at a
test's scale: 2,000 bodies, 125 MiB, where the audit sent 60,000). Every garbage body is
counted in the quarantine by topic and cause, only the newest are kept, every valid message
is stored, and the recorder's resident memory and its database grow by a few MiB whatever
the volume, even when the flood was queued for it while it was stopped (bench/floor_hostile.py
runs the audit's 60,000).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import psutil
import pytest

from baccarat.floor.bodies import TOPIC_TYPES
from baccarat.floor.store import open_store
from floor.test_recorder import FLOOR_BROKER, RecorderProcess, recording
from support.mosquitto import Mosquitto

BODIES = 2000
SIZE = 64 * 1024
KEEP = 100
TOPICS = (*sorted(TOPIC_TYPES), "widgets")
"""Every topic the recorder reads of a table, and one it does not know."""


def database_bytes(path: Path) -> int:
    return sum(
        (path.parent / (path.name + suffix)).stat().st_size
        for suffix in ("", "-wal") if (path.parent / (path.name + suffix)).exists()
    )


def counts(path: Path) -> dict[tuple[str, str], int]:
    store = open_store(str(path))
    try:
        return store.quarantine_counts()
    finally:
        store.close()


def card(seq: int) -> bytes:
    return json.dumps({"schema": 1, "type": "card", "seq": seq, "ts": float(seq), "shoe": 1,
                       "round": seq, "position": "P1", "card": "9S"}).encode()


@pytest.mark.slow
@pytest.mark.timeout(300)
async def test_a_garbage_flood_on_every_topic_leaves_memory_and_disk_bounded(
    tmp_path: Path, mosquitto_factory: Any
) -> None:
    broker: Mosquitto = mosquitto_factory(persistence=True, extra_config=FLOOR_BROKER)
    db = tmp_path / "floor.db"
    recorder = RecorderProcess(tmp_path, broker, str(db))
    recorder.argv += ["--quarantine-keep", str(KEEP)]
    recorder.start()
    assert recorder.process is not None
    try:
        await recording(broker, str(db))
        process = psutil.Process(recorder.process.pid)
        rss_before = process.memory_info().rss
        db_before = database_bytes(db)
        peak = rss_before
        flooding = True

        async def sample() -> None:
            nonlocal peak
            while flooding:
                with contextlib.suppress(psutil.NoSuchProcess):
                    peak = max(peak, process.memory_info().rss)
                await asyncio.sleep(0.05)

        sampler = asyncio.create_task(sample())
        # The recorder is stopped while the flood comes (a slow disk, a busy machine): the
        # broker queues it all and then gives it as fast as the recorder's receive maximum
        # lets it, 1,000 bodies (64 MiB) at once; the recorder must take them in its bound.
        process.suspend()
        garbage = [b"\xff" + os.urandom(SIZE - 1) for _ in range(8)]
        sent: dict[str, int] = {}
        async with broker.client() as hostile, broker.client() as table:
            pending: list[Any] = []
            for n in range(BODIES):
                topic = f"baccarat/T5/{TOPICS[n % len(TOPICS)]}"
                sent[topic] = sent.get(topic, 0) + 1
                pending.append(hostile.publish(topic, garbage[n % len(garbage)], qos=1))
                if len(pending) == 20:
                    await asyncio.gather(*pending)
                    pending = []
                if n % 100 == 0:  # the table's own messages among the garbage
                    await table.publish("baccarat/T5/card", card(n // 100 + 1), qos=1)
            await asyncio.gather(*pending)
        process.resume()
        for _ in range(1200):
            if sum(counts(db).values()) >= BODIES:
                break
            await asyncio.sleep(0.1)
        flooding = False
        await sampler
        assert recorder.process.poll() is None
    finally:
        recorder.stop()
    found = counts(db)
    assert sum(found.values()) == BODIES, found
    by_topic: dict[str, int] = {}
    for (topic, cause), n in found.items():
        by_topic[topic] = by_topic.get(topic, 0) + n
        assert cause in ("size", "encoding", "topic"), (topic, cause)
    assert by_topic == sent
    with contextlib.closing(sqlite3.connect(db)) as connection:
        kept = connection.execute("SELECT COUNT(*) FROM quarantine").fetchone()
        cards = connection.execute("SELECT COUNT(*) FROM messages WHERE tbl = 'T5'").fetchone()
    assert kept[0] == KEEP
    assert cards[0] == BODIES // 100  # every valid message of the table stored
    growth = (peak - rss_before) / 2**20
    assert growth < 50, f"the recorder grew by {growth:.0f} MiB"
    db_growth = (database_bytes(db) - db_before) / 2**20
    assert db_growth < 8, f"the database grew by {db_growth:.1f} MiB"
    assert "Traceback" not in recorder.log()
