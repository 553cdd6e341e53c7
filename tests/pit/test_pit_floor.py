"""The pit console's floor view, queue and table view with 100 tables, in headless Chromium.

A sim floor of 100 real daemons is too heavy for the test machines (2 cores shared), so 99
tables are the test's own: it publishes, retained as their controllers would, each one's
``status``, ``shoe``, ``limits`` and ``alarms`` and a few results, with the engine's own
message classes (realistic bodies, the same schemas); some have alarms open (a coalesced
extra card holding 86 cards, a device's lost link with article ``device``), one a one-off
*New shoe refused* notice (not open), one is offline. The last table, T100, is a real
daemon reading a virtual framed shoe from the simulated dealer, who declares the wrong
winner in round 2: its alarm appears in the queue, a wrong declaration sent from the queue
is refused and the refusal stays beside the alarm (past more replies than the old list
kept), and the right one, sent from the queue, settles it.

At 1920x1080, 1024x768 and 1080x1920 nothing sticks out sideways, every tile is inside
the viewport and neither the page nor the floor scrolls (at 1024x768 again once every tile
shows its results). With ``PIT_DOCS_SCREENSHOTS=1``
(``scripts/pit-screenshots``) the floor (at 1920x1080 and 1024x768), the queue and a
table's view are drawn into ``docs/``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from baccarat.boards.web_server import page_config
from baccarat.controller.publisher import status_payload
from baccarat.messages.bodies import (
    AlarmMessage,
    AlarmsMessage,
    HandResult,
    ResultMessage,
    ShoeMessage,
)
from baccarat.pit.server import PitServer
from baccarat.sim_hardware.dealer import Dealer
from baccarat.sim_hardware.virtual_shoe import VirtualShoe
from boards.chromium_cdp import Chromium, Page
from boards.web_pages import in_chromium
from pit.test_pit_console import RULES, WAIT, Table, log_in, round_winner
from support.daemon import Daemon
from support.mosquitto import Mosquitto, MosquittoFactory

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts" / "pit"
DOCS = ROOT / "docs"
PREFIX = "baccarat"
OPERATOR = "pit-ana"
NAMES = [f"T{n:03d}" for n in range(1, 101)]
REAL = "T100"
AREAS = [
    ("Pit A", NAMES[0:30]), ("Pit B", NAMES[30:60]), ("Pit C", NAMES[60:90]),
    ("High limit", NAMES[90:100]),
]
NOW = time.time()
SIZES = ((1920, 1080), (1024, 768), (1080, 1920))
SNAKE = re.compile(r"\b[a-z]+_[a-z_]+\b")


def shoe_body(table: str, seq: int, rounds: int) -> bytes:
    return ShoeMessage(
        seq=seq, ts=NOW, shoe=3, profile="standard", decks=8, cards_dealt=rounds * 5,
        cards_burned=8, cards_left=416 - 8 - rounds * 5, burn_due=0, phase="ready",
        cut_card=False, last_round=False, rounds=rounds, demo=False, demo_rounds=0,
    ).to_bytes()


def result_body(table: str, seq: int, round_no: int) -> bytes:
    winner = ("banker", "player", "banker", "tie")[round_no % 4]
    hand = HandResult(cards=["9S", "TH"], total=9, natural=True, pair=False)
    other = HandResult(cards=["4D", "KC"], total=4, natural=False, pair=False)
    return ResultMessage(
        seq=seq, ts=NOW, shoe=3, round=round_no, round_id=f"{table}-3-{round_no}",
        winner=winner, player=hand if winner == "player" else other,
        banker=hand if winner != "player" else other,
    ).to_bytes()


def alarm(table_no: int, seq: int, kind: str, **fields: Any) -> AlarmMessage:
    defaults: dict[str, Any] = {
        "id": seq, "kind": kind, "article": "10.2", "correctable": True,
        "corrections": ["accept_as_burn", "void"], "shoe": 3, "round": 12,
        "text": "a card came out after the round was complete", "lasting": True,
        "ts": NOW - 600 + table_no,
    }
    return AlarmMessage(seq=seq, **(defaults | fields))


def alarms_of(table_no: int) -> list[AlarmMessage]:
    """The open alarms of a published table (most have none)."""
    if table_no == 7:
        cards: list[str | None] = ["2S", "3H", "4D", "5C", "6S", "7H"] * 14 + ["8D", "9C"]
        return [alarm(7, 40, "extra_card", count=86, cards=cards, card="2S")]
    if table_no == 33:
        return [alarm(33, 41, "link_down", article="device", correctable=False,
                      corrections=[], round=None, text="the shoe's link is down")]
    if table_no == 64:
        return [alarm(64, 42, "result_mismatch", corrections=["declare", "void"],
                      text="declared banker, the cards say player")]
    return []


async def publish_results(broker: Mosquitto) -> None:
    """A few rounds on every published table (results are not retained: they come live)."""
    async with broker.client() as client:
        for table in NAMES[:-1]:
            for i in range(8):
                body = result_body(table, 90 + i, 10 + i)
                await client.publish(f"{PREFIX}/{table}/result", body, qos=1)


async def publish_floor(broker: Mosquitto) -> None:
    """The 99 tables' retained state, as their controllers would leave it."""
    async with broker.client() as client:
        for number, table in enumerate(NAMES[:-1], start=1):
            base = f"{PREFIX}/{table}"
            state = "offline" if number == 50 else "online"
            await client.publish(f"{base}/status", status_payload(state, table), qos=1, retain=True)
            await client.publish(f"{base}/shoe", shoe_body(table, 100, 20 + number % 30),
                                 qos=1, retain=True)
            limits = {"schema": 1, "type": "limits", "table": table,
                      "banker": {"min": 100 * (1 + number % 5), "max": 50000},
                      "player": {"min": 100, "max": 50000}, "tie": {"min": 10, "max": 5000},
                      "pairs": {"min": 10, "max": 2500}, "currency": "HKD", "by": OPERATOR,
                      "ts": NOW}
            await client.publish(f"{base}/limits", json.dumps(limits), qos=1, retain=True)
            await client.publish(
                f"{base}/alarms",
                AlarmsMessage(seq=101, ts=NOW, alarms=alarms_of(number)).to_bytes(),
                qos=1, retain=True,
            )
        refused = alarm(20, 102, "shoe_refused", corrections=[], correctable=False, round=None,
                        lasting=False, text="a new shoe was refused: the round is open")
        await client.publish(f"{PREFIX}/T020/alarm", refused.to_bytes(), qos=1)


