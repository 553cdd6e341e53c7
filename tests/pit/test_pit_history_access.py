"""Who reads the floor's history, and what they may ask: logins, read rights, the log, bad input.

A real :class:`PitServer` over real HTTP, a real mosquitto with the example's accounts and
ACL (examples/mosquitto/acl, which is also the history's ACL here), a SQLite file filled
through the recorder's :class:`Store` (PostgreSQL where the database matters).
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import re
import shutil
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, ClassVar, NoReturn

import aiomqtt
import pytest

from baccarat.controller.config import TABLE_ID
from baccarat.floor.store import open_store
from baccarat.pit.access import AclRules, BrokerLogin, PasswordFile, Sessions, topic_matches
from baccarat.pit.history import MAX_QUERY, TABLE_NAME, History
from baccarat.pit.server import PitServer
from pit.history_support import (
    EXAMPLE_ACL,
    USERS,
    a_shoe,
    basic,
    fill,
    history_server,
    http,
    log_in,
    message,
)
from support.mosquitto import Mosquitto

HISTORY = "/history.json?table=T07&shoe=1"


@pytest.fixture
def sqlite(tmp_path: Path) -> str:
    db = str(tmp_path / "floor.db")
    fill(db)
    return db


@pytest.fixture
async def server(sqlite: str, broker: Mosquitto) -> AsyncIterator[PitServer]:
    async with history_server(broker, sqlite) as started:
        assert isinstance(started, PitServer)
        yield started


@pytest.fixture(autouse=True)
def pit_log(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.INFO, logger="baccarat.pit")
    return caplog


def lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "baccarat.pit"]


def error_of(body: bytes) -> str:
    reason: str = json.loads(body)["error"]
    return reason


# ---- item 13: a login for every reader, a read right per table, a log of every read ---------


async def test_without_a_login_the_history_is_401_and_logged(
    server: PitServer, pit_log: pytest.LogCaptureFixture
) -> None:
    status, headers, body = await http(server, HISTORY)
    assert status == 401
    assert headers["Content-Type"] == "application/json"
    assert headers["WWW-Authenticate"].startswith("Bearer")
    assert error_of(body) == "not logged in to the history: log in to the console again"
    assert lines(pit_log) == [
        'history refused: operator=- client=127.0.0.1 target=/history.json?table=T07&shoe=1'
        ' status=401 reason="not logged in to the history: log in to the console again"'
    ]
    status, _, body = await http(server, HISTORY, headers={"Authorization": "Bearer forged"})
    assert status == 401
    assert error_of(body).startswith("history login expired or unknown")
    status, _, _ = await http(server, HISTORY, headers=basic("pit-ana", "ana-secret"))
    assert status == 401  # a password is taken at the login only, never by the history itself


async def test_a_wrong_password_is_401_logged_without_the_password(
    server: PitServer, pit_log: pytest.LogCaptureFixture
) -> None:
    status, headers, body = await http(
        server, "/history/login", "POST", basic("pit-ana", "guess-1234")
    )
    assert status == 401
    assert "Set-Cookie" not in headers
    assert error_of(body) == "wrong username or password: the broker refused the login"
    assert lines(pit_log) == [
        "history login refused: operator=pit-ana client=127.0.0.1 status=401"
        ' reason="wrong username or password: the broker refused the login"'
    ]
    status, _, _ = await http(server, "/history/login", "POST", {"Authorization": "Basic !!"})
    assert status == 401
    assert "guess-1234" not in pit_log.text


async def test_an_account_without_the_read_right_is_403(
    server: PitServer, pit_log: pytest.LogCaptureFixture
) -> None:
    board = await log_in(server, "board-T07", "board-secret")  # reads baccarat/T07/# only
    status, _, body = await http(server, "/history.json?table=T08", headers=board)
    assert status == 403
    assert error_of(body) == (
        "board-T07 may not read the history of T08: the history ACL gives it no read right"
        " on baccarat/T08/result"
    )
    assert (await http(server, HISTORY, headers=board))[0] == 200
    controller = await log_in(server, "baccarat-T07", "T07-secret")  # writes T07, reads cmd/
    status, _, body = await http(server, HISTORY, headers=controller)
    assert status == 403
    assert "baccarat-T07 may not read the history of T07" in error_of(body)
    assert sum(line.startswith("history refused: operator=board-T07 client=127.0.0.1 table=T08")
               and "status=403" in line for line in lines(pit_log)) == 1


async def test_the_right_account_reads_and_the_read_is_logged(
    server: PitServer, pit_log: pytest.LogCaptureFixture
) -> None:
    ana = await log_in(server, "pit-ana", "ana-secret")
    status, _, body = await http(server, HISTORY, headers=ana)
    assert status == 200
    assert [r["round"] for r in json.loads(body)["rounds"]] == [1, 2, 3]
    status, _, _ = await http(
        server, "/history.json?table=T07&since=1764600000&until=1764600006&format=csv",
        headers=ana,
    )
    assert status == 200
    assert lines(pit_log) == [
        "history login: operator=pit-ana client=127.0.0.1 status=200",
        "history read: operator=pit-ana client=127.0.0.1 table=T07 shoe=1 since=- until=-"
        " format=json limit=1000 rounds=3 status=200",
        "history read: operator=pit-ana client=127.0.0.1 table=T07 shoe=-"
        " since=2025-12-01T14:40:00Z until=2025-12-01T14:40:06Z format=csv limit=1000 rounds=1"
        " status=200",
    ]
    token = ana["Cookie"].split("=", 1)[1]
    bearer = {"Authorization": f"Bearer {token}"}  # a script sends the token itself
    assert (await http(server, HISTORY, headers=bearer))[0] == 200
    status, headers, _ = await http(server, "/history/logout", "POST", ana)
    assert status == 200
    assert "Max-Age=0" in headers["Set-Cookie"]
    assert (await http(server, HISTORY, headers=ana))[0] == 401  # the token is gone
    assert "history logout: operator=pit-ana client=127.0.0.1 status=200" in lines(pit_log)


class CountedLogin(BrokerLogin):
    """The broker's check, counted."""

    checks: ClassVar[list[str]] = []

    async def check(self, username: str, password: str) -> bool:
        self.checks.append(username)
        return await super().check(username, password)


