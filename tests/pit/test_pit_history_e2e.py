"""The history view end to end: a table deals a shoe, the recorder stores it, the pit reads it.

A real mosquitto, ``baccarat record`` as a process of its own (SQLite, then a private
PostgreSQL cluster), a real daemon reading a virtual framed shoe from the simulated
dealer, who declares the wrong winner in round 2; the alarm is settled by a command in
the operator form (``baccarat/T1/cmd/declare/pit-ana``) from a client. Then the console's
``/history.json`` over HTTP gives the rounds ``baccarat history --db`` gives (JSON and
CSV) to a reader logged in with their broker account, and the page's History view in
Chromium, after the operator's login, shows them, with who settled the alarm.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from baccarat.boards.web_server import page_config
from baccarat.drivers.events import CardDrawn
from baccarat.floor.store import open_store
from baccarat.pit.access import BrokerLogin, ReadAcl
from baccarat.pit.history import HistoryAccess
from baccarat.pit.server import PitServer
from baccarat.rules.tableau import total, winner
from baccarat.sim_hardware.dealer import Dealer, Step
from baccarat.sim_hardware.virtual_shoe import VirtualShoe
from boards.chromium_cdp import Chromium
from boards.web_pages import in_chromium
from pit.history_support import basic
from support.daemon import Daemon, Recorder
from support.mosquitto import Mosquitto, MosquittoFactory, _die_with_parent

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts" / "pit"
DECKS = 2  # a whole shoe of about 20 rounds, in a test's time
PACE = 0.01  # seconds between the dealer's events
WAIT = 60.0  # seconds for the recorder, a daemon or the page on a loaded machine
SETTLED = "settled by declare (pit/pit-ana)"
SETTLED_WORDS = "settled by the winner declared (pit-ana at the pit console)"
PASSWORD = "ana-secret"  # the test broker's
ACL = """# the table's daemon, the recorder and the test's own clients log in anonymously
topic readwrite baccarat/#

user pit-ana
topic read baccarat/#
topic write baccarat/+/cmd/+/pit-ana
"""


class RecorderProcess:
    """``baccarat record`` as a process, as the floor runs it."""

    def __init__(self, folder: Path, broker: Mosquitto, db: str) -> None:
        self.log_file = folder / "recorder.log"
        with self.log_file.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "baccarat.cli", "record", "--broker",
                 f"127.0.0.1:{broker.port}", "--db", db, "--client-id", "baccarat-recorder"],
                stdout=log, stderr=subprocess.STDOUT,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
                preexec_fn=_die_with_parent,  # noqa: PLW1509 - only a prctl() call
            )

    def wait_recording(self) -> None:
        deadline = time.monotonic() + WAIT
        while "recording baccarat/+/#" not in self.log():
            assert self.process.poll() is None, self.log()
            assert time.monotonic() < deadline, f"the recorder never subscribed: {self.log()}"
            time.sleep(0.1)

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(20)

    def log(self) -> str:
        return self.log_file.read_text(errors="replace")


def right_winner(steps: list[Step], round_no: int) -> str:
    values: dict[str, list[int]] = {"P": [], "B": []}
    for step in steps:
        hand = step.role[:1]
        if step.round_no == round_no and isinstance(step.event, CardDrawn) and hand in values:
            values[hand].append(step.event.card.value)
    return winner(total(values["P"]), total(values["B"]))


def stored_seqs(db: str) -> set[int]:
    """T1's seqs the recorder holds: its facts, and the places of the derived views."""
    store = open_store(db)
    try:
        return {seq for _, seq in store.seqs("T1")}
    finally:
        store.close()


def cli_history(db: str, *args: str) -> str:
    return subprocess.run(
        [sys.executable, "-m", "baccarat.cli", "history", "--db", db, "--table", "T1",
         "--shoe", "1", *args],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout


def http_get(url: str, headers: dict[str, str]) -> bytes:
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=30) as got:
        body: bytes = got.read()
        return body


