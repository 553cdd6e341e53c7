"""The pit console in headless Chromium, against three real daemons and a real mosquitto.

The broker runs the example's ACL and accounts (examples/mosquitto/acl, with a third
table T09 added as its README says); each table's daemon reads a virtual framed shoe
dealt by the simulated dealer, which makes one scripted mistake. An operator logs in,
sees the three tables, settles T07's extra cards (coalesced: accept all as burn), T08's
wrong declaration (declare the right winner) and voids T09's published round after
confirming; the limits set in the page arrive retained and show on the web board; a
read-only account sees the buttons disabled; a command in another operator's name is
refused by the broker; a wrong password is said plainly.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from baccarat.boards.web_server import page_config
from baccarat.cards import parse_card
from baccarat.drivers.events import CardDrawn
from baccarat.messages.limits import parse_limits
from baccarat.pit.server import PitServer
from baccarat.rules.tableau import total, winner
from baccarat.sim_hardware.dealer import Dealer, Step
from baccarat.sim_hardware.virtual_shoe import VirtualShoe
from boards.chromium_cdp import Chromium, Page
from boards.web_pages import in_chromium
from support.daemon import Daemon, Recorder
from support.mosquitto import Mosquitto, MosquittoFactory

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_ACL = (ROOT / "examples" / "mosquitto" / "acl").read_text()
T09_ACL = """
user baccarat-T09
topic write baccarat/T09/+
topic write baccarat/T09/reply/#
topic read baccarat/T09/cmd/#
"""  # the section examples/mosquitto/README.md's loop writes for a new table
TABLES = ("T07", "T08", "T09")
OPERATOR, OTHER_OPERATOR, READ_ONLY, PIT_SCREEN = "pit-ana", "pit-ben", "board-T07", "board-pit"
USERS = {
    **{f"baccarat-{t}": f"{t}-secret" for t in TABLES},
    OPERATOR: "ana-secret", OTHER_OPERATOR: "ben-secret", READ_ONLY: "board-secret",
    PIT_SCREEN: "screen-secret",
}
RULES = {"open_mode": "explicit"}  # the framed shoe's buttons open the rounds
WAIT = 30.0  # seconds for the page or a daemon to catch up on a loaded machine
ARTIFACTS = ROOT / "artifacts" / "pit"
LIMITS = {"banker": (100, 50000), "player": (100, 50000), "tie": (10, 5000), "pairs": (10, 2500)}


@dataclass
class Table:
    """One table: its daemon, its virtual shoe and the dealer's steps still to deal."""

    name: str
    daemon: Daemon
    shoe: VirtualShoe
    steps: Iterator[Step]

    async def deal_until(self, done: Any) -> list[Step]:
        """Send the dealer's events up to and including the first step ``done`` accepts."""
        dealt = []
        for step in self.steps:
            self.shoe.send(step.event)
            dealt.append(step)
            if done(step):
                break
        await self.shoe.drain()
        return dealt


@pytest.fixture
def broker(mosquitto_factory: MosquittoFactory) -> Mosquitto:
    return mosquitto_factory(
        websockets=True, anonymous=False, users=USERS, acl=EXAMPLE_ACL + T09_ACL
    )


@contextlib.asynccontextmanager
async def tables(folder: Path, broker: Mosquitto) -> AsyncIterator[dict[str, Table]]:
    """The three tables' daemons and shoes, started; each dealer with its own mistake."""
    mistakes: dict[str, dict[int, Any]] = {
        "T07": {2: "extra_card"}, "T08": {2: "wrong_declare"}, "T09": {},
    }
    made: dict[str, Table] = {}
    async with contextlib.AsyncExitStack() as stack:
        for number, name in enumerate(TABLES):
            (folder / name).mkdir()
            link = str(folder / name / "shoe")
            shoe = await stack.enter_async_context(VirtualShoe(link, "framed", baud=115200))
            env = broker.env(username=f"baccarat-{name}", password=USERS[f"baccarat-{name}"])
            daemon = Daemon(
                folder / name, broker, device=link, rules=RULES, table=name, broker_env=env
            )
            stack.callback(daemon.close)
            await asyncio.to_thread(daemon.start)
            dealer = Dealer(decks=8, seed=10 + number, mistakes_at=mistakes[name])
            made[name] = Table(name, daemon, shoe, dealer.steps())
        yield made