async def test_failed_logins_are_limited_per_client(server: PitServer) -> None:
    access = server.history.access
    assert access is not None
    access.login = CountedLogin(access.login.host, access.login.port)
    CountedLogin.checks.clear()
    for attempt in range(10):
        status, _, _ = await http(
            server, "/history/login", "POST", basic("pit-ana", f"guess-{attempt}")
        )
        assert status == 401
    status, headers, body = await http(
        server, "/history/login", "POST", basic("pit-ana", "ana-secret")
    )
    assert status == 429  # even the right password: the broker is not asked again
    assert 0 < int(headers["Retry-After"]) <= 60
    assert error_of(body).startswith("too many failed logins from 127.0.0.1: try again in ")
    assert len(CountedLogin.checks) == 10
    other = await log_in(server, "pit-ana", "ana-secret", source="127.0.0.2")
    assert (await http(server, HISTORY, headers=other))[0] == 200  # another client is not held


async def test_a_login_lapses_unused(sqlite: str, broker: Mosquitto) -> None:
    async with history_server(broker, sqlite, sessions=Sessions(idle=0.5)) as server:
        assert isinstance(server, PitServer)
        ana = await log_in(server, "pit-ana", "ana-secret")
        assert (await http(server, HISTORY, headers=ana))[0] == 200
        await asyncio.sleep(0.6)
        status, _, body = await http(server, HISTORY, headers=ana)
    assert status == 401
    assert error_of(body).startswith("history login expired or unknown")


async def test_the_acl_is_read_again_when_it_changes(
    sqlite: str, broker: Mosquitto, tmp_path: Path
) -> None:
    acl = tmp_path / "acl"
    acl.write_text(EXAMPLE_ACL.read_text())
    async with history_server(broker, sqlite, acl=acl) as server:
        assert isinstance(server, PitServer)
        board = await log_in(server, "board-T07", "board-secret")
        assert (await http(server, "/history.json?table=T08", headers=board))[0] == 403
        acl.write_text(acl.read_text() + "\nuser board-T07\ntopic read baccarat/T08/result\n")
        assert (await http(server, "/history.json?table=T08", headers=board))[0] == 200
        acl.unlink()
        status, _, body = await http(server, "/history.json?table=T08", headers=board)
    assert status == 503
    assert error_of(body).startswith(f"cannot read the history ACL {acl}")


