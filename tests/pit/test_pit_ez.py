"""EZ Baccarat in the pit console (issue 33), in headless Chromium.

With the daemon's own bodies of an ``ez`` table: the live edge line has Dragon 7's and
Panda 8's player edges (a macau table's has not), and a table's view tells the newest
result's side bets and banker push.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from baccarat.controller.edge_watch import CardsOut, edge_message
from baccarat.rules.edge import cards_left, live_odds
from baccarat.rules.profiles import load_profile
from boards.web_pages import in_chromium
from pit.test_pit_console import console_page
from support.mosquitto import Mosquitto
from support.tables import Table, of


def bodies() -> dict[str, str]:
    ez = load_profile("ez")
    left = cards_left(ez, [])
    edge = edge_message(CardsOut(1, 3, 8, left, 380, ts=20.0), live_odds(ez, left), [],
                        ez.side_bets)
    table = Table("ez", burn="none")
    table.do("shoe", "2S AC 3H 2C KS 4D".replace(" ", ","))  # a Dragon 7
    table.do("2S,KC,3H,7C,3D")  # a Panda 8
    dragon, panda = (r.to_json() for r in of(table.log, "result"))
    return {"edge": edge.to_bytes().decode(), "dragon": dragon, "panda": panda}


@pytest.mark.slow
@in_chromium
async def test_the_console_shows_the_side_bets(broker: Mosquitto, tmp_path: Path) -> None:
    async with console_page(broker, tmp_path) as page:
        found = await page.evaluate("""(async (b) => {
          const c = await import('/console.js');
          const e = await import('/edge.js');
          const on = (state, topic, text) =>
            c.receive(state, 'baccarat', `baccarat/${topic}`, text);
          let s = on(c.emptyConsole(), 'T1/edge', b.edge);
          const line = e.edgeText(s.edges.T1);
          s = on(s, 'T1/result', b.dragon);
          const dragon = pit.sideBetsText(s.tables.T1.results.at(-1));
          s = on(s, 'T1/result', b.panda);
          const panda = pit.sideBetsText(s.tables.T1.results.at(-1));
          return {line, dragon, panda, rejected: s.tables.T1.rejected || 0};
        })""" + f"({json.dumps(bodies())})")
    assert found["line"] == (
        "Tie -14.36 % · P pair -10.36 % · B pair -10.36 % · Dragon 7 -7.61 % · Panda 8 -10.19 %"
    )
    assert found["dragon"] == "Dragon 7 won · Panda 8 lost · Banker bet pushed"
    assert found["panda"] == "Dragon 7 lost · Panda 8 won"
    assert found["rejected"] == 0