def history_login(url: str) -> dict[str, str]:
    """The Bearer header of pit-ana's history login, as a script gets it."""
    login = urllib.request.Request(
        url + "history/login", method="POST", headers=basic("pit-ana", PASSWORD)
    )
    with urllib.request.urlopen(login, timeout=30) as response:
        return {"Authorization": f"Bearer {json.loads(response.read())['token']}"}


@pytest.fixture
async def dealt(
    tmp_path: Path, mosquitto_factory: MosquittoFactory, db_url: str
) -> AsyncIterator[Mosquitto]:
    """A whole shoe dealt at T1 and recorded, its round 2 alarm settled by pit-ana."""
    broker = mosquitto_factory(websockets=True, users={"pit-ana": PASSWORD}, acl=ACL)
    recorder = RecorderProcess(tmp_path, broker, db_url)
    try:
        await asyncio.to_thread(recorder.wait_recording)
        link = str(tmp_path / "shoe")
        async with (
            VirtualShoe(link, "framed", baud=115200) as shoe,
            Recorder(broker, table="T1") as board,
            broker.client() as operator,
        ):
            daemon = Daemon(tmp_path, broker, device=link,
                            rules={"open_mode": "explicit", "decks": DECKS})
            try:
                await asyncio.to_thread(daemon.start)
                steps = Dealer(decks=DECKS, seed=4, mistakes_at={2: "wrong_declare"}).steps()
                dealt: list[Step] = []
                for step in steps:
                    shoe.send(step.event)
                    dealt.append(step)
                    await asyncio.sleep(PACE)
                    if step.mistake == "wrong_declare":
                        break
                await board.wait_for(lambda r: any(
                    b.get("kind") == "result_mismatch" for b in r.bodies("alarm")), WAIT)
                body = {"winner": right_winner(dealt, 2), "id": "pit-ana-test-1"}
                await operator.publish(
                    "baccarat/T1/cmd/declare/pit-ana", json.dumps(body).encode(), qos=1
                )
                await board.wait_for(lambda r: any(
                    b.get("origin") == "pit/pit-ana" for b in r.bodies("alarm_cleared")), WAIT)
                for step in steps:
                    shoe.send(step.event)
                    await asyncio.sleep(PACE)
                await board.wait_for(lambda r: r.phase() == "closed", WAIT)
                published = set(board.by_seq())
                deadline = time.monotonic() + WAIT
                while not published <= await asyncio.to_thread(stored_seqs, db_url):
                    assert time.monotonic() < deadline, "the recorder never stored the shoe"
                    await asyncio.sleep(0.5)
            finally:
                daemon.close()
        yield broker
    finally:
        assert recorder.stop() == 0
    assert "Traceback" not in recorder.log()


