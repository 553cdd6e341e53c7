"""The floor recorder keeps every message of every table exactly once, through outages.

Real table daemons with virtual framed shoes on ptys dealing whole shoes, a real
mosquitto (persistence on, as a floor broker must run), ``baccarat record`` as a process
of its own, and the database: SQLite and a private PostgreSQL cluster. What the recorder
stored is compared with what each table's journal replays to.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from baccarat.floor.derived import VIEWS, rebuilt
from baccarat.floor.history import rounds, to_csv
from baccarat.floor.store import open_store
from baccarat.sim_hardware.dealer import Dealer
from baccarat.sim_hardware.virtual_shoe import VirtualShoe
from support.daemon import Daemon
from support.mosquitto import Mosquitto, _die_with_parent
from support.postgres import Postgres

DECKS = 2
"""A full shoe of two decks (about 20 rounds): every kind of message, in a test's time."""
PACE = 0.01
"""Seconds between the shoe's cards: fast, not a real table's pace (bench/floor.py is)."""
OUTAGE = float(os.environ.get("BACCARAT_TEST_FLOOR_OUTAGE", "30"))
"""Seconds the floor broker is down in the middle of the shoes."""
WITHIN = 120.0

FLOOR_BROKER = "max_queued_messages 0\nmax_inflight_messages 100\n"
"""What a floor broker needs for the recorder: keep every queued message of its session."""


class RecorderProcess:
    """``baccarat record`` as a process."""

    def __init__(self, folder: Path, broker: Mosquitto, db: str, name: str = "recorder") -> None:
        self.argv = [sys.executable, "-m", "baccarat.cli", "record",
                     "--broker", f"127.0.0.1:{broker.port}", "--db", db,
                     "--client-id", f"baccarat-{name}"]
        self.log_file = folder / f"{name}.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> RecorderProcess:
        log = self.log_file.open("ab")
        self.process = subprocess.Popen(
            self.argv, stdout=log, stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            preexec_fn=_die_with_parent,  # noqa: PLW1509 - only a prctl() call
        )
        log.close()
        return self

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait()

    def stop(self) -> int:
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(20)

    def log(self) -> str:
        return self.log_file.read_text(errors="replace")


async def recording(broker: Mosquitto, db: str) -> None:
    """Wait until the recorder stores what comes (it has subscribed): a probe on table T0."""
    probe = json.dumps({"schema": 1, "type": "card", "seq": 1, "ts": 1.0, "shoe": 1,
                        "round": 1, "position": "P1", "card": "9S"})
    async with broker.client() as client:
        for _ in range(600):
            await client.publish("baccarat/T0/card", probe, qos=1)
            await asyncio.sleep(0.2)
            store = open_store(db)
            try:
                if list(store.seqs("T0")):
                    return
            finally:
                store.close()
    raise AssertionError("the recorder never stored the probe")


async def deal_shoe(shoe: VirtualShoe, seed: int) -> None:
    for event in Dealer(decks=DECKS, seed=seed).events():
        shoe.send(event)
        await asyncio.sleep(PACE)


def stored_by_table(db: str) -> dict[str, dict[int, dict[str, Any]]]:
    """Every table's messages as the database gives them (facts, derived views made again)."""
    store = open_store(db)
    try:
        out: dict[str, dict[int, dict[str, Any]]] = {}
        for table, body in store.messages():
            out.setdefault(table, {})[body["seq"]] = body
        for table, facts in list(out.items()):
            stored, places = store.stored(table), store.derived(table)
            views = {seq: json.loads(body) if body is not None else {"unmade": seq}
                     for topic in VIEWS for seq, body in rebuilt(stored, places, topic)}
            out[table] = dict(sorted((facts | views).items()))
        return out
    finally:
        store.close()


def journal_messages(daemon: Daemon) -> list[dict[str, Any]]:
    """What the table's journal replays to (``journal show --messages``, every file)."""
    out: list[dict[str, Any]] = []
    for path in daemon.journal_files():
        lines = subprocess.run(
            [sys.executable, "-m", "baccarat.cli", "journal", "show", str(path), "--messages"],
            capture_output=True, text=True, check=True, timeout=60,
        ).stdout
        out += [json.loads(line) for line in lines.splitlines()]
    return out


