"""The floor's record is provable: ``baccarat verify --db`` on a real floor, then tampered.

Three real table daemons with virtual framed shoes deal a shoe each through a real
mosquitto into two real recorders (``baccarat record``), one on SQLite and one on a
private PostgreSQL cluster. The database verifies against the keys the daemons made;
then each tamper an inspector looks for is made in turn (a card changed in a stored
body, a row deleted, two rows' bodies swapped, a body replaced together with its stored
hash), ``verify`` must name its seq, and the tamper is undone.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from baccarat.chain import Seal, event_hash, make_key, public_text
from baccarat.floor.records import published
from baccarat.floor.store import open_store
from baccarat.sim_hardware.virtual_shoe import VirtualShoe
from floor.test_recorder import (
    FLOOR_BROKER,
    WITHIN,
    RecorderProcess,
    deal_shoe,
    recording,
    wait_until_stored,
)
from support.daemon import Daemon
from support.mosquitto import Mosquitto
from support.postgres import Postgres

TABLES = ("T1", "T2", "T3")


def verify(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "baccarat.cli", "verify", *args],
                          capture_output=True, text=True, timeout=120, check=False)


def forged_event(folder: Path) -> bytes:
    """A card of table T1 far past its seqs, signed by another key than the table's."""
    from baccarat.chain import Sealer

    body = (b'{"schema":1,"seq":100000,"ts":1.0,"type":"card","shoe":1,"round":99,'
            b'"position":"P1","card":"AS"}')
    return Sealer(make_key(folder / "forger.key"), "T1").seal(100000, body)


