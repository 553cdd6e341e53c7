"""The history's test helpers: a filled floor database, a console with its access, HTTP."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from baccarat.boards.web_server import PageConfig, page_config
from baccarat.floor.store import Received, open_store
from baccarat.pit.access import BrokerLogin, ReadAcl, Sessions
from baccarat.pit.history import HistoryAccess
from baccarat.pit.server import PitServer
from support.mosquitto import Mosquitto, MosquittoFactory

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_ACL = ROOT / "examples" / "mosquitto" / "acl"
USERS = {"pit-ana": "ana-secret", "board-T07": "board-secret", "baccarat-T07": "T07-secret"}


def message(
    table: str, seq: int, type_: str, shoe: int, rnd: int | None, **fields: Any
) -> Received:
    body = {"schema": 1, "type": type_, "seq": seq, "ts": 1_764_600_000.0 + seq, "shoe": shoe,
            "table": table, **({} if rnd is None else {"round": rnd}), **fields}
    return Received(table, f"baccarat/{table}/{type_}", body, json.dumps(body), 1.0)


def a_shoe(table: str, shoe: int, first_seq: int, rounds: int) -> list[Received]:
    """A shoe as the controller publishes it: each round's cards and result.

    Round 2 has a wrong declaration, settled from the pit by pit-ana.
    """
    seq = first_seq
    out = [message(table, seq, "shoe", shoe, None, phase="dealing")]
    for rnd in range(1, rounds + 1):
        for position, code in (("P1", "9S"), ("B1", "2H"), ("P2", "KD"), ("B2", "3C")):
            seq += 1
            out.append(message(table, seq, "card", shoe, rnd, position=position, card=code))
        if rnd == 2:
            seq += 1
            out.append(message(table, seq, "alarm", shoe, rnd, id=7, kind="result_mismatch"))
            seq += 1
            out.append(message(table, seq, "alarm_cleared", shoe, rnd, id=7,
                               kind="result_mismatch", by="declare", origin="pit/pit-ana"))
        seq += 1
        out.append(message(table, seq, "result", shoe, rnd, round_id=f"{table}-{shoe}-{rnd}",
                           winner="player", player={"total": 9}, banker={"total": 5}))
    return out


def fill(db: str) -> None:
    store = open_store(db)
    try:
        store.add(a_shoe("T07", 1, 1, 3) + a_shoe("T07", 2, 100, 2) + a_shoe("T08", 1, 1, 1))
    finally:
        store.close()


async def http(
    server: PitServer, target: str, method: str = "GET",
    headers: Mapping[str, str] | None = None, source: str = "127.0.0.1",
) -> tuple[int, dict[str, str], bytes]:
    """Status, headers and body of one request, over a real connection from ``source``."""
    reader, writer = await asyncio.open_connection(
        server.host, server.port, local_addr=(source, 0)
    )
    lines = [f"{method} {target} HTTP/1.1", "Host: pit", "Content-Length: 0",
             *(f"{name}: {value}" for name, value in (headers or {}).items())]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
    await writer.drain()
    raw = await reader.read()
    writer.close()
    await writer.wait_closed()
    head, _, body = raw.partition(b"\r\n\r\n")
    head_lines = head.decode("latin-1").split("\r\n")
    answered = dict(line.split(": ", 1) for line in head_lines[1:])
    return int(head_lines[0].split()[1]), answered, body


async def http_get(
    server: PitServer, target: str, headers: Mapping[str, str] | None = None
) -> tuple[int, str, bytes]:
    """Status, Content-Type and body of ``GET target`` (as pit-ana unless ``headers`` say)."""
    if headers is None:
        headers = getattr(server, "reader_headers", {})
    status, answered, body = await http(server, target, headers=headers)
    return status, answered["Content-Type"], body


def basic(username: str, password: str) -> dict[str, str]:
    encoded = base64.b64encode(f"{username}:{password}".encode()).decode()
    return {"Authorization": f"Basic {encoded}"}


async def log_in(
    server: PitServer, username: str, password: str, source: str = "127.0.0.1"
) -> dict[str, str]:
    """The headers of a logged-in reader: the history cookie the login answers."""
    status, headers, body = await http(
        server, "/history/login", "POST", basic(username, password), source
    )
    assert status == 200, body
    cookie = headers["Set-Cookie"].split(";", 1)[0]
    assert json.loads(body)["token"] == cookie.split("=", 1)[1]
    return {"Cookie": cookie}


def history_broker(factory: MosquittoFactory) -> Mosquitto:
    """A broker with the example's ACL and three of its accounts, and a WebSocket listener."""
    return factory(websockets=True, anonymous=False, users=USERS, acl=EXAMPLE_ACL)


def history_server(
    broker: Mosquitto, db: str, acl: Path = EXAMPLE_ACL, sessions: Sessions | None = None
) -> PitServer:
    """A console for ``db`` whose readers log in to ``broker`` and are read rights from ``acl``."""
    config: PageConfig = page_config(broker.host, broker.websockets_port, None, "baccarat")
    access = HistoryAccess(
        BrokerLogin(broker.host, broker.websockets_port), ReadAcl(acl), "baccarat",
        **({} if sessions is None else {"sessions": sessions}),
    )
    return PitServer(config, config, db=db, access=access)
