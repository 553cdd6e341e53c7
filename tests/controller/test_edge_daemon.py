"""The live edge in the real daemon: ``edge`` after every card, ``advantage`` when it crosses.

A real ``baccarat run``, a real mosquitto and a virtual framed shoe on a pty. The shoe is
stacked: its last 100 cards hold most of its 0-value cards (tens and pictures), so that
as the first 200 come out the cards left favour the tie, and as the rich ones are dealt
they stop favouring it. The test deals it a round at a time (bets are placed between
rounds: the edge of the round's last card is there before the next round's first card)
and checks what the daemon published against :func:`live_odds` of the cards out, and
against a replay of its journal.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from baccarat.cards import Card, deck
from baccarat.controller.engine.inputs import Advantage, DrawCard
from baccarat.controller.journal.reader import read_journal_file
from baccarat.drivers.events import CardDrawn
from baccarat.rules.edge import cards_left, live_odds
from baccarat.rules.profiles import load_profile
from baccarat.sim_hardware.dealer import Dealer, Step
from baccarat.sim_hardware.virtual_shoe import VirtualShoe
from support.daemon import Daemon, Recorder, replay_journal
from support.mosquitto import Mosquitto

RULES = {"decks": 6, "open_mode": "implicit"}
PROFILE = load_profile("macau", **RULES)
TIE_ONLY = {"BACCARAT_EDGE__PLAYER_PAIR": "10", "BACCARAT_EDGE__BANKER_PAIR": "10",
            "BACCARAT_EDGE__ADVANTAGE": "0", "BACCARAT_EDGE__CLEAR_MARGIN": "0",
            "BACCARAT_EDGE__CLEAR_AFTER_CARDS": "0"}
"""The pairs' thresholds out of reach: this shoe watches the tie at 0, with no hysteresis
(each crossing of the exact figure is a notice: tests/controller/test_edge_hysteresis.py
has the hysteresis)."""
SEED = 3
"""A stacking whose tie edge crosses 0 once up (card 171, round 35) and once down (255, 50)."""
WITHIN = 30.0
"""Seconds a step may take before the test fails (generous: a loaded machine)."""


def stacked_shoe(seed: int) -> list[Card]:
    """Six decks; the last 100 cards are 76 of the 96 zeros and 24 others, 20 of them last."""
    rng = random.Random(seed)
    cards = deck(6)
    zeros = [c for c in cards if c.value == 0]
    others = [c for c in cards if c.value != 0]
    rng.shuffle(zeros)
    rng.shuffle(others)
    head = zeros[:20] + others[:192]
    rich = zeros[20:] + others[192:196]
    rng.shuffle(head)
    rng.shuffle(rich)
    return head + rich + others[196:]


@dataclass(frozen=True)
class Point:
    """The tie's player edge after a card: the card's count out and its round."""

    out: int
    round: int
    tie: float


def dealt(seed: int) -> tuple[list[list[Step]], list[Card], list[Point]]:
    """The dealer's steps a round at a time, the cards in order, the tie edge after each."""
    dealer = Dealer.for_profile(PROFILE, buttons=False)
    dealer.cards = stacked_shoe(seed)
    steps = list(dealer.steps())
    rounds = [list(group) for _, group in itertools.groupby(steps, key=lambda s: s.round_no)]
    cards = [s.event.card for s in steps if isinstance(s.event, CardDrawn)]
    rounds_of = [s.round_no for s in steps if isinstance(s.event, CardDrawn)]
    path = [
        Point(n, rnd, float(-live_odds(PROFILE, cards_left(PROFILE, cards[:n])).edge_tie))
        for n, rnd in zip(range(1, len(cards) + 1), rounds_of, strict=True)
    ]
    return rounds, cards, path


def profile_toml(folder: Path) -> Path:
    path = folder / "rules.toml"
    lines = ["[profile]", 'base = "macau"', 'name = "macau"']
    path.write_text("\n".join([*lines, *(f"{k} = {json.dumps(v)}" for k, v in RULES.items())]))
    return path


def edges(board: Recorder) -> list[dict[str, Any]]:
    return [b for t, b in board.received if t.endswith("/edge")]


def notices(board: Recorder) -> list[dict[str, Any]]:
    by_seq = board.by_seq()
    return [by_seq[s] for s in sorted(by_seq) if by_seq[s].get("kind") == "advantage"]