@pytest.mark.slow
@in_chromium
async def test_the_history_view_reads_what_the_recorder_stored(
    dealt: Mosquitto, db_url: str, tmp_path: Path
) -> None:
    broker = dealt
    console = page_config(broker.host, broker.websockets_port, None, "baccarat")
    expected_csv = await asyncio.to_thread(cli_history, db_url, "--csv")
    expected = list(csv.DictReader(io.StringIO(expected_csv)))
    assert len(expected) > 10  # a whole shoe
    assert sum(SETTLED in row["alarms"] for row in expected) == 1
    acl = tmp_path / "acl"
    acl.write_text(ACL)
    access = HistoryAccess(BrokerLogin(broker.host, broker.websockets_port), ReadAcl(acl),
                           "baccarat")
    async with PitServer(console, console, db=db_url, access=access) as server:
        query = f"{server.url}history.json?table=T1&shoe=1"
        reader = await asyncio.to_thread(history_login, server.url)
        got_csv = await asyncio.to_thread(http_get, query + "&format=csv", reader)
        assert got_csv.decode() == expected_csv
        found = json.loads(await asyncio.to_thread(http_get, query, reader))
        assert [
            {
                **{key: str(value) for key, value in rnd.items()
                   if key not in ("cards", "alarms", "demo", "player_total", "banker_total")},
                "cards": " ".join(rnd["cards"]), "alarms": "; ".join(rnd["alarms"]),
                "demo": "yes" if rnd["demo"] else "",
                "player_total": "" if rnd["player_total"] is None else str(rnd["player_total"]),
                "banker_total": "" if rnd["banker_total"] is None else str(rnd["banker_total"]),
            }
            for rnd in found["rounds"]
        ] == expected
        assert [s["shoe"] for s in found["shoes"]] == [1]

        async with Chromium.launch(tmp_path / "chromium") as browser:
            page = await browser.open(server.url, width=1600, height=1000)
            await page.wait_for("document.body.dataset.ready === 'true'", limit=WAIT)
            await page.evaluate(
                "document.getElementById('username').value = 'pit-ana';"
                f"document.getElementById('password').value = '{PASSWORD}';"
                "document.getElementById('login-button').click(); true"
            )
            tile = "document.querySelector('.tile[data-table=T1]')"  # the table's view first
            await page.wait_for(f"!!{tile}", limit=WAIT)
            await page.evaluate(f"{tile}.click(); true")
            history = "document.querySelector('.table-card[data-table=T1] .history-link')"
            await page.wait_for(f"!!{history}", limit=WAIT)
            await page.evaluate(f"{history}.click(); true")
            await page.wait_for("document.getElementById('history').dataset.state === 'ready'",
                                limit=WAIT)
            shown = await page.evaluate(
                "[...document.querySelectorAll('#history-rounds .history-round')].map((r) =>"
                " [r.dataset.round, r.dataset.outcome,"
                "  [...r.querySelectorAll('[data-alarm]')].map((a) => a.dataset.alarm).join(' '),"
                "  r.querySelector('.history-alarms').textContent])"
            )
            assert [row[0] for row in shown] == [row["round"] for row in expected]
            assert [row[1] for row in shown] == [row["outcome"] for row in expected]
            assert sum(SETTLED in row[2] for row in shown) == 1
            assert sum(SETTLED_WORDS in row[3] for row in shown) == 1  # shown as words
            assert await page.evaluate("document.getElementById('layout').hidden") is True
            download = await page.evaluate(
                "fetch(document.getElementById('history-csv').href).then((r) => r.text())"
            )
            assert download == expected_csv
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            await page.screenshot(ARTIFACTS / "pit-history.png")
            await page.evaluate("document.getElementById('history-close').click(); true")
            assert await page.evaluate("document.getElementById('history').hidden") is True
            assert page.console == []


@pytest.mark.slow
@in_chromium
async def test_without_a_database_the_history_view_says_it_is_not_configured(
    mosquitto_factory: MosquittoFactory, tmp_path: Path
) -> None:
    broker = mosquitto_factory(websockets=True)
    async with broker.client() as table:  # a table on the broker: its retained status
        status = {"schema": 1, "type": "status", "state": "online", "table": "T1"}
        await table.publish("baccarat/T1/status", json.dumps(status).encode(), qos=1, retain=True)
    console = page_config(broker.host, broker.websockets_port, None, "baccarat")
    async with (
        PitServer(console, console) as server,
        Chromium.launch(tmp_path / "chromium") as browser,
    ):
        page = await browser.open(server.url, width=1280, height=800)
        await page.wait_for("document.body.dataset.ready === 'true'", limit=WAIT)
        await page.evaluate(
            "document.getElementById('username').value = 'pit-ana';"
            "document.getElementById('login-button').click(); true"
        )
        tile = "document.querySelector('.tile[data-table=T1]')"  # the table's view first
        await page.wait_for(f"!!{tile}", limit=WAIT)
        await page.evaluate(f"{tile}.click(); true")
        history = "document.querySelector('.table-card[data-table=T1] .history-link')"
        await page.wait_for(f"!!{history}", limit=WAIT)
        await page.evaluate(f"{history}.click(); true")
        said = await page.wait_for(
            "document.getElementById('history').dataset.state === 'unconfigured'"
            " && document.getElementById('history-status').textContent", limit=WAIT,
        )
        assert said == "history not configured: start baccarat pit with --db URL"
        assert await page.evaluate("document.getElementById('history-csv').hidden") is True