def round_winner(steps: list[Step], round_no: int) -> str:
    """The winner the cards of round ``round_no`` make (the dealer's extra card left out)."""
    values: dict[str, list[int]] = {"P": [], "B": []}
    for step in steps:
        hand = step.role[:1]
        if step.round_no == round_no and isinstance(step.event, CardDrawn) and hand in values:
            values[hand].append(step.event.card.value)
    return winner(total(values["P"]), total(values["B"]))


@contextlib.asynccontextmanager
async def console_page(broker: Mosquitto, folder: Path) -> AsyncIterator[Page]:
    """The console served for ``broker`` and opened, ready, in Chromium at 1280x800."""
    config = page_config(broker.host, broker.websockets_port, None, "baccarat")
    async with PitServer(config, config) as server, Chromium.launch(folder / "c") as browser:
        page = await browser.open(server.url, width=1280, height=800)
        await page.wait_for("document.body.dataset.ready === 'true'", limit=WAIT)
        yield page


async def log_in(page: Page, username: str, password: str) -> None:
    await page.wait_for("document.body.dataset.ready === 'true'", limit=WAIT)
    await page.evaluate(
        f"document.getElementById('username').value = {json.dumps(username)};"
        f"document.getElementById('password').value = {json.dumps(password)};"
        "document.getElementById('login-button').click(); true"
    )


def card(table: str) -> str:
    return f"document.querySelector('.table-card[data-table={table}]')"


def tile(table: str) -> str:
    return f"document.querySelector('.tile[data-table={table}]')"


async def open_table(page: Page, table: str) -> None:
    """Open the table's own view from its tile on the floor (or switch to it)."""
    if await page.evaluate("pit.view") is not None:
        await page.evaluate("document.getElementById('table-back').click(); true")
    await page.wait_for(f"!!{tile(table)}", limit=WAIT)
    await page.evaluate(f"{tile(table)}.click(); true")
    await page.wait_for(f"!!{card(table)}", limit=WAIT)


async def click(page: Page, selector: str) -> None:
    """Click the (enabled) element ``selector`` names, once it is there."""
    found = f"document.querySelector({json.dumps(selector)})"
    await page.wait_for(f"!!{found} && !{found}.disabled", limit=WAIT)
    await page.evaluate(f"{found}.click(); true")


async def last_reply(page: Page, table: str, command: str) -> str:
    """The outcome (ok, refused) of the newest reply to ``command`` at ``table``."""
    selector = f".reply[data-table={table}][data-command={command}]"
    found = f"document.querySelector({json.dumps(selector)})"
    await page.wait_for(f"!!{found} && {found}.dataset.ok !== 'pending'", limit=WAIT)
    outcome: str = await page.evaluate(f"{found}.dataset.ok + ': ' + {found}.textContent")
    return outcome


def declared(round_no: int) -> Any:
    """Whether a step is the dealer's declare button of round ``round_no``."""
    return lambda step: step.round_no == round_no and step.role == "button" and (
        step.event.button.startswith("declare")
    )


