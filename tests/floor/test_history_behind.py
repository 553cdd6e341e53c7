"""``history --check --broker``: a tail the database is still taking is behind, not missing.

A real mosquitto retains a table's newer seq than a SQLite database holds. The check looks
again after ``--grace``: if the database moved meanwhile (here the test stores the next
message, as a recorder catching up does), the tail is behind, not missing, and the check
passes; if it did not, it is missing and says the database did not move.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from baccarat.floor.store import Received, open_store
from floor.test_history_tail import body, publish
from support.mosquitto import Mosquitto


def store(db: str, table: str, seqs: range) -> None:
    kinds = {1: "shoe", 2: "round"}
    s = open_store(db)
    messages = []
    for seq in seqs:
        b = body(table, seq, kinds.get(seq, "card"))
        messages.append(Received(table, f"baccarat/{table}/{b['type']}", b, json.dumps(b), 1.0))
    s.add(messages)
    s.close()


def start_check(db: str, broker: Mosquitto) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "baccarat.cli", "history", "--db", db, "--check",
         "--broker", f"127.0.0.1:{broker.port}", "--grace", "3"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def check(db: str, broker: Mosquitto) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "baccarat.cli", "history", "--db", db, "--check",
         "--broker", f"127.0.0.1:{broker.port}", "--grace", "3"],
        check=False, capture_output=True, text=True, timeout=60,
    )


async def test_a_database_that_moves_during_the_grace_is_behind_not_missing(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    db = str(tmp_path / "floor.db")
    store(db, "T1", range(1, 5))
    async with mosquitto.client() as table:
        await publish(table, "T1", 8, "round")  # retained: the broker holds seq 8
    process = start_check(db, mosquitto)
    assert process.stderr is not None
    first = await asyncio.to_thread(process.stderr.readline)  # the first look is made
    assert "T1: the broker holds a newer seq than the database; looking again in 3 s" in first
    await asyncio.to_thread(store, db, "T1", range(5, 6))  # as a recorder catching up
    _, rest = await asyncio.to_thread(process.communicate, timeout=60)
    assert "T1: behind, not missing: the database went from seq 4 to seq 5 in 3 s" in rest
    assert "tail missing" not in rest
    assert process.returncode == 0, rest


async def test_a_database_that_does_not_move_has_its_tail_missing(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    db = str(tmp_path / "floor.db")
    store(db, "T1", range(1, 5))
    async with mosquitto.client() as table:
        await publish(table, "T1", 8, "round")
    result = await asyncio.to_thread(check, db, mosquitto)
    assert result.returncode == 1
    assert ("T1: tail missing: the broker holds baccarat/T1/round seq 8, the database seq 4:"
            " seq 5-8 not recorded") in result.stderr
    assert "the database did not move in 3 s" in result.stderr
