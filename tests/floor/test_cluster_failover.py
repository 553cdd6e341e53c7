"""The floor on the cluster loses nothing and stores nothing twice when a node or a recorder dies.

Real parts: three nats-server nodes (support/nats.py), a mosquitto floor broker, the relay
(``python -m baccarat.floor.relay``) and the recorder (``baccarat record --cluster``) as
processes of their own, and 24 tables' real bodies (the engine's, support/nats.py's
traffic) published at QoS 1 while nodes are SIGKILLed one after another (each back before
the next), the stream's leader first (the worst case: a Raft election), or a recorder is.
Then the recorder's database must hold every message sent exactly once, and the stream
every message once (the relay's ``Nats-Msg-Id``).
"""

from __future__ import annotations

import asyncio
import itertools
import signal
import subprocess
import sys
import time
from pathlib import Path

import aiomqtt
import pytest

from baccarat.floor.nodes import PASSWORD, LocalCluster
from baccarat.floor.store import open_store
from support.mosquitto import Mosquitto, MosquittoFactory
from support.nats import TEST_BYTES, start_cluster, traffic

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

TABLES = [f"T{n:02d}" for n in range(24)]
RATE = 400.0
"""Messages a second offered, all tables together (a card every ~0.15 s at each table)."""


def _spawn(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, *args], stdout=log.open("ab"),
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


async def _wait_for(log: Path, text: str, process: subprocess.Popen[bytes],
                    within: float = 30.0) -> None:
    deadline = time.monotonic() + within
    while text not in (said := _read(log)):
        assert process.poll() is None, said
        assert time.monotonic() < deadline, f"no {text!r} in {log}:\n{said}"
        await asyncio.sleep(0.1)


def _read(log: Path) -> str:
    """A process's log so far (small files: read on the loop)."""
    return log.read_text(errors="replace")


class Floor:
    """The cluster, the floor broker, a relay and recorders, in ``folder``."""

    def __init__(self, folder: Path, cluster: LocalCluster, broker: Mosquitto) -> None:
        self.folder = folder
        self.cluster = cluster
        self.broker = broker
        self.db = str(folder / "floor.db")
        (folder / "password").write_text(PASSWORD)
        self.recorders: dict[str, subprocess.Popen[bytes]] = {}
        self.relay: subprocess.Popen[bytes] | None = None

    async def start_recorder(self, name: str) -> None:
        log = self.folder / f"{name}.log"
        process = _spawn([
            "-m", "baccarat.cli", "record", "--cluster", ",".join(self.cluster.urls),
            "--cluster-user", "recorder", "--password-file", str(self.folder / "password"),
            "--client-id", name, "--db", self.db, "--shuffle-hours", "0",
            "--stream-bytes", str(TEST_BYTES),
        ], log)
        self.recorders[name] = process
        await _wait_for(log, "recording stream BACCARAT", process)

    async def start_relay(self) -> None:
        log = self.folder / "relay.log"
        self.relay = _spawn([
            "-m", "baccarat.floor.relay", "--broker", f"127.0.0.1:{self.broker.port}",
            "--servers", ",".join(self.cluster.urls), "--user", "relay-floor",
            "--nats-password", PASSWORD, "--client-id", "relay-floor",
        ], log)
        await _wait_for(log, "relaying baccarat/+/+", self.relay)

    def kill_recorder(self, name: str) -> None:
        self.recorders[name].send_signal(signal.SIGKILL)
        self.recorders[name].wait(10)

    def close(self) -> None:
        for process in [*self.recorders.values(), self.relay]:
            if process is not None and process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()

    def logs(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}"
                         for p in sorted(self.folder.glob("*.log")))


async def _offer(broker: Mosquitto, sent: list[tuple[str, bytes]], stop: asyncio.Event,
                 bodies: list[tuple[str, bytes]]) -> None:
    """Publish the tables' bodies interleaved, at RATE, until all are sent or ``stop``."""
    async with aiomqtt.Client("127.0.0.1", broker.port, identifier="tables",
                              protocol=aiomqtt.ProtocolVersion.V5) as client:
        start = time.monotonic()
        for n, (topic, payload) in enumerate(bodies):
            if stop.is_set():
                return
            delay = start + n / RATE - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            await client.publish(topic, payload, qos=1)
            sent.append((topic, payload))


def _interleaved(cards: int) -> list[tuple[str, bytes]]:
    streams = [traffic(table, cards) for table in TABLES]
    return [body for group in itertools.zip_longest(*streams) for body in group if body]


