"""The console's own words: one table of labels (pit/web/pit_labels.js), in three languages.

Two ways to fail. From the sources: every label has three texts with the same
placeholders, every key the console's code names (``t("key")``, ``PIT.key``,
``data-pit-label="key"`` ...) has a label, every shoe phase and round status a word, and no
label goes unused. In the page: the console is opened with ``?lang=zh-Hant`` and
``?lang=zh-Hans`` and walked through (the login and its error, the floor with its areas,
the queue, a refusal kept beside its alarm, a table's view with its buttons, a wrong
limit, a bulk settle's reply line, the confirmation dialog, the history view); whatever
it shows in its own words (not the controller's or the server's texts, marked
``lang="en"``) may hold no English word once the data (table names, the operator, the
areas, currency codes) is taken out, and no character of the other script. An English
string written into the page without a label, or a label with one text, fails here.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import typing
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, get_args

import pytest

from baccarat.boards.web_server import page_config
from baccarat.controller.publisher import status_payload
from baccarat.messages.bodies import AlarmsMessage, RoundMessage, ShoePhase
from baccarat.pit.server import PitServer
from boards.chromium_cdp import Chromium, Page
from boards.web_pages import in_chromium
from pit.test_pit_edge import bodies as edge_bodies
from pit.test_pit_floor import alarm, result_body, shoe_body
from support.mosquitto import Mosquitto, MosquittoFactory

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "src" / "baccarat" / "pit" / "web"
ARTIFACTS = ROOT / "artifacts" / "pit"
WORDS_SHOWN = (Path(__file__).parent / "words_shown.js").read_text(encoding="utf-8")
PREFIX = "baccarat"
OPERATORS = {"zh-Hant": "pit-ana", "zh-Hans": "pit-bo"}
"""One account a page: the broker takes a client id's connection from the one before."""
WAIT = 30.0
AREAS = [("Pit A", ["T1", "T2"]), ("High limit", ["T3"])]  # T4 and T5 are under "Other"
DATA = ["T1", "T2", "T3", "T4", "T5", *OPERATORS.values(), "Pit A", "High limit", "HKD", "CSV",
        "UTC", "EN", "ws://", "/mqtt"]
"""What the page shows that is data, not its words: table names, the operator, the areas,
currency, the CSV format, UTC, the language button's EN (the board's own), the broker URL."""
REFUSAL = "round 12 has open alarm #5 extra_card: settle it first"

USES = (
    r'\bt\(\s*"(\w+)"', r'pitSay\(\s*"(\w+)"', r'\btexts\(\s*"(\w+)"', r"\bPIT\.(\w+)",
    r'PIT\[\s*"(\w+)"\s*\]', r'data-pit-(?:label|title|aria)="(\w+)"',
    r'this\.rights = this\.mayCommand \? "(\w+)" : "(\w+)"',
)
"""How the console's code names a label."""


def used_keys() -> set[str]:
    found: set[str] = set()
    for path in [*WEB.glob("*.js"), WEB / "index.html"]:
        if path.name == "pit_labels.js":
            continue
        text = path.read_text(encoding="utf-8")
        for pattern in USES:
            for match in re.findall(pattern, text):
                found |= set(match) if isinstance(match, tuple) else {match}
    # the names made at run time: phase_<shoe phase>, round_<status>, limit_<end>
    found |= {f"phase_{p}" for p in get_args(ShoePhase)}
    status = typing.get_type_hints(RoundMessage)["status"]
    found |= {f"round_{s}" for s in get_args(status)}
    return found | {"limit_min", "limit_max"}


async def labels_of(browser: Chromium, url: str) -> dict[str, list[str]]:
    """The console's labels (pit_labels.js PIT), as the page has them."""
    page = await browser.open(url, width=800, height=600)
    await page.wait_for("document.body.dataset.ready === 'true'", limit=WAIT)
    found: dict[str, list[str]] = await page.evaluate(
        "import('/pit_labels.js').then((m) => m.PIT)")
    return found


async def board_labels(browser: Chromium, url: str) -> list[list[str]]:
    """Every three texts of the board's labels.js the console shows (kinds, words ...)."""
    page = await browser.open(url, width=800, height=600)
    await page.wait_for("document.body.dataset.ready === 'true'", limit=WAIT)
    found: list[list[str]] = await page.evaluate(
        "import('/board/labels.js').then((l) => [l.LABELS, l.ALARM_KINDS, l.CORRECTIONS,"
        " l.TABLE_COMMANDS, l.SETTLED_BY, l.ORIGINS, l.ALARM_WORDS]"
        ".flatMap((table) => Object.values(table)))")
    return found


