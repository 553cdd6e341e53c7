"""N tables' traffic into a floor broker, the recorder and a console, without N daemons.

Once (kept in ``~/.cache/baccarat/floor_traffic-shoes.jsonl``): ``baccarat sim floor --tables 1``
(a real daemon and a virtual framed shoe) deals fast into a private mosquitto, and every
body its table publishes is kept with its topic, until it has dealt ``--shoes`` shoes.

Then, for each database: a fresh mosquitto (the floor broker: persistence on, a large queue
per session), ``baccarat record`` into a fresh database, a console-like subscriber
(``bench/floor.py``'s ``Pit``: paho, MQTT 5, ``baccarat/+/#`` at QoS 1) and the offer:
N tables, each replaying the recorded bodies in order with a fresh ``seq`` (its own, up
by one) and ``ts`` (now), one input's messages at a time (those that share a recorded
``ts``), one input a second at each table (about a card a second, a real table's pace),
the tables spread over the second; QoS 1 on a few paho clients. For ``--seconds``:
messages and bytes per second offered and stored, how far the recorder falls behind (the
messages offered and not yet stored, at the end and at worst), card to console p50/p99,
the database's growth per table-hour and per shoe; then whether anything was lost (every
offered ``seq`` in the database, as a fact or as a derived view's place).

Before the timed run, the growth per shoe (``--growth-tables``, 0: not measured): that many
tables are offered the recorded shoes (``--shoes``, 2) from the start, input by input, each
round of inputs stored before the next (a batch holds one input of each table, as at a
table's pace), and the bytes of each table and index are taken after each shoe (bytes do
not depend on the machine's load). The first shoe pays each table's first index pages;
the second is a floor's steady state.

    python bench/floor_traffic.py [--tables 1000] [--seconds 60] [--postgres]
                                  [--recorder-src DIR] [--no-timed] [--growth-tables 10]
                                  [--broker-log-all] [--keep DIR]

The offer begins once the recorder has stored a probe (it has subscribed: what a table
publishes before the recorder's session exists is never queued for it), and ends once
the broker has acknowledged all of it; a recorder that exits ends the bench with its log.
``--broker-log-all`` has the timed run's mosquitto log every packet (``log_type all``),
``--keep DIR`` keeps each run's folder (logs, database) to read afterwards.

``--recorder-src DIR`` runs the recorder from another checkout's ``src`` (the figures
before issue 22: ``git archive <commit> src | tar -x -C DIR``).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from floor import Pit, baccarat, free_port, percentile, start_broker  # bench/floor.py

HERE = Path(__file__).resolve().parent
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "baccarat"
"""Where the recorded table is kept, out of the repository (2 MB a shoe)."""
CLIENTS = 4
"""paho clients the offer is spread over (each its own network thread)."""
_SEQ = re.compile(rb'"seq":\d+')
_TS = re.compile(rb'"ts":[-0-9.e+]+|"ts":null')


def capture(shoes: int) -> list[tuple[str, bytes]]:
    """A real table's bodies for ``shoes`` shoes, recorded once and then read back."""
    name = "floor_traffic-shoes.jsonl" if shoes == 1 else f"floor_traffic-{shoes}-shoes.jsonl"
    kept_in = CACHE / name
    if kept_in.exists():
        return [(t, p.encode()) for t, p in map(json.loads, kept_in.read_text().splitlines())]
    with tempfile.TemporaryDirectory(prefix="floor-capture-") as tmp:
        folder, port = Path(tmp), free_port()
        broker = start_broker(folder, port)
        got: list[tuple[str, bytes]] = []
        shoe_numbers: set[int] = set()
        client = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)

        def keep(_c: Any, _u: Any, message: mqtt.MQTTMessage) -> None:
            if b'"seq"' in message.payload:
                topic = re.sub(r"^baccarat/[^/]+/", "baccarat/{table}/", message.topic)
                got.append((topic, bytes(message.payload)))
                if message.topic.endswith("/shoe"):
                    shoe_numbers.add(json.loads(message.payload)["shoe"])

        client.on_message = keep
        client.connect("127.0.0.1", port)
        client.subscribe("baccarat/+/#", qos=1)
        client.loop_start()
        sim = subprocess.Popen(
            baccarat("sim", "floor", "--tables", "1", "--broker", f"127.0.0.1:{port}",
                     "--pace", "0.01", "--no-fsync", "--folder", str(folder / "tables")),
            stdout=(folder / "sim.log").open("wb"), stderr=subprocess.STDOUT,
        )
        try:
            while len(shoe_numbers) <= shoes:  # the next shoe began: the last one is whole
                time.sleep(0.5)
                if sim.poll() is not None:
                    log = (folder / "sim.log").read_text()
                    raise SystemExit(f"the simulated table stopped: {log}")
        finally:
            sim.send_signal(signal.SIGTERM)
            sim.wait(30)
            client.loop_stop()
            broker.terminate()
            broker.wait(10)
    last = max(shoe_numbers)
    cut = next(i for i, (t, p) in enumerate(got)
               if t.endswith("/shoe") and json.loads(p)["shoe"] == last)
    kept = got[:cut]
    kept_in.parent.mkdir(parents=True, exist_ok=True)
    kept_in.write_text("".join(json.dumps([t, p.decode()]) + "\n" for t, p in kept))
    return kept


