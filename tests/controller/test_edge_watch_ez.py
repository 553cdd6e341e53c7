"""The edge watch prices EZ Baccarat's side bets where the table deals them (issue 33).

The real watch, run on its loop, after a real engine's cards: an ``ez`` table's ``edge``
body has ``dragon7`` and ``panda8`` (equal to :func:`live_odds` on the cards left), a macau
table's body is what it always was.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from baccarat.controller.edge_watch import EdgeWatch
from baccarat.messages.bodies import EdgeMessage
from baccarat.rules.edge import live_odds
from support.tables import Table


async def first_edge(profile: str) -> tuple[dict[str, object], Table]:
    table = Table(profile, burn="none")
    table.do("shoe", "2S,AC,3H,2C,KS,4D,9H,9D")
    published: list[EdgeMessage] = []
    arrived = asyncio.Event()

    def publish(message: EdgeMessage) -> None:
        published.append(message)
        arrived.set()

    watch = EdgeWatch(
        table.engine.profile, {}, standing=frozenset, publish=publish,
        cross=lambda crossing: None,
    )
    task = asyncio.create_task(watch.run())
    try:
        watch.note(table.engine, 1.0)
        async with asyncio.timeout(10):
            await arrived.wait()
    finally:
        task.cancel()
    return json.loads(published[0].to_bytes()), table


@pytest.mark.asyncio
async def test_an_ez_tables_edge_has_dragon7_and_panda8() -> None:
    body, table = await first_edge("ez")
    left = table.engine.left_by_rank()
    assert left is not None
    odds = live_odds(table.engine.profile, left)
    assert body["dragon7"] == {"chance": float(odds.dragon7), "edge": float(odds.edge_dragon7)}
    assert body["panda8"] == {"chance": float(odds.panda8), "edge": float(odds.edge_panda8)}
    assert body["cards_out"] == 8


@pytest.mark.asyncio
async def test_a_macau_tables_edge_has_no_side_bets() -> None:
    body, _ = await first_edge("macau")
    assert "dragon7" not in body
    assert "panda8" not in body