@pytest.mark.slow
@in_chromium
async def test_every_word_of_the_console_has_its_three_texts(tmp_path: Path) -> None:
    config = page_config("127.0.0.1", 1, None, PREFIX)
    async with PitServer(config, config) as server, Chromium.launch(tmp_path / "c") as browser:
        labels = await labels_of(browser, server.url)
    for key, texts in labels.items():
        assert len(texts) == 3, (key, texts)
        assert all(t.strip() for t in texts), (key, texts)
        holes = [sorted(re.findall(r"\{(\w+)\}", t)) for t in texts]
        assert holes[0] == holes[1] == holes[2], (key, texts)
    used = used_keys()
    assert {"log_in", "open_alarms", "declare", "burned_cards"} <= used  # the patterns read
    assert sorted(used - set(labels)) == []  # named by the code, with no label
    assert sorted(set(labels) - used) == []  # a label of nothing


@contextlib.asynccontextmanager
async def controller(broker: Mosquitto) -> AsyncIterator[list[str]]:
    """A stand-in for the tables' controllers: refuses every declare, takes the rest."""
    commands: list[str] = []
    async with broker.client() as client:
        await client.subscribe(f"{PREFIX}/+/cmd/#", qos=1)

        async def answer() -> None:
            async for message in client.messages:
                _, table, _, command, operator = str(message.topic).split("/")
                if table == "pit-console-probe":
                    continue
                commands.append(command)
                body = json.loads(bytes(message.payload))  # type: ignore[arg-type]
                reply = {"type": "reply", "id": body["id"], "ok": command != "declare",
                         "error": REFUSAL if command == "declare" else None}
                await client.publish(f"{PREFIX}/{table}/reply/{operator}", json.dumps(reply),
                                     qos=1)

        task = asyncio.create_task(answer())
        try:
            yield commands
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


async def publish_tables(broker: Mosquitto) -> None:
    """The floor: T1 with two open alarms (one holding 3 cards) and its live edge.

    T2 is offline, T3 and T4 have results, T4 a one-off notice; T5 is there for the
    advantage notice that publish_notice() sends once the page looks.
    """
    edge = edge_bodies()
    async with broker.client() as client:
        await client.publish(f"{PREFIX}/T5/status", status_payload("online", "T5"), qos=1,
                             retain=True)
        await client.publish(f"{PREFIX}/T1/edge", edge["edge"], qos=1, retain=True)
        for number, table in enumerate(("T1", "T2", "T3", "T4"), start=1):
            base = f"{PREFIX}/{table}"
            state = "offline" if table == "T2" else "online"
            await client.publish(f"{base}/status", status_payload(state, table), qos=1, retain=True)
            await client.publish(f"{base}/shoe", shoe_body(table, 100, 20), qos=1, retain=True)
            limits = {"schema": 1, "type": "limits", "table": table, "currency": "HKD",
                      "banker": {"min": 100, "max": 50000}, "player": {"min": 100, "max": 50000},
                      "tie": {"min": 10, "max": 5000}, "pairs": {"min": 10, "max": 2500}}
            await client.publish(f"{base}/limits", json.dumps(limits), qos=1, retain=True)
            open_ = [] if table != "T1" else [
                alarm(1, 5, "extra_card", count=3, cards=["2S", "3H", "4D"], card="2S"),
                alarm(1, 6, "result_mismatch", corrections=["declare", "void"],
                      text="declared banker, the cards say player"),
            ]
            await client.publish(f"{base}/alarms", AlarmsMessage(
                seq=101, ts=1.0, alarms=open_).to_bytes(), qos=1, retain=True)
            if number == 4:
                refused = alarm(4, 102, "shoe_refused", corrections=[], correctable=False,
                                round=None, lasting=False, text="a new shoe was refused")
                await client.publish(f"{base}/alarm", refused.to_bytes(), qos=1)


async def publish_notice(broker: Mosquitto) -> None:
    """T5's advantage notice (not retained: the alarms are, and they hold no notice)."""
    async with broker.client() as client:
        await client.publish(f"{PREFIX}/T5/alarm", edge_bodies()["notice"], qos=1)


async def results(broker: Mosquitto) -> None:
    async with broker.client() as client:
        for table in ("T1", "T3", "T4"):
            for i in range(4):
                await client.publish(f"{PREFIX}/{table}/result", result_body(table, 90 + i, 10 + i),
                                     qos=1)