async def test_advantage_raised_for_the_tie_at_its_round_and_cleared_after(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    rounds, cards, path = dealt(SEED)
    up = next(p for p in path if p.tie >= 0)
    down = next(p for p in path if p.out > up.out and p.tie < 0)
    # the stacking crosses once each way: what the daemon must find, however it coalesces
    assert all(p.tie < 0 for p in path if p.out < up.out), "the stacking changed"
    assert all(p.tie >= 0 for p in path if up.out <= p.out < down.out), "the stacking changed"
    assert all(p.tie < 0 for p in path if p.out >= down.out), "the stacking changed"
    shoe_path = str(tmp_path / "shoe")
    async with VirtualShoe(shoe_path, "framed", baud=115200) as shoe:
        daemon = Daemon(tmp_path, mosquitto, device=shoe_path, rules=RULES, env=TIE_ONLY)
        try:
            async with Recorder(mosquitto) as board:
                await asyncio.to_thread(daemon.start)
                out = 0
                for steps in rounds[:-1]:  # the last closes the shoe: no next round, no edge
                    await shoe.play(s.event for s in steps)
                    out += sum(isinstance(s.event, CardDrawn) for s in steps)
                    await board.wait_for(  # the round's last card: its edge, before the next
                        lambda b, n=out: any(e["cards_out"] == n for e in edges(b)), WITHIN
                    )
                await shoe.play(s.event for s in rounds[-1])
                await board.wait_for(lambda b: len(notices(b)) >= 2, WITHIN)
                assert await asyncio.to_thread(daemon.stop) == 0
        finally:
            daemon.close()
    raised, cleared = notices(board)
    assert (raised["type"], raised["shoe"], raised["round"]) == ("alarm", 1, up.round)
    assert (raised["correctable"], raised["lasting"], raised["corrections"]) == (False, False, [])
    assert raised["text"].startswith("tie: player edge +")
    assert (cleared["type"], cleared["by"]) == ("alarm_cleared", "edge")
    assert cleared["id"] == raised["id"]
    # the journal holds both crossings, each for the count the engine had out
    records = [inp for file in daemon.journal_files() for _, inp in read_journal_file(file).records]
    crossings = [inp for inp in records if isinstance(inp, Advantage)]
    assert [(c.bet, c.on) for c in crossings] == [("tie", True), ("tie", False)]
    for crossing in crossings:
        before = records[: records.index(crossing)]
        drawn = sum(isinstance(inp, DrawCard) for inp in before)
        assert crossing.cards_out == drawn
        point = path[drawn - 1]
        assert crossing.player_edge == round(point.tie, 6)
        assert (point.tie >= 0) == crossing.on
    assert path[crossings[0].cards_out - 1].round == up.round
    assert path[crossings[1].cards_out - 1].round == down.round
    # every edge body is live_odds of the cards out then, after the journaled input of its ts
    for body in edges(board):
        odds = live_odds(PROFILE, cards_left(PROFILE, cards[: body["cards_out"]]))
        assert body["tie"] == {"chance": float(odds.tie), "edge": float(odds.edge_tie)}
        assert body["banker"]["edge"] == float(odds.edge_banker)
        assert body["player_pair"]["chance"] == float(odds.player_pair)
        assert body["cards_left"] == 312 - body["cards_out"]
        assert body["over"] == (["tie"] if -odds.edge_tie >= 0 else [])
        at = [i for i, inp in enumerate(records) if inp.ts == body["ts"]]
        assert at, body
        assert sum(isinstance(inp, DrawCard) for inp in records[: at[-1] + 1]) == body["cards_out"]
    # the engine's messages, the notices included, are what a replay of the journal gives
    published = board.by_seq()
    replayed = replay_journal(daemon, profile_toml(tmp_path))
    assert [published[s] for s in sorted(published)] == replayed
    assert sum(m.get("kind") == "advantage" for m in replayed) == 2


SLOW_WORKER = '''
# The test's seam, from outside the package: every edge the daemon computes takes
# BACCARAT_TEST_EDGE_SECONDS longer, as on a machine far slower than any table computer,
# so that a card that waited for the worker would show.
import os
import time

from baccarat.controller import edge_watch

_live_odds = edge_watch.live_odds


def _slow_live_odds(profile, left):
    time.sleep(float(os.environ["BACCARAT_TEST_EDGE_SECONDS"]))
    return _live_odds(profile, left)


edge_watch.live_odds = _slow_live_odds
'''
SLOW_SECONDS = 4.0


async def test_a_slow_worker_delays_no_card_and_keeps_no_backlog(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(SLOW_WORKER)
    env = {"PYTHONPATH": str(hooks), "BACCARAT_TEST_EDGE_SECONDS": str(SLOW_SECONDS)}
    rounds, cards, _ = dealt(SEED)
    first = [s for steps in rounds[:4] for s in steps]  # the burn and three rounds
    count = sum(isinstance(s.event, CardDrawn) for s in first)
    shoe_path = str(tmp_path / "shoe")
    async with VirtualShoe(shoe_path, "framed", baud=115200) as shoe:
        daemon = Daemon(tmp_path, mosquitto, device=shoe_path, rules=RULES, env=env)
        try:
            async with Recorder(mosquitto) as board:
                await asyncio.to_thread(daemon.start)
                await shoe.play(s.event for s in first)
                await board.wait_for(lambda b: len(b.bodies("card")) >= count, WITHIN)
                assert edges(board) == []  # every card came while the first edge was computed
                await board.wait_for(lambda b: len(edges(b)) >= 1, WITHIN + 2 * SLOW_SECONDS)
                await asyncio.sleep(SLOW_SECONDS + 1)  # what a backlog would publish next
                assert await asyncio.to_thread(daemon.stop) == 0
        finally:
            daemon.close()
    # the first edge computed was for an older count: dropped; the waiting one was the
    # newest, and only it was computed and published
    [edge] = edges(board)
    assert edge["cards_out"] == count
    odds = live_odds(PROFILE, cards_left(PROFILE, cards[:count]))
    assert edge["tie"]["edge"] == float(odds.edge_tie)