async def test_a_broker_that_cannot_be_reached_is_503_and_no_failed_login(
    sqlite: str, broker: Mosquitto
) -> None:
    async with history_server(broker, sqlite) as server:
        assert isinstance(server, PitServer)
        broker.stop()
        for _ in range(12):
            status, _, body = await http(
                server, "/history/login", "POST", basic("pit-ana", "ana-secret")
            )
            assert status == 503
        assert error_of(body).startswith("cannot check the login: cannot reach the broker at ws://")


async def test_the_broker_cannot_be_asked_for_read_rights(broker: Mosquitto) -> None:
    """Why the read right comes from the ACL file: mosquitto grants every SUBSCRIBE."""
    async with broker.client(
        username="board-T07", password=USERS["board-T07"], protocol=aiomqtt.ProtocolVersion.V5
    ) as board:
        granted = await board.subscribe("baccarat/T08/result", qos=1)
    assert [code.value for code in granted] == [1]  # granted QoS 1, though it may not read it


@pytest.mark.parametrize(
    ("acl", "user", "topic", "may"),
    [
        ("user a\ntopic read baccarat/#", "a", "baccarat/T07/result", True),
        ("user a\ntopic read baccarat/#\ntopic deny baccarat/T08/#", "a", "baccarat/T08/result",
         False),
        ("user a\ntopic deny baccarat/T08/#\ntopic read baccarat/#", "a", "baccarat/T08/result",
         False),  # deny first, wherever it is
        ("user a\ntopic write baccarat/#", "a", "baccarat/T07/result", False),
        ("user a\ntopic baccarat/T07/result", "a", "baccarat/T07/result", True),  # readwrite
        ("topic read baccarat/#\nuser a\ntopic read x", "a", "baccarat/T07/result", False),
        ("pattern read baccarat/%u/result", "T07", "baccarat/T07/result", True),
        ("pattern read baccarat/%u/result", "T07", "baccarat/T08/result", False),
        ("pattern read baccarat/%c/#", "T07", "baccarat/T07/result", True),
        ("user a\ntopic read #", "a", "$SYS/broker/uptime", False),
        ("user a\n# topic read baccarat/#", "a", "baccarat/T07/result", False),
    ],
)
def test_read_rights_follow_mosquittos_acl_rules(
    acl: str, user: str, topic: str, may: bool
) -> None:
    assert AclRules.parse(acl).may_read(user, topic) is may


def test_topic_filters_match_as_mqtt_says() -> None:
    assert topic_matches("baccarat/+/result", "baccarat/T07/result")
    assert topic_matches("baccarat/#", "baccarat")
    assert not topic_matches("baccarat/+", "baccarat/T07/result")
    assert not topic_matches("baccarat/T07", "baccarat/T07/result")


# ---- item 8: every parameter checked, the answer always JSON, a failure a 500 ----------------


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        (f"table=T07&shoe={'9' * 5000}", "shoe: a whole number from 0 to 1000000000000, not '999"),
        (f"table=T07&limit={'1' * 5000}", "limit: a whole number from 0 to 1000, not '111"),
        ("table=T07&since=nan", "since: a time from 1970 to 9999 (ISO or Unix seconds), not 'nan'"),
        ("table=T07&since=1e400", "since: a time from 1970 to 9999"),
        ("table=T07&until=-inf", "until: a time from 1970 to 9999"),
        ("table=T07&until=Infinity", "until: a time from 1970 to 9999"),
        ("table=T07&since=-1", "since: a time from 1970 to 9999"),
        ("table=T07&since=1e15", "since: a time from 1970 to 9999"),
        (f"table=T07&since={'1' * 100}", "since: longer than 64 characters"),
        (f"table={'T' * 65}", "table: not a table name: 'TTTT"),
        ("table=.T07", "table: not a table name: '.T07'"),
        ("table=T07/result", "table: not a table name"),
        ("table=T%C3%9607", "table: not a table name"),
        (f"table=T07&format={'x' * 900}", "format: json or csv, not 'xxx"),
        (f"table=T07&{'a' * 1100}=1", "unknown parameter 'aaaa"),
        (f"table=T07&shoe={'1' * MAX_QUERY}", f"query: longer than {MAX_QUERY} characters"),
        ("table=T07" + "&shoe=1" * 6, "query: more than 6 parameters"),
    ],
)
async def test_every_bad_parameter_is_400_naming_it(
    server: PitServer, query: str, reason: str
) -> None:
    ana = await log_in(server, "pit-ana", "ana-secret")
    status, headers, body = await http(server, f"/history.json?{query}", headers=ana)
    assert (status, headers["Content-Type"]) == (400, "application/json")
    assert error_of(body).startswith(reason)
    assert len(body) < 300  # a long value is never echoed whole


