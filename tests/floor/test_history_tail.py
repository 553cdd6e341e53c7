"""``baccarat history --check --broker``: a missing tail is a newer seq the broker retains.

A real mosquitto, ``baccarat record`` as a process (SQLite and a private PostgreSQL
cluster), two tables published by a client as a daemon publishes them (``seq`` up by one,
``shoe``, ``round`` and ``recall`` retained). T1 goes idle and then says online again (it
reconnected): the old rule, a newest message older than the latest online status, flagged
it; it is not reported. T2's newest messages are not in the database (restored from an
older backup): reported, with the run of ``seq`` missing. With the recorder stopped while
T2 deals on, the tail is reported until the recorder is back and has stored it.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from typing import Any

from floor.test_recorder import FLOOR_BROKER, RecorderProcess, stored_by_table
from support.mosquitto import Mosquitto

WITHIN = 60.0
RETAINED = {"shoe", "round", "alarms", "roads", "recall"}


def body(table: str, seq: int, kind: str) -> dict[str, Any]:
    fields: dict[str, Any] = {"schema": 1, "type": kind, "seq": seq, "ts": 1_764_600_000.0 + seq,
                              "shoe": 1, "table": table}
    if kind == "card":
        fields |= {"round": seq, "position": "P1", "card": "9S"}
    elif kind == "round":
        fields |= {"round": seq, "phase": "dealing"}
    elif kind == "shoe":
        fields |= {"phase": "dealing"}
    elif kind == "recall":
        fields |= {"rounds": []}
    return fields


async def publish(client: Any, table: str, seq: int, kind: str) -> None:
    await client.publish(f"baccarat/{table}/{kind}", json.dumps(body(table, seq, kind)),
                         qos=1, retain=kind in RETAINED)


async def stored_up_to(db: str, table: str, seq: int) -> None:
    deadline = time.monotonic() + WITHIN
    while max(stored_by_table(db).get(table, {0: None})) < seq:
        assert time.monotonic() < deadline, f"{table} seq {seq} never stored"
        await asyncio.sleep(0.2)


def check(db: str, broker: Mosquitto) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "baccarat.cli", "history", "--db", db, "--check",
         "--broker", f"127.0.0.1:{broker.port}"],
        check=False, capture_output=True, text=True, timeout=90,
    )


def forget(db: str, table: str, seqs: list[int]) -> None:
    """Delete messages from the database, as a restore from an older backup would."""
    if db.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(db) as connection:
            for kept in KEPT:
                connection.execute(f"DELETE FROM {kept} WHERE tbl = %s AND seq = ANY(%s)",
                                   (table, seqs))
    else:
        import sqlite3

        with sqlite3.connect(db) as connection:
            for kept in KEPT:
                connection.executemany(f"DELETE FROM {kept} WHERE tbl = ? AND seq = ?",
                                       [(table, s) for s in seqs])
        connection.close()


KEPT = ("messages", "derived", "latest")
"""The tables that hold a message of a table by its seq (whole, as a place, as the latest)."""


SHOE = ["shoe", "round", "card", "card", "round", "recall"]
"""The kinds of seq 1, 2, ...: the tail (seq 5 and 6) is retained."""


async def test_an_idle_table_is_not_reported_and_a_lost_tail_is(
    tmp_path: Any, mosquitto_factory: Any, db_url: str
) -> None:
    broker: Mosquitto = mosquitto_factory(persistence=True, extra_config=FLOOR_BROKER)
    recorder = RecorderProcess(tmp_path, broker, db_url).start()
    try:
        async with broker.client() as tables:
            while not stored_by_table(db_url):  # the recorder has subscribed
                await publish(tables, "T0", 1, "card")
                await asyncio.sleep(0.2)
            for table in ("T1", "T2"):
                for seq, kind in enumerate(SHOE, start=1):
                    await publish(tables, table, seq, kind)
                await stored_up_to(db_url, table, len(SHOE))
            await asyncio.sleep(0.5)
            online = {"schema": 1, "type": "status", "state": "online", "table": "T1"}
            await tables.publish("baccarat/T1/status", json.dumps(online), qos=1, retain=True)
            await asyncio.sleep(1.0)  # T1 reconnected and idle: its status is the newest

            clean = await asyncio.to_thread(check, db_url, broker)
            assert clean.returncode == 0, clean.stderr
            assert "tail" not in clean.stderr

            await asyncio.to_thread(forget, db_url, "T2", [5, 6])
            lost = await asyncio.to_thread(check, db_url, broker)
            assert lost.returncode == 1, lost.stderr
            assert ("T2: tail missing: the broker holds baccarat/T2/recall seq 6, the database"
                    " seq 4: seq 5-6 not recorded") in lost.stderr
            assert "T1:" not in lost.stderr

            # the recorder away while T2 deals on: reported until it has stored the tail
            assert recorder.stop() == 0
            for seq in (7, 8):
                await publish(tables, "T2", seq, "card" if seq == 7 else "round")
            behind = await asyncio.to_thread(check, db_url, broker)
            assert "T2: tail missing: the broker holds baccarat/T2/round seq 8" in behind.stderr
            recorder.start()
            await stored_up_to(db_url, "T2", 8)
            caught_up = await asyncio.to_thread(check, db_url, broker)
            assert "tail missing" not in caught_up.stderr
            assert "T2: seq missing: 5-6" in caught_up.stderr  # the backup's loss, a gap now
    finally:
        recorder.stop()
    assert "Traceback" not in recorder.log()
