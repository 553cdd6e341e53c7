"""Derived views the recorder does not keep whole are made again byte for byte.

A real daemon deals a whole shoe from a virtual framed shoe; a plain subscriber keeps
every body the table published (the truth); ``baccarat record`` stores it. Each ``roads``
body the table published is made again from the stored facts at its ``seq`` and compared
with the truth, in the library and through ``baccarat history --rebuild``; ``--check``
finds no gap although no roads body was stored, and names one when a fact is gone.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import aiomqtt

from baccarat.floor.bodies import BODY_TYPES, DERIVED_TOPICS
from baccarat.floor.derived import VIEWS, rebuild_at, rebuilt
from baccarat.floor.store import open_store
from baccarat.sim_hardware.virtual_shoe import VirtualShoe
from floor.test_recorder import DECKS, FLOOR_BROKER, RecorderProcess, deal_shoe
from support.daemon import Daemon
from support.mosquitto import Mosquitto


def test_every_derived_topic_has_a_view_that_makes_it_again() -> None:
    assert set(VIEWS) == DERIVED_TOPICS
    assert {"roads"} <= DERIVED_TOPICS
    assert not {"alarms", "shoe", "card", "result", "void", "alarm"} & DERIVED_TOPICS
    assert all(BODY_TYPES[t].sequenced for t in DERIVED_TOPICS)


async def _truth(broker: Mosquitto, into: dict[int, tuple[str, bytes]], ready: asyncio.Event,
                 stop: asyncio.Event) -> None:
    async with aiomqtt.Client("127.0.0.1", broker.port, identifier="truth") as client:
        await client.subscribe("baccarat/T1/#", qos=1)
        ready.set()
        async for message in client.messages:
            topic = str(message.topic)
            payload = bytes(message.payload)  # type: ignore[arg-type]
            if topic.rsplit("/", 1)[-1] in BODY_TYPES and b'"seq"' in payload:
                seq = int(payload.split(b'"seq":', 1)[1].split(b",", 1)[0])
                into[seq] = (topic.rsplit("/", 1)[-1], payload)
            if stop.is_set():
                return


async def _stored_up_to(db: str, seq: int, within: float = 60.0) -> None:
    for _ in range(int(within * 2)):
        store = open_store(db)
        try:
            if any(s == seq for _, s in store.seqs("T1")):
                return
        finally:
            store.close()
        await asyncio.sleep(0.5)
    raise AssertionError(f"seq {seq} never stored")


async def test_roads_rebuilt_from_the_facts_equal_what_the_table_published(
    tmp_path: Path, mosquitto_factory: Any, db_url: str
) -> None:
    broker: Mosquitto = mosquitto_factory(persistence=True, extra_config=FLOOR_BROKER)
    recorder = RecorderProcess(tmp_path, broker, db_url).start()
    truth: dict[int, tuple[str, bytes]] = {}
    ready, stop = asyncio.Event(), asyncio.Event()
    listening = asyncio.create_task(_truth(broker, truth, ready, stop))
    await asyncio.wait_for(ready.wait(), 10)
    link = str(tmp_path / "shoe")
    async with VirtualShoe(link, "framed", baud=115200) as shoe:
        (tmp_path / "T1").mkdir()
        daemon = Daemon(tmp_path / "T1", broker, device=link, rules={"decks": DECKS})
        try:
            await asyncio.to_thread(daemon.start)
            await deal_shoe(shoe, seed=11)
            await asyncio.sleep(2.0)
            last = max(truth)
            await _stored_up_to(db_url, last)
        finally:
            daemon.close()
            recorder.stop()
            stop.set()
            listening.cancel()
    assert sorted(truth) == list(range(1, last + 1))  # the truth saw every seq
    roads = {seq: body for seq, (topic, body) in truth.items() if topic == "roads"}
    assert len(roads) >= 10

    store = open_store(db_url)
    try:
        facts, derived = store.facts("T1"), store.derived("T1")
        latest = store.latest("T1")
        stored_seqs = {b["seq"] for b in facts}
    finally:
        store.close()
    assert not stored_seqs & set(roads)  # no roads body is stored as a message
    assert {d.seq for d in derived} == set(roads)
    assert [(v.topic, v.seq, v.body.encode()) for v in latest] == [
        ("roads", max(roads), roads[max(roads)])
    ]
    made = dict(rebuilt(facts, derived, "roads"))
    assert {seq: body.encode() for seq, body in made.items()} == roads  # byte for byte
    some = sorted(roads)[len(roads) // 2]
    assert rebuild_at(facts, derived, "roads", some + 1) == (some, roads[some].decode())

    def history(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "baccarat.cli", "history", "--db", db_url, *argv],
            capture_output=True, text=True, timeout=60, check=False,
        )

    shown = history("--table", "T1", "--rebuild", "roads", "--at-seq", str(some))
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.encode() == roads[some] + b"\n"
    checked = history("--check")
    assert checked.returncode == 0, checked.stderr
    assert "seq missing" not in checked.stderr

    a_card = next(seq for seq, (topic, _) in truth.items() if topic == "card")
    store = open_store(db_url)
    try:  # a fact lost: --check names its seq, and only it
        database = store._db  # type: ignore[attr-defined]  # noqa: SLF001 - damage on purpose
        database.cursor().execute(f"DELETE FROM messages WHERE seq = {a_card}")
        database.commit()
    finally:
        store.close()
    checked = history("--check")
    assert checked.returncode == 1
    assert f"T1: seq missing: {a_card}\n" in checked.stderr
