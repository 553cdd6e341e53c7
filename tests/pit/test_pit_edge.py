"""The live edge in the pit console (pit/web/edge.js), in headless Chromium.

The bodies are the daemon's own: an ``edge`` body made by the edge watch from
:func:`live_odds`, and the engine's ``advantage`` notice and its clearing. The console
keeps the newest edge of each table, refuses a body that is not of the schema (counted on
the table, as any refused body), shows the tie's and pairs' player edges in one line, and
puts an advantage notice in the floor's queue while it stands.
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

WAIT = 30.0


def bodies() -> dict[str, str]:
    """An edge body, an older one, a forged one; an advantage notice and its clearing."""
    profile = load_profile("macau")
    left = cards_left(profile, [])
    odds = live_odds(profile, left)
    edge = edge_message(CardsOut(1, 3, 8, left, 380, ts=20.0), odds, ["player_pair"])
    older = edge_message(CardsOut(1, 2, 8, left, 390, ts=10.0), odds, [])
    forged = json.loads(edge.to_bytes())
    forged["tie"]["edge"] = "-0.14"
    table = Table("macau", burn="none", decks=6)
    table.do("shoe", "2S,3S,4S,5S")
    [notice] = of(table.do(
        "advantage tie on edge=0.0163 threshold=0.0 shoe=1 round=1 out=4"), "alarm")
    [cleared] = of(table.do(
        "advantage tie off edge=-0.01 threshold=0.0 shoe=1 round=1 out=4"), "alarm_cleared")
    return {
        "edge": edge.to_bytes().decode(), "older": older.to_bytes().decode(),
        "forged": json.dumps(forged), "notice": notice.to_json(), "cleared": cleared.to_json(),
    }


@pytest.mark.slow
@in_chromium
async def test_the_console_keeps_the_edge_and_queues_advantage(
    broker: Mosquitto, tmp_path: Path
) -> None:
    async with console_page(broker, tmp_path) as page:
        found = await page.evaluate("""(async (b) => {
          const c = await import('/console.js');
          const e = await import('/edge.js');
          const on = (state, topic, text) =>
            c.receive(state, 'baccarat', `baccarat/${topic}`, text);
          let s = on(c.emptyConsole(), 'T1/edge', b.edge);
          const kept = s.edges.T1;
          s = on(s, 'T1/edge', b.older);
          const afterOlder = s.edges.T1 === kept;
          const forged = on(s, 'T2/edge', b.forged);
          s = on(s, 'T1/alarm', b.notice);
          const queued = c.floorQueue(s).map((q) => [q.table, q.alarm.kind]);
          const open = c.openAlarms(s.tables.T1).length;
          s = on(s, 'T1/alarm', b.cleared);
          return {
            cardsOut: kept.cards_out, afterOlder, line: e.edgeText(kept),
            none: e.edgeText(undefined),
            forgedKept: 'T2' in forged.edges, forgedCounted: forged.tables.T2.rejected,
            why: forged.tables.T2.refusedWhy, queued, open, after: c.floorQueue(s).length,
          };
        })""" + f"({json.dumps(bodies())})")
    assert found["cardsOut"] == 0  # a full shoe
    assert found["afterOlder"] is True  # an older body (by its input's time) is not kept
    assert found["line"] == "Tie -14.36 % · P pair -10.36 % ▲ · B pair -10.36 %"
    assert found["none"] == "–"
    assert (found["forgedKept"], found["forgedCounted"]) == (False, 1)
    assert found["why"] == 'edge.tie.edge is string "-0.14", not number'
    assert found["queued"] == [["T1", "advantage"]]  # in the queue while it stands
    assert found["open"] == 0  # yet not an open alarm of the table: it holds nothing up
    assert found["after"] == 0  # gone back: out of the queue