def expected_by_table(daemons: dict[str, Daemon]) -> dict[str, dict[int, dict[str, Any]]]:
    return {
        table: {b["seq"]: b for b in journal_messages(daemon)} for table, daemon in daemons.items()
    }


async def wait_until_stored(db: str, daemons: dict[str, Daemon], within: float) -> None:
    deadline = time.monotonic() + within
    while True:
        expected = expected_by_table(daemons)
        stored = stored_by_table(db)
        if all(set(stored.get(t, {})) >= set(seqs) for t, seqs in expected.items()):
            return
        if time.monotonic() > deadline:
            missing = {t: len(set(e) - set(stored.get(t, {}))) for t, e in expected.items()}
            raise AssertionError(f"messages never stored, by table: {missing}")
        await asyncio.sleep(1.0)


@pytest.mark.slow
async def test_three_tables_an_outage_and_a_killed_recorder_lose_nothing(
    tmp_path: Path, mosquitto_factory: Any, postgres: Postgres
) -> None:
    """Two recorders at once, one on SQLite and one on PostgreSQL, through the same faults."""
    broker: Mosquitto = mosquitto_factory(persistence=True, extra_config=FLOOR_BROKER)
    databases = {"sqlite": str(tmp_path / "floor.db"), "postgresql": postgres.new_database()}
    recorders = [RecorderProcess(tmp_path, broker, db, name).start()
                 for name, db in databases.items()]
    tables = ("T1", "T2", "T3")
    daemons: dict[str, Daemon] = {}
    shoes: dict[str, VirtualShoe] = {}
    try:
        for table in tables:
            shoes[table] = await VirtualShoe(
                str(tmp_path / f"shoe-{table}"), "framed", baud=115200
            ).__aenter__()
            folder = tmp_path / table
            folder.mkdir()
            daemons[table] = Daemon(
                folder, broker, device=str(tmp_path / f"shoe-{table}"), table=table,
                rules={"decks": DECKS},
            )
            await asyncio.to_thread(daemons[table].start)
        dealing = [asyncio.create_task(deal_shoe(shoes[t], seed=n)) for n, t in enumerate(tables)]
        await asyncio.sleep(1.0)
        await asyncio.to_thread(broker.stop)  # the floor broker goes away mid-shoe
        await asyncio.sleep(OUTAGE)
        await asyncio.to_thread(broker.start)
        await asyncio.sleep(1.0)
        for recorder in recorders:  # and the recorders die while the backlog pours in
            recorder.kill()
        await asyncio.sleep(1.0)
        for recorder in recorders:
            recorder.start()
        await asyncio.gather(*dealing)
        for db in databases.values():
            await wait_until_stored(db, daemons, WITHIN)
    finally:
        for daemon in daemons.values():
            daemon.close()
        for shoe in shoes.values():
            await shoe.__aexit__(None, None, None)
        for recorder in recorders:
            recorder.stop()
    expected = expected_by_table(daemons)
    for kind, db in databases.items():
        stored = stored_by_table(db)
        for table in tables:
            assert stored[table] == expected[table], f"{kind}, {table}: differs from its journal"
            seqs = sorted(stored[table])
            assert seqs == list(range(1, len(seqs) + 1))  # no gap, from the first
            results = [b for b in expected[table].values() if b["type"] == "result"]
            assert len(results) >= 10  # a whole shoe was dealt
    for recorder in recorders:
        assert "Traceback" not in recorder.log()

    # the history of a shoe from either database equals the one from the journal
    for db in databases.values():
        for table in tables:
            store = open_store(db)
            try:
                from_db = to_csv(rounds(store.messages(table=table, shoe=1)))
            finally:
                store.close()
            from_journal = to_csv(rounds((table, b) for b in journal_messages(daemons[table])))
            assert from_db == from_journal
            assert from_db.count("\n") > 10


async def test_the_recorder_killed_mid_shoe_stores_everything_once(
    tmp_path: Path, mosquitto_factory: Any
) -> None:
    broker: Mosquitto = mosquitto_factory(persistence=True, extra_config=FLOOR_BROKER)
    db = str(tmp_path / "floor.db")
    recorder = RecorderProcess(tmp_path, broker, db).start()
    await recording(broker, db)  # else the table's first messages may come before it
    link = str(tmp_path / "shoe")
    async with VirtualShoe(link, "framed", baud=115200) as shoe:
        (tmp_path / "T1").mkdir()
        daemon = Daemon(tmp_path / "T1", broker, device=link, rules={"decks": DECKS})
        try:
            await asyncio.to_thread(daemon.start)
            dealing = asyncio.create_task(deal_shoe(shoe, seed=7))
            for _ in range(3):
                await asyncio.sleep(1.5)
                recorder.kill()
                await asyncio.sleep(0.5)
                recorder.start()
            await dealing
            await wait_until_stored(db, {"T1": daemon}, WITHIN)
        finally:
            daemon.close()
            recorder.stop()
    assert stored_by_table(db)["T1"] == expected_by_table({"T1": daemon})["T1"]


