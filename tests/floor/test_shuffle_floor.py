"""The floor-wide shuffle check: a shoe carried from one table to another.

The check on a real store (SQLite and a private PostgreSQL cluster), fed what the
recorder stores; then end to end: two real daemons with framed shoes on ptys, a real
mosquitto and ``baccarat record`` as a process, which publishes the finding on the floor's
own topic, never a table's.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import aiomqtt

from baccarat.cards import Card, shuffled_shoe
from baccarat.floor import shuffle_store
from baccarat.floor.shuffle import FloorShuffle
from baccarat.floor.store import Received, Store, open_store
from baccarat.sim_hardware.dealer import Dealer
from baccarat.sim_hardware.virtual_shoe import VirtualShoe
from controller.test_shuffle_daemon import first_cards
from floor.test_recorder import RecorderProcess
from support.daemon import Daemon
from support.mosquitto import Mosquitto

DAY = 86_400.0
T0 = 1_750_000_000.0


class Table:
    """Card messages as a table publishes them: seq up by one, a shoe number, a time."""

    def __init__(self, name: str) -> None:
        self.name, self.seq, self.shoe = name, 0, 0

    def shoe_of(self, cards: list[Card | None], start: float) -> list[Received]:
        self.shoe += 1
        return [self.card(c, start + n) for n, c in enumerate(cards)]

    def card(self, card: Card | str | None, ts: float) -> Received:
        self.seq += 1
        code = card.code if isinstance(card, Card) else card
        body = {"schema": 1, "seq": self.seq, "ts": ts, "type": "card", "shoe": self.shoe,
                "round": 1, "position": "P1", "card": code, "face_up": False,
                "player_total": None, "banker_total": None, "demo": False}
        topic = f"baccarat/{self.name}/card"
        return Received(self.name, topic, body, json.dumps(body), ts)


def two_shoes() -> tuple[list[Card | None], list[Card | None]]:
    first: list[Card | None] = list(shuffled_shoe(8, 21))
    second: list[Card | None] = list(shuffled_shoe(8, 22))
    second[39:59] = first[119:139]
    return first, second


def feed(check: FloorShuffle, store: Store, messages: list[Received]) -> list[tuple[int, Any]]:
    """Store them as the recorder does and give them to the check, card by card."""
    found = []
    for n, message in enumerate(messages, 1):
        store.add([message])
        found += [(n, f) for f in asyncio.run(check.stored([message]))]
    return found


def test_a_second_tables_shoe_repeating_the_first_is_found_by_card_49(store: Store) -> None:
    first, second = two_shoes()
    check = FloorShuffle(store, hours=24, shoes=100)
    check.load(T0)
    one, two = Table("T1"), Table("T2")
    assert feed(check, store, one.shoe_of(first, T0)) == []
    [(card, (topic, payload))] = feed(check, store, two.shoe_of(second[:80], T0 + 500))
    assert card == 49
    assert topic == "baccarat/floor/surveillance"
    body = json.loads(payload)
    assert body["table"] == "T2"
    assert body["earlier"] == {"table": "T1", "shoe": 1, "first": 120, "last": 129}
    assert (body["shoe"], body["first"], body["last"], body["gap"]) == (1, 40, 49, None)
    assert shuffle_store.findings(store) == [body]  # kept, on either database


def test_the_days_shoes_are_read_back_at_start(store: Store) -> None:
    first, second = two_shoes()
    check = FloorShuffle(store, shoes=100)
    check.load(T0)
    one, two = Table("T1"), Table("T2")
    feed(check, store, one.shoe_of(first, T0))
    old = Table("T3")
    feed(check, store, old.shoe_of(list(shuffled_shoe(8, 23)), T0 - 2 * DAY))  # yesterday's
    again = FloorShuffle(store, shoes=100)  # the recorder restarted
    assert again.load(T0 + 1000) == len(first)  # T3's shoe is older than a day
    found = feed(again, store, two.shoe_of(second[:60], T0 + 1000))
    assert [(n, json.loads(p)["earlier"]["table"]) for n, (_, p) in found] == [(49, "T1")]


def test_duplicates_late_cards_and_bad_codes_change_nothing(store: Store) -> None:
    first, second = two_shoes()
    check = FloorShuffle(store, shoes=100)
    check.load(T0)
    one, two = Table("T1"), Table("T2")
    messages = one.shoe_of(first, T0)
    feed(check, store, messages)
    assert asyncio.run(check.stored(messages[100:200])) == []  # again, after a reconnection
    assert check.skipped == 100
    stream = two.shoe_of(second[:45], T0 + 500)
    stream.append(two.card("ZZ", T0 + 600))  # no card: a gap, as an unreadable card is
    stream += [two.card(c, T0 + 601 + n) for n, c in enumerate(second[46:70])]
    found = feed(check, store, stream)
    [(card, (_, payload))] = found
    assert card == 50  # one gap: 10 alike by the fiftieth card
    assert json.loads(payload)["gap"] == {"kind": "different", "position": 46}


def test_an_honest_floor_raises_nothing(store: Store) -> None:
    check = FloorShuffle(store, shoes=200)
    check.load(T0)
    tables = [Table(f"T{n}") for n in range(20)]
    messages = []
    for shoe in range(5):
        for n, table in enumerate(tables):
            messages += table.shoe_of(list(shuffled_shoe(8, 1000 * shoe + n)), T0 + shoe * 3600)
    store.add(messages)
    assert asyncio.run(check.stored(messages)) == []
    assert check.index.cards_held() == 100 * 416


# ---------------------------------------------------------------- end to end


def subscribed(recorder: RecorderProcess, within: float = 60) -> None:
    """Until the recorder's log says it has subscribed."""
    deadline = time.monotonic() + within
    while "recording baccarat/+/#" not in recorder.log():
        assert time.monotonic() < deadline, recorder.log()
        time.sleep(0.1)