class Walk:
    """The page, and what it showed in its own words at each step."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.english: dict[str, list[str]] = {}
        self.text = ""

    async def look(self, step: str) -> None:
        await self.page.evaluate("new Promise((done) => requestAnimationFrame(() => done(1)))")
        seen: dict[str, Any] = await self.page.evaluate(f"({WORDS_SHOWN})({json.dumps(DATA)})")
        lang = await self.page.evaluate("document.body.dataset.lang")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        await self.page.screenshot(ARTIFACTS / f"pit-{lang}-{step.replace(' ', '-')}.png")
        self.text += seen["text"]
        if seen["english"]:
            self.english[step] = seen["english"]

    async def click(self, selector: str) -> None:
        found = f"document.querySelector({json.dumps(selector)})"
        await self.page.wait_for(f"!!{found} && !{found}.disabled", limit=WAIT)
        await self.page.evaluate(f"{found}.click(); true")

    async def until(self, expression: str) -> Any:
        return await self.page.wait_for(expression, limit=WAIT)


async def walk_through(page: Page, operator: str, commands: list[str], broker: Mosquitto) -> Walk:
    walk = Walk(page)
    await walk.until("document.body.dataset.ready === 'true'")
    await walk.look("login")
    await page.evaluate("document.getElementById('username').value = '  '; true")
    await walk.click("#login-button")  # no username (spaces: the field is required)
    await walk.until("!document.getElementById('login-error').hidden")
    await walk.look("login error")
    await page.evaluate(f"document.getElementById('username').value = '{operator}'; true")
    await walk.click("#login-button")
    await walk.until("document.body.dataset.tables === '5'")
    await results(broker)  # live (not retained): the floor is open by then
    await publish_notice(broker)
    await walk.until("document.body.dataset.queue === '3'")
    await walk.until("document.body.dataset.mayCommand === 'yes'")
    await walk.until("document.querySelector('.tile[data-table=T3]').dataset.results.length === 4")
    await walk.look("floor")
    await walk.click(".queue-item[data-alarm-id='6'] [data-winner=tie]")
    await walk.until("!!document.querySelector('.queue-item[data-alarm-id=\"6\"] .note')")
    await walk.look("queue with a refusal")
    await walk.click(".tile[data-table=T1]")
    await walk.until("!!document.querySelector('.table-card[data-table=T1] .alarm')")
    await walk.until("document.querySelector('[data-fact=edge] dd').textContent !== '–'")
    await walk.click("[data-action=bulk]")
    await walk.until("!!document.querySelector('.reply[data-ok=ok]')")
    await page.evaluate(
        "const min = document.querySelector('[data-limit=tie-min]'); min.value = '9000';"
        "min.dispatchEvent(new Event('input', {bubbles: true})); true")
    await walk.click("[data-action=limits]")
    await walk.until("document.querySelector('.limits-status').dataset.state === 'error'")
    await walk.look("table view")
    await walk.click(".table-card [data-action=void]")
    await walk.until("document.getElementById('confirm').open")
    await walk.look("confirmation")
    await walk.click("#confirm-no")
    await walk.click(".table-card .history-link")
    await walk.until("document.getElementById('history').dataset.state === 'unconfigured'")
    await walk.look("history")
    assert commands.count("accept_as_burn") == 3, commands
    assert commands.count("declare") == 1, commands
    return walk


@pytest.mark.slow
@in_chromium
async def test_a_chinese_console_shows_no_english_of_its_own(
    mosquitto_factory: MosquittoFactory, tmp_path: Path
) -> None:
    broker = mosquitto_factory(websockets=True)
    await publish_tables(broker)
    config = page_config(broker.host, broker.websockets_port, None, PREFIX)
    seen: dict[str, Walk] = {}
    async with (
        controller(broker) as commands,
        PitServer(config, config, areas=AREAS) as server,
        Chromium.launch(tmp_path / "c") as browser,
    ):
        every = [*(await labels_of(browser, server.url)).values(),
                 *await board_labels(browser, server.url)]
        for lang in ("zh-Hant", "zh-Hans"):
            page = await browser.open(f"{server.url}?lang={lang}", width=1280, height=800)
            commands.clear()
            seen[lang] = await walk_through(page, OPERATORS[lang], commands, broker)
            assert [m for m in page.console if "history" not in m] == [], page.console
    for lang, walk in seen.items():
        assert walk.english == {}, (lang, walk.english)
    # the characters of one script that no text of the other has (the console's labels and
    # the board's): none may show on a page of the other
    hant = {c for _, t, _ in every for c in t} - {c for _, _, s in every for c in s}
    hans = {c for _, _, s in every for c in s} - {c for _, t, _ in every for c in t}
    assert len(hant) > 40
    assert len(hans) > 40
    assert sorted(set(seen["zh-Hans"].text) & hant) == []
    assert sorted(set(seen["zh-Hant"].text) & hans) == []
    for words in ("莊", "多出一張牌", "未處理警報", "已燒3張牌", "被拒", "宣佈和"):
        assert words in seen["zh-Hant"].text, words
    assert "已烧3张牌" in seen["zh-Hans"].text