def hostile_corpus() -> list[tuple[str, bytes]]:
    """Bodies a recorder must quarantine, on the topics of a dealing table and of another."""
    def body(**fields: Any) -> bytes:
        return json.dumps({"schema": 1, "seq": 3, "ts": 1.0, "shoe": 1, "round": 1} | fields,
                          ensure_ascii=True).encode()

    return [
        ("baccarat/T1/limits", b'{"type":"limits","seq":1180591620717411303424}'),
        ("baccarat/T1/card", b'{"type":"\\ud800","seq":3}'),
        ("baccarat/T1/card", body(type="card", seq=2**70, position="P1", card="9S")),
        ("baccarat/T1/card", body(type="card", text="\ud800x", position="P1", card="9S")
         .replace(b"\\\\", b"\\")),
        ("baccarat/T1/alarm", body(type="alarm", id="x", kind="extra_card")),
        ("baccarat/T1/card", body(type="card", shoe="x", position="P1", card="9S")),
        ("baccarat/T1/card", body(type="card", seq="4", position="P1", card="9S")),
        ("baccarat/T1/result", body(type="result", winner=None, round_id="r")),
        ("baccarat/T1/card", body(type="result", winner="tie", round_id="r")),
        ("baccarat/T1/status", b'{"type":"status","state":"online","seq":9}'),
        ("baccarat/T1/roads", body(type="card", position="P1", card="9S")),
        ("baccarat/T9/card", b'{"type":"card","seq":1,"text":"' + b"x" * (4 << 20) + b'"}'),
        ("baccarat/T9/card", b"[" * 100_000 + b"]" * 100_000),
        ("baccarat/T9/card", b""),
        ("baccarat/T9/card", b"\xff\xfe\x00 not even text"),
        ("baccarat/T9/round", b"not json at all"),
        ("baccarat/T9/card", b'{"type":"card","seq":1,"ts":NaN}'),
        ("baccarat/T9/card", b'[{"type":"card","seq":1}]'),
        ("baccarat/T9/gadget", body(type="card", position="P1", card="9S")),
    ]


def quarantined(db: str) -> list[tuple[str, str, bytes]]:
    store = open_store(db)
    try:
        return store.quarantined()
    finally:
        store.close()


async def test_hostile_bodies_are_quarantined_while_a_table_is_recorded(
    tmp_path: Path, mosquitto_factory: Any, postgres: Postgres
) -> None:
    """A dealing table and a publisher of hostile bodies beside it, on a real mosquitto.

    Every message of the table is stored once, every hostile one quarantined with a reason,
    and neither recorder stops. The table starts once both recorders store a probe (T0): a
    message published before a recorder's session exists never reaches it.
    """
    broker: Mosquitto = mosquitto_factory(persistence=True, extra_config=FLOOR_BROKER)
    databases = {"sqlite": str(tmp_path / "floor.db"), "postgresql": postgres.new_database()}
    recorders = [RecorderProcess(tmp_path, broker, db, name).start()
                 for name, db in databases.items()]
    corpus = hostile_corpus()
    link = str(tmp_path / "shoe")
    for db in databases.values():
        await recording(broker, db)
    async with VirtualShoe(link, "framed", baud=115200) as shoe:
        (tmp_path / "T1").mkdir()
        daemon = Daemon(tmp_path / "T1", broker, device=link, rules={"decks": DECKS})
        try:
            await asyncio.to_thread(daemon.start)
            dealing = asyncio.create_task(deal_shoe(shoe, seed=3))
            async with broker.client() as hostile:
                for topic, payload in corpus:
                    await hostile.publish(topic, payload, qos=1)
                    await asyncio.sleep(0.05)
            await dealing
            await wait_until_stored(databases["sqlite"], {"T1": daemon}, WITHIN)
            await wait_until_stored(databases["postgresql"], {"T1": daemon}, WITHIN)
            deadline = time.monotonic() + WITHIN
            while any(len(quarantined(db)) < len(corpus) for db in databases.values()):
                assert time.monotonic() < deadline, "hostile bodies never quarantined"
                await asyncio.sleep(0.5)
            for recorder in recorders:
                assert recorder.process is not None
                assert recorder.process.poll() is None  # never stopped
        finally:
            daemon.close()
            for recorder in recorders:
                recorder.stop()
    expected = expected_by_table({"T1": daemon})
    for kind, db in databases.items():
        stored = {table: got for table, got in stored_by_table(db).items() if table != "T0"}
        assert stored == expected, kind  # nothing hostile among the messages
        kept = quarantined(db)
        assert sorted((t, p[:1000]) for t, _, p in kept) == sorted(
            (t, p[:1000]) for t, p in corpus
        ), kind
        assert all(reason for _, reason, _ in kept)
        assert len(kept) == len(corpus)
    for recorder in recorders:
        assert "Traceback" not in recorder.log()
        assert "quarantined" in recorder.log()


