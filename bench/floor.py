"""A floor of simulated tables into one floor broker, with the recorder and the pit.

For each number of tables N: a fresh mosquitto (the floor broker: persistence on, a large
queue per session, loopback, no TLS), ``baccarat record`` into a fresh database, a
subscriber standing for the pit (``baccarat/+/#`` at QoS 1 over MQTT 5, as the console
subscribes, on a paho thread of this process), and
``baccarat sim floor --tables N`` (N real ``baccarat run`` daemons, each with a virtual
framed shoe dealing a card every ``--pace`` seconds: 0.2 is five cards a second, ten
times a real table). After a warm-up, for ``--seconds``:

* the recorder's sustained rate: messages stored per second (its database's count);
* card to pit: a ``card`` message's ``ts`` (when the daemon read the card) to the moment
  the pit's subscriber has it, p50 / p99 / max;
* each daemon's resident memory at the end and CPU (user + system) over the window, as
  a share of one core: median and max over the N daemons; the same for the broker, the
  recorder and the simulator's process (which holds the N virtual shoes);

then the simulator is stopped, the recorder given time to store the rest, and messages
lost are counted: every ``seq`` of a table between the first and the last that the pit or
the recorder saw, missing from the recorder's database (or from what the pit received).

    python bench/floor.py [--tables 10,50,100] [--seconds 60] [--pace 0.2]
                          [--db postgresql://...] [--fsync]

The database is a SQLite file in a temporary folder unless ``--db`` names a PostgreSQL
database (emptied first: ``messages``, ``conflicts`` and ``status`` are dropped). The
journals go to a temporary folder, without fdatasync unless ``--fsync`` (a hundred tables
share this machine's one disk; each real table has its own).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import psutil
from paho.mqtt.enums import CallbackAPIVersion

from baccarat.floor.store import open_store

TARGET_P99 = 0.250
"""Seconds: the card-to-pit p99 of issue 11, for 100 tables."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def baccarat(*args: str) -> list[str]:
    return [sys.executable, "-m", "baccarat.cli", *args]


@dataclass
class Pit:
    """The pit's subscriber: card latencies and every table's seqs.

    It subscribes as the pit console does (``baccarat/+/#``, QoS 1, MQTT 5, the broker's
    default receive maximum), on paho's own network thread: the console is a browser on an
    operator's computer, so the bench's stand-in for it should cost the floor machine as
    little as a subscriber can. (On aiomqtt and MQTT 3.1.1, as first written, it took 27 %
    of a core at 100 tables, and the broker's 20 messages in flight for a 3.1.1 session
    held it back: docs/benchmarks.md.)
    """

    port: int
    latencies: list[float] = field(default_factory=list)
    seqs: dict[str, set[int]] = field(default_factory=dict)
    received: int = 0
    measuring: bool = False
    ready: threading.Event = field(default_factory=threading.Event)

    def start(self) -> None:
        self._client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="pit-bench",
                                   protocol=mqtt.MQTTv5)
        self._client.on_connect = self._on_connect
        self._client.on_message = self._on_message
        self._client.connect("127.0.0.1", self.port)
        self._client.loop_start()

    def stop(self) -> None:
        self._client.disconnect()
        self._client.loop_stop()

    def _on_connect(self, client: mqtt.Client, *_: Any) -> None:
        client.subscribe("baccarat/+/#", qos=1)
        self.ready.set()

    def _on_message(self, _client: mqtt.Client, _userdata: Any,
                    message: mqtt.MQTTMessage) -> None:
        now = time.time()
        if not message.payload:
            return  # a retained message cleared (a table's fault topic)
        body = json.loads(message.payload)
        seq = body.get("seq")
        if isinstance(seq, int):
            self.seqs.setdefault(message.topic.split("/")[1], set()).add(seq)
            self.received += 1
        if self.measuring and body.get("type") == "card" and body.get("ts"):
            self.latencies.append(now - body["ts"])