@contextlib.asynccontextmanager
async def real_table(folder: Path, broker: Mosquitto) -> AsyncIterator[Table]:
    """T100: a real daemon; its dealer declares the wrong winner in round 2."""
    async with contextlib.AsyncExitStack() as stack:
        (folder / REAL).mkdir()
        link = str(folder / REAL / "shoe")
        shoe = await stack.enter_async_context(VirtualShoe(link, "framed", baud=115200))
        daemon = Daemon(folder / REAL, broker, device=link, rules=RULES, table=REAL)
        stack.callback(daemon.close)
        await asyncio.to_thread(daemon.start)
        dealer = Dealer(decks=8, seed=21, mistakes_at={2: "wrong_declare"})
        yield Table(REAL, daemon, shoe, dealer.steps())


@pytest.fixture
def floor_broker(mosquitto_factory: MosquittoFactory) -> Mosquitto:
    return mosquitto_factory(websockets=True)


async def sticks_out(page: Page, width: int) -> list[str]:
    """Elements wider than the screen or beyond its right edge."""
    found: list[str] = await page.evaluate(f"""
      [...document.querySelectorAll('#console *')].filter((e) => {{
        const r = e.getBoundingClientRect();
        return r.width > 0 && (r.right > {width} + 1 || r.left < -1);
      }}).map((e) => e.className || e.tagName).slice(0, 10)""")
    return found


async def tiles_outside(page: Page, width: int, height: int) -> list[str]:
    found: list[str] = await page.evaluate(f"""
      [...document.querySelectorAll('.tile')].filter((t) => {{
        const r = t.getBoundingClientRect();
        return r.left < 0 || r.top < 0 || r.right > {width} || r.bottom > {height};
      }}).map((t) => t.dataset.table)""")
    return found


async def page_scrolls(page: Page) -> list[str]:
    """The page or the floor scrolling: [] if neither does (the queue is a list: it may)."""
    found: list[str] = await page.evaluate("""
      [document.scrollingElement, document.getElementById('floor')].filter((e) =>
        e.scrollHeight > e.clientHeight + 1 || e.scrollWidth > e.clientWidth + 1)
      .map((e) => `${e.id || e.className || e.tagName}: ${e.scrollWidth}x${e.scrollHeight}`
        + ` in ${e.clientWidth}x${e.clientHeight}`)""")
    return found


