"""The console's words: one table of labels (board/labels.js), tied to the engine's lists.

Every alarm kind (``AlarmKind``), every correction (``Correction``) and everything else
that settles an alarm (the engine's ``by``: a new shoe, the shoe's end, a device's
recovery) has its words in English, Traditional and Simplified Chinese; a kind added to
the engine without a label fails here. The sentences the console and the history view
make of them hold no snake_case name and no "Art. device".
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, get_args

import pytest

from baccarat.boards.web_server import page_config
from baccarat.controller.engine import alarms
from baccarat.messages.bodies import Correction
from baccarat.pit.server import PitServer
from baccarat.rules.alarm_kinds import AlarmKind
from boards.chromium_cdp import Chromium
from boards.web_pages import in_chromium

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "src" / "baccarat" / "controller" / "engine"  # its rooms, each a module


def engine_settlers() -> set[str]:
    """Every ``by`` the engine clears an alarm with, read from its source."""
    text = "".join(path.read_text() for path in sorted(ENGINE.glob("*.py")))
    found = set(re.findall(r'_clear\(alarm, "(\w+)"', text))
    found |= set(re.findall(r'_burn_over\([\w.]+, "(\w+)"\)', text))
    found |= set(alarms.RECOVERS)  # _clear(alarm, inp.kind, None): the recovery's report
    return found


LABELS_JS = """(async () => {
  const l = await import('/board/labels.js');
  const w = await import('/words.js');
  return {
    kinds: l.ALARM_KINDS, corrections: l.CORRECTIONS, settled: l.SETTLED_BY,
    origins: l.ORIGINS, words: l.ALARM_WORDS, commands: l.TABLE_COMMANDS,
    history: [
      w.historyAlarmWords('missing_card #1 settled by deal (pit/pit-ana)'),
      w.historyAlarmWords('result_mismatch #2 settled by declare'),
      w.historyAlarmWords('extra_card #3 open'),
      w.historyAlarmWords('link_down #4 settled by link_up'),
    ].map((t) => t[0]),
    zh: w.historyAlarmWords('missing_card #1 settled by deal (pit/pit-ana)'),
    outcomes: ['banker', 'void (pit/pit-ana)', 'void', 'tie'].map((o) => w.outcomeWords(o)[0]),
    unknown: w.kindWords('a_new_kind')[0],
    deviceArticle: w.articleWords({kind: 'link_down', article: 'device'}),
    article: w.articleWords({kind: 'extra_card', article: '10.2'}),
    sentence: w.alarmSentence(
      {kind: 'extra_card', round: 2, count: 86, cards: Array(86).fill('2S')}),
    noticeSentence: w.alarmSentence({kind: 'shoe_refused', round: null, count: 1}),
    lang: ['zh-hant', 'ZH-HANS', 'en', 'fr', null].map((v) => w.consoleLanguage(v)),
  };
})()"""


@pytest.fixture
async def found(tmp_path: Path) -> dict[str, Any]:
    config = page_config("127.0.0.1", 1, None, "baccarat")
    async with PitServer(config, config) as server, Chromium.launch(tmp_path / "c") as browser:
        page = await browser.open(server.url, width=800, height=600)
        await page.wait_for("document.body.dataset.ready === 'true'", limit=30)
        result: dict[str, Any] = await page.evaluate(LABELS_JS)
        return result


def three_texts(table: dict[str, list[str]], key: str) -> None:
    texts = table.get(key)
    assert texts is not None, f"{key} has no label"
    assert len(texts) == 3, (key, texts)
    assert all(t.strip() for t in texts), (key, texts)
    assert not any("_" in t for t in texts), (key, texts)  # no snake_case to staff


@pytest.mark.slow
@in_chromium
async def test_every_kind_correction_settler_and_origin_has_words(
    found: dict[str, Any],
) -> None:
    for kind in get_args(AlarmKind):
        three_texts(found["kinds"], kind)
    assert set(found["kinds"]) == set(get_args(AlarmKind))  # and no label of a gone kind
    for correction in get_args(Correction):
        three_texts(found["corrections"], correction)
        three_texts(found["settled"], correction)
    assert set(found["corrections"]) == set(get_args(Correction))
    settlers = engine_settlers()
    assert {"shoe", "end", "link_up", "deal", "declare"} <= settlers  # the regexes still read
    for by in settlers:
        three_texts(found["settled"], by)
    for command in ("shoe", "end", "demo"):  # the table's own buttons (tableActions)
        three_texts(found["commands"], command)
    for origin in ("pit", "operator", "button", "device"):
        three_texts(found["origins"], origin)


@pytest.mark.slow
@in_chromium
async def test_the_sentences_are_words(found: dict[str, Any]) -> None:
    assert found["history"] == [
        "Missing card #1: settled by the card dealt (pit-ana at the pit console)",
        "Result mismatch #2: settled by the winner declared",
        "Extra card #3: open",
        "Shoe link down #4: settled by the shoe's link back",
    ]
    assert found["zh"][1] == "缺牌 #1：已補發牌（賭場主管控制台 pit-ana）"
    assert found["zh"][2] == "缺牌 #1：已补发牌（赌场主管控制台 pit-ana）"
    assert found["outcomes"] == [
        "Banker wins", "Void (pit-ana at the pit console)", "Void", "Tie",
    ]
    assert found["unknown"] == "A new kind"
    assert found["deviceArticle"] is None
    assert found["article"][0] == "Art. 10.2"
    assert found["sentence"][0] == "Extra card, in round 2, 86 cards held aside"
    assert found["noticeSentence"][0] == "New shoe refused"
    assert found["lang"] == ["zh-Hant", "zh-Hans", "en", "en", "en"]
