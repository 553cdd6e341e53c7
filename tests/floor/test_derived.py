"""Derived views the recorder does not keep whole are made again byte for byte.

A real daemon deals a whole shoe from a virtual framed shoe, by a dealer who makes mistakes
of every kind and a pit who settles each alarm half a second later over MQTT (burning held
cards, declaring again, voiding rounds); a plain subscriber keeps every body the table
published (the truth); ``baccarat record`` stores it. Each ``roads``, ``round`` and
``recall`` body the table published is made again from what was stored at its ``seq`` and
compared with the truth, in the library and through ``baccarat history --rebuild``;
``--check`` finds no gap although most of them were not stored whole, and names one when
a fact is gone.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import aiomqtt

from baccarat.chain import split
from baccarat.floor.bodies import BODY_TYPES, DERIVED_TOPICS
from baccarat.floor.derived import VIEWS, rebuild_at, rebuilt
from baccarat.floor.store import open_store
from baccarat.sim_hardware.dealer import Dealer, Step
from baccarat.sim_hardware.virtual_shoe import VirtualShoe
from controller.engine.test_dealer_and_slow_pit import table_profile
from drivers.test_board_shows_the_table import PIT_DELAY, deal
from floor.test_recorder import DECKS, FLOOR_BROKER, RecorderProcess, recording
from support.daemon import Daemon
from support.mosquitto import Mosquitto
from support.slow_pit import a_slow_pit, dealt

SEED = 5
"""A shoe with held cards burned, a round voided and a result declared again."""


def test_every_derived_topic_has_a_view_that_makes_it_again() -> None:
    assert set(VIEWS) == DERIVED_TOPICS
    assert {"roads", "round", "recall"} <= DERIVED_TOPICS
    assert not {"alarms", "shoe", "card", "result", "void", "alarm"} & DERIVED_TOPICS
    assert all(BODY_TYPES[t].sequenced for t in DERIVED_TOPICS)


async def _truth(broker: Mosquitto, into: dict[int, tuple[str, bytes]], ready: asyncio.Event,
                 stop: asyncio.Event) -> None:
    async with aiomqtt.Client("127.0.0.1", broker.port, identifier="truth") as client:
        await client.subscribe("baccarat/T1/#", qos=1)
        ready.set()
        async for message in client.messages:
            topic = str(message.topic)
            # the engine's body: the table's chain member taken off (docs/record.md)
            payload, _ = split(bytes(message.payload))  # type: ignore[arg-type]
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


async def test_derived_views_rebuilt_from_the_facts_equal_what_the_table_published(
    tmp_path: Path, mosquitto_factory: Any, db_url: str
) -> None:
    broker: Mosquitto = mosquitto_factory(persistence=True, extra_config=FLOOR_BROKER)
    recorder = RecorderProcess(tmp_path, broker, db_url).start()
    await recording(broker, db_url)
    truth: dict[int, tuple[str, bytes]] = {}
    ready, stop = asyncio.Event(), asyncio.Event()
    listening = asyncio.create_task(_truth(broker, truth, ready, stop))
    await asyncio.wait_for(ready.wait(), 10)
    link = str(tmp_path / "shoe")
    dealer = Dealer.for_profile(table_profile("macau"), seed=SEED, mistake_rate=0.3)
    played: list[Step] = []
    async with VirtualShoe(link, "framed", baud=115200, dealer_ignores_alarms=False) as shoe:
        (tmp_path / "T1").mkdir()
        daemon = Daemon(tmp_path / "T1", broker, device=link, rules={"decks": DECKS},
                        open_mode=None)
        try:
            async with a_slow_pit(daemon, broker, PIT_DELAY):
                await dealt(deal(shoe, dealer, played), PIT_DELAY)
                last = max(truth)
                await _stored_up_to(db_url, last)
        finally:
            recorder.stop()
            stop.set()
            listening.cancel()
    assert sorted(truth) == list(range(1, last + 1))  # the truth saw every seq
    kinds = [topic for topic, _ in truth.values()]
    for needed in ("void", "result", "alarm"):  # not a clean shoe: alarms settled, a void
        assert needed in kinds, f"no {needed} in the shoe: nothing was tested"
    assert any(b'"by":"accept_as_burn"' in body for _, body in truth.values())
    views = {topic: {seq: body for seq, (kind, body) in truth.items() if kind == topic}
             for topic in VIEWS}
    assert all(len(views[topic]) >= 10 for topic in VIEWS)

    store = open_store(db_url)
    try:
        stored, places, latest = store.stored("T1"), store.derived("T1"), store.latest("T1")
    finally:
        store.close()
    assert {b["seq"] for b, _ in stored} | {p.seq for p in places} == set(truth)
    for topic in VIEWS:  # byte for byte, made again or kept whole
        made = dict(rebuilt(stored, places, topic))
        assert {seq: (body or "").encode() for seq, body in made.items()} == views[topic]
        kept_as_places = [p for p in places if p.topic == topic]
        assert len(kept_as_places) >= 0.8 * len(views[topic]), topic  # few kept whole
    newest = {topic: max(views[topic]) for topic in VIEWS}
    assert sorted((v.topic, v.seq, v.body.encode()) for v in latest) == sorted(
        (topic, seq, views[topic][seq]) for topic, seq in newest.items()
    )
    settled = next(seq for seq, (kind, body) in truth.items()
                   if kind == "alarm" and b'"alarm_cleared"' in body)
    assert rebuild_at(stored, places, "recall", settled + 1) == max(
        ((s, b.decode()) for s, b in views["recall"].items() if s <= settled + 1), default=None
    )

    def history(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "baccarat.cli", "history", "--db", db_url, *argv],
            capture_output=True, text=True, timeout=60, check=False,
        )

    for topic in VIEWS:
        some = sorted(views[topic])[len(views[topic]) // 2]
        shown = history("--table", "T1", "--rebuild", topic, "--at-seq", str(some))
        assert shown.returncode == 0, shown.stderr
        assert shown.stdout.encode() == views[topic][some] + b"\n"
    checked = history("--check")
    assert checked.returncode == 0, checked.stderr
    assert "seq missing" not in checked.stderr

    a_card = next(seq for seq, (topic, _) in truth.items()  # a dealt card, a round after it
                  if topic == "card" and truth[seq + 1][0] == "round")
    store = open_store(db_url)
    try:  # a fact lost: --check names its seq, and the places its row kept, and only them
        database = store._db  # type: ignore[attr-defined]  # noqa: SLF001 - damage on purpose
        cursor = database.cursor()
        cursor.execute(f"SELECT views FROM messages WHERE seq = {a_card}")
        (views,) = cursor.fetchone()
        kept = 0 if views is None else len(views.split(" "))
        cursor.execute(f"DELETE FROM messages WHERE seq = {a_card}")
        database.commit()
    finally:
        store.close()
    checked = history("--check")
    assert checked.returncode == 1
    gone = f"{a_card}-{a_card + kept}" if kept else f"{a_card}"
    assert f"T1: seq missing: {gone}\n" in checked.stderr