@pytest.mark.slow
@in_chromium
async def test_an_operator_settles_three_tables_from_the_console(
    broker: Mosquitto, tmp_path: Path
) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    console = page_config(broker.host, broker.websockets_port, None, "baccarat")
    board = page_config(
        broker.host, broker.websockets_port, None, "baccarat",
        username=PIT_SCREEN, password=USERS[PIT_SCREEN],
    )
    async with (
        tables(tmp_path, broker) as floor,
        Recorder(broker, table="T07", username=OTHER_OPERATOR, password=USERS[OTHER_OPERATOR])
        as t07,
        PitServer(console, board) as server,
        Chromium.launch(tmp_path / "chromium") as browser,
    ):
        # Round 1 everywhere; then T07's dealer deals a card too many, and two more come
        # while the table is blocked; T08's declares the wrong winner; T09 stops after round 1.
        await floor["T07"].deal_until(lambda s: s.role == "extra")
        for extra in ("2S", "3H"):  # any card: the table is blocked, so they are held aside
            floor["T07"].shoe.send(CardDrawn(parse_card(extra)))
        await floor["T07"].shoe.drain()
        t08_steps = await floor["T08"].deal_until(lambda s: s.mistake == "wrong_declare")
        await floor["T09"].deal_until(declared(1))

        page = await browser.open(server.url, width=1600, height=1000)
        await log_in(page, OPERATOR, "wrong password")
        said = await page.wait_for("document.body.dataset.loginError", limit=WAIT)
        assert said == "Wrong username or password: the broker refused the login."
        await log_in(page, OPERATOR, USERS[OPERATOR])
        await page.wait_for("document.body.dataset.mayCommand === 'yes'", limit=WAIT)
        await page.wait_for("document.body.dataset.tables === '3'", limit=WAIT)
        for name in TABLES:
            await page.wait_for(f"{tile(name)}.dataset.controller === 'online'", limit=WAIT)
        await open_table(page, "T07")
        await page.wait_for(
            f"{card('T07')}.querySelector('.alarm[data-kind=extra_card][data-count=\"3\"]')"
            " !== null", limit=WAIT,
        )
        await page.wait_for(
            "!!document.querySelector('.queue-item[data-table=T08][data-kind=result_mismatch]')",
            limit=WAIT,
        )
        await page.screenshot(ARTIFACTS / "pit-console-alarms.png")

        # T07: accept all three as burn, one command per card, one reply line for them.
        await click(page, ".table-card[data-table=T07] .alarm [data-action=bulk]")
        await page.wait_for(f"{card('T07')}.dataset.alarms === '0'", limit=WAIT)
        await page.wait_for(  # the replies may come after the alarms are settled
            "[...document.querySelectorAll('.reply[data-table=T07][data-command=accept_as_burn]')]"
            ".every((r) => r.dataset.ok !== 'pending')", limit=WAIT,
        )
        outcomes = await page.evaluate(
            "[...document.querySelectorAll('.reply[data-table=T07][data-command=accept_as_burn]')]"
            ".map((r) => r.dataset.ok + ': ' + r.textContent)"
        )
        assert outcomes == ["ok: T07 Accept as burn: burned 3 cards"]
        await t07.wait_for(lambda r: any(
            b.get("type") == "alarm_cleared" and b["by"] == "accept_as_burn"
            for b in r.bodies()), WAIT)

        # T08: declare the winner the cards make.
        right = round_winner(t08_steps, 2)
        await open_table(page, "T08")
        await click(
            page,
            f".table-card[data-table=T08] .alarm[data-kind=result_mismatch] [data-winner={right}]",
        )
        assert (await last_reply(page, "T08", "declare")).startswith("ok")
        await page.wait_for(f"{card('T08')}.dataset.alarms === '0'", limit=WAIT)

        # T09: void the round whose result was published, after the page's confirmation.
        await open_table(page, "T09")
        await page.wait_for(f"{card('T09')}.dataset.roundStatus === 'complete'", limit=WAIT)
        await click(page, ".table-card[data-table=T09] .actions [data-action=void]")
        await page.wait_for("document.getElementById('confirm').open", limit=WAIT)
        await page.screenshot(ARTIFACTS / "pit-console-void.png")
        await page.evaluate("document.getElementById('confirm-no').click(); true")
        await asyncio.sleep(0.5)
        sent = await page.evaluate("document.querySelectorAll('.reply[data-table=T09]').length")
        assert sent == 0  # cancelled: nothing sent
        await click(page, ".table-card[data-table=T09] .actions [data-action=void]")
        await page.wait_for("document.getElementById('confirm').open", limit=WAIT)
        await page.evaluate("document.getElementById('confirm-yes').click(); true")
        assert (await last_reply(page, "T09", "void")).startswith("ok")
        await page.wait_for(f"{card('T09')}.dataset.roundStatus === 'void'", limit=WAIT)

        # T09's own buttons: demo on and off, end the shoe (confirmed), a new shoe.
        await click(page, ".table-card[data-table=T09] .actions [data-action=demo]")
        assert (await last_reply(page, "T09", "demo")).startswith("ok")
        demo = f"{card('T09')}.querySelector('[data-fact=demo] dd').textContent"
        await page.wait_for(f"{demo} === 'on'", limit=WAIT)
        await click(page, ".table-card[data-table=T09] .actions [data-action=demo]")
        await page.wait_for(f"{demo} === 'off'", limit=WAIT)
        await click(page, ".table-card[data-table=T09] .actions [data-action=end]")
        await page.wait_for("document.getElementById('confirm').open", limit=WAIT)
        await page.evaluate("document.getElementById('confirm-yes').click(); true")
        assert (await last_reply(page, "T09", "end")).startswith("ok")
        shoe_fact = f"{card('T09')}.querySelector('[data-fact=shoe] dd').textContent"
        await page.wait_for(f"{shoe_fact} === '1 (closed)'", limit=WAIT)
        await click(page, ".table-card[data-table=T09] .actions [data-action=shoe]")
        assert (await last_reply(page, "T09", "shoe")).startswith("ok")
        await page.wait_for(f"{shoe_fact}.startsWith('2 ')", limit=WAIT)

        # Limits for T07, set in the page: a wrong figure is said, and nothing is sent ...
        await open_table(page, "T07")
        status = f"{card('T07')}.querySelector('.limits-status')"
        await click(page, ".table-card[data-table=T07] [data-action=limits]")
        said = await page.wait_for(f"{status}.dataset.state === 'error' && {status}.textContent")
        assert said == 'banker min: a whole number, not ""'
        # ... then the right ones: retained on the broker, shown on the web board.
        for bet, (low, high) in LIMITS.items():
            await page.evaluate(
                f"{card('T07')}.querySelector('[data-limit={bet}-min]').value = '{low}';"
                f"{card('T07')}.querySelector('[data-limit={bet}-max]').value = '{high}';"
                f"{card('T07')}.querySelector('.limits-form').dispatchEvent("
                "new Event('input', {bubbles: true})); true"  # as typing does: kept on redraw
            )
        currency = f"{card('T07')}.querySelector('[data-limit=currency]')"
        await page.evaluate(f"{currency}.value = 'HKD'; true")
        tie_min = f"{card('T07')}.querySelector('[data-limit=tie-min]')"
        await page.evaluate(f"{tie_min}.value = '6000'; true")
        await click(page, ".table-card[data-table=T07] [data-action=limits]")
        said = await page.wait_for(f"{status}.dataset.state === 'error' && {status}.textContent")
        assert said == "tie: min 6000 is above max 5000"
        await page.evaluate(f"{tie_min}.value = '10'; true")
        await click(page, ".table-card[data-table=T07] [data-action=limits]")
        await page.wait_for(f"{status}.dataset.state === 'sent'", limit=WAIT)
        retained = await retained_limits(broker, "T07")
        assert {bet: (retained[bet]["min"], retained[bet]["max"]) for bet in LIMITS} == LIMITS
        assert (retained["by"], retained["currency"], retained["table"]) == (OPERATOR, "HKD", "T07")
        link = await page.evaluate(f"{card('T07')}.querySelector('.board-link').href")
        assert link == f"{server.url}board/?table=T07&prefix=baccarat&view=pit"
        live = await browser.open(link, width=1920, height=1080)
        await live.wait_for("!!document.querySelector('#limits:not([hidden]) [data-limit=tie]')",
                            limit=WAIT)
        shown = await live.evaluate(
            "[...document.querySelectorAll('#limits [data-limit]')]"
            ".map((l) => [l.dataset.limit, +l.dataset.min, +l.dataset.max])"
        )
        assert {bet: (low, high) for bet, low, high in shown} == LIMITS
        await live.screenshot(ARTIFACTS / "board-with-limits.png")

        # A command in another operator's name never leaves the browser's broker session.
        code = await page.evaluate(
            "new Promise((done) => pit.client.publish('baccarat/T07/cmd/open/pit-ben', '{}',"
            " {qos: 1}, (error) => done(error ? error.code : 0)))"
        )
        assert code == 0x87  # not authorized
        await page.screenshot(ARTIFACTS / "pit-console.png")

        # A body that is no message is counted on the table's card, and changes nothing else
        # (the card topic: read while the table's own view is open).
        await open_table(page, "T08")
        await asyncio.sleep(0.5)  # its subscription made
        async with broker.client(username="baccarat-T08", password=USERS["baccarat-T08"]) as t08:
            await t08.publish("baccarat/T08/card", b"not a card", qos=1)
        bad = f"{card('T08')}.querySelector('[data-fact=rejected] dd')"
        await page.wait_for(f"!!{bad} && {bad}.textContent === '1'", limit=WAIT)
        assert await page.evaluate(f"{card('T08')}.dataset.alarms") == "0"

        # A table whose controller stops is shown offline (its retained status).
        assert await asyncio.to_thread(floor["T09"].daemon.stop) == 0
        await page.wait_for(f"{card('T08')}.dataset.controller === 'online'", limit=WAIT)
        await page.evaluate("document.getElementById('table-back').click(); true")
        await page.wait_for(f"{tile('T09')}.dataset.controller === 'offline'", limit=WAIT)
        assert page.console == []  # no --db: the page does not ask the recorder's count
        assert live.console == []

    # The journal and the history name the operator of each correction.
    for name, wanted in (
        ("T07", "by=pit/pit-ana accept_as_burn"),
        ("T08", "by=pit/pit-ana declare"),
        ("T09", "by=pit/pit-ana void"),
    ):
        files = [str(f) for f in floor[name].daemon.journal_files()]  # every shoe's file
        shown = "".join([await asyncio.to_thread(baccarat, "journal", "show", f) for f in files])
        assert wanted in shown, (name, shown)
        messages = "".join([
            await asyncio.to_thread(baccarat, "journal", "show", f, "--messages") for f in files
        ])
        (folder := tmp_path / f"{name}-messages.jsonl").write_text(messages)
        history = await asyncio.to_thread(baccarat, "history", "--messages", str(folder))
        assert "(pit/pit-ana)" in history, (name, history)