def start_broker(
    folder: Path, port: int, log_all: bool = False, ws_port: int | None = None
) -> subprocess.Popen[bytes]:
    """A floor mosquitto on ``port``, its files in ``folder``.

    ``log_all``: it logs every packet; ``ws_port``: a WebSocket listener too (a page's).
    """
    config = folder / "mosquitto.conf"
    lines = [
        "per_listener_settings false", f"listener {port} 127.0.0.1", "allow_anonymous true",
        "persistence true", f"persistence_location {folder}/", "max_queued_messages 1000000",
        "set_tcp_nodelay true", "log_dest stderr", "log_type error", "log_type warning",
    ]
    if ws_port is not None:
        lines += [f"listener {ws_port} 127.0.0.1", "protocol websockets"]
    if log_all:
        lines += ["log_type all", "log_timestamp_format %H:%M:%S"]
    if os.geteuid() == 0:
        lines.append("user root")
    config.write_text("\n".join(lines) + "\n")
    broker = subprocess.Popen(
        [shutil.which("mosquitto") or "/usr/sbin/mosquitto", "-c", str(config)],
        stdout=subprocess.DEVNULL, stderr=(folder / "mosquitto.log").open("wb"),
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return broker
        time.sleep(0.05)
    broker.kill()
    raise SystemExit(f"mosquitto did not start: {(folder / 'mosquitto.log').read_text()}")


def start_recorder(folder: Path, port: int, db: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        baccarat("record", "--broker", f"127.0.0.1:{port}", "--db", db, "--log-level",
                 "WARNING"),
        stdout=(folder / "recorder.log").open("wb"), stderr=subprocess.STDOUT,
    )


def reset_database(db: str) -> None:
    """Drop the recorder's tables from a PostgreSQL database (bench runs start empty)."""
    import psycopg

    with psycopg.connect(db, autocommit=True) as connection:
        for table in ("messages", "conflicts", "status", "derived", "latest", "quarantine"):
            connection.execute(f"DROP TABLE IF EXISTS {table}")


def stored_seqs(db: str) -> dict[str, set[int]]:
    store = open_store(db)
    try:
        out: dict[str, set[int]] = {}
        for table, seq in store.seqs():  # facts, and the places of the derived views
            out.setdefault(table, set()).add(seq)
        return out
    finally:
        store.close()


def stored_count(db: str) -> int:
    store = open_store(db)
    try:
        return store.count()
    finally:
        store.close()


def recorder_latencies(db: str, since: float, until: float) -> list[float]:
    """Card ``ts`` to the recorder's receipt, for cards it received in [since, until).

    Read with sqlite3 or psycopg directly: the store has no such query.
    """
    sql = ("SELECT received - ts FROM messages WHERE type = 'card' AND ts IS NOT NULL"
           " AND received >= ? AND received < ?")
    if db.startswith("postgresql:"):
        import psycopg

        with psycopg.connect(db) as connection:
            rows = connection.execute(sql.replace("?", "%s"), (since, until)).fetchall()
    else:
        path = db.removeprefix("sqlite:///")
        with contextlib.closing(sqlite3.connect(path)) as connection:
            rows = connection.execute(sql, (since, until)).fetchall()
    return [float(row[0]) for row in rows]


def cpu_seconds(process: psutil.Process) -> float:
    try:
        times = process.cpu_times()
    except psutil.NoSuchProcess:
        return 0.0
    return float(times.user + times.system)


def lost(expected: dict[str, set[int]], got: dict[str, set[int]]) -> int:
    """Seqs between each table's first and last (in ``expected``) missing from ``got``."""
    missing = 0
    for table, seqs in expected.items():
        missing += len(set(range(min(seqs), max(seqs) + 1)) - got.get(table, set()))
    return missing


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def wait_line(stream: asyncio.StreamReader, text: str, within: float) -> list[str]:
    """Lines of ``stream`` up to one containing ``text``."""
    lines: list[str] = []
    async with asyncio.timeout(within):
        while True:
            raw = await stream.readline()
            if not raw:
                raise SystemExit("the simulator ended:\n" + "".join(lines))
            lines.append(raw.decode(errors="replace"))
            if text in lines[-1]:
                return lines


async def run_floor(n: int, args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    port = free_port()
    broker = start_broker(folder, port)
    db = args.db or str(folder / "floor.db")
    if args.db:
        reset_database(args.db)
    recorder = start_recorder(folder, port, db)
    pit = Pit(port)
    pit.start()
    if not await asyncio.to_thread(pit.ready.wait, 10):
        raise SystemExit("the pit's subscriber could not subscribe")
    sim_args = ["sim", "floor", "--tables", str(n), "--broker", f"127.0.0.1:{port}",
                "--pace", str(args.pace), "--folder", str(folder / "tables"),
                "--seed", str(n)]
    if not args.fsync:
        sim_args.append("--no-fsync")
    started = time.monotonic()
    sim = await asyncio.create_subprocess_exec(
        *baccarat(*sim_args), stdout=asyncio.subprocess.PIPE, stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert sim.stdout is not None
    try:
        await wait_line(sim.stdout, "tables ready", 120 + 5 * n)
        startup = time.monotonic() - started
        drain = asyncio.create_task(sim.stdout.read())  # keep its pipe from filling up
        await asyncio.sleep(args.warmup)

        sim_process = psutil.Process(sim.pid)
        daemons = sim_process.children()
        others = {"pit": psutil.Process(), "broker": psutil.Process(broker.pid),
                  "recorder": psutil.Process(recorder.pid), "simulator": sim_process}
        cpu0 = {p.pid: cpu_seconds(p) for p in [*daemons, *others.values()]}
        count0, received0, t0 = stored_count(db), pit.received, time.monotonic()
        wall0 = time.time()
        pit.measuring = True
        await asyncio.sleep(args.seconds)
        pit.measuring = False
        window = time.monotonic() - t0
        wall1 = time.time()
        count1, received1 = stored_count(db), pit.received
        cpu = {p.pid: (cpu_seconds(p) - cpu0[p.pid]) / window
               for p in [*daemons, *others.values()]}
        rss = [p.memory_info().rss / 2**20 for p in daemons if p.is_running()]
        load = os.getloadavg()[0]
    finally:
        if sim.returncode is None:
            sim.send_signal(signal.SIGTERM)
        await asyncio.wait_for(sim.wait(), 120)
    with contextlib.suppress(Exception):
        await drain
    # The recorder stores what is left; then count what it and the pit got.
    deadline = time.monotonic() + 120
    previous = -1
    while time.monotonic() < deadline:
        count = stored_count(db)
        if count == previous:
            break
        previous = count
        await asyncio.sleep(3)
    pit.stop()
    stored = stored_seqs(db)
    to_recorder = recorder_latencies(db, wall0, wall1) or [float("nan")]
    expected = {t: pit.seqs.get(t, set()) | stored.get(t, set())
                for t in set(pit.seqs) | set(stored)}
    recorder.send_signal(signal.SIGTERM)
    recorder.wait(30)
    broker.terminate()
    broker.wait(30)
    return {
        "tables": n, "startup": startup, "window": window,
        "published": (received1 - received0) / window,
        "stored": (count1 - count0) / window,
        "cards": len(pit.latencies),
        "p50": percentile(pit.latencies, 0.50), "p99": percentile(pit.latencies, 0.99),
        "max": max(pit.latencies),
        "rec_p50": percentile(to_recorder, 0.50), "rec_p99": percentile(to_recorder, 0.99),
        "lost_recorder": lost(expected, stored), "lost_pit": lost(expected, pit.seqs),
        "tables_seen": len(expected),
        "rss_median": statistics.median(rss), "rss_max": max(rss),
        "cpu_median": statistics.median(cpu[p.pid] for p in daemons),
        "cpu_max": max(cpu[p.pid] for p in daemons),
        **{f"cpu_{name}": cpu[p.pid] for name, p in others.items()},
        "load": load,
    }


def report(r: dict[str, Any]) -> str:
    verdict = "met" if r["p99"] < TARGET_P99 and not r["lost_recorder"] else "NOT met"
    return "\n".join([
        f"N = {r['tables']} tables ({r['tables_seen']} seen), started in {r['startup']:.0f} s, "
        f"measured {r['window']:.0f} s, load average {r['load']:.1f}",
        f"  messages: {r['published']:.0f}/s reached the pit; the recorder stored "
        f"{r['stored']:.0f}/s sustained",
        f"  card to pit ({r['cards']} cards): p50 {r['p50'] * 1000:.0f} ms, "
        f"p99 {r['p99'] * 1000:.0f} ms, max {r['max'] * 1000:.0f} ms "
        f"(target p99 < {TARGET_P99 * 1000:.0f} ms: {verdict})",
        f"  card to recorder: p50 {r['rec_p50'] * 1000:.0f} ms, "
        f"p99 {r['rec_p99'] * 1000:.0f} ms",
        f"  lost: {r['lost_recorder']} by the recorder, {r['lost_pit']} by the pit",
        f"  each daemon: RSS median {r['rss_median']:.0f} MB, max {r['rss_max']:.0f} MB; "
        f"CPU median {r['cpu_median'] * 100:.1f} %, max {r['cpu_max'] * 100:.1f} % of a core",
        f"  broker CPU {r['cpu_broker'] * 100:.0f} %, recorder {r['cpu_recorder'] * 100:.0f} %,"
        f" pit subscriber {r['cpu_pit'] * 100:.0f} %, simulator (the N shoes) "
        f"{r['cpu_simulator'] * 100:.0f} % of a core",
    ])


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", default="10,50,100", help="comma-separated table counts")
    parser.add_argument("--seconds", type=float, default=60.0, help="measured window")
    parser.add_argument("--warmup", type=float, default=10.0)
    parser.add_argument("--pace", type=float, default=0.2, help="seconds between cards")
    parser.add_argument("--db", help="postgresql://... (default: a SQLite file)")
    parser.add_argument("--fsync", action="store_true", help="fdatasync the journals")
    args = parser.parse_args()
    counts = [int(n) for n in args.tables.split(",")]
    print(f"bench/floor.py: pace {args.pace} s per card, {args.seconds:.0f} s measured, "
          f"database {'PostgreSQL' if args.db else 'SQLite'}, journals "
          f"{'with' if args.fsync else 'without'} fdatasync; {os.cpu_count()} cores",
          flush=True)
    for n in counts:
        with tempfile.TemporaryDirectory(prefix=f"bench-floor-{n}-") as folder:
            print(report(await run_floor(n, args, Path(folder))), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
