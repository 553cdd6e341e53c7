"""EZ Baccarat's side bets on the web board (issue 33), in headless Chromium.

The bodies are the engine's own (an ``ez`` table's results): the page's schema check takes
them, and its last result shows a Dragon 7, a Panda 8 and the banker push as badges; a
macau result shows none; a body with a side bet the schema does not know is refused.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from baccarat.boards.web_server import WebBoardServer, page_config
from boards.chromium_cdp import Chromium
from boards.web_pages import PREFIX, WAIT, in_chromium
from support.tables import Table, of


def result_body(profile: str, cards: str) -> str:
    table = Table(profile, burn="none")
    table.do("shoe", *cards.split())
    return of(table.log, "result")[0].to_json()


@pytest.mark.slow
@in_chromium
async def test_the_board_shows_the_side_bets_of_a_result(tmp_path: Path) -> None:
    bodies = {
        "dragon": result_body("ez", "2S AC 3H 2C KS 4D"),  # Banker 3-card 7
        "panda": result_body("ez", "2S KC 3H 7C 3D"),  # Player 3-card 8
        "plain": result_body("ez", "2S 3C 4H 4C"),  # Banker 2-card 7
        "macau": result_body("macau", "2S AC 3H 2C KS 4D"),
    }
    forged = json.loads(bodies["dragon"])
    forged["side_bets"]["tiger"] = True
    bodies["forged"] = json.dumps(forged)
    config = page_config("127.0.0.1", 1, None, PREFIX)  # no table: the page stays offline
    async with (
        WebBoardServer(config) as server,
        Chromium.launch(tmp_path / "chromium") as browser,
    ):
        page = await browser.open(server.url, width=1280, height=720)
        await page.wait_for("!document.getElementById('no-table').hidden", limit=WAIT)
        found = await page.evaluate("""(async (b) => {
          const { emptyState, fold } = await import('/state.js');
          const { BoardView } = await import('/render.js');
          const { check } = await import('/accept.js');
          const view = new BoardView(document);
          const shoe = {type: 'shoe', seq: 1, shoe: 1, phase: 'ready', cards_left: 400,
            last_round: false};
          const out = {};
          for (const name of ['dragon', 'panda', 'plain', 'macau', 'forged']) {
            const verdict = check('result', b[name], 'T1', b[name].length);
            if (verdict.refused !== undefined) { out[name] = 'refused'; continue; }
            const state = fold(fold(emptyState('T1'), shoe), verdict.body);
            delete document.getElementById('last-result').dataset.drawn;  // each round 1-1
            view.lastResult(state);
            out[name] = [...document.querySelectorAll('#last-result .badge')]
              .map((e) => e.dataset.badge);
          }
          return out;
        })""" + f"({json.dumps(bodies)})")
        assert page.console == []
    assert found == {
        "dragon": ["dragon7", "banker_push"],
        "panda": ["panda8"],
        "plain": [],
        "macau": [],
        "forged": "refused",
    }
