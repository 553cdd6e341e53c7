"""EZ Baccarat (issue 33): Dragon 7, Panda 8 and the banker push settled in every result.

Each case deals one round through the engine and reads the published body: a Dragon 7 is
a Banker win with three cards totalling 7, a Panda 8 a Player win with three totalling 8;
a 7 or 8 of two cards, or a tie on one of three, wins neither.
"""

from __future__ import annotations

import json

import pytest

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
