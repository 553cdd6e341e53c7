"""Forged bodies on a table's topics, in Chromium: the board and the console show none.

Two tables deal (the realistic shoe's first rounds, published as the daemon does) while
every body of ``boards/forged_bodies.py`` comes on T07's topics, live, after the audit's
two retained ones: an open alarm with Declare/Void on ``baccarat/T07/limits`` and a shoe
whose phase is a number on ``baccarat/T00/limits`` (which froze the console's drawing of
every table after T00). The players' board shows no "Please wait", the pit's board and
the console no alarm, the console draws every table to the end, and the refusal counts
(``window.boardRefused``, the console's header) rise by one a body. T08's ``result`` topic
gets every forged body of that topic too, each with a ``seq`` above the dealt ones (a
forged result folded by mistake would be the tile's newest): the tiles of T00 and T08
must show the dealt results, letter for letter, and the dealt last round as their newest
result's. The page's check
(``boards/web/accept.js``) gives the verdict of the terminal board's for every body.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from baccarat.boards.accept import BOARD_TOPICS, accept
from baccarat.boards.accept import Refused as PyRefused
from baccarat.boards.web_server import WebBoardServer, page_config
from baccarat.pit.server import PitServer
from boards.chromium_cdp import Chromium, Page
from boards.forged_bodies import (
    AUDIT_SHOE,
    TOPIC_OF,
    audit_alarms,
    encoded,
    forged_bodies,
    good_bodies,
)
from boards.realistic_shoe import realistic_messages
from boards.web_pages import WAIT, artifacts_folder, in_chromium
from support.mosquitto import MosquittoFactory

PREFIX = "baccarat"
DEALT = 60
"""Messages of the realistic shoe each table deals: rounds 1 to 8, no alarm among them."""


def verdicts_in(cases: list[tuple[str, str, int]]) -> str:
    return (
        f"import('./accept.js').then((m) => {json.dumps(cases)}"
        ".map(([kind, text, bytes]) => m.check(kind, text, 'T07', bytes).refused === undefined))"
    )


@pytest.mark.slow
@in_chromium
async def test_the_page_refuses_what_the_terminal_board_refuses(
    mosquitto_factory: MosquittoFactory, tmp_path: Path
) -> None:
    broker = mosquitto_factory(websockets=True)
    config = page_config(broker.host, broker.websockets_port, "T07", PREFIX)
    good = [(TOPIC_OF.get(n, n), encoded(b)) for n, b in good_bodies("T07").items()]
    bad = [(f.kind, f.payload) for f in forged_bodies("T07")]
    cases = [(k, p.decode("utf-8", errors="replace"), len(p)) for k, p in good + bad]
    python = [not isinstance(accept(k, p, "T07"), PyRefused) for k, p in good + bad]
    assert python == [True] * len(good) + [False] * len(bad)
    async with WebBoardServer(config) as server, Chromium.launch(tmp_path / "chromium") as browser:
        page = await browser.open(server.url, width=1280, height=720)
        await page.wait_for("!!window.board", limit=WAIT)
        page_verdicts = await page.evaluate(verdicts_in(cases))
        wrong = [cases[i][:2] for i, (a, b) in enumerate(zip(page_verdicts, python, strict=True))
                 if a != b]
        assert [(k, t[:120]) for k, t in wrong] == []


async def log_in(page: Page) -> None:
    await page.wait_for("document.body.dataset.ready === 'true'", limit=WAIT)
    await page.evaluate(
        "document.getElementById('username').value = 'pit-ana';"
        "document.getElementById('login-button').click(); true"
    )
    await page.wait_for("document.body.dataset.link === 'connected'", limit=WAIT)


def forged_results(table: str, seq: int) -> list[bytes]:
    """Every forged body of the ``result`` topic, each with a ``seq`` from ``seq`` up."""
    out = []
    for number, case in enumerate(c for c in forged_bodies(table) if c.kind == "result"):
        try:
            body = json.loads(case.payload)
        except ValueError:
            body = None
        if isinstance(body, dict) and isinstance(body.get("seq"), int):
            body["seq"] = seq + number
            out.append(encoded(body))
        else:
            out.append(case.payload)
    return out


LETTER = {"banker": "B", "player": "P", "tie": "T"}


def card(table: str) -> str:
    """T07's card in its own view (open: it reads every T07 topic); the others' tiles."""
    if table == "T07":
        return f"document.querySelector('.table-card[data-table={table}]')"
    return f"document.querySelector('.tile[data-table={table}]')"


@pytest.mark.slow
@in_chromium
async def test_forged_bodies_show_nowhere_while_the_tables_deal(
    mosquitto_factory: MosquittoFactory, tmp_path: Path
) -> None:
    broker = mosquitto_factory(websockets=True)
    board_config = page_config(broker.host, broker.websockets_port, "T07", PREFIX)
    console_config = page_config(broker.host, broker.websockets_port, None, PREFIX)
    dealt = [json.loads(m.to_json()) for m in realistic_messages()[:DEALT]]
    assert not any(m["type"] in ("alarm", "alarms") for m in dealt)
    forged = forged_bodies("T07")
    half = len(forged) // 2
    results = [m for m in dealt if m["type"] == "result"]
    t08_forged = forged_results("T08", max(m["seq"] for m in dealt) + 1)
    assert any(b'"round": "' in body for body in t08_forged)  # a round of the wrong type
    async with (
        broker.client() as client,
        WebBoardServer(board_config) as board_server,
        PitServer(console_config, board_config) as pit_server,
        Chromium.launch(tmp_path / "chromium") as browser,
    ):
        async def deal(tables: tuple[str, ...], start: int, stop: int) -> None:
            for body in dealt[start:stop]:
                kind = TOPIC_OF.get(body["type"], body["type"])
                for table in tables:
                    await client.publish(f"{PREFIX}/{table}/{kind}", json.dumps(body), qos=1,
                                         retain=kind in ("shoe", "round", "roads", "recall"))

        # before anyone looks: the audit's two, retained, and each table's first rounds
        await client.publish(f"{PREFIX}/T07/limits", encoded(audit_alarms("T07")), qos=1,
                             retain=True)
        await client.publish(f"{PREFIX}/T00/limits", AUDIT_SHOE, qos=1, retain=True)
        await deal(("T00", "T07", "T08"), 0, 20)
        players = await browser.open(board_server.url, width=1280, height=720)
        pit_board = await browser.open(f"{board_server.url}?view=pit", width=1280, height=720)
        console = await browser.open(pit_server.url, width=1600, height=1000)
        await log_in(console)
        await console.wait_for("document.body.dataset.tables === '3'", limit=WAIT)
        for page in (players, pit_board):
            await page.wait_for("window.boardRefused === 1", limit=WAIT)
        await console.wait_for("window.pitRefused === 2", limit=WAIT)
        await console.evaluate("document.querySelector('.tile[data-table=T07]').click(); true")
        await console.wait_for(f"!!{card('T07')}", limit=WAIT)
        await asyncio.sleep(0.5)  # its subscription to T07's every topic made

        # the tables deal on while every forged body comes on T07, live, in two halves
        for number, chunk in enumerate((forged[:half], forged[half:])):
            for n, case in enumerate(chunk, 1):
                await client.publish(f"{PREFIX}/T07/{case.kind}", case.payload, qos=1)
                if n % 40 == 0:  # under the console's flood limit (60 a second): each read
                    await asyncio.sleep(1.1)
            for body in t08_forged[number::2]:
                await client.publish(f"{PREFIX}/T08/result", body, qos=1)
            await deal(("T00", "T07", "T08"), 20 + 20 * number, 40 + 20 * number)
        await deal(("T00", "T07", "T08"), 60, DEALT)
        expected = 1 + len(forged)
        # a board subscribes to its topics only (BOARD_TOPICS): an unknown one never comes
        on_boards = 1 + sum(case.kind in BOARD_TOPICS for case in forged)
        assert on_boards < expected
        last_round = max(m["round"] for m in dealt if m["type"] == "round")
        for page in (players, pit_board):
            await page.wait_for(f"window.boardRefused === {on_boards}", limit=WAIT)
            await page.wait_for(
                f"document.querySelector('[data-live-round]').textContent === '#{last_round}'",
                limit=WAIT,
            )
            banner = await page.evaluate(
                "({hidden: document.getElementById('alarm-banner').hidden,"
                " alarms: document.getElementById('alarm-banner').dataset.alarms,"
                " text: document.getElementById('alarm-banner').innerText,"
                " errors: document.body.dataset.drawErrors || '0'})"
            )
            assert banner["hidden"], banner
            assert banner["alarms"] == "0"
            assert "Please wait" not in banner["text"]
            assert banner["errors"] == "0"
        await console.wait_for(f"window.pitRefused === {expected + 1 + len(t08_forged)}",
                               limit=WAIT)
        await console.wait_for(f"{card('T07')}.dataset.round === '{last_round}'", limit=WAIT)

        def drawn(table: str) -> str:
            return (f"({{alarms: {card(table)}.dataset.alarms,"
                    f" items: {card(table)}.querySelectorAll('.alarm').length,"
                    f" buttons: {card(table)}.querySelectorAll('.alarm-actions button').length,"
                    f" error: {card(table)}.dataset.drawError || ''}})")

        nothing = {"alarms": "0", "items": 0, "buttons": 0, "error": ""}
        assert await console.evaluate(drawn("T07")) == nothing
        refused_t07 = await console.evaluate(
            f"{card('T07')}.querySelector('[data-fact=rejected] dd').textContent"
        )
        assert refused_t07 == str(expected)
        # back on the floor (the tiles are not drawn while a table's view is open): every
        # tile drawn, with the dealt results only, none of T08's forged ones
        await console.evaluate("document.getElementById('table-back').click(); true")
        await console.wait_for("!!document.querySelector('.tile[data-table=T07]')", limit=WAIT)
        for table in ("T00", "T08"):
            await console.wait_for(f"{card(table)}.dataset.results !== ''", limit=WAIT)
            assert await console.evaluate(drawn(table)) == nothing, table
            tile = await console.evaluate(
                f"({{round: {card(table)}.dataset.resultRound,"
                f" results: {card(table)}.dataset.results}})")
            assert tile == {
                "round": str(results[-1]["round"]),
                "results": "".join(LETTER[m["winner"]] for m in results[-10:]),
            }, table
        header = await console.evaluate("document.getElementById('refused').textContent")
        assert header == f"Refused {expected + 1 + len(t08_forged)}"
        await console.screenshot(artifacts_folder() / "pit-forged-bodies.png")
        for page in (players, pit_board, console):
            assert [line for line in page.console if "cannot draw" in line] == []