def inputs(bodies: list[tuple[str, bytes]]) -> list[list[tuple[str, bytes]]]:
    """The bodies grouped by the input that made them (the same recorded ``ts``)."""
    groups: list[list[tuple[str, bytes]]] = []
    last: bytes | None = None
    for topic, payload in bodies:
        found = _TS.search(payload)
        ts = found.group() if found else b""
        if not groups or ts != last:
            groups.append([])
        groups[-1].append((topic, payload))
        last = ts
    return groups


class Offer:
    """N tables' inputs, one a second at each, with fresh seq and ts, on a few clients."""

    def __init__(self, port: int, tables: int, groups: list[list[tuple[str, bytes]]]) -> None:
        self.tables = [f"B{n:04d}" for n in range(tables)]
        self.groups = groups
        self.messages = 0
        self.bytes = 0
        self.cards = 0
        self.last_seq: dict[str, int] = {}
        self.inputs = 0
        self._stop = threading.Event()
        self._clients = []
        self._last: dict[int, mqtt.MQTTMessageInfo] = {}
        """Each client's last publish: once it is acknowledged, all before it are."""
        for n in range(CLIENTS):
            client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"offer-{n}",
                                 protocol=mqtt.MQTTv5)
            client.max_inflight_messages_set(1000)
            client.max_queued_messages_set(0)
            client.connect("127.0.0.1", port)
            client.loop_start()
            self._clients.append(client)
        self._thread = threading.Thread(target=self._run, name="offer", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.ident is not None:  # started (the growth phase offers by hand)
            self._thread.join()
        for info in self._last.values():  # all offered reached the broker, none dropped here
            info.wait_for_publish(60)
        for client in self._clients:
            client.disconnect()
            client.loop_stop()

    def _run(self) -> None:
        n = len(self.tables)
        start = time.monotonic()
        tick = 0
        while not self._stop.is_set():
            second = int(tick // n)
            table_index = tick % n
            due = start + second + table_index / n
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            self._offer(table_index, second)
            tick += 1

    def _offer(self, index: int, second: int) -> None:
        self.offer_input(index, self.groups[(second + index * 7) % len(self.groups)])

    def offer_input(self, index: int, group: list[tuple[str, bytes]]) -> None:
        """One input's messages at table ``index``, with its next seq and ts now."""
        table = self.tables[index]
        number = index % CLIENTS
        client = self._clients[number]
        now = f'"ts":{time.time()!r}'.encode()
        for topic, payload in group:
            seq = self.last_seq.get(table, 0) + 1
            self.last_seq[table] = seq
            body = _SEQ.sub(f'"seq":{seq}'.encode(), payload, count=1)
            body = _TS.sub(now, body, count=1)
            self._last[number] = client.publish(topic.replace("{table}", table), body, qos=1,
                                                retain=topic.rsplit("/", 1)[-1] in RETAINED)
            self.messages += 1
            self.bytes += len(body)
        self.inputs += 1


RETAINED = frozenset({"shoe", "round", "alarms", "roads", "recall"})


def database_bytes(db: str) -> int:
    """Bytes the database's tables and indexes use (:func:`relation_bytes`)."""
    return sum(relation_bytes(db).values())


def count(db: str, sql: str, plain: str | None = None) -> int:
    """A COUNT the database answers.

    ``plain`` if it has not the tables of ``sql``; 0 if it has neither (the recorder has
    not made its tables yet).
    """
    if db.startswith("postgresql:"):
        import psycopg

        errors: tuple[type[Exception], ...] = (psycopg.Error,)
        connect: Any = lambda: psycopg.connect(db, autocommit=True)  # noqa: E731
    else:
        import sqlite3

        errors = (sqlite3.Error,)
        connect = lambda: contextlib.closing(sqlite3.connect(db))  # noqa: E731
    with connect() as connection:
        for query in (sql, plain):
            if query is None:
                continue
            try:
                return int(connection.execute(query).fetchone()[0])
            except errors:
                continue
    return 0


ATTACHED = ("SELECT COALESCE(SUM(LENGTH(views) - LENGTH(REPLACE(views, ' ', '')) + 1), 0)"
            " FROM messages WHERE views IS NOT NULL")
"""Derived views whose place a fact's row keeps (a database with the ``views`` column)."""


def stored(db: str) -> int:
    """Messages the database holds: rows, and the derived views' places if it has them.

    A place of its own (``derived``), or on a fact's row (``views``).
    """
    return count(
        db, f"SELECT (SELECT COUNT(*) FROM messages) + ({ATTACHED})"
        " + (SELECT COUNT(*) FROM derived)",
        "SELECT (SELECT COUNT(*) FROM messages) + (SELECT COUNT(*) FROM derived)",
    ) or count(db, "SELECT COUNT(*) FROM messages")


def relation_bytes(db: str) -> dict[str, int]:
    """Bytes in use by each table and index of the database.

    SQLite: after a checkpoint, the WAL excluded; PostgreSQL: each table with its TOAST.
    """
    if db.startswith("postgresql:"):
        import psycopg

        with psycopg.connect(db) as connection:
            rows = connection.execute(
                "SELECT c.relname, pg_table_size(c.oid) FROM pg_class c"
                " JOIN pg_namespace n ON n.oid = c.relnamespace"
                " WHERE n.nspname = 'public' AND c.relkind IN ('r', 'i')"
            ).fetchall()
            return {str(name): int(size) for name, size in rows}
    import sqlite3

    with contextlib.closing(sqlite3.connect(db)) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        rows = connection.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").fetchall()
    return {str(name): int(size) for name, size in rows}


def kept(db: str) -> tuple[int, int, int]:
    """Derived views kept whole (in ``messages``), as places on a fact's row, and of their own.

    The last in ``derived``.
    """
    whole = count(db, "SELECT COUNT(*) FROM messages WHERE type IN ('roads', 'round', 'recall')")
    return whole, count(db, ATTACHED), count(db, "SELECT COUNT(*) FROM derived")


def start_recording(db: str, args: argparse.Namespace, port: int,
                    folder: Path) -> subprocess.Popen[bytes]:
    """``baccarat record`` into ``db`` (from ``--recorder-src`` if given)."""
    env = dict(os.environ)
    if args.recorder_src:
        env["PYTHONPATH"] = str(Path(args.recorder_src).resolve())
    return subprocess.Popen(
        baccarat("record", "--broker", f"127.0.0.1:{port}", "--db", db, "--log-level",
                 "WARNING"),
        stdout=(folder / "recorder.log").open("wb"), stderr=subprocess.STDOUT, env=env,
    )


PROBE_TABLE = "bench-probe"
STALL_LINE = "nothing delivered for"
"""What the recorder's watchdog logs when it finds the broker connection stalled."""
RECORDING_WITHIN = 120.0
"""Seconds the recorder may take to start and subscribe, however loaded the machine."""


def wait_recording(port: int, db: str, recorder: subprocess.Popen[bytes],
                   folder: Path) -> float:
    """Seconds until the recorder stores a probe (a status on table bench-probe).

    The offer must not begin before the recorder has subscribed: what a table publishes
    before the recorder's session exists is not queued for it (the broker keeps only each
    retained topic's newest body), so it would count as lost. A recorder that exits first
    ends the bench with its log.
    """
    started = time.monotonic()
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="bench-probe",
                         protocol=mqtt.MQTTv5)
    client.connect("127.0.0.1", port)
    client.loop_start()
    try:
        body = json.dumps({"schema": 1, "type": "status", "state": "online"})
        while time.monotonic() < started + RECORDING_WITHIN:
            client.publish(f"baccarat/{PROBE_TABLE}/status", body, qos=1).wait_for_publish(10)
            if count(db, f"SELECT COUNT(*) FROM status WHERE tbl = '{PROBE_TABLE}'"):
                return time.monotonic() - started
            if recorder.poll() is not None:
                log = (folder / "recorder.log").read_text(errors="replace")[-3000:]
                raise SystemExit(f"the recorder exited ({recorder.returncode}):\n{log}")
            time.sleep(0.2)
    finally:
        client.disconnect()
        client.loop_stop()
    raise SystemExit(f"the recorder stored nothing within {RECORDING_WITHIN:.0f} s")


def by_shoe(groups: list[list[tuple[str, bytes]]]) -> list[list[list[tuple[str, bytes]]]]:
    """The inputs shoe by shoe (a shoe starts at a shoe message with a new number)."""
    shoes: list[list[list[tuple[str, bytes]]]] = [[]]
    current = None
    for group in groups:
        numbers = [json.loads(p)["shoe"] for t, p in group if t.endswith("/shoe")]
        if numbers and numbers[0] != current:
            if current is not None:
                shoes.append([])
            current = numbers[0]
        shoes[-1].append(group)
    return shoes


def dead_tuples(db: str) -> dict[str, int]:
    """PostgreSQL's dead tuples by table (UPDATEs and DELETEs not yet vacuumed); {} on SQLite."""
    if not db.startswith("postgresql:"):
        return {}
    import psycopg

    with psycopg.connect(db) as connection:
        rows = connection.execute(
            "SELECT relname, n_dead_tup FROM pg_stat_user_tables WHERE n_dead_tup > 0"
        ).fetchall()
    return {str(name): int(dead) for name, dead in rows}


def growth(db: str, args: argparse.Namespace, groups: list[list[tuple[str, bytes]]],
           folder: Path) -> dict[str, Any]:
    """The database's bytes per shoe, by table and index, for each recorded shoe.

    ``--growth-tables`` tables are each offered the recorded shoes from the start, input by
    input: every table's next input, then a wait until the recorder stored them all, so that
    a batch holds one input of each table, as at a table's pace. The first shoe pays each
    table's first pages of every index; the second is a floor's steady state.
    """
    port = free_port()
    broker = start_broker(folder, port)
    recorder = start_recording(db, args, port, folder)
    wait_recording(port, db, recorder, folder)  # the recorder subscribed, its tables made
    snapshots = [relation_bytes(db)]
    offer = Offer(port, args.growth_tables, groups)
    shoes = by_shoe(groups)
    for number, shoe in enumerate(shoes):
        for group in shoe:  # every table's next input, in order
            for index in range(args.growth_tables):
                offer.offer_input(index, group)
            deadline = time.time() + 60
            while stored(db) < offer.messages and time.time() < deadline:
                time.sleep(0.01)
        if number < len(shoes) - 1:
            snapshots.append(relation_bytes(db))
    lost = offer.messages - stored(db)
    offer.stop()
    recorder.send_signal(signal.SIGTERM)  # it writes the latest views it held back
    recorder.wait(60)
    broker.terminate()
    broker.wait(10)
    snapshots.append(relation_bytes(db))
    tables = args.growth_tables
    per_shoe = [
        {name: (after.get(name, 0) - before.get(name, 0)) / tables for name in after}
        for before, after in itertools.pairwise(snapshots)
    ]
    whole, attached, places = kept(db)
    return {
        "db": "postgresql" if db.startswith("postgresql:") else "sqlite", "tables": tables,
        "lost": lost, "per_shoe": per_shoe, "views_whole": whole, "views_attached": attached,
        "views_places": places, "dead": dead_tuples(db),
    }


def growth_report(r: dict[str, Any]) -> str:
    """A line a shoe: its growth by table and index, apart from ``latest`` and the suspects.

    ``latest`` is once per table; ``shuffle_suspects`` are the floor-wide shuffle check's
    findings, here every shoe (each table is offered the same recorded shoes).
    """
    lines = []
    for number, by_relation in enumerate(r["per_shoe"], 1):
        apart = {name: sum(size for n, size in by_relation.items() if n.startswith(name))
                 for name in ("latest", "shuffle_suspects")}
        total = sum(by_relation.values()) - sum(apart.values())
        parts = ", ".join(f"{name} {size / 1e3:.1f}" for name, size in
                          sorted(by_relation.items(), key=lambda item: -item[1])
                          if size and not name.startswith(tuple(apart)))
        lines.append(f"{r['db']}: {r['tables']} tables, shoe {number}: database"
                     f" +{total / 1e3:.1f} kB per shoe (kB by table and index: {parts});"
                     f" apart: latest {apart['latest'] / 1e3:.1f} kB a table, shuffle"
                     f" suspects {apart['shuffle_suspects'] / 1e3:.1f} kB")
    dead = ", ".join(f"{name} {n}" for name, n in sorted(r["dead"].items())) or "none"
    lines.append(
        f"{r['db']}: derived views kept whole {r['views_whole']}, as places on a fact's row"
        f" {r['views_attached']}, of their own {r['views_places']}; dead tuples: {dead};"
        f" lost {r['lost']}"
    )
    return "\n".join(lines)


def run(db: str, args: argparse.Namespace, groups: list[list[tuple[str, bytes]]],
        folder: Path) -> dict[str, Any]:
    port = free_port()
    broker = start_broker(folder, port, args.broker_log_all)
    recorder = start_recording(db, args, port, folder)
    pit = Pit(port)
    pit.start()
    pit.ready.wait(10)
    subscribed = wait_recording(port, db, recorder, folder)  # before the offer
    print(f"the recorder stored its first message {subscribed:.1f} s after it was started",
          flush=True)
    offer = Offer(port, args.tables, groups)
    offer.start()
    time.sleep(args.warmup)
    pit.measuring = True
    m0, b0, s0, d0, t0 = offer.messages, offer.bytes, stored(db), database_bytes(db), time.time()
    worst = 0
    while time.time() < t0 + args.seconds:
        time.sleep(5)
        worst = max(worst, offer.messages - stored(db))
    m1, b1, s1, t1 = offer.messages, offer.bytes, stored(db), time.time()
    behind_at_end = m1 - s1
    pit.measuring = False
    d1 = database_bytes(db)
    offer.stop()
    caught_up = time.time()
    while stored(db) < offer.messages and time.time() < caught_up + 120:
        time.sleep(1)
    catch_up = time.time() - caught_up
    final = stored(db)
    pit.stop()
    recorder.send_signal(signal.SIGTERM)
    exit_code = recorder.wait(60)
    broker.terminate()
    broker.wait(10)
    stalls = (folder / "recorder.log").read_text(errors="replace").count(STALL_LINE)
    seconds = t1 - t0
    per_table_hour = (d1 - d0) / args.tables / (seconds / 3600)
    per_input = (d1 - d0) / max(1, (m1 - m0)) * (sum(map(len, groups)) / len(groups))
    return {
        "db": "postgresql" if db.startswith("postgresql:") else "sqlite",
        "tables": args.tables, "seconds": seconds,
        "offered_per_s": (m1 - m0) / seconds, "offered_bytes_per_s": (b1 - b0) / seconds,
        "stored_per_s": (s1 - s0) / seconds, "behind_at_end": behind_at_end,
        "behind_worst": max(worst, behind_at_end), "catch_up_s": catch_up,
        "lost": offer.messages - final,
        "card_p50": percentile(pit.latencies or [0.0], 0.50),
        "card_p99": percentile(pit.latencies or [0.0], 0.99),
        "cards": len(pit.latencies),
        "growth_per_table_hour": per_table_hour,
        "growth_per_shoe": per_input * len(groups),
        "stalls": stalls, "recorder_exit": exit_code,
    }


def report(r: dict[str, Any]) -> str:
    return (
        f"{r['db']}: {r['tables']} tables, {r['seconds']:.0f} s:"
        f" offered {r['offered_per_s']:.0f} msg/s ({r['offered_bytes_per_s'] / 1e6:.2f} MB/s),"
        f" stored {r['stored_per_s']:.0f} msg/s; behind {r['behind_at_end']} at the end"
        f" (worst {r['behind_worst']}), caught up in {r['catch_up_s']:.1f} s; lost {r['lost']};"
        f" card to console p50 {r['card_p50'] * 1000:.0f} ms p99 {r['card_p99'] * 1000:.0f} ms"
        f" ({r['cards']} cards); database +{r['growth_per_table_hour'] / 1e3:.0f} kB per"
        f" table-hour, {r['growth_per_shoe'] / 1e3:.0f} kB per shoe; the watchdog's stalls"
        f" {r['stalls']}, the recorder's exit code {r['recorder_exit']}"
    )


def measure(args: argparse.Namespace, groups: list[list[tuple[str, bytes]]], folder: Path,
            new_db: Any) -> None:
    """The growth per shoe and the timed run, each on a fresh database and broker."""
    if args.growth_tables:
        (folder / "growth").mkdir(parents=True)
        print(growth_report(growth(new_db(folder / "growth"), args, groups, folder / "growth")),
              flush=True)
    if not args.no_timed:
        (folder / "timed").mkdir(parents=True)
        print(report(run(new_db(folder / "timed"), args, groups, folder / "timed")), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--warmup", type=float, default=10)
    parser.add_argument("--shoes", type=int, default=2,
                        help="shoes recorded once (the growth's second is the steady state)")
    parser.add_argument("--postgres", action="store_true",
                        help="also on a private PostgreSQL cluster (tests/support/postgres.py)")
    parser.add_argument("--no-sqlite", action="store_true")
    parser.add_argument("--recorder-src", help="run the recorder from this src folder")
    parser.add_argument("--growth-tables", type=int, default=10,
                        help="tables offered the recorded shoes, input by input, for the"
                        " database's growth per shoe (0: not measured)")
    parser.add_argument("--no-timed", action="store_true",
                        help="only the growth per shoe, not the timed run at a table's pace")
    parser.add_argument("--broker-log-all", action="store_true",
                        help="the timed run's mosquitto logs every packet (log_type all)")
    parser.add_argument("--keep", type=Path,
                        help="keep the runs' folders (logs, databases) in this new folder")
    args = parser.parse_args()
    bodies = capture(args.shoes)
    groups = inputs(bodies)
    size = sum(len(p) for _, p in bodies)
    print(f"recorded: {len(bodies)} messages, {len(groups)} inputs, {size / 1e6:.2f} MB a shoe")
    with contextlib.ExitStack() as stack:
        if args.keep is not None:
            args.keep.mkdir(parents=True)
            tmp = str(args.keep)
        else:
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="floor-traffic-"))
        if not args.no_sqlite:
            measure(args, groups, Path(tmp) / "sqlite", lambda folder: str(folder / "floor.db"))
        if args.postgres:
            sys.path.insert(0, str(HERE.parent / "tests"))
            from support.postgres import Postgres

            cluster = Postgres().start()
            try:
                measure(args, groups, Path(tmp) / "postgresql", lambda _: cluster.new_database())
            finally:
                cluster.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
