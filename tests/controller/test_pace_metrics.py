"""Dealer pace in the daemon's Prometheus metrics: the real daemon, a shoe on a pty.

The shoe deals four rounds a known time apart; the page's seconds per round and rounds
per hour must be what the published results' times say.
"""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

from baccarat.cards import parse_card
from baccarat.drivers.events import CardDrawn, ShoeInserted
from baccarat.rules.pace import pace
from controller.test_metrics import ROUND, WITHIN, a_metrics_table, sample, scrape
from support.mosquitto import Mosquitto

GAP = 0.4
"""Seconds between two rounds' first cards."""


async def test_the_pace_of_the_shoe_in_play_is_on_the_page(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    async with a_metrics_table(tmp_path, mosquitto) as (shoe, board, _, port):
        shoe.send(ShoeInserted())
        shoe.send(CardDrawn(parse_card(ROUND[0])))
        await board.wait_for(lambda b: bool(b.bodies("card")), WITHIN)
        before = await asyncio.to_thread(scrape, port)
        for n in range(4):
            for code in ROUND[1:] if n == 0 else ROUND:
                shoe.send(CardDrawn(parse_card(code)))
            await board.wait_for(lambda b, n=n: len(b.bodies("result")) == n + 1, WITHIN)
            await asyncio.sleep(GAP)
        page = await asyncio.to_thread(scrape, port)
    assert sample(before, "baccarat_shoe_rounds", 'shoe=""') == 0
    assert math.isnan(sample(before, "baccarat_shoe_seconds_per_round", 'shoe=""'))
    ends = [b["ts"] for b in board.bodies("result")]
    expected = pace(ends)
    assert expected is not None
    assert expected.seconds_per_round >= GAP  # the rounds were dealt that far apart
    assert sample(page, "baccarat_shoe_rounds", 'shoe="1"') == 4
    assert sample(page, "baccarat_shoe_seconds_per_round", 'shoe="1"') == expected.seconds_per_round
    assert sample(page, "baccarat_shoe_rounds_per_hour", 'shoe="1"') == expected.rounds_per_hour
