"""A hostile volume on the floor: garbage bodies on one table's ``limits`` while tables deal.

A fresh floor broker (bench/floor.py's), ``baccarat record`` into a fresh SQLite file and
``baccarat sim floor --tables N`` (real daemons, a virtual shoe each, a card every
``--pace`` seconds). After a warm-up, an operator's stand-in publishes ``--bodies`` bodies
of ``--size`` random bytes (not UTF-8, not JSON) on the first table's ``limits`` topic, at
QoS ``--qos``, as fast as the broker takes them (20 in flight at QoS 1). Meanwhile the
recorder's and the broker's resident memory is sampled every 0.2 s. Then the flood stops,
the tables deal on for ``--after`` seconds and stop, and the recorder is given time to
store the rest.

Printed: the recorder's RSS before the flood, its peak and growth; the broker's peak; the
database's growth (the file and its WAL) over the flood; the garbage counted in the
quarantine (by topic and cause, for ever) and the sample kept; messages lost: every
``seq`` of a table between the first and the last that the recorder stored, missing from
its database; and results lost: every ``result`` the tables published (a subscriber of
this process counts them) that the recorder does not hold.

    python bench/floor_hostile.py [--bodies 60000] [--size 65536] [--tables 4]
                                  [--pace 1.0] [--qos 1]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import sqlite3
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

sys.path.insert(0, str(Path(__file__).parent))
from floor import (
    baccarat,
    free_port,
    lost,
    start_broker,
    stored_seqs,
    wait_line,
)

TARGET_RSS_GROWTH = 100.0
"""MiB the recorder may grow by under the flood (issue 32: it grew by 2 GB)."""
TARGET_DB_GROWTH = 100.0
"""MiB the database may grow by under the flood (issue 32: 3.97 GB)."""


@dataclass
class Results:
    """Every ``result`` the tables publish: (table, seq), heard on its own subscription."""

    port: int
    seen: set[tuple[str, int]] = field(default_factory=set)
    ready: threading.Event = field(default_factory=threading.Event)

    def start(self) -> None:
        self._client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="results-bench",
                                   protocol=mqtt.MQTTv5)
        self._client.on_connect = lambda client, *_: (
            client.subscribe("baccarat/+/result", qos=1), self.ready.set())
        self._client.on_message = self._on_message
        self._client.connect("127.0.0.1", self.port)
        self._client.loop_start()

    def stop(self) -> None:
        self._client.disconnect()
        self._client.loop_stop()

    def _on_message(self, _client: mqtt.Client, _userdata: Any,
                    message: mqtt.MQTTMessage) -> None:
        with contextlib.suppress(ValueError):
            seq = json.loads(message.payload).get("seq")
            if isinstance(seq, int):
                self.seen.add((message.topic.split("/")[1], seq))


def flood(port: int, topic: str, bodies: int, size: int, qos: int) -> float:
    """Publish the garbage (never UTF-8: a 0xFF byte first); the seconds it took."""
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="hostile-operator",
                         protocol=mqtt.MQTTv5)
    client.max_inflight_messages_set(20)
    client.max_queued_messages_set(100)
    acked = 0

    def on_publish(*_: Any) -> None:
        nonlocal acked
        acked += 1

    client.on_publish = on_publish
    client.connect("127.0.0.1", port)
    client.loop_start()
    garbage = [b"\xff" + os.urandom(size - 1) for _ in range(16)]
    started = time.monotonic()
    try:
        for n in range(bodies):
            while client.publish(topic, garbage[n % len(garbage)], qos=qos).rc != 0:
                time.sleep(0.005)  # paho's queue is full: wait for PUBACKs
        while acked < bodies and time.monotonic() - started < 3600:
            time.sleep(0.05)
    finally:
        client.disconnect()
        client.loop_stop()
    return time.monotonic() - started


def database_mib(path: Path) -> float:
    total = 0
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            total += (path.parent / (path.name + suffix)).stat().st_size
    return total / 2**20


def quarantine(path: Path) -> tuple[dict[str, int], int]:
    with contextlib.closing(sqlite3.connect(path)) as db:
        counts = {f"{topic} {cause}": int(n) for topic, cause, n in
                  db.execute("SELECT topic, cause, n FROM quarantine_counts")}
        sample = int(db.execute("SELECT COUNT(*) FROM quarantine").fetchone()[0])
    return counts, sample


def rss_mib(process: psutil.Process) -> float:
    try:
        return float(process.memory_info().rss) / 2**20
    except psutil.NoSuchProcess:
        return 0.0


async def run(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    port = free_port()
    broker = start_broker(folder, port)
    db = folder / "floor.db"
    recorder = subprocess.Popen(  # noqa: ASYNC220 - started once, before anything runs
        baccarat("record", "--broker", f"127.0.0.1:{port}", "--db", str(db), "--log-level",
                 "WARNING"),
        stdout=(folder / "recorder.log").open("wb"), stderr=subprocess.STDOUT,
    )
    results = Results(port)
    results.start()
    if not await asyncio.to_thread(results.ready.wait, 10):
        raise SystemExit("the results' subscriber could not subscribe")
    sim_args = ["sim", "floor", "--tables", str(args.tables), "--broker", f"127.0.0.1:{port}",
                "--pace", str(args.pace), "--folder", str(folder / "tables"), "--seed", "32",
                "--no-fsync"]
    sim = await asyncio.create_subprocess_exec(
        *baccarat(*sim_args), stdout=asyncio.subprocess.PIPE, stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert sim.stdout is not None
    target = f"baccarat/T{1:0{len(str(args.tables))}d}/limits"
    watched = {"recorder": psutil.Process(recorder.pid), "broker": psutil.Process(broker.pid)}
    peaks = dict.fromkeys(watched, 0.0)
    sampling = True

    async def sample() -> None:
        while sampling:
            for name, process in watched.items():
                peaks[name] = max(peaks[name], rss_mib(process))
            await asyncio.sleep(0.2)

    try:
        await wait_line(sim.stdout, "tables ready", 120 + 5 * args.tables)
        drain = asyncio.create_task(sim.stdout.read())
        await asyncio.sleep(args.warmup)
        before = {name: rss_mib(p) for name, p in watched.items()}
        db_before = database_mib(db)
        sampler = asyncio.create_task(sample())
        flood_start = time.monotonic()
        seconds = await asyncio.to_thread(flood, port, target, args.bodies, args.size, args.qos)
        # the recorder takes what the broker queued for it
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            counts, _ = quarantine(db)
            if sum(counts.values()) >= args.bodies:
                break
            await asyncio.sleep(1)
        caught_up = time.monotonic()
        await asyncio.sleep(args.after)
        sampling = False
        await sampler
        db_after = database_mib(db)
    finally:
        if sim.returncode is None:
            sim.send_signal(signal.SIGTERM)
        await asyncio.wait_for(sim.wait(), 120)
    with contextlib.suppress(Exception):
        await drain
    await asyncio.sleep(5)  # the recorder stores the last messages
    results.stop()
    stored = stored_seqs(str(db))
    counts, sample_kept = quarantine(db)
    recorder.send_signal(signal.SIGTERM)
    recorder.wait(30)
    broker.terminate()
    broker.wait(30)
    published = results.seen
    results_lost = sum(1 for table, seq in published if seq not in stored.get(table, set()))
    return {
        "bodies": args.bodies, "size": args.size, "qos": args.qos, "tables": args.tables,
        "seconds": seconds, "caught_up": caught_up - flood_start,
        "rss_before": before["recorder"], "rss_peak": peaks["recorder"],
        "broker_before": before["broker"], "broker_peak": peaks["broker"],
        "db_growth": db_after - db_before, "db_after": db_after,
        "quarantined": sum(counts.values()), "counts": counts, "sample": sample_kept,
        "lost": lost(stored, stored), "results": len(published), "results_lost": results_lost,
        "load": os.getloadavg()[0],
    }


def report(r: dict[str, Any]) -> str:
    growth = r["rss_peak"] - r["rss_before"]
    lines = [
        f"{r['bodies']:,} garbage bodies of {r['size']:,} bytes on one table's limits (QoS"
        f" {r['qos']}), {r['tables']} tables dealing; published in {r['seconds']:.0f} s"
        f" ({r['bodies'] * r['size'] / 2**20 / r['seconds']:.0f} MiB/s); the recorder had them"
        f" all {r['caught_up']:.0f} s after the first; load {r['load']:.1f}",
        f"  recorder RSS: {r['rss_before']:.0f} MiB before, peak {r['rss_peak']:.0f} MiB,"
        f" growth {growth:.0f} MiB (target < {TARGET_RSS_GROWTH:.0f})",
        f"  broker RSS: {r['broker_before']:.0f} MiB before, peak {r['broker_peak']:.0f} MiB",
        f"  database: grew {r['db_growth']:.1f} MiB (target < {TARGET_DB_GROWTH:.0f}),"
        f" {r['db_after']:.1f} MiB in all",
        f"  quarantine: {r['quarantined']:,} counted ({r['counts']}), {r['sample']:,} bodies"
        " kept as the sample",
        f"  lost: {r['lost']} message(s) of the tables; {r['results_lost']} of"
        f" {r['results']} results",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bodies", type=int, default=60_000)
    parser.add_argument("--size", type=int, default=64 * 1024)
    parser.add_argument("--tables", type=int, default=4)
    parser.add_argument("--pace", type=float, default=1.0, help="seconds between cards")
    parser.add_argument("--qos", type=int, choices=(0, 1), default=1)
    parser.add_argument("--warmup", type=float, default=15.0)
    parser.add_argument("--after", type=float, default=10.0,
                        help="seconds the tables deal on after the recorder caught up")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="floor-hostile-") as name:
        r = asyncio.run(run(args, Path(name)))
    print(report(r))
    ok = (r["rss_peak"] - r["rss_before"] < TARGET_RSS_GROWTH
          and r["db_growth"] < TARGET_DB_GROWTH and r["lost"] == 0 and r["results_lost"] == 0)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
