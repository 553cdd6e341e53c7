"""The web board's layout on the screens of a casino floor, in headless Chromium.

A shoe near its end (long roads, the last-round flag, the live round mid-deal, the
table's limits in seven figures) is published on a real mosquitto; the page is opened at
16:9 (1920x1080 and 1280x720), 4:3 (1024x768) and portrait 9:16 (1080x1920), for players
and for the pit (``?view=pit``).
On each, nothing may stick out of the screen or out of its panel, no text may be cut, the
header must keep to one row (at 1024x768 in every language mode too), and every road must
show at least a few columns. Then an alarm is raised: the banner must
cover no road, no ask row and no statistic (only the last result), players must read the
short notice and not the alarm, and the pit the kind, article and text of the alarm that
holds play up (and how many more are open).

Screenshots go to ``artifacts/web-board/board-WxH[-pit][-alarm].png``; the ones in
``docs/`` are ``docs-board-*.png``, drawn smaller, through ``pngquant``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

import pytest

from baccarat.boards.web_server import WebBoardServer, page_config
from baccarat.controller.publisher import status_payload
from boards.chromium_cdp import Chromium, Page
from boards.web_pages import (
    PREFIX,
    TABLE,
    WAIT,
    Shoe,
    artifacts_folder,
    in_chromium,
    index_where,
    publish,
    publish_body,
    replayed_shoe,
)
from support.mosquitto import MosquittoFactory

pytestmark = pytest.mark.xdist_group("web_layout")  # module fixtures: one worker

SIZES: Final = ((1920, 1080), (1280, 720), (1024, 768), (1080, 1920))
VIEWS: Final = ("players", "pit")
NARROW: Final = (1024, 768)
OTHER_LANGUAGES: Final = ("en", "zh-Hant", "zh-Hans", "both-Hans")
"""Also opened at NARROW, for players: the header of each language mode in one row."""
MIN_COLUMNS: Final = {
    "big_road": 12,
    "big_eye_boy": 8,
    "small_road": 8,
    "cockroach_pig": 8,
    "bead_plate": 6,
}
"""Columns each road must show whole, at the least."""
DOCS_SCALE: Final = {(1920, 1080): 0.5, (1024, 768): 0.75, (1080, 1920): 0.4}
"""The screenshots for docs/, drawn smaller: ``docs-board-WxH[-alarm].png``."""
ALARM_TEXT: Final = "QH came out but round 78 is complete: no card is due (Art. 9)"
LIMITS: Final = json.dumps({
    "schema": 1, "type": "limits", "table": TABLE, "currency": "HKD",
    "banker": {"min": 1000, "max": 1000000}, "player": {"min": 1000, "max": 1000000},
    "tie": {"min": 100, "max": 125000}, "pairs": {"min": 100, "max": 90000},
})

HERE: Final = Path(__file__).parent
LAYOUT_PROBLEMS: Final = (HERE / "layout_problems.js").read_text(encoding="utf-8")
LAYOUT_FACTS: Final = (HERE / "layout_facts.js").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def shoe(tmp_path_factory: pytest.TempPathFactory) -> Shoe:
    return replayed_shoe(tmp_path_factory.mktemp("shoe"))


def last_round_mid_deal(shoe: Shoe) -> int:
    """How many messages to publish: up to the B2 card of the shoe's last round."""
    last = max(m["round"] for m in shoe.messages if m["type"] == "result")
    return index_where(shoe, 0, type="card", round=last, position="B2") + 1


def alarms(shoe: Shoe, sent: int) -> list[dict[str, Any]]:
    """An extra card the pit must settle, then a device alarm that nothing settles."""
    seq = shoe.messages[sent - 1]["seq"]
    common = {"schema": 1, "ts": None, "shoe": 1, "card": None}
    extra = {
        **common,
        "type": "alarm",
        "seq": seq + 1,
        "id": 901,
        "kind": "extra_card",
        "article": "9",
        "correctable": True,
        "corrections": ["accept_as_burn", "void"],
        "round": shoe.messages[sent - 1]["round"],
        "card": "QH",
        "text": ALARM_TEXT,
    }
    bad_data = {
        **common,
        "type": "alarm",
        "seq": seq + 2,
        "id": 902,
        "kind": "bad_data",
        "article": "device",
        "correctable": False,
        "corrections": [],
        "round": None,
        "text": "rejected bytes from the shoe: 41 30 39 0d",
    }
    return [extra, bad_data]


def overlaps(a: list[float], b: list[float]) -> bool:
    return a[0] < b[2] - 0.5 and b[0] < a[2] - 0.5 and a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5


def shot_name(width: int, height: int, view: str, suffix: str = "") -> str:
    return f"board-{width}x{height}{'-pit' if view == 'pit' else ''}{suffix}.png"


async def open_pages(browser: Chromium, url: str) -> dict[tuple[int, int, str], Page]:
    """Every size for both views (`both` languages); NARROW for players in the others."""
    pages = {}
    for width, height in SIZES:
        for view in VIEWS:
            query = "?view=pit" if view == "pit" else ""
            pages[width, height, view] = await browser.open(f"{url}{query}", width, height)
    for lang in OTHER_LANGUAGES:
        pages[*NARROW, f"players {lang}"] = await browser.open(f"{url}?lang={lang}", *NARROW)
    return pages


