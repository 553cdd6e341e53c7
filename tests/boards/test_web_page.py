"""The web board's full-screen offline notice and its languages, in headless Chromium.

* The controller's retained ``status`` says offline: a notice covers the whole screen, on
  top of everything, until the status says online again. The board losing its broker
  does the same, until it is back.
* ``?lang=``: English, Traditional and Simplified Chinese, alone or English with one of
  them; every label has all three, and a Simplified page shows no Traditional character.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import pytest

from baccarat.boards.web_server import WebBoardServer, page_config
from baccarat.controller.publisher import status_payload
from boards.chromium_cdp import Chromium, Page
from boards.web_pages import PREFIX, TABLE, WAIT, artifacts_folder, in_chromium
from support.mosquitto import MosquittoFactory

# The overlay's box, and what is on top at the centre and near each corner of the screen.
OVERLAY = """(() => {
  const overlay = document.getElementById('offline-overlay');
  const r = overlay.getBoundingClientRect();
  const W = innerWidth, H = innerHeight;
  const points = [[W / 2, H / 2], [2, 2], [W - 2, 2], [2, H - 2], [W - 2, H - 2], [W / 4, H / 3]];
  return {
    hidden: overlay.hidden,
    reason: overlay.dataset.reason,
    box: [r.left, r.top, r.width, r.height],
    screen: [0, 0, W, H],
    on_top: points.every(([x, y]) => overlay.contains(document.elementFromPoint(x, y))),
    text: overlay.innerText,
  };
})()"""

# Every text node the page shows, and the labels module's own tables.
SHOWN_TEXT = """(async () => {
  const { LABELS, ALARM_KINDS } = await import('/labels.js');
  const shown = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const element = node.parentElement;
    if (!node.textContent.trim() || !element.checkVisibility()) continue;
    shown.push(node.textContent.trim());
  }
  const labelled = Object.fromEntries([...document.querySelectorAll('[data-label]')]
    .filter((e) => e.checkVisibility()).map((e) => [e.dataset.label, e.innerText.trim()]));
  return {
    lang: document.body.dataset.lang, html: document.documentElement.lang,
    shown, labelled, labels: LABELS, kinds: ALARM_KINDS,
  };
})()"""

LANGUAGES: Final = {
    # ?lang= -> the page's mode, and which texts of a label show (0 en, 1 Hant, 2 Hans)
    None: ("both", (0, 1)),
    "both": ("both", (0, 1)),
    "bogus": ("both", (0, 1)),
    "en": ("en", (0,)),
    "zh": ("zh-Hant", (1,)),
    "zh-Hant": ("zh-Hant", (1,)),
    "ZH-HANS": ("zh-Hans", (2,)),
    "zh-hans": ("zh-Hans", (2,)),
    "both-Hans": ("both-Hans", (0, 2)),
}


async def overlay(page: Page) -> dict[str, Any]:
    await page.evaluate("new Promise((done) => requestAnimationFrame(() => done(true)))")
    found: dict[str, Any] = await page.evaluate(OVERLAY)
    return found


@pytest.mark.slow
@in_chromium
async def test_offline_fills_the_screen_until_the_table_is_back(
    mosquitto_factory: MosquittoFactory, tmp_path: Path
) -> None:
    broker = mosquitto_factory(websockets=True)
    config = page_config(broker.host, broker.websockets_port, TABLE, PREFIX)
    status = f"{PREFIX}/{TABLE}/status"
    async with (
        WebBoardServer(config) as server,
        Chromium.launch(tmp_path / "chromium") as browser,
    ):
        async with broker.client() as client:
            await client.publish(status, status_payload("online", TABLE), qos=1, retain=True)
        page = await browser.open(f"{server.url}?lang=zh-Hans", width=1024, height=768)
        await page.wait_for("!!document.querySelector('[data-controller=online]')", limit=WAIT)
        assert (await overlay(page))["hidden"]

        async with broker.client() as client:
            await client.publish(status, status_payload("offline", TABLE), qos=1, retain=True)
        await page.wait_for("!!document.querySelector('[data-controller=offline]')", limit=WAIT)
        shown = await overlay(page)
        assert not shown["hidden"]
        assert shown["reason"] == "offline"
        assert shown["box"] == shown["screen"]
        assert shown["on_top"]
        assert "本台离线" in shown["text"]
        await page.screenshot(artifacts_folder() / "board-offline.png")

        async with broker.client() as client:  # the controller is back: its retained status
            await client.publish(status, status_payload("online", TABLE), qos=1, retain=True)
        await page.wait_for("!!document.querySelector('[data-controller=online]')", limit=WAIT)
        assert (await overlay(page))["hidden"]

        # The board's own link: the broker goes away, and comes back.
        await broker.stop_async()
        await page.wait_for("document.body.dataset.link === 'lost'", limit=WAIT)
        shown = await overlay(page)
        assert (shown["hidden"], shown["reason"], shown["on_top"]) == (False, "link", True)
        assert "显示器未连接" in shown["text"]
        await broker.start_async()
        await page.wait_for("document.body.dataset.link === 'connected'", limit=WAIT)
        assert (await overlay(page))["hidden"]
        assert page.console == [] or all("mqtt:" in line for line in page.console)


@pytest.mark.slow
@in_chromium
async def test_every_label_in_three_languages_and_each_mode_shows_its_own(
    tmp_path: Path,
) -> None:
    config = page_config("127.0.0.1", 1, None, PREFIX)  # no table: no broker needed
    async with (
        WebBoardServer(config) as server,
        Chromium.launch(tmp_path / "chromium") as browser,
    ):
        seen = {}
        for query, (mode, texts) in LANGUAGES.items():
            url = server.url if query is None else f"{server.url}?lang={query}"
            page = await browser.open(url, width=1280, height=720)
            await page.wait_for("!document.getElementById('no-table').hidden", limit=WAIT)
            seen[query] = await page.evaluate(SHOWN_TEXT)
            assert seen[query]["lang"] == mode, query
            for key, shown in seen[query]["labelled"].items():
                wanted = [seen[query]["labels"][key][i] for i in texts]
                expected = "".join("".join(wanted).split())
                assert "".join(shown.split()).casefold() == expected.casefold(), (query, key)
            assert page.console == []

    tables = seen[None]
    for table in (tables["labels"], tables["kinds"]):
        for key, texts in table.items():
            assert len(texts) == 3, key
            assert all(text.strip() for text in texts), key
    assert seen["zh-hans"]["html"] == "zh-Hans"
    assert seen["zh"]["html"] == "zh-Hant"
    # Characters that differ between the two scripts in the labels: none of the Traditional
    # ones may show on a Simplified page, nor Simplified ones on a Traditional page.
    triples = [*tables["labels"].values(), *tables["kinds"].values()]
    hant = {c for _, t, s in triples for c in t if c not in s}
    hans = {c for _, t, s in triples for c in s if c not in t}
    assert len(hant) > 40
    for query, other in (("zh-hans", hant), ("both-Hans", hant), ("zh", hans), (None, hans)):
        shown = "".join(seen[query]["shown"])
        assert not set(shown) & other, (query, set(shown) & other)
        assert shown.strip()