def baccarat(*args: str) -> str:
    """What a ``baccarat`` command prints."""
    return subprocess.run(
        [sys.executable, "-m", "baccarat.cli", *args],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout


async def retained_limits(broker: Mosquitto, table: str) -> dict[str, Any]:
    """The retained body on ``{table}/limits``, as a board connecting now gets it."""
    async with broker.client(username=PIT_SCREEN, password=USERS[PIT_SCREEN]) as client:
        await client.subscribe(f"baccarat/{table}/limits", qos=1)
        async with asyncio.timeout(WAIT):
            message = await anext(client.messages)
    assert message.retain
    assert isinstance(message.payload, bytes)
    body: dict[str, Any] = json.loads(message.payload)
    return body


@pytest.mark.slow
@in_chromium
async def test_an_account_that_may_not_command_sees_the_buttons_disabled(
    broker: Mosquitto, tmp_path: Path
) -> None:
    console = page_config(broker.host, broker.websockets_port, None, "baccarat")
    board = page_config(broker.host, broker.websockets_port, None, "baccarat")
    async with (
        tables(tmp_path, broker) as floor,
        PitServer(console, board) as server,
        Chromium.launch(tmp_path / "chromium") as browser,
    ):
        await floor["T07"].deal_until(lambda s: s.role == "extra")
        page = await browser.open(server.url, width=1600, height=1000)
        await log_in(page, READ_ONLY, USERS[READ_ONLY])
        await page.wait_for("document.body.dataset.mayCommand === 'no'", limit=WAIT)
        await open_table(page, "T07")
        await page.wait_for(
            f"!!{card('T07')} && !!{card('T07')}.querySelector('.alarm[data-kind=extra_card]')",
            limit=WAIT,
        )
        buttons = await page.evaluate(
            "[...document.querySelectorAll('.table-card button, .table-card input')]"
            ".map((b) => b.disabled)"
        )
        assert buttons
        assert all(buttons)
        assert await page.evaluate("document.body.dataset.tables") == "1"  # it reads T07 only
        await page.screenshot(ARTIFACTS / "pit-console-read-only.png")
        assert page.console == []


@pytest.mark.slow
@in_chromium
async def test_the_consoles_rules_for_alarms_and_limits(
    broker: Mosquitto, tmp_path: Path
) -> None:
    """What console.js offers for each alarm, and what it says of wrong limits."""
    async with console_page(broker, tmp_path) as page:
        found = await page.evaluate("""(async () => {
          const c = await import('/console.js');
          // a text is a label's three (pit_labels.js): English first
          const actions = (alarm) => c.alarmActions(alarm).map((a) => [a.text[0], a.repeat || 1]);
          const good = {banker: {min: '100', max: '500'}, player: {min: '100', max: '500'},
                        tie: {min: '0', max: '50'}, pairs: {min: '0', max: '50'}};
          const bad = (changes, currency = '') =>
            c.limitsBody('T1', {...good, ...changes}, 'pit-ana', currency, 1).error[0];
          return {
            coalesced: actions(
              {kind: 'extra_card', count: 4, corrections: ['accept_as_burn', 'void']}),
            mismatch: actions({kind: 'result_mismatch', corrections: ['declare', 'void']}),
            missing: actions({kind: 'missing_card', corrections: ['deal', 'void']}),
            hint: c.dealHint({corrections: ['deal', 'void']})[0],
            hintZh: c.dealHint({corrections: ['deal', 'void']})[1],
            noHint: c.dealHint({corrections: ['void']}),
            zhError: c.limitsBody('T1', {...good, tie: {min: '9', max: '5'}}, 'pit-ana', '', 1)
              .error[1],
            burnBody: c.alarmActions(
              {id: 7, kind: 'extra_card', count: 1, corrections: ['accept_as_burn']})[0].body,
            none: actions({kind: 'bad_data', corrections: []}),
            body: c.limitsBody('T1', good, 'pit-ana', 'HKD', 1).body,
            errors: [
              bad({tie: {min: '1.5', max: '50'}}), bad({pairs: {min: '5', max: '0'}}),
              bad({banker: {min: '1', max: '10000000000000'}}), bad({}, 'hkd'),
            ],
          };
        })()""")
        assert found["coalesced"] == [
            ["Accept as burn", 1], ["Accept all 4 as burn", 4], ["Void", 1],
        ]
        assert found["mismatch"] == [
            ["Declare banker", 1], ["Declare player", 1], ["Declare tie", 1], ["Void", 1],
        ]
        assert found["missing"] == [["Void", 1]]
        assert found["hint"] == "Deal the card that is due from the shoe"
        assert found["hintZh"] == "請從牌靴補發應發的牌"
        assert found["noHint"] is None
        assert found["zhError"] == "和：下限 9 高於上限 5"
        assert found["burnBody"] == {"alarm": 7}  # the alarm's own card
        assert found["none"] == []
        parse_limits(json.dumps(found["body"]))  # what the page sends, the model takes
        assert found["errors"] == [
            'tie min: a whole number, not "1.5"',
            "pairs max: at least 1",
            "banker max: at most 1000000000000",
            'currency: three capitals (HKD), not "hkd"',
        ]


@pytest.mark.slow
@in_chromium
async def test_a_broker_that_does_not_answer_is_said_plainly(tmp_path: Path) -> None:
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    config = page_config("127.0.0.1", port, None, "baccarat")
    async with PitServer(config, config) as server, Chromium.launch(tmp_path / "c") as browser:
        page = await browser.open(server.url, width=1280, height=800)
        await log_in(page, OPERATOR, "whatever")
        said = await page.wait_for("document.body.dataset.loginError", limit=WAIT)
        assert said == f"Cannot reach the broker at ws://127.0.0.1:{port}/mqtt."
        assert await page.evaluate("document.getElementById('login-button').disabled") is False


@pytest.mark.slow
@in_chromium
async def test_a_flooding_table_is_marked_and_dropped_and_the_others_keep_up(
    broker: Mosquitto, tmp_path: Path
) -> None:
    """console.js with one table sending 2,000 messages in a second, another dealing.

    The flooding table's excess is dropped and counted on its state (its tile marked); the
    other table's card is taken in the same second; a body over its topic's limit is never
    parsed; the flood's mark goes once a second passes within the limit.
    """
    async with console_page(broker, tmp_path) as page:
        found = await page.evaluate("""(async () => {
          const c = await import('/console.js');
          let s = c.emptyConsole();
          const t0 = 1_000_000;
          const shoe = JSON.stringify({schema: 1, type: 'shoe', seq: 1, ts: 1, shoe: 1,
            profile: 'macau', decks: 8, cards_dealt: 0, cards_burned: 0, cards_left: 416,
            burn_due: 0, phase: 'ready', cut_card: false, last_round: false, rounds: 0,
            demo: false, demo_rounds: 0});
          for (let n = 0; n < 2000; n++) {
            s = c.receive(s, 'baccarat', 'baccarat/T08/limits', '{"x":' + n + '}', 8, t0 + n / 4);
          }
          s = c.receive(s, 'baccarat', 'baccarat/T07/shoe', shoe, shoe.length, t0 + 500);
          const flooded = {flooding: s.tables.T08.flooding, rejected: s.tables.T08.rejected};
          s = c.receive(s, 'baccarat', 'baccarat/T08/limits', null, 70000, t0 + 2500);
          s = c.receive(s, 'baccarat', 'baccarat/T08/limits', null, 70000, t0 + 3500);
          return {
            ...flooded, t07: s.tables.T07.shoe && s.tables.T07.shoe.cards_left,
            after: s.tables.T08.flooding, why: s.tables.T08.refusedWhy,
          };
        })()""")
    assert found["flooding"] == 2000 - c_flood_limit()
    assert found["rejected"] == 2000  # the first refused as no limits body, the rest dropped
    assert found["t07"] == 416  # the dealing table kept up
    assert found["after"] == 0  # a calm second: the mark is gone
    assert found["why"] == "body of 70000 bytes, over the 1024 a limits body may have"


def c_flood_limit() -> int:
    """console.js's FLOOD_PER_SECOND, read from the file (the page's own figure)."""
    text = (Path(__file__).parents[2] / "src/baccarat/pit/web/console.js").read_text()
    found = re.search(r"export const FLOOD_PER_SECOND = (\d+);", text)
    assert found is not None
    return int(found[1])