async def wait_cards(db: str, table: str, count: int, within: float = 60) -> None:
    async with asyncio.timeout(within):
        while True:
            store = open_store(db, create=False)
            try:
                stored = store.read(
                    "SELECT COUNT(*) FROM messages WHERE tbl = ? AND type = ?", [table, "card"]
                )[0][0]
            finally:
                store.close()
            if stored >= count:
                return
            await asyncio.sleep(0.2)


async def test_the_recorder_publishes_a_finding_in_its_own_name(
    tmp_path: Path, mosquitto: Mosquitto, db_url: str
) -> None:
    first, second = shuffled_shoe(8, 31), shuffled_shoe(8, 32)
    second[39:59] = first[119:139]
    recorder = RecorderProcess(tmp_path, mosquitto, db_url).start()
    await asyncio.to_thread(subscribed, recorder)  # its session starts there
    heard: list[tuple[str, dict[str, Any]]] = []
    finding = asyncio.Event()
    async with aiomqtt.Client("127.0.0.1", mosquitto.port) as client:
        await client.subscribe("baccarat/#", qos=1)

        async def listen() -> None:
            async for message in client.messages:
                if isinstance(message.payload, bytes) and message.payload:
                    heard.append((str(message.topic), json.loads(message.payload)))
                    if str(message.topic).endswith("/floor/surveillance"):
                        finding.set()

        listening = asyncio.create_task(listen())
        daemons = []
        try:
            for name, cards, count in (("T1", first, None), ("T2", second, 70)):
                path = str(tmp_path / f"shoe-{name}")
                folder = tmp_path / name
                folder.mkdir()
                async with VirtualShoe(path, "framed", baud=115200) as shoe:
                    daemon = Daemon(folder, mosquitto, device=path, table=name,
                                    rules={"open_mode": "explicit"})
                    daemons.append(daemon)
                    await asyncio.to_thread(daemon.start)
                    events = Dealer(cards=cards, seed=3).events()
                    await shoe.play(events if count is None else first_cards(events, count))
                    await wait_cards(db_url, name, 139 if count is None else count)
            await asyncio.wait_for(finding.wait(), 30)
        finally:
            for daemon in daemons:
                daemon.close()
            listening.cancel()
            assert recorder.stop() == 0
    [(topic, body)] = [(t, b) for t, b in heard if t.endswith("/floor/surveillance")]
    assert topic == "baccarat/floor/surveillance"
    assert (body["table"], body["shoe"], body["first"], body["last"]) == ("T2", 1, 40, 49)
    assert body["earlier"] == {"table": "T1", "shoe": 1, "first": 120, "last": 129}
    # never in a table's name: nothing of the recorder's on T1's or T2's topics
    assert [t for t, b in heard if b.get("type") == "shuffle_suspect"] == [topic]
    store = open_store(db_url, create=False)
    try:
        assert shuffle_store.findings(store) == [body]
        assert store.quarantined() == []  # its own topic came back and was let be
    finally:
        store.close()
