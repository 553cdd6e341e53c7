"""The pit console's history view over HTTP: ``/history.json`` from the recorder's database.

A real :class:`PitServer` on a free port, asked over real HTTP, reading a real SQLite file
or PostgreSQL database (a private cluster) filled through the recorder's own
:class:`Store`, its readers logged in against a real mosquitto with the example's
accounts and ACL (examples/mosquitto/acl, also the history's ACL). The logins, read
rights, the log of reads and the bad input are in ``test_pit_history_access.py``; the
end-to-end test with the recorder, a daemon and Chromium is in ``test_pit_history_e2e.py``.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest

from baccarat.boards.web_server import page_config
from baccarat.floor.store import open_store
from baccarat.pit.history import MAX_ROUNDS
from baccarat.pit.server import PitServer
from pit.history_support import a_shoe, fill, history_server, http_get, log_in
from support.mosquitto import Mosquitto

CONFIG = page_config("127.0.0.1", 9001, None, "baccarat")


@pytest.fixture
async def server(db_url: str, broker: Mosquitto) -> AsyncIterator[PitServer]:
    """A console on a filled database, pit-ana logged in (``reader_headers``)."""
    fill(db_url)
    async with history_server(broker, db_url) as started:
        assert isinstance(started, PitServer)
        started.reader_headers = await log_in(started, "pit-ana", "ana-secret")  # type: ignore[attr-defined]
        yield started


def cli_history(db: str, *args: str) -> str:
    return subprocess.run(
        [sys.executable, "-m", "baccarat.cli", "history", "--db", db, *args],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout


async def test_a_shoe_as_json_and_csv_is_what_baccarat_history_gives(
    server: PitServer, db_url: str
) -> None:
    status, kind, body = await http_get(server, "/history.json?table=T07&shoe=1")
    assert (status, kind) == (200, "application/json")
    found = json.loads(body)
    assert [s["shoe"] for s in found["shoes"]] == [1, 2]
    assert (found["table"], found["shoe"], found["limit"]) == ("T07", 1, MAX_ROUNDS)
    assert [r["round"] for r in found["rounds"]] == [1, 2, 3]
    second = found["rounds"][1]
    assert second["cards"] == ["P1 9S", "B1 2H", "P2 KD", "B2 3C"]
    assert (second["outcome"], second["player_total"], second["banker_total"]) == ("player", 9, 5)
    assert second["alarms"] == ["result_mismatch #7 settled by declare (pit/pit-ana)"]

    status, kind, csv = await http_get(server, "/history.json?table=T07&shoe=1&format=csv")
    assert (status, kind) == (200, "text/csv; charset=utf-8")
    expected = await asyncio.to_thread(
        cli_history, db_url, "--table", "T07", "--shoe", "1", "--csv"
    )
    assert csv.decode() == expected


async def test_since_until_and_the_shoes_alone(server: PitServer) -> None:
    since = quote("2025-12-01T14:40:00")  # 1764600000 is 14:40:00 UTC
    status, _, body = await http_get(
        server, f"/history.json?table=T07&since={since}&until=1764600006"
    )
    assert status == 200
    assert [(r["shoe"], r["round"]) for r in json.loads(body)["rounds"]] == [(1, 1)]
    status, _, body = await http_get(server, "/history.json?table=T07&limit=0")
    found = json.loads(body)
    assert status == 200
    assert found["rounds"] == []
    assert [(s["shoe"], s["messages"]) for s in found["shoes"]] == [(1, 18), (2, 13)]


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ("", "missing parameter 'table'"),
        ("shoe=1", "missing parameter 'table'"),
        ("table=T07&shoe=one", "shoe: a whole number from 0 to 1000000000000, not 'one'"),
        ("table=T07&shoe=-1", "shoe: a whole number from 0 to 1000000000000, not '-1'"),
        ("table=T07&since=yesterday", "since: not a time (ISO or Unix seconds): 'yesterday'"),
        ("table=T07&since=200&until=100", "until must be after since"),
        ("table=T07&format=xml", "format: json or csv, not 'xml'"),
        ("table=T07&limit=5000", "limit: a whole number from 0 to 1000, not '5000'"),
        ("table=T07&limit=0&format=csv", "limit=0 answers only the shoes"),
        ("table=T07&table=T08", "parameter 'table' given twice"),
        ("table=T07&drop=1", "unknown parameter 'drop'"),
        ("table=T07'%3B%20DROP%20TABLE%20messages--", "table: not a table name"),
        ("table=T07&limit=2", "5 rounds, more than the limit of 2: narrow it with shoe="),
    ],
)
async def test_bad_parameters_get_400_with_a_reason(
    server: PitServer, db_url: str, query: str, reason: str
) -> None:
    status, kind, body = await http_get(server, f"/history.json?{query}")
    assert (status, kind) == (400, "application/json")
    assert json.loads(body)["error"].startswith(reason)
    assert (await http_get(server, "/history.json?table=T08"))[0] == 200  # nothing broken


async def test_without_a_database_the_history_says_it_is_not_configured() -> None:
    async with PitServer(CONFIG, CONFIG) as server:
        status, _, body = await http_get(server, "/history.json?table=T07")
    assert status == 404
    assert json.loads(body) == {
        "error": "history not configured: start baccarat pit with --db URL"
    }


async def test_a_database_that_cannot_be_read_is_503_with_the_reason(
    tmp_path: Path, broker: Mosquitto
) -> None:
    broken = tmp_path / "broken.db"
    broken.write_bytes(b"this is not a SQLite file" * 100)
    async with history_server(broker, str(broken)) as server:
        assert isinstance(server, PitServer)
        ana = await log_in(server, "pit-ana", "ana-secret")
        status, _, body = await http_get(server, "/history.json?table=T07", ana)
    assert status == 503
    assert json.loads(body)["error"].startswith(f"history database: cannot open {broken}: ")


@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
async def test_a_slow_database_never_holds_up_the_consoles_files(
    db_url: str, broker: Mosquitto
) -> None:
    """A history read that waits on a lock the database holds does not stop the page."""
    fill(db_url)
    async with history_server(broker, db_url) as server:
        assert isinstance(server, PitServer)
        ana = await log_in(server, "pit-ana", "ana-secret")
        with psycopg.connect(db_url) as locker:
            locker.execute("LOCK TABLE messages IN ACCESS EXCLUSIVE MODE")
            history = asyncio.create_task(
                http_get(server, "/history.json?table=T07&shoe=1", ana)
            )
            await asyncio.sleep(1.0)
            assert not history.done()  # the read waits on the lock ...
            started = time.monotonic()
            status, _, page = await http_get(server, "/index.html")
            assert status == 200  # ... and the page is served meanwhile, at once
            assert b"Pit console" in page
            assert time.monotonic() - started < 2.0
            assert not history.done()
            locker.rollback()  # the lock goes: the read goes through
        status, _, body = await asyncio.wait_for(history, 30)
        assert status == 200
        assert len(json.loads(body)["rounds"]) == 3


def test_the_shoes_listed_are_the_newest(db_url: str) -> None:
    fill(db_url)
    store = open_store(db_url)
    try:
        store.add(a_shoe("T07", 3, 200, 1))
        assert [s.shoe for s in store.shoes("T07")] == [1, 2, 3]
        assert [s.shoe for s in store.shoes("T07", newest=2)] == [2, 3]
        assert store.shoes("T99") == []
    finally:
        store.close()


async def test_head_answers_like_get_without_the_body(server: PitServer) -> None:
    reader, writer = await asyncio.open_connection(server.host, server.port)
    cookie = server.reader_headers["Cookie"]  # type: ignore[attr-defined]
    writer.write(
        f"HEAD /history.json?table=T07&shoe=x HTTP/1.1\r\nHost: pit\r\nCookie: {cookie}\r\n\r\n"
        .encode()
    )
    await writer.drain()
    raw = await reader.read()
    writer.close()
    await writer.wait_closed()
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 Bad Request")
    assert body == b""


@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
async def test_a_read_only_database_account_is_enough(db_url: str, broker: Mosquitto) -> None:
    """The pit reads with an account that may only SELECT: it creates nothing."""
    fill(db_url)
    role = "pit_reader_" + db_url.rsplit("/", 1)[1]  # roles are the cluster's: one per database
    with psycopg.connect(db_url, autocommit=True) as db:
        db.execute(f"CREATE ROLE {role} LOGIN")
        db.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}")
    reader = db_url.replace("://baccarat@", f"://{role}@")
    assert reader != db_url
    async with history_server(broker, reader) as server:
        assert isinstance(server, PitServer)
        ana = await log_in(server, "pit-ana", "ana-secret")
        status, _, body = await http_get(server, "/history.json?table=T07&shoe=2", ana)
    assert status == 200
    assert [r["round"] for r in json.loads(body)["rounds"]] == [1, 2]


async def test_a_missing_sqlite_file_is_said_and_never_made(
    tmp_path: Path, broker: Mosquitto
) -> None:
    missing = tmp_path / "not-yet.db"
    async with history_server(broker, str(missing)) as server:
        assert isinstance(server, PitServer)
        ana = await log_in(server, "pit-ana", "ana-secret")
        status, _, body = await http_get(server, "/history.json?table=T07", ana)
    assert status == 503
    assert json.loads(body)["error"] == (
        f"history database: cannot open {missing}: no such database file (the recorder makes it)"
    )
    assert not missing.exists()
