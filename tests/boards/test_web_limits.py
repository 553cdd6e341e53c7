"""The web board shows the table's limits from the retained ``limits`` topic, in Chromium.

The limits are published retained before the page opens (as the pit console leaves
them), then changed while it is open, then a body that is not a limits body comes: the
board shows the figures, follows the change, counts the bad body and keeps the last
good limits. The limits survive a controller restart (a new ``seq`` sequence), since
they are not the controller's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from baccarat.boards.web_server import WebBoardServer, page_config
from boards.chromium_cdp import Chromium
from boards.messages_for_tests import shoe
from boards.web_pages import PREFIX, TABLE, WAIT, artifacts_folder, in_chromium
from support.mosquitto import MosquittoFactory

SHOWN = """[...document.querySelectorAll('#limits:not([hidden]) [data-limit]')]
  .map((l) => [l.dataset.limit, +l.dataset.min, +l.dataset.max,
               l.querySelector('dd').innerText])"""


def limits(banker_max: int, **changes: Any) -> bytes:
    body: dict[str, Any] = {
        "schema": 1, "type": "limits", "table": TABLE, "currency": "HKD", "by": "pit-ana",
        "banker": {"min": 100, "max": banker_max}, "player": {"min": 100, "max": 50000},
        "tie": {"min": 10, "max": 5000}, "pairs": {"min": 10, "max": 2500},
    }
    body.update(changes)
    return json.dumps(body).encode()


@pytest.mark.slow
@in_chromium
async def test_the_board_shows_the_tables_limits(
    mosquitto_factory: MosquittoFactory, tmp_path: Path
) -> None:
    broker = mosquitto_factory(websockets=True)
    config = page_config(broker.host, broker.websockets_port, TABLE, PREFIX)
    topic = f"{PREFIX}/{TABLE}/limits"
    async with (
        broker.client() as pit,
        WebBoardServer(config) as server,
        Chromium.launch(tmp_path / "chromium") as browser,
    ):
        await pit.publish(topic, limits(50000), qos=1, retain=True)
        page = await browser.open(server.url, width=1920, height=1080)
        await page.wait_for(f"{SHOWN}.length === 4", limit=WAIT)
        assert await page.evaluate(SHOWN) == [
            ["banker", 100, 50000, "100–50,000"],
            ["player", 100, 50000, "100–50,000"],
            ["tie", 10, 5000, "10–5,000"],
            ["pairs", 10, 2500, "10–2,500"],
        ]
        assert "HKD" in await page.evaluate("document.querySelector('#limits .caption').innerText")
        await page.screenshot(artifacts_folder() / "web-board-limits.png")
        await pit.publish(topic, limits(80000), qos=1, retain=True)
        await page.wait_for(f"{SHOWN}[0][2] === 80000", limit=WAIT)
        await pit.publish(topic, limits(80000, tie={"min": 9000, "max": 5000}), qos=1)
        await pit.publish(topic, b"not json", qos=1)
        await page.wait_for("document.body.dataset.rejected === '2'", limit=WAIT)
        assert (await page.evaluate(SHOWN))[2][1:3] == [10, 5000]  # the last good ones
        shoe_topic = f"{PREFIX}/{TABLE}/shoe"
        await pit.publish(shoe_topic, shoe(5000).to_json(), qos=1, retain=True)
        await page.wait_for("document.body.dataset.highestSeq === '5000'", limit=WAIT)
        await pit.publish(shoe_topic, shoe(1).to_json(), qos=1, retain=True)  # a restart
        await page.wait_for("document.body.dataset.highestSeq === '1'", limit=WAIT)
        assert (await page.evaluate(SHOWN))[0][1:3] == [100, 80000]
        assert page.console == []