def test_table_names_follow_the_daemons_rule() -> None:
    daemon = re.compile(TABLE_ID.removeprefix("^").removesuffix("$"))  # pydantic: whole text
    for name in ("T07", "t.1-x_y", "9", "A" * 64, "A" * 65, ".T", "-T", "T/1", "T 1", "", "T\n",
                 "T+", "T#", "Tö"):
        assert bool(TABLE_NAME.fullmatch(name)) == bool(daemon.fullmatch(name)), name


def strict_json(body: bytes) -> Any:
    def refuse(constant: str) -> NoReturn:
        raise AssertionError(f"not JSON: {constant}")

    return json.loads(body, parse_constant=refuse)


@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
async def test_a_time_the_database_holds_as_nan_is_null(db_url: str, broker: Mosquitto) -> None:
    fill(db_url)
    store = open_store(db_url)
    try:
        bad = message("T07", 300, "shoe", 9, None, phase="dealing")
        bad.body["ts"] = math.nan  # an older recorder stored what a table sent
        store.add([bad, *a_shoe("T07", 9, 301, 1)[1:]])
    finally:
        store.close()
    async with history_server(broker, db_url) as server:
        assert isinstance(server, PitServer)
        ana = await log_in(server, "pit-ana", "ana-secret")
        status, _, body = await http(server, "/history.json?table=T07&shoe=9", headers=ana)
    assert status == 200
    shoes = strict_json(body)["shoes"]
    assert shoes[-1]["shoe"] == 9
    assert shoes[-1]["last"] is None  # MAX(ts) is NaN in PostgreSQL (NaN sorts last)


async def test_a_handler_error_is_a_500_with_json_and_one_log_line(
    server: PitServer, pit_log: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    ana = await log_in(server, "pit-ana", "ana-secret")

    def broken(self: History, query: object) -> NoReturn:
        raise RuntimeError("a bug in the history")

    monkeypatch.setattr(History, "read", broken)
    pit_log.clear()
    status, headers, body = await http(server, HISTORY, headers=ana)
    assert (status, headers["Content-Type"]) == (500, "application/json")
    assert error_of(body) == "the console failed to answer: RuntimeError"
    errors = [r for r in pit_log.records if r.levelno >= logging.ERROR]
    assert [r.getMessage() for r in errors] == [
        "pit console: GET /history.json failed: RuntimeError: a bug in the history"
    ]
    assert errors[0].exc_info is None
    monkeypatch.undo()
    assert (await http(server, HISTORY, headers=ana))[0] == 200  # the server goes on


async def test_a_password_changed_or_an_account_removed_revokes_its_tokens(
    sqlite: str, broker: Mosquitto, tmp_path: Path
) -> None:
    """The broker's password file is watched: an operator's line changed ends their tokens."""
    passwd = tmp_path / "passwd"
    passwd.write_text(broker.password_file.read_text())
    sessions = Sessions(passwords=PasswordFile(passwd))
    async with history_server(broker, sqlite, sessions=sessions) as server:
        assert isinstance(server, PitServer)
        ana = await log_in(server, "pit-ana", "ana-secret")
        ana_again = await log_in(server, "pit-ana", "ana-secret")
        board = await log_in(server, "board-T07", "board-secret")
        assert (await http(server, HISTORY, headers=ana))[0] == 200
        await asyncio.to_thread(
            subprocess.run, [shutil.which("mosquitto_passwd") or "/usr/bin/mosquitto_passwd",
                             "-b", str(passwd), "pit-ana", "a-new-secret"], check=True,
        )
        for token in (ana, ana_again):
            status, _, body = await http(server, HISTORY, headers=token)
            assert status == 401
            assert error_of(body).startswith("history login expired or unknown")
        assert (await http(server, "/history.json?table=T07", headers=board))[0] == 200
        lines = [line for line in passwd.read_text().splitlines()
                 if not line.startswith("board-T07:")]
        passwd.write_text("\n".join(lines) + "\n")  # the account removed
        assert (await http(server, "/history.json?table=T07", headers=board))[0] == 401
