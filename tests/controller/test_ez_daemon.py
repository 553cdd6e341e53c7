"""EZ Baccarat through the real daemon (issue 33).

A real ``baccarat run --profile ez`` on a real mosquitto reads a seeded 8-deck shoe from a
virtual framed shoe on a pty. Every published result carries its side bets and banker
push as its cards say (the totals recomputed here), the ``edge`` bodies carry Dragon 7's
and Panda 8's odds equal to :func:`live_odds` of the cards out, and a replay of the
journal gives the same bodies.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from baccarat.cards import Card
from baccarat.drivers.events import CardDrawn
from baccarat.rules.edge import cards_left, live_odds
from baccarat.rules.profiles import load_profile
from baccarat.sim_hardware.dealer import Dealer
from baccarat.sim_hardware.virtual_shoe import VirtualShoe
from support.daemon import Daemon, Recorder, replay_journal
from support.mosquitto import Mosquitto

RULES = {"open_mode": "implicit"}
PROFILE = load_profile("ez", **RULES)
SEED = 2  # a shoe with Dragon 7s and Panda 8s in it
WITHIN = 60.0
HALF = 40
"""The round before which the test waits for the edge."""


def total(cards: list[str]) -> int:
    return sum(1 if c[0] == "A" else 0 if c[0] in "TJQK" else int(c[0]) for c in cards) % 10


def closed(board: Recorder) -> bool:
    return any(b.get("phase") == "closed" for b in board.bodies("shoe"))


async def test_an_ez_shoe_through_the_daemon(tmp_path: Path, mosquitto: Mosquitto) -> None:
    dealer = Dealer.for_profile(PROFILE, seed=SEED, buttons=False)
    steps = list(dealer.steps())
    events = [s.event for s in steps]
    cards: list[Card] = [e.card for e in events if isinstance(e, CardDrawn) and e.card]
    # dealt in two bursts: the edge watch prices a burst at its end, so one edge at least
    # (the first burst's) is certain; a shoe dealt at once may close before any
    half = next(i for i, s in enumerate(steps) if s.round_no == HALF)
    half_out = sum(isinstance(e, CardDrawn) for e in events[:half])
    toml = tmp_path / "ez.toml"
    toml.write_text('[profile]\nbase = "ez"\nname = "ez"\n'
                    + "".join(f"{k} = {json.dumps(v)}\n" for k, v in RULES.items()))
    shoe_path = str(tmp_path / "shoe")
    async with VirtualShoe(shoe_path, "framed", baud=115200) as shoe:
        daemon = Daemon(tmp_path, mosquitto, device=shoe_path, profile="ez", rules=RULES)
        try:
            async with Recorder(mosquitto) as board:
                await asyncio.to_thread(daemon.start)
                await shoe.play(iter(events[:half]))
                await board.wait_for(lambda b: any(
                    e["cards_out"] == half_out for e in b.bodies("edge")), WITHIN)
                await shoe.play(iter(events[half:]))
                await board.wait_for(closed, WITHIN)
                assert await asyncio.to_thread(daemon.stop) == 0
                replayed = await asyncio.to_thread(replay_journal, daemon, toml)
                # what the stop published last may still be on its way to the recorder
                await board.wait_for(lambda b: len(b.by_seq()) >= len(replayed), WITHIN)
        finally:
            daemon.close()
    published = board.by_seq()
    results = [b for b in published.values() if b["type"] == "result"]
    assert len(results) > 60
    won = {"dragon7": 0, "panda8": 0}
    for r in results:
        player, banker = total(r["player"]["cards"]), total(r["banker"]["cards"])
        dragon = len(r["banker"]["cards"]) == 3 and banker == 7 and player < 7
        panda = len(r["player"]["cards"]) == 3 and player == 8 and banker < 8
        assert r["side_bets"] == {"dragon7": dragon, "panda8": panda}, r
        assert r["banker_push"] is dragon
        won["dragon7"] += dragon
        won["panda8"] += panda
    assert won["dragon7"] > 0, "the seed changed: no Dragon 7 in the shoe"
    assert won["panda8"] > 0, "the seed changed: no Panda 8 in the shoe"
    edges: list[dict[str, Any]] = board.bodies("edge")
    assert any(e["cards_out"] == half_out for e in edges)
    for body in edges:
        odds = live_odds(PROFILE, cards_left(PROFILE, cards[: body["cards_out"]]))
        assert body["dragon7"] == {"chance": float(odds.dragon7), "edge": float(odds.edge_dragon7)}
        assert body["panda8"] == {"chance": float(odds.panda8), "edge": float(odds.edge_panda8)}
    assert [published[s] for s in sorted(published)] == replayed