async def _stored_all(floor: Floor, sent: list[tuple[str, bytes]], within: float) -> None:
    want = _expected(sent)
    deadline = time.monotonic() + within
    while True:
        store = open_store(floor.db, create=False)
        try:
            got = set(store.seqs())
        finally:
            store.close()
        if want <= got:
            return
        assert time.monotonic() < deadline, (
            f"{len(want - got)} of {len(want)} not stored, e.g. {sorted(want - got)[:5]}\n"
            + floor.logs())
        await asyncio.sleep(0.5)


def _expected(sent: list[tuple[str, bytes]]) -> set[tuple[str, int]]:
    import json

    return {(topic.split("/")[1], json.loads(payload)["seq"]) for topic, payload in sent}


async def _check_once(floor: Floor, sent: list[tuple[str, bytes]]) -> None:
    """Every message sent is in the database once, none other; the stream has each once."""
    store = open_store(floor.db, create=False)
    try:
        rows = list(store.seqs())
    finally:
        store.close()
    assert len(rows) == len(set(rows))
    assert set(rows) == _expected(sent)
    import sqlite3

    with sqlite3.connect(floor.db) as db:
        assert db.execute("SELECT count(*) FROM conflicts").fetchone() == (0,)
        assert db.execute("SELECT count(*) FROM quarantine").fetchone() == (0,)
    from baccarat.floor.cluster import ClusterAddress, connect

    client = await connect(ClusterAddress(tuple(floor.cluster.urls), "recorder", PASSWORD))
    info = await client.jetstream(timeout=5).stream_info("BACCARAT")
    await client.close()
    assert info.state.messages == len(sent)  # the relay's retries were dropped by their id


async def _kill_leader_and_back(floor: Floor, pause: float, spare: int | None = None) -> int:
    """SIGKILL the stream's leader (another node if that is ``spare``), bring it back."""
    cluster = floor.cluster
    victim = cluster.stream_leader("BACCARAT")
    assert victim is not None
    if victim == spare:  # it came back before an election moved the lead: kill a follower
        victim = next(n.index for n in cluster.nodes if n.index != spare)
    cluster.kill(victim)
    await asyncio.sleep(pause)
    await asyncio.to_thread(cluster.start_node, victim)
    await asyncio.sleep(pause)
    return victim


@pytest.fixture
async def floor(tmp_path: Path, mosquitto_factory: MosquittoFactory):  # type: ignore[no-untyped-def]
    cluster = start_cluster(tmp_path / "cluster", tables=TABLES)
    broker = mosquitto_factory(extra_config="max_queued_messages 100000\n")
    made = Floor(tmp_path, cluster, broker)
    try:
        yield made
    finally:
        made.close()
        cluster.close()


async def _run(floor: Floor, cards: int, during) -> list[tuple[str, bytes]]:  # type: ignore[no-untyped-def]
    await floor.start_recorder("recorder-a")
    await floor.start_relay()
    sent: list[tuple[str, bytes]] = []
    stop = asyncio.Event()
    offer = asyncio.create_task(_offer(floor.broker, sent, stop, _interleaved(cards)))
    try:
        await asyncio.sleep(1.5)
        await during()
        await asyncio.wait_for(offer, 120)
    finally:
        stop.set()
        await asyncio.gather(offer, return_exceptions=True)
    await _stored_all(floor, sent, within=60)
    await asyncio.sleep(1.0)  # anything late (a duplicate) would show now
    return sent


async def test_two_nodes_killed_in_turn_lose_nothing_and_double_nothing(floor: Floor) -> None:
    victims = []

    async def kill_two() -> None:
        victims.append(await _kill_leader_and_back(floor, 1.5))
        victims.append(await _kill_leader_and_back(floor, 1.5, spare=victims[0]))

    sent = await _run(floor, 40, kill_two)
    assert len(sent) > 2000
    assert len(set(victims)) == 2, victims  # two different nodes died
    await _check_once(floor, sent)


async def test_the_recorder_killed_and_back_loses_nothing(floor: Floor) -> None:
    async def kill_recorder() -> None:
        floor.kill_recorder("recorder-a")
        await asyncio.sleep(1.0)
        await floor.start_recorder("recorder-a")

    sent = await _run(floor, 25, kill_recorder)
    await _check_once(floor, sent)


async def test_two_recorders_with_a_node_and_one_of_them_killed(floor: Floor) -> None:
    async def second_recorder_then_kills() -> None:
        await floor.start_recorder("recorder-b")
        await _kill_leader_and_back(floor, 1.5)
        floor.kill_recorder("recorder-a")  # b goes on alone

    sent = await _run(floor, 30, second_recorder_then_kills)
    await _check_once(floor, sent)