class RestartablePostgres(Postgres):
    """The private cluster, stopped and started again on the same port and data."""

    def stop(self) -> None:
        process = self._process
        assert process is not None
        process.send_signal(signal.SIGINT)
        process.wait(30)

    def restart(self) -> None:
        log = (self.folder / "server.log").open("ab")
        self._process = subprocess.Popen(
            self._as_owner(str(self.bin / "postgres"), "-D", str(self.data),
                           "-p", str(self.port), "-c", "listen_addresses=127.0.0.1",
                           "-c", f"unix_socket_directories={self.folder}"),
            stdout=log, stderr=subprocess.STDOUT,
            preexec_fn=_die_with_parent,  # noqa: PLW1509 - only a prctl() call
        )
        log.close()
        deadline = time.monotonic() + 30
        while not self._ready():
            assert time.monotonic() < deadline, self.log()
            time.sleep(0.1)


PG_DOWN = 12.0
"""Seconds PostgreSQL is away: longer than the recorder's lag report comes."""


def card_body(seq: int) -> dict[str, Any]:
    return {"schema": 1, "type": "card", "seq": seq, "ts": float(seq), "shoe": 1,
            "round": seq, "position": "P1", "card": "9S"}


@pytest.mark.slow
@pytest.mark.timeout(240)
async def test_a_postgresql_restart_loses_nothing_and_stores_each_once(
    tmp_path: Path, mosquitto_factory: Any
) -> None:
    broker: Mosquitto = mosquitto_factory(persistence=True, extra_config=FLOOR_BROKER)
    cluster = RestartablePostgres().start()
    try:
        db = cluster.new_database()
        recorder = RecorderProcess(tmp_path, broker, db).start()
        count = 600
        try:
            async with broker.client() as table:
                while not stored_by_table(db):  # the recorder has subscribed
                    await table.publish("baccarat/T1/card", json.dumps(card_body(1)), qos=1)
                    await asyncio.sleep(0.2)
                for seq in range(2, count + 1):
                    await table.publish("baccarat/T1/card", json.dumps(card_body(seq)), qos=1)
                    if seq == 100:
                        await asyncio.to_thread(cluster.stop)
                        stopped = time.monotonic()
                    if seq == 300:
                        await asyncio.sleep(max(0.0, PG_DOWN - (time.monotonic() - stopped)))
                        await asyncio.to_thread(cluster.restart)
                    await asyncio.sleep(0.01)
            deadline = time.monotonic() + 60
            while len(stored_by_table(db).get("T1", {})) < count:
                assert time.monotonic() < deadline, recorder.log()
                await asyncio.sleep(0.5)
            await asyncio.sleep(1.0)
        finally:
            code = recorder.stop()
        stored = stored_by_table(db)["T1"]
        assert sorted(stored) == list(range(1, count + 1))
        store = open_store(db)
        try:
            assert store.count() == count  # each once (seq 1 was sent until it was stored)
            assert store.quarantined() == []
        finally:
            store.close()
        log = recorder.log()
        assert code == 0
        assert "Traceback" not in log
        assert "reconnecting" in log
        assert "behind:" in log
        assert "the database is back" in log
    finally:
        cluster.close()
