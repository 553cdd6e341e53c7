"""A web board opened mid-round, in headless Chromium: the retained topics alone bring it up.

The messages of a table left mid-round (round 2 dealt up to P2, a foreign card held aside,
the shoe's link down, a one-off bad_data notice) are published before the page is opened,
on the daemon's topics with its retain flags, on a real mosquitto; the page must show the
hand so far with both totals, and, for players the notice, for the pit every open alarm.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from baccarat.boards.web_server import WebBoardServer, page_config
from baccarat.controller.publisher import status_payload
from boards.chromium_cdp import Chromium
from boards.late_join import HAND, MID_ROUND, played, retained
from boards.web_pages import (
    PREFIX,
    TABLE,
    artifacts_folder,
    caught_up,
    in_chromium,
    publish_body,
)
from support.mosquitto import MosquittoFactory

PIT_IDS = "document.getElementById('alarm-banner').dataset.ids"


@pytest.mark.slow
@in_chromium
async def test_a_page_opened_mid_round_shows_the_hand_and_every_open_alarm(
    mosquitto_factory: MosquittoFactory, tmp_path: Path
) -> None:
    broker = mosquitto_factory(websockets=True)
    config = page_config(broker.host, broker.websockets_port, TABLE, PREFIX)
    messages = played(MID_ROUND)
    open_alarms = [m for m in messages if m.type == "alarms"][-1].alarms  # type: ignore[attr-defined]
    assert [a.kind for a in open_alarms] == ["link_down", "foreign_card"]
    async with broker.client() as client:  # the daemon was there all along; the page was not
        status = f"{PREFIX}/{TABLE}/status"
        await client.publish(status, status_payload("online", TABLE), qos=1, retain=True)
        for message in messages:
            await publish_body(client, json.loads(message.to_json()), message.to_json())
    newest = max(m.seq for m in retained(messages))
    async with (
        WebBoardServer(config) as server,
        Chromium.launch(tmp_path / "chromium") as browser,
    ):
        page = await browser.open(server.url, width=1920, height=1080)
        pit = await browser.open(f"{server.url}?view=pit", width=1280, height=720)
        board = await caught_up(page, newest)
        assert board["live"]["round"] == 2
        assert board["live"]["status"] == "open"
        assert {p: c for p, c in board["live"]["cards"].items() if c} == dict(HAND)
        assert board["live"]["totals"] == ["6", "6"]
        assert board["banner"] == {"hidden": False, "alarms": 2, "kind": "foreign_card"}
        assert board["notice"] == "table"  # the link is down: the table is being checked
        pit_board = await caught_up(pit, newest)
        assert pit_board["banner"] == board["banner"]
        assert await pit.evaluate(PIT_IDS) == ",".join(str(a.id) for a in open_alarms)
        await pit.screenshot(artifacts_folder() / "web-board-late-pit.png")
        assert page.console == []
        assert pit.console == []
