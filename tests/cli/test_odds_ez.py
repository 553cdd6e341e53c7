"""``baccarat odds --profile ez``: Dragon 7 and Panda 8 beside the others (issue 33)."""

from __future__ import annotations

from baccarat.cards import parse_card
from baccarat.rules.edge import cards_left, live_odds
from baccarat.rules.profiles import load_profile
from cli.test_odds_out import odds_json

SIDE_KEYS = {"dragon7", "panda8", "edge_dragon7", "edge_panda8"}


def test_the_full_shoe_figures_of_8_and_6_decks() -> None:
    eight = odds_json("--profile", "ez")
    assert (eight["dragon7"], eight["panda8"]) == (0.022534, 0.034543)
    assert (eight["edge_dragon7"], eight["edge_panda8"]) == (0.076113, 0.101876)
    assert eight["edge_banker"] == 0.010183  # no commission, a push on a Dragon 7
    six = odds_json("--profile", "ez", "--decks", "6")
    assert (six["edge_dragon7"], six["edge_panda8"]) == (0.076062, 0.102074)


def test_a_depleted_shoe_is_priced_exactly_and_keeps_the_keys_order() -> None:
    out = "8S 8H 9D 9C 8D 9S KS 2C"
    left = odds_json("--profile", "ez", "--out", out)
    assert left.pop("cards_left") == 408
    full = odds_json("--profile", "ez")
    assert list(left) == list(full)
    profile = load_profile("ez")
    odds = live_odds(profile, cards_left(profile, [parse_card(c) for c in out.split()]))
    assert left["dragon7"] == round(float(odds.dragon7), 6)
    assert left["edge_dragon7"] == round(float(odds.edge_dragon7), 6)
    assert left["edge_dragon7"] < full["edge_dragon7"]  # 8s and 9s out favour Dragon 7


def test_a_profile_without_side_bets_prints_none() -> None:
    assert not SIDE_KEYS & set(odds_json())
    assert not SIDE_KEYS & set(odds_json("--out", "AS"))