async def cut_in_tiles(page: Page) -> list[str]:
    """Tiles whose name, or whose shown results, do not fit the tile's line."""
    found: list[str] = await page.evaluate("""
      [...document.querySelectorAll('.tile')].flatMap((t) =>
        [...t.querySelectorAll('.tile-head, .tile-results')]
          .filter((e) => e.scrollWidth > e.clientWidth + 1)
          .map((e) => `${t.dataset.table} ${e.className}: ${e.scrollWidth} in ${e.clientWidth}`))
      .slice(0, 10)""")
    return found


async def click(page: Page, selector: str) -> None:
    found = f"document.querySelector({json.dumps(selector)})"
    await page.wait_for(f"!!{found} && !{found}.disabled", limit=WAIT)
    await page.evaluate(f"{found}.click(); true")


async def shot(page: Page, name: str) -> None:
    await page.screenshot(ARTIFACTS / name)
    if os.environ.get("PIT_DOCS_SCREENSHOTS"):
        await page.screenshot(DOCS / name)


@pytest.mark.slow
@in_chromium
async def test_a_floor_of_100_tables(floor_broker: Mosquitto, tmp_path: Path) -> None:
    broker = floor_broker
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    config = page_config(broker.host, broker.websockets_port, None, PREFIX)
    await publish_floor(broker)
    async with (
        real_table(tmp_path, broker) as t100,
        PitServer(config, config, areas=AREAS) as server,
        Chromium.launch(tmp_path / "chromium") as browser,
    ):
        steps = await t100.deal_until(
            lambda s: s.round_no == 2 and s.role == "button" and s.mistake == "wrong_declare")
        pages = {}
        for n, (width, height) in enumerate(SIZES):
            page = await browser.open(server.url, width=width, height=height)
            # one account each: the broker takes a client id's connection from the one before
            await log_in(page, OPERATOR if n == 0 else f"pit-screen-{n}", "any")
            await page.wait_for("document.body.dataset.tables === '100'", limit=WAIT)
            await page.wait_for(
                "!!document.querySelector('.queue-item[data-table=T100][data-kind=result_mismatch]')",
                limit=WAIT)
            await asyncio.sleep(0.5)  # the last frame drawn
            assert await sticks_out(page, width) == [], (width, height)
            await page.screenshot(ARTIFACTS / f"pit-floor-{width}x{height}.png")
            assert await tiles_outside(page, width, height) == [], (width, height)
            assert await page.evaluate("document.getElementById('floor').dataset.fits") == "true"
            assert await page_scrolls(page) == [], (width, height)
            pages[width, height] = page
        await publish_results(broker)
        page = pages[1920, 1080]
        await page.wait_for("document.querySelector('.tile[data-table=T099] .tile-results')"
                            ".children.length === 8", limit=WAIT)
        await asyncio.sleep(0.3)
        assert await tiles_outside(page, 1920, 1080) == []
        await shot(page, "pit-floor.png")
        small = pages[1024, 768]  # with the results in, its tiles still fit, in three lines
        await small.wait_for("document.querySelector('.tile[data-table=T099] .tile-results')"
                             ".children.length === 8", limit=WAIT)
        await asyncio.sleep(0.3)
        assert await tiles_outside(small, 1024, 768) == []
        assert await page_scrolls(small) == []
        assert await cut_in_tiles(small) == []
        await shot(small, "pit-floor-1024x768.png")

        # The tiles: by area, the one that holds play stands out, the notice is not open.
        labels = await page.evaluate(
            "[...document.querySelectorAll('.area-label')].map((a) => a.textContent)")
        assert labels == ["Pit A", "Pit B", "Pit C", "High limit"]
        tile = "document.querySelector('.tile[data-table={}]').dataset.{}"
        assert await page.evaluate(tile.format("T007", "needs")) == "hold"
        assert await page.evaluate(tile.format("T050", "needs")) == "offline"
        assert await page.evaluate(tile.format("T020", "alarms")) == "0"  # Shoe Refused
        assert await page.evaluate(tile.format("T001", "needs")) == ""
        queue = await page.evaluate(
            "[...document.querySelectorAll('.queue-item')].map((q) => q.dataset.table)")
        assert queue == ["T007", "T033", "T064", "T100"]  # oldest first
        text = await page.evaluate("document.getElementById('console').innerText")
        assert "Art. device" not in text
        assert SNAKE.findall(text) == []
        assert "Extra card, in round 12, 86 cards held aside" in text

        # The last table's alarm, from the queue: a wrong declaration is refused and the
        # refusal stays beside the alarm; the right one settles it.
        right_winner = round_winner(steps, 2)
        wrong = "tie" if right_winner != "tie" else "banker"
        item = ".queue-item[data-table=T100]"
        await click(page, f"{item} [data-winner={wrong}]")
        note = f"document.querySelector('{item} .note')"
        said = await page.wait_for(f"!!{note} && {note}.textContent", limit=WAIT)
        assert said.startswith("Refused: ")
        assert SNAKE.findall(said) == [], said
        await shot(page, "pit-queue.png")
        await page.evaluate("for (let i = 0; i < 60; i++) pit.update("
                            "{...pit.state, replies: [...pit.state.replies,"
                            " {id: 'x' + i, table: 'T100', command: 'open', ok: true}]"
                            ".slice(-50)});"
                            " true")
        await asyncio.sleep(0.3)
        assert await page.evaluate(f"!!{note}") is True  # past 60 more replies
        await click(page, f"{item} [data-winner={right_winner}]")
        await page.wait_for(f"!document.querySelector('{item}')", limit=WAIT)

        # A table's view from its tile: the held cards as a count, their codes folded.
        await click(page, ".tile[data-table=T007]")
        await page.wait_for("!!document.querySelector('.table-card[data-table=T007]')", limit=WAIT)
        held = "document.querySelector('.table-card .alarm-cards')"
        await page.wait_for(f"!!{held}", limit=WAIT)
        assert await page.evaluate(f"{held}.dataset.held") == "86"
        assert await page.evaluate(f"{held}.open") is False
        assert await page.evaluate(f"{held}.querySelector('summary').textContent") == (
            "86 cards held aside")
        await shot(page, "pit-table.png")
        await click(page, "#table-back")
        await page.wait_for("!!document.querySelector('.tile[data-table=T007]')", limit=WAIT)
        for each in pages.values():  # no history here: its quarantine count is a 404
            assert [m for m in each.console if "quarantine.json" not in m] == []