class Raw:
    """The database's rows, by SQL, as someone with write access would change them."""

    def __init__(self, url: str) -> None:
        self.url = url
        if url.startswith("postgresql://"):
            import psycopg

            self.db: Any = psycopg.connect(url, autocommit=True)
            self.mark = "%s"
        else:
            import sqlite3

            self.db = sqlite3.connect(url, isolation_level=None)
            self.mark = "?"

    def run(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        cursor = self.db.cursor()
        cursor.execute(sql.replace("?", self.mark), params)
        rows = list(cursor.fetchall()) if cursor.description else []
        cursor.close()
        return rows

    def close(self) -> None:
        self.db.close()


def card_rows(raw: Raw, table: str) -> list[tuple[int, str]]:
    return [(int(seq), str(body)) for seq, body in raw.run(
        "SELECT seq, body FROM messages WHERE tbl = ? AND type = 'card' ORDER BY seq", table)]


def first_break(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    return next(x for x in result.stdout.splitlines() if x.startswith("first break:"))


def tamper_and_verify(url: str, keys: Path, table: str) -> None:
    """Each tamper caught with its seq; undone, the record verifies again."""
    raw = Raw(url)
    try:
        cards = card_rows(raw, table)
        seq, body = cards[5]
        # one card changed in a stored body
        card = body.split('"card":"')[1][:2]
        other = "AS" if card != "AS" else "KD"
        raw.run("UPDATE messages SET body = ? WHERE tbl = ? AND seq = ?",
                body.replace(f'"card":"{card}"', f'"card":"{other}"'), table, seq)
        line = first_break(verify("--db", url, "--keys", str(keys), "--table", table))
        assert f"table {table}, seq {seq}: the stored hash is not the hash" in line
        raw.run("UPDATE messages SET body = ? WHERE tbl = ? AND seq = ?", body, table, seq)
        assert verify("--db", url, "--keys", str(keys), "--table", table).returncode == 0

        # a row deleted
        row = raw.run("SELECT seq, shoe, ts, received, tbl, type, views, body FROM messages"
                      " WHERE tbl = ? AND seq = ?", table, seq)[0]
        raw.run("DELETE FROM messages WHERE tbl = ? AND seq = ?", table, seq)
        line = first_break(verify("--db", url, "--keys", str(keys), "--table", table))
        assert f"seq {seq} to {seq} missing" in line or f"seq {seq}:" in line, line
        raw.run("INSERT INTO messages (seq, shoe, ts, received, tbl, type, views, body)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)", *row)
        assert verify("--db", url, "--keys", str(keys), "--table", table).returncode == 0

        # two rows swapped (two cards' bodies, each left under the other's seq)
        (a, body_a), (b, body_b) = cards[7], cards[9]
        assert body_a != body_b
        raw.run("UPDATE messages SET body = ? WHERE tbl = ? AND seq = ?", body_b, table, a)
        raw.run("UPDATE messages SET body = ? WHERE tbl = ? AND seq = ?", body_a, table, b)
        line = first_break(verify("--db", url, "--keys", str(keys), "--table", table))
        assert f"table {table}, seq {a}:" in line, line
        raw.run("UPDATE messages SET body = ? WHERE tbl = ? AND seq = ?", body_a, table, a)
        raw.run("UPDATE messages SET body = ? WHERE tbl = ? AND seq = ?", body_b, table, b)
        assert verify("--db", url, "--keys", str(keys), "--table", table).returncode == 0

        # a body replaced together with its stored hash
        seq, body = cards[11]
        card = body.split('"card":"')[1][:2]
        forged = body.replace(f'"card":"{card}"', '"card":"AS"' if card != "AS" else '"card":"KD"')
        ts, kind = raw.run("SELECT ts, type FROM messages WHERE tbl = ? AND seq = ?",
                           table, seq)[0]
        after, prev, key, sig, digest = raw.run(
            "SELECT after, prev, key, sig, hash FROM chain WHERE tbl = ? AND seq = ?", table, seq
        )[0]
        text = published(seq, ts, kind, forged).encode()
        new_hash = event_hash(table, text, Seal(bytes(prev), key, bytes(sig), after))
        raw.run("UPDATE messages SET body = ? WHERE tbl = ? AND seq = ?", forged, table, seq)
        raw.run("UPDATE chain SET hash = ? WHERE tbl = ? AND seq = ?", new_hash, table, seq)
        line = first_break(verify("--db", url, "--keys", str(keys), "--table", table))
        assert f"table {table}, seq {seq}:" in line
        assert "signature does not verify" in line
        raw.run("UPDATE messages SET body = ? WHERE tbl = ? AND seq = ?", body, table, seq)
        raw.run("UPDATE chain SET hash = ? WHERE tbl = ? AND seq = ?", bytes(digest), table, seq)
        assert verify("--db", url, "--keys", str(keys), "--table", table).returncode == 0
    finally:
        raw.close()


@pytest.mark.slow
async def test_a_floor_of_three_tables_verifies_and_every_tamper_is_named(
    tmp_path: Path, mosquitto_factory: Any, postgres: Postgres
) -> None:
    broker: Mosquitto = mosquitto_factory(persistence=True, extra_config=FLOOR_BROKER)
    databases = {"sqlite": str(tmp_path / "floor.db"), "postgresql": postgres.new_database()}
    lines = ["[tables]"]
    for table in TABLES:  # installed keys, so that the recorders know them from the start
        (tmp_path / table / "journal").mkdir(parents=True)
        public = make_key(tmp_path / table / "journal" / "table.key").public_key()
        lines.append(f'{table} = ["{public_text(public)}"]')
    keys = tmp_path / "floor-keys.toml"
    keys.write_text("\n".join(lines) + "\n")
    recorders = []
    for name, db in databases.items():
        recorder = RecorderProcess(tmp_path, broker, db, name)
        recorder.argv += ["--keys", str(keys)]
        recorders.append(recorder.start())
    daemons: dict[str, Daemon] = {}
    shoes: dict[str, VirtualShoe] = {}
    try:
        for db in databases.values():
            await recording(broker, db)
        for table in TABLES:
            shoes[table] = await VirtualShoe(
                str(tmp_path / f"shoe-{table}"), "framed", baud=115200
            ).__aenter__()
            folder = tmp_path / table
            daemons[table] = Daemon(folder, broker, device=str(tmp_path / f"shoe-{table}"),
                                    table=table, rules={"decks": 2})
            await asyncio.to_thread(daemons[table].start)
        await asyncio.gather(*(deal_shoe(shoes[t], seed=n) for n, t in enumerate(TABLES)))
        for db in databases.values():
            await wait_until_stored(db, daemons, WITHIN)
        for recorder in recorders:  # a clean floor: no break found as it came (but the
            for table in TABLES:  # probe on T0, which is unsigned)
                assert f"chain broken: table {table}" not in recorder.log()
        # a forged event, signed by a key the floor does not know: a floor alarm at once
        forged = forged_event(tmp_path)
        async with broker.client() as client:
            await client.subscribe("baccarat/floor/surveillance", qos=1)
            await client.publish("baccarat/T1/card", forged, qos=1)
            async with asyncio.timeout(20):
                async for message in client.messages:
                    finding = json.loads(message.payload)
                    if finding.get("type") == "chain_break":
                        break
        assert finding["table"] == "T1"
        assert "which the floor does not know" in finding["why"]
    finally:
        for daemon in daemons.values():
            daemon.close()
        for shoe in shoes.values():
            await shoe.__aexit__(None, None, None)
        for recorder in recorders:
            recorder.stop()
    for kind, url in databases.items():
        raw = Raw(url)
        try:  # the recorder's probe: no table's, unsigned; and the forged event
            raw.run("DELETE FROM messages WHERE tbl = 'T0'")
            raw.run("DELETE FROM messages WHERE tbl = 'T1' AND seq = ?", finding["seq"])
            raw.run("DELETE FROM chain WHERE tbl = 'T1' AND seq = ?", finding["seq"])
        finally:
            raw.close()
        result = verify("--db", url, "--keys", str(keys))
        assert result.returncode == 0, f"{kind}: {result.stdout}{result.stderr}"
        for table in TABLES:
            assert f"intact: table {table}:" in result.stdout
        for table in TABLES[:1]:
            tamper_and_verify(url, keys, table)
    for recorder in recorders:
        assert "Traceback" not in recorder.log()


def test_an_unknown_key_or_another_table_is_said_plainly(tmp_path: Path) -> None:
    """A database with a table no key is known for, and a key of another table."""
    from baccarat.chain import Sealer, split
    from baccarat.floor.records import Received

    key = make_key(tmp_path / "t.key")
    sealer = Sealer(key, "T1")
    body = (b'{"schema":1,"seq":1,"ts":1.0,"type":"card","shoe":1,"round":1,'
            b'"position":"P1","card":"9S"}')
    plain, seal = split(sealer.seal(1, body))
    store = open_store(str(tmp_path / "floor.db"))
    store.add([Received("T1", "baccarat/T1/card", json.loads(plain), plain.decode(), 1.0,
                        seal=seal)])
    store.close()
    other = make_key(tmp_path / "o.key")
    keys = tmp_path / "keys.toml"
    keys.write_text(f'[tables]\nT2 = ["{public_text(other.public_key())}"]\n')
    result = verify("--db", str(tmp_path / "floor.db"), "--keys", str(keys))
    assert result.returncode == 2
    assert "no key is known for table(s) T1" in result.stderr
    assert "Traceback" not in result.stderr
    # T1's events checked with T2's key given as T1's: the signatures are another key's
    keys.write_text(f'[tables]\nT1 = ["{public_text(other.public_key())}"]\n'
                    f'T2 = ["{public_text(key.public_key())}"]\n')
    result = verify("--db", str(tmp_path / "floor.db"), "--keys", str(keys))
    assert result.returncode == 1
    assert "which is table T2's: the record of another table" in result.stdout
    keys.write_text(f'[tables]\nT1 = ["{public_text(key.public_key())}"]\n')
    result = verify("--db", str(tmp_path / "floor.db"), "--keys", str(keys), "--table", "T9")
    assert result.returncode == 2
    assert "holds nothing of table T9" in result.stderr
    result = verify("--db", str(tmp_path / "floor.db"), "--keys", str(keys))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "intact: table T1: 1 event(s)" in result.stdout
