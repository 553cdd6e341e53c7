"""EZ Baccarat (issue 33): Dragon 7, Panda 8 and the banker push settled in every result.

Each case deals one round through the engine and reads the published body: a Dragon 7 is
a Banker win with three cards totalling 7, a Panda 8 a Player win with three totalling 8;
a 7 or 8 of two cards, or a tie on one of three, wins neither.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.engine.test_shoe import play_shoe
from support.tables import Table, of

# (cards in dealing order P1 B1 P2 B2 [P3] [B3], winner, dragon7, panda8)
CASES = {
    "banker three-card 7 wins, both drew": ("2S AC 3H 2C KS 4D", "banker", True, False),
    "banker three-card 7 wins, player stood": ("3S AC 3H 2C 4D", "banker", True, False),
    "player three-card 8 wins": ("2S KC 3H 7C 3D", "player", False, True),
    "player three-card 8 beats banker three-card 7": ("2S AC 3H 2C 3D 4D", "player", False, True),
    "banker two-card 7 wins": ("2S 3C 4H 4C", "banker", False, False),
    "player two-card 8 (natural) wins": ("4S KC 4H 5C", "player", False, False),
    "tie on three-card 7s": ("2S AC 3H 2C 2D 4D", "tie", False, False),
    "tie on three-card 8s": ("2S AC 3H 2C 3D 5D", "tie", False, False),
    "player three-card 8 loses to banker 9": ("2S AC 3H 2C 3D 6D", "banker", False, False),
    "banker three-card 7 loses to player three-card 9": (
        "2S AC 3H 2C 4D 4S", "player", False, False),
    "banker three-card 9 wins": ("3S AC 3H 2C 6D", "banker", False, False),
}


@pytest.mark.parametrize("case", CASES)
def test_ez_result_settles_the_side_bets(case: str) -> None:
    cards, winner, dragon7, panda8 = CASES[case]
    table = Table("ez", burn="none")
    table.do("shoe", *cards.split())
    [result] = of(table.log, "result")
    assert result.winner == winner
    body = json.loads(result.to_json())
    assert body["side_bets"] == {"dragon7": dragon7, "panda8": panda8}
    assert body["banker_push"] is dragon7  # EZ: a Dragon 7 pushes the Banker bet


def test_a_profile_without_side_bets_sends_the_body_it_always_did() -> None:
    table = Table("macau", burn="none")
    table.do("shoe", "2S", "AC", "3H", "2C", "KS", "4D")  # a Dragon 7 under EZ
    [result] = of(table.log, "result")
    body = json.loads(result.to_json())
    assert "side_bets" not in body
    assert "banker_push" not in body
    assert list(body) == [
        "schema", "seq", "ts", "type", "shoe", "round", "round_id", "winner", "player",
        "banker", "demo", "exposed",
    ]


def test_each_side_bet_is_in_the_result_only_where_the_profile_deals_it() -> None:
    table = Table("macau", burn="none", side_bets=("panda8",))
    table.do("shoe", "2S", "KC", "3H", "7C", "3D")
    body = json.loads(of(table.log, "result")[0].to_json())
    assert body["side_bets"] == {"panda8": True}
    assert "banker_push" not in body  # commission, no push: macau's payouts


def _total(cards: list[str]) -> int:
    """Art. 5 written out again: A is 1, T J Q K are 0."""
    return sum(1 if c[0] == "A" else 0 if c[0] in "TJQK" else int(c[0]) for c in cards) % 10


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), decks=st.sampled_from([6, 8]))
def test_every_result_of_random_ez_shoes_settles_as_the_cards_say(seed: int, decks: int) -> None:
    """Each result's side bets, recomputed here from its cards alone."""
    out = play_shoe("ez", seed, decks=decks)
    results = of(out, "result")
    assert results
    for r in results:
        player, banker = _total(r.player.cards), _total(r.banker.cards)
        assert (r.player.total, r.banker.total) == (player, banker)
        dragon = len(r.banker.cards) == 3 and banker == 7 and player < 7
        panda = len(r.player.cards) == 3 and player == 8 and banker < 8
        assert (r.side_bets.dragon7, r.side_bets.panda8, r.banker_push) == (dragon, panda, dragon)
