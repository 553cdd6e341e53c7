"""The console's header shows what the floor recorder quarantined, to operators who may read it.

A real mosquitto with accounts and an ACL, ``baccarat record`` as a process of its own
storing into the test's database (SQLite, then a private PostgreSQL cluster), hostile
bodies published beside a table's topics, and the console's page in headless Chromium
after the operator's login: the header counts the bodies on the topics the operator may
read (a body on a table they may not read is not counted, its reason never shown) and
names the newest reason, and it counts a body quarantined after the login within seconds.
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from baccarat.boards.web_server import page_config
from baccarat.floor.store import open_store
from baccarat.pit.access import BrokerLogin, ReadAcl
from baccarat.pit.history import HistoryAccess
from baccarat.pit.server import PitServer
from boards.chromium_cdp import Chromium
from boards.web_pages import in_chromium
from pit.test_pit_history_e2e import PASSWORD, RecorderProcess, history_login
from support.mosquitto import MosquittoFactory

WAIT = 60.0
ACL = """# the recorder and the test's own clients log in anonymously
topic readwrite baccarat/#

user pit-ana
topic read baccarat/T1/#
topic read baccarat/T2/#
"""
HOSTILE = [
    ("baccarat/T1/card", b"not json at all"),
    ("baccarat/T1/gadget", b'{"type":"card","seq":1}'),
    ("baccarat/T2/round", b'{"type":"round","seq":-4,"shoe":1,"round":1}'),
    ("baccarat/T9/card", b"T9 secret, not JSON"),  # not pit-ana's to see
]


def quarantined(db: str) -> int:
    store = open_store(db)
    try:
        return len(store.quarantined())
    finally:
        store.close()


async def wait_quarantined(db: str, count: int) -> None:
    deadline = time.monotonic() + WAIT
    while await asyncio.to_thread(quarantined, db) < count:
        assert time.monotonic() < deadline, "the recorder never quarantined them"
        await asyncio.sleep(0.2)


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, object]]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())


@pytest.mark.slow
@in_chromium
async def test_the_header_counts_the_recorders_quarantine(
    mosquitto_factory: MosquittoFactory, db_url: str, tmp_path: Path
) -> None:
    broker = mosquitto_factory(websockets=True, users={"pit-ana": PASSWORD}, acl=ACL)
    recorder = RecorderProcess(tmp_path, broker, db_url)
    try:
        await asyncio.to_thread(recorder.wait_recording)
        async with broker.client() as hostile:
            for topic, payload in HOSTILE:
                await hostile.publish(topic, payload, qos=1)
            await wait_quarantined(db_url, len(HOSTILE))

            acl = tmp_path / "acl"
            acl.write_text(ACL)
            access = HistoryAccess(
                BrokerLogin(broker.host, broker.websockets_port), ReadAcl(acl), "baccarat"
            )
            console = page_config(broker.host, broker.websockets_port, None, "baccarat")
            async with PitServer(console, console, db=db_url, access=access) as server:
                where = server.url + "history/quarantine.json"
                status, body = await asyncio.to_thread(get, where)
                assert status == 401, body  # no login, no count
                reader = await asyncio.to_thread(history_login, server.url)
                status, body = await asyncio.to_thread(get, where, reader)
                assert status == 200, body
                assert body["quarantined"] == 3  # T9's is not pit-ana's to see
                assert body["topics"] == 3
                newest = body["newest"]
                assert isinstance(newest, dict)
                assert newest["topic"] == "baccarat/T2/round"
                assert "negative" in str(newest["reason"])
                assert "T9" not in json.dumps(body)

                async with Chromium.launch(tmp_path / "chromium") as browser:
                    page = await browser.open(server.url, width=1600, height=1000)
                    await page.wait_for("document.body.dataset.ready === 'true'", limit=WAIT)
                    await page.evaluate(
                        "document.getElementById('username').value = 'pit-ana';"
                        f"document.getElementById('password').value = '{PASSWORD}';"
                        "document.getElementById('login-button').click(); true"
                    )
                    box = "document.getElementById('quarantined')"
                    await page.wait_for(f"{box}.dataset.quarantined === '3'", limit=WAIT)
                    assert await page.evaluate(f"{box}.hidden") is False
                    text = await page.evaluate(f"{box}.textContent")
                    assert text.startswith("Recorder quarantined 3 (newest: seq -4 is negative")
                    assert "baccarat/T2/round" in await page.evaluate(f"{box}.title")

                    await hostile.publish("baccarat/T1/card", b"[1, 2, 3]", qos=1)
                    await wait_quarantined(db_url, len(HOSTILE) + 1)
                    await page.wait_for(f"{box}.dataset.quarantined === '4'", limit=15)
                    text = await page.evaluate(f"{box}.textContent")
                    assert "not a JSON object" in text

                    await page.evaluate("document.getElementById('logout').click(); true")
                    await page.wait_for(f"{box}.hidden === true", limit=WAIT)
                    assert page.console == []
    finally:
        assert recorder.stop() == 0
    assert "Traceback" not in recorder.log()
