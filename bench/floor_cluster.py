"""N tables' traffic through the floor cluster while K nodes are SIGKILLed one after another.

The parts are the real ones, each a process: a floor mosquitto (bench/floor.py's
``start_broker``), the relay (``python -m baccarat.floor.relay``, account relay-floor),
three nats-server nodes (``baccarat.floor.nodes.LocalCluster``, the stream R3) and the
recorder (``baccarat record --cluster``) into SQLite. The offer is bench/floor_traffic.py's:
a real table's recorded bodies replayed at N tables, one input a second at each (about a
card a second, a real table's pace), with fresh ``seq`` and ``ts``.

After ``--warmup`` seconds, K nodes are killed in turn, evenly over ``--seconds``, each
brought back ``--down`` seconds later (before the next): the stream's leader each time
(the worst case: the stream waits for a Raft election), or a follower if the leader is
the node that last came back (``--victim follower``: a node that leads neither the stream
nor the recorder's consumer where there is one; each kill says what its node led). At the end, once
the relay has caught up, one JSON line (``--json``; else a few readable lines):

- ``tables``, ``events`` (messages offered), ``stored`` (of them in the database),
- ``lost`` (offered, not stored), ``twice`` (the stream's copies beyond one, plus the
  database's conflicts: a message stored twice under one key is impossible by the key),
- ``failover_s``: the worst, over the kills, of the time from a node's death to the first
  event sent after it stored by the recorder (through the nodes left),
- ``p99_ms`` / ``p50_ms``: card ``ts`` to the recorder's receipt, every card of the run;
  ``p99_steady_ms``: the same without the ``--down`` + 10 s after each kill,
- ``load``: the machine's 1-minute load average at the end (other sessions share it).

    python bench/floor_cluster.py --tables 200 --kill 2 --json [--seconds 60]
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
import time
from pathlib import Path
from typing import Any

from floor import baccarat, free_port, lost, percentile, start_broker, stored_seqs
from floor_traffic import Offer, capture, inputs

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from baccarat.floor.cluster import ClusterAddress, connect  # noqa: E402
from baccarat.floor.nodes import PASSWORD, LocalCluster  # noqa: E402

STREAM_BYTES = 1024**3


def query(db: str, sql: str, *params: Any) -> Any:
    with contextlib.closing(sqlite3.connect(db, timeout=30)) as connection:
        return connection.execute(sql, params).fetchone()[0]


def wait_log(path: Path, text: str, process: subprocess.Popen[bytes], within: float) -> None:
    deadline = time.monotonic() + within
    while text not in path.read_text(errors="replace"):
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"no {text!r} from {path.name}:\n"
                             f"{path.read_text(errors='replace')[-3000:]}")
        time.sleep(0.1)


def first_after(db: str, since: float, within: float) -> float | None:
    """Seconds from ``since`` to the first message sent after it that the recorder stored."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        got = query(db, "SELECT min(received) FROM messages WHERE ts > ?", since)
        if got is not None:
            return float(got) - since
        time.sleep(0.02)
    return None


def stream_messages(urls: list[str]) -> int:
    async def ask() -> int:
        client = await connect(ClusterAddress(tuple(urls), "recorder", PASSWORD, "bench"))
        try:
            info = await client.jetstream(timeout=10).stream_info("BACCARAT")
            return int(info.state.messages)
        finally:
            await client.close()

    return asyncio.run(ask())


def start_relay(folder: Path, port: int, cluster: LocalCluster,
                processes: list[subprocess.Popen[bytes]]) -> None:
    """The relay (``python -m baccarat.floor.relay``) from the floor broker to the cluster."""
    relay_log = folder / "relay.log"
    relay = subprocess.Popen(
        [sys.executable, "-m", "baccarat.floor.relay", "--broker", f"127.0.0.1:{port}",
         "--servers", ",".join(cluster.urls), "--user", "relay-floor",
         "--nats-password", PASSWORD, "--client-id", "relay-floor"],
        stdout=relay_log.open("wb"), stderr=subprocess.STDOUT,
    )
    processes.append(relay)
    wait_log(relay_log, "relaying", relay, 120)


def start_bridge(folder: Path, port: int, cluster: LocalCluster) -> subprocess.Popen[bytes]:
    """A floor mosquitto bridged to the nodes' MQTT listeners.

    MQTT 3.1.1 (nats-server 2.9's), QoS 1, a persistent session; the first node that
    answers, the next in turn when it fails.
    """
    addresses = " ".join(f"127.0.0.1:{node.mqtt_port}" for node in cluster.nodes)
    config = folder / "mosquitto.conf"
    lines = [
        "per_listener_settings false", f"listener {port} 127.0.0.1", "allow_anonymous true",
        "persistence true", f"persistence_location {folder}/", "max_queued_messages 1000000",
        "max_inflight_messages 1000", "log_dest stderr", "log_type error", "log_type warning",
        "log_type notice",
        "connection floor-cluster", f"address {addresses}", "round_robin false",
        "remote_username relay-floor", f"remote_password {PASSWORD}",
        "remote_clientid bridge-floor", "bridge_protocol_version mqttv311",
        "cleansession false", "topic baccarat/+/+ out 1", "restart_timeout 1",
        "keepalive_interval 5", "notifications false",
    ]
    if os.geteuid() == 0:
        lines.append("user root")
    config.write_text("\n".join(lines) + "\n")
    return subprocess.Popen(
        ["/usr/sbin/mosquitto", "-c", str(config)],
        stdout=subprocess.DEVNULL, stderr=(folder / "mosquitto.log").open("wb"),
    )