@pytest.mark.slow
@in_chromium
async def test_the_floor_subscribes_to_what_a_tile_shows(
    floor_broker: Mosquitto, tmp_path: Path
) -> None:
    """Item 4: a tile's topics by wildcard; a table's view adds the table's own while open."""
    config = page_config(floor_broker.host, floor_broker.websockets_port, None, PREFIX)
    async with (
        PitServer(config, config) as server, Chromium.launch(tmp_path / "c") as browser,
    ):
        async with floor_broker.client() as client:
            await client.publish(f"{PREFIX}/T1/status", status_payload("online", "T1"),
                                 qos=1, retain=True)
            await client.publish(f"{PREFIX}/T1/roads", b"{}", qos=1, retain=True)
        page = await browser.open(server.url, width=1280, height=800)
        await page.evaluate("""(() => {
          window.subscribed = [];
          const wrap = setInterval(() => {
            if (!window.pit || !pit.client) return;
            clearInterval(wrap);
            const sub = pit.client.subscribe.bind(pit.client);
            const unsub = pit.client.unsubscribe.bind(pit.client);
            pit.client.subscribe = (t, ...r) => {
              subscribed.push(['+', t]); return sub(t, ...r); };
            pit.client.unsubscribe = (t, ...r) => {
              subscribed.push(['-', t]); return unsub(t, ...r); };
          }, 1);
          return true;
        })()""")
        await log_in(page, OPERATOR, "any")
        await page.wait_for("document.body.dataset.tables === '1'", limit=WAIT)
        assert await page.evaluate("pit.state.tables.T1.rejected") == 0  # roads never came
        await click(page, ".tile[data-table=T1]")
        await page.wait_for("pit.state.tables.T1.rejected === 1", limit=WAIT)  # now they do
        await click(page, "#table-back")
        found = await page.evaluate("subscribed")
        topics = [f"{PREFIX}/+/{t}" for t in ("status", "shoe", "alarms", "alarm", "result",
                                              "limits")]
        assert found[0] == ["+", [*topics, f"{PREFIX}/+/reply/{OPERATOR}", f"{PREFIX}/+/reply"]]
        assert found[1:] == [["+", f"{PREFIX}/T1/#"], ["-", f"{PREFIX}/T1/#"]]
        assert not any(t == f"{PREFIX}/+/#" for _, t in found)

