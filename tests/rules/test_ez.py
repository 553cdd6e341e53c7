"""EZ Baccarat (issue 33): Dragon 7 and Panda 8 priced exactly, and settled by the bets.

The live edge's fast update is held against the plain enumeration (which settles every
round through :func:`bets.winnings`) on full and depleted 6- and 8-deck shoes; the full
shoe's house edges are the published figures to 4 decimals.
"""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from baccarat.cards import shuffled_shoe
from baccarat.rules.bets import Stakes, winnings
from baccarat.rules.edge import cards_left, live_odds
from baccarat.rules.edge_enumeration import enumerate_live_odds
from baccarat.rules.odds import compute_odds
from baccarat.rules.profiles import ProfileError, load_profile
from baccarat.rules.side_bets import outcome

# decks -> (Dragon 7, Panda 8) house edges in %, off the top of the shoe (issue 33)
PUBLISHED = {8: (7.6113, 10.1876), 6: (7.6062, 10.2074)}


@pytest.mark.parametrize("decks", [8, 6])
def test_full_shoe_edges_are_the_published_figures(decks: int) -> None:
    profile = load_profile("ez", decks=decks)
    live = live_odds(profile, cards_left(profile, ()))
    dragon, panda = PUBLISHED[decks]
    assert round(float(live.edge_dragon7) * 100, 4) == dragon
    assert round(float(live.edge_panda8) * 100, 4) == panda
    full = compute_odds(decks, profile.payouts)
    assert round(full.edge_dragon7 * 100, 4) == dragon
    assert round(full.edge_panda8 * 100, 4) == panda
    for name in ("dragon7", "panda8", "edge_dragon7", "edge_panda8", "edge_banker"):
        assert float(getattr(live, name)) == pytest.approx(getattr(full, name), abs=1e-12)


@pytest.mark.parametrize("decks", [8, 6])
def test_full_shoe_equals_the_enumeration(decks: int) -> None:
    profile = load_profile("ez", decks=decks)
    left = cards_left(profile, ())
    assert live_odds(profile, left) == enumerate_live_odds(profile, left)


@pytest.mark.parametrize("decks", [8, 6])
def test_depleted_shoes_equal_the_enumeration(decks: int) -> None:
    profile = load_profile("ez", decks=decks)
    rng = random.Random(33_000 + decks)
    for _ in range(12):
        full = 52 * decks
        n = rng.randint(6, 30) if rng.random() < 0.3 else rng.randint(6, full)
        left = cards_left(profile, shuffled_shoe(decks, rng.randrange(2**32))[: full - n])
        fast = live_odds(profile, left)
        assert fast == enumerate_live_odds(profile, left), left
        assert 0 <= fast.dragon7 <= fast.banker
        assert 0 <= fast.panda8 <= fast.player


def test_a_shoe_of_only_dragon_cards() -> None:
    """Six cards (A 2 2 3 4 T), some of whose orders deal P 2+3+0 against B A+2+4."""
    profile = load_profile("ez", decks=8)
    left = (1, 2, 1, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0)  # A, 2, 2, 3, 4, T
    odds = live_odds(profile, left)
    assert odds == enumerate_live_odds(profile, left)
    assert 0 < odds.dragon7 < 1
    assert odds.edge_dragon7 == (1 - odds.dragon7) - 40 * odds.dragon7


def test_ez_banker_edge_counts_the_push() -> None:
    """Commission-free Banker with the push on a Dragon 7: about 1.02 % off the top."""
    profile = load_profile("ez")
    live = live_odds(profile, cards_left(profile, ()))
    assert live.edge_banker == live.player - (live.banker - live.dragon7)
    assert round(float(live.edge_banker) * 100, 4) == 1.0183


ONE = Stakes(banker=Fraction(10), dragon7=Fraction(1), panda8=Fraction(1))


def test_winnings_of_a_dragon7_under_ez_and_under_commission() -> None:
    ez = load_profile("ez").payouts
    won = winnings(ONE, "banker", player_pair=False, banker_pair=False, payouts=ez, dragon7=True)
    assert (won.banker, won.dragon7, won.panda8) == (0, 40, -1)
    plain = winnings(ONE, "banker", player_pair=False, banker_pair=False, payouts=ez)
    assert (plain.banker, plain.dragon7) == (10, -1)
    macau = load_profile("macau").payouts
    won = winnings(ONE, "banker", player_pair=False, banker_pair=False, payouts=macau,
                   dragon7=True)
    assert (won.banker, won.dragon7) == (Fraction(19, 2), 40)


def test_winnings_of_a_panda8_and_of_a_tie() -> None:
    ez = load_profile("ez").payouts
    won = winnings(ONE, "player", player_pair=False, banker_pair=False, payouts=ez, panda8=True)
    assert (won.banker, won.dragon7, won.panda8) == (-10, -1, 25)
    tie = winnings(ONE, "tie", player_pair=False, banker_pair=False, payouts=ez)
    assert (tie.banker, tie.dragon7, tie.panda8) == (0, -1, -1)
    with pytest.raises(ValueError, match="tie result cannot be a Dragon 7"):
        winnings(ONE, "tie", player_pair=False, banker_pair=False, dragon7=True)


@pytest.mark.parametrize(
    ("hands", "expected"),
    [
        ((3, 3, 6, 7), "dragon7"),
        ((2, 3, 6, 7), "dragon7"),
        ((3, 2, 6, 7), "banker"),  # two-card 7
        ((3, 3, 7, 7), "tie"),
        ((3, 3, 8, 7), "panda8"),
        ((3, 2, 8, 7), "panda8"),
        ((2, 3, 8, 7), "player"),  # two-card 8
        ((3, 3, 8, 8), "tie"),
        ((3, 3, 8, 9), "banker"),
    ],
)
def test_outcome(hands: tuple[int, int, int, int], expected: str) -> None:
    assert outcome(*hands) == expected


def test_side_bets_are_named_once_and_known() -> None:
    with pytest.raises(ValueError, match="names a bet twice"):
        load_profile("macau", side_bets=("dragon7", "dragon7"))
    with pytest.raises(ValueError, match="side_bets"):
        load_profile("macau", side_bets=("tiger",))
    with pytest.raises(ProfileError):
        load_profile("ez7")