def run(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    groups = inputs(capture(1))
    db = str(folder / "floor.db")
    (folder / "password").write_text(PASSWORD)
    bridge = args.via == "bridge"
    cluster = LocalCluster(folder / "cluster", max_file_store="4GB", mqtt=bridge)
    cluster.start()
    port = free_port()
    broker = start_bridge(folder, port, cluster) if bridge else start_broker(folder, port)
    processes: list[subprocess.Popen[bytes]] = []
    try:
        recorder_log = folder / "recorder.log"
        recorder = subprocess.Popen(
            baccarat("record", "--cluster", ",".join(cluster.urls), "--cluster-user", "recorder",
                     "--password-file", str(folder / "password"), "--db", db,
                     "--shuffle-hours", "0", "--stream-bytes", str(STREAM_BYTES)),
            stdout=recorder_log.open("wb"), stderr=subprocess.STDOUT,
        )
        processes.append(recorder)
        wait_log(recorder_log, "recording stream", recorder, 120)
        if bridge:
            wait_log(folder / "mosquitto.log", "Connecting bridge", broker, 30)
            time.sleep(2)
        else:
            start_relay(folder, port, cluster, processes)

        offer = Offer(port, args.tables, groups)
        started = time.time()
        offer.start()
        time.sleep(args.warmup)
        kills: list[dict[str, Any]] = []
        gap = args.seconds / (args.kill + 1)
        last: int | None = None
        for n in range(args.kill):
            time.sleep(max(0.0, started + args.warmup + gap * (n + 1) - time.time()))
            leader = cluster.stream_leader("BACCARAT")
            consumer = cluster.stream_leader("BACCARAT", "recorder")
            victim = leader
            if args.victim == "follower":  # leads neither the stream nor the consumer
                spare = [i for i in range(3) if i not in (leader, consumer, last)]
                victim = spare[0] if spare else None
            if victim is None or victim == last:
                victim = next(i for i in range(3) if i not in (leader, last))
            at = time.time()
            cluster.kill(victim)
            failover = first_after(db, at, args.down)
            time.sleep(max(0.0, at + args.down - time.time()))
            cluster.start_node(victim)
            if failover is None:  # nothing through the others while it was down
                failover = first_after(db, at, 60)
            kills.append({"node": cluster.nodes[victim].name, "leader": victim == leader,
                          "consumer_leader": victim == consumer,
                          "at": at, "failover_s": failover})
            last = victim
        time.sleep(max(0.0, started + args.warmup + args.seconds - time.time()))
        offer.stop()
        ended = time.time()
        expected = dict(offer.last_seq)
        want = {table: set(range(1, last_seq + 1)) for table, last_seq in expected.items()}
        deadline = time.monotonic() + 120
        while True:
            got = stored_seqs(f"sqlite:///{db}")
            missing = lost(want, got)
            if not missing or time.monotonic() > deadline:
                break
            time.sleep(1)
        events = offer.messages
        in_stream = stream_messages(cluster.urls)
        conflicts = query(db, "SELECT count(*) FROM conflicts")
        latencies = [float(row) * 1000 for row in _latencies(db, started, ended)]
        quiet = [
            float(row) * 1000 for row in _latencies(db, started, ended, [
                (k["at"], k["at"] + args.down + 10) for k in kills])
        ]
        failovers = [k["failover_s"] for k in kills]
        return {
            "tables": args.tables, "events": events,
            "stored": sum(len(s & want.get(t, set())) for t, s in got.items()),
            "lost": missing, "twice": max(0, in_stream - events) + conflicts,
            "failover_s": None if None in failovers else round(max(failovers, default=0.0), 3),
            "p50_ms": round(percentile(latencies, 0.5), 1) if latencies else None,
            "p99_ms": round(percentile(latencies, 0.99), 1) if latencies else None,
            "p99_steady_ms": round(percentile(quiet, 0.99), 1) if quiet else None,
            "kills": [{k: v for k, v in kill.items() if k != "at"} for kill in kills],
            "via": args.via, "seconds": args.seconds, "load": round(os.getloadavg()[0], 2),
        }
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
        broker.terminate()
        broker.wait(10)
        cluster.close()


def _latencies(db: str, since: float, until: float,
               without: list[tuple[float, float]] | None = None) -> list[float]:
    sql = ("SELECT received - ts FROM messages WHERE type = 'card' AND ts IS NOT NULL"
           " AND ts >= ? AND ts < ?")
    params: list[float] = [since, until]
    for start, end in without or []:
        sql += " AND NOT (ts >= ? AND ts < ?)"
        params += [start, end]
    with contextlib.closing(sqlite3.connect(db, timeout=30)) as connection:
        return [row[0] for row in connection.execute(sql, params)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--kill", type=int, default=2, help="nodes killed one after another")
    parser.add_argument("--seconds", type=float, default=60.0,
                        help="the run after the warmup (the kills spread over it)")
    parser.add_argument("--warmup", type=float, default=10.0)
    parser.add_argument("--down", type=float, default=5.0,
                        help="seconds a killed node stays down")
    parser.add_argument("--victim", choices=("leader", "follower"), default="leader")
    parser.add_argument("--via", choices=("relay", "bridge"), default="relay",
                        help="into the cluster by our relay, or by the floor mosquitto's"
                        " bridge to nats-server's MQTT listener (the comparison)")
    parser.add_argument("--json", action="store_true", help="one JSON line")
    parser.add_argument("--keep", type=Path, help="keep the run's folder here (logs, database)")
    args = parser.parse_args()
    if args.kill < 0 or args.kill > 10 or args.tables < 1:
        parser.error("--kill 0 to 10, --tables 1 or more")
    with contextlib.ExitStack() as stack:
        if args.keep is not None:
            args.keep.mkdir(parents=True)
            folder = args.keep
        else:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="floor-cluster-")))
        result = run(args, folder)
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>14}: {value}")
    return 0 if result["lost"] == 0 and result["twice"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