async def drawn(page: Page, seq: int) -> None:
    await page.wait_for(f"+document.body.dataset.highestSeq >= {seq}", limit=WAIT)
    await page.evaluate("new Promise((done) => requestAnimationFrame(() => done(true)))")


@pytest.mark.slow
@in_chromium
async def test_the_board_fits_each_screen_and_the_alarm_covers_no_road(
    mosquitto_factory: MosquittoFactory, tmp_path: Path, shoe: Shoe
) -> None:
    broker = mosquitto_factory(websockets=True)
    config = page_config(broker.host, broker.websockets_port, TABLE, PREFIX)
    artifacts = artifacts_folder()
    async with (
        WebBoardServer(config) as server,
        broker.client() as client,
        Chromium.launch(tmp_path / "chromium") as browser,
    ):
        await client.publish(
            f"{PREFIX}/{TABLE}/status", status_payload("online", TABLE), qos=1, retain=True
        )
        # The table's limits, as the pit console leaves them (retained): the header's widest.
        await client.publish(f"{PREFIX}/{TABLE}/limits", LIMITS, qos=1, retain=True)
        # The shoe up to its last round, which the pages get from the retained topics;
        # then the pages, and the last round's cards, which are not retained.
        stop = last_round_mid_deal(shoe)
        last_round = shoe.messages[stop - 1]["round"]
        sent = await publish(client, shoe, 0, index_where(shoe, 0, type="round", round=last_round))
        pages = await open_pages(browser, server.url)
        for page in pages.values():
            await page.wait_for("document.body.dataset.link === 'connected'", limit=WAIT)
        sent = await publish(client, shoe, sent, stop)
        assert shoe.messages[sent - 1]["type"] == "card"
        problems: dict[str, list[str]] = {}
        fits: dict[str, str] = {}  # the header's compact form on each screen (board.css fit-N)
        for (width, height, view), page in pages.items():
            await drawn(page, shoe.messages[sent - 1]["seq"])
            assert await page.evaluate("document.body.dataset.link") == "connected"
            assert await page.evaluate("!document.getElementById('shoe-flag').hidden")
            assert await page.evaluate("!document.getElementById('limits').hidden")
            problems[f"{width}x{height} {view}"] = await page.evaluate(LAYOUT_PROBLEMS)
            facts = await page.evaluate(LAYOUT_FACTS)
            fits[f"{width}x{height} {view}"] = facts["header_fit"]
            for road, least in MIN_COLUMNS.items():
                assert facts["columns"][road] >= least, (width, height, road, facts["columns"])
            if int(facts["header_fit"]) >= 5:  # the limits' short figures, never rounded
                shown = await page.evaluate(
                    "[...document.querySelectorAll('#limits dd')].map((d) => d.innerText)")
                assert shown == ["1K–1M", "1K–1M", "100–125K", "100–90K"], shown
            if view != "players":
                continue  # the same picture as the players' until an alarm is open
            await page.screenshot(artifacts / shot_name(width, height, view))
            if (width, height) in DOCS_SCALE:
                docs = artifacts / f"docs-{shot_name(width, height, view)}"
                await page.screenshot(docs, scale=DOCS_SCALE[width, height])

        raised = alarms(shoe, sent)
        for alarm in raised:
            await publish_body(client, alarm, json.dumps(alarm))
        for (width, height, view), page in pages.items():
            await drawn(page, raised[-1]["seq"])
            problems[f"{width}x{height} {view} alarm"] = await page.evaluate(LAYOUT_PROBLEMS)
            facts = await page.evaluate(LAYOUT_FACTS)
            assert facts["banner"] is not None, (width, height, view)
            covered = [n for n, b in facts["covered"].items() if overlaps(facts["banner"], b)]
            assert covered == [], (width, height, view, covered)
            if view not in VIEWS:
                continue  # another language mode: its layout only
            text = facts["banner_text"]
            if view == "players":
                assert "Please wait: the round is being checked" in text
                assert "請稍候：本局正在核對" in text
                for secret in ("Art.", ALARM_TEXT, "Extra", "bad data"):
                    assert secret not in text
            else:
                # the alarm that holds play up, in full; the other one counted
                for detail in ("Extra card", "多出一張牌", "Art. 9", ALARM_TEXT, "+1 more"):
                    assert detail in text
                assert "rejected bytes" not in text
            await page.screenshot(artifacts / shot_name(width, height, view, "-alarm"))
            if (width, height) == (1024, 768):
                docs = artifacts / f"docs-{shot_name(width, height, view, '-alarm')}"
                await page.screenshot(docs, scale=DOCS_SCALE[width, height])
        short = await pages[*NARROW, "players"].evaluate(
            "import('/render.js').then((r) => [1234567, 2500, 1000000, 999, 125000]"
            ".map(r.shortStake))")
        assert short == ["1,234,567", "2.5K", "1M", "999", "125K"]
        for page in pages.values():
            assert page.console == []
    (artifacts / "header-fit.json").write_text(json.dumps(fits, indent=1))
    found = {screen: found for screen, found in problems.items() if found}
    (artifacts / "layout-problems.json").write_text(json.dumps(found, indent=1, ensure_ascii=False))
    assert found == {}, "see artifacts/web-board/layout-problems.json"
